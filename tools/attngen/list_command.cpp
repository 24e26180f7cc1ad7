// attngen list: the kernels this build compiled.
#include <algorithm>
#include <cstdio>

#include "attngen/attngen.h"
#include "commands.h"

namespace attngen::cli {

namespace {

std::string fixed(int value) {
    return value == 0 ? "any" : std::to_string(value);
}

void run_list() {
    const auto kernels = list_kernels();
    std::printf("%-46s %-9s %-10s %-6s %-5s %-4s %-4s %-4s %-4s %-5s %s\n", "kernel", "op",
                "schedule", "causal", "probs", "H", "H_kv", "d_k", "d_v", "Nq", "Nk");
    for (const auto &k : kernels) {
        std::string nq = k.max_queries == 0 ? "any" : "<=" + std::to_string(k.max_queries);
        std::string nk = k.min_keys == 0 ? "any" : ">=" + std::to_string(k.min_keys);
        std::printf("%-46s %-9s %-10s %-6s %-5s %-4s %-4s %-4s %-4s %-5s %s\n", k.name.c_str(),
                    k.op.c_str(), k.schedule.c_str(), k.causal ? "yes" : "no",
                    k.probs ? "yes" : "no", fixed(k.heads).c_str(), fixed(k.kv_heads).c_str(),
                    fixed(k.d_k).c_str(), fixed(k.d_v).c_str(), nq.c_str(), nk.c_str());
    }
    // Kernels share their targets (the CUDA kernels have their own list); say once per list
    // which entry this machine runs.
    std::vector<std::string> shown;
    for (const auto &k : kernels) {
        if (std::find(shown.begin(), shown.end(), k.targets) != shown.end()) continue;
        shown.push_back(k.targets);
        std::printf("\ncompiled for: %s\nthis CPU runs: %s\n", k.targets.c_str(),
                    k.selected_target.empty() ? "none (the CPU lacks every target's features)"
                                              : k.selected_target.c_str());
    }
    // Kernels that this CPU does not run, or that were tuned on another class of machine: the
    // dispatch leaves their calls to other kernels.
    std::string idle;
    for (const auto &k : kernels) {
        if (!k.serves_calls) idle += (idle.empty() ? "" : ", ") + k.name;
    }
    if (!idle.empty()) {
        std::printf("\nnot used on this CPU (tuned for, or compiled for, other targets only): %s\n",
                    idle.c_str());
    }
    std::string schedules, baselines;
    for (const auto &s : available_schedules()) {
        std::string &list = is_autoscheduler_baseline(s) ? baselines : schedules;
        list += (list.empty() ? "" : ", ") + s;
    }
    if (!baselines.empty()) {
        std::printf(
            "\nautoscheduler baselines, for the benchmarks (a call smaller than the shape "
            "they were planned for fails): %s",
            baselines.c_str());
    }
    std::printf("\n%zu kernels; schedules, fastest first (the default is the first): %s\n",
                kernels.size(), schedules.c_str());
}

}  // namespace

void add_list_command(CLI::App &app) {
    auto *cmd = app.add_subcommand("list", "List the compiled kernels, schedules and targets");
    cmd->callback(run_list);
}

}  // namespace attngen::cli
