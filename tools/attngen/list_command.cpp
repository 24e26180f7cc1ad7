// attngen list: the kernels this build compiled, each by its variant, and the schedules it
// knows, with the ops each serves and why not the others.
#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "attngen/attngen.h"
#include "commands.h"

namespace attngen::cli {

namespace {

std::string fixed(int value) {
    return value == 0 ? "any" : std::to_string(value);
}

void print_kernels(const std::vector<Kernel> &kernels) {
    // storage is q's and out's element type, kv that of k and v.
    std::printf("%-48s %-9s %-8s %-8s %-7s %-7s %-10s %-5s %-4s %-4s %-4s %-4s %-5s %-7s %s\n",
                "kernel", "op", "storage", "kv", "mask", "score", "schedule", "probs", "H", "H_kv",
                "d_k", "d_v", "Nq", "Nk", "tuning");
    for (const Kernel &k : kernels) {
        const Variant &v = k.variant;
        const std::string nq = v.max_queries == 0 ? "any" : "<=" + std::to_string(v.max_queries);
        const std::string nk = v.min_keys == 0 ? "any" : ">=" + std::to_string(v.min_keys);
        std::string tuning = format_tuning(v.tuning);
        if (tuning.empty()) tuning = "-";
        std::printf("%-48s %-9s %-8s %-8s %-7s %-7s %-10s %-5s %-4s %-4s %-4s %-4s %-5s %-7s %s\n",
                    k.name.c_str(), op_name(v.op), dtype_name(v.storage), dtype_name(v.kv_storage),
                    v.mask.to_string().c_str(), v.score.to_string().c_str(), v.schedule.c_str(),
                    v.probs ? "yes" : "no", fixed(v.heads).c_str(), fixed(v.kv_heads).c_str(),
                    fixed(v.d_k).c_str(), fixed(v.d_v).c_str(), nq.c_str(), nk.c_str(),
                    tuning.c_str());
    }
}

// Kernels share their targets (the CUDA and tuned kernels have their own); say once per list
// which entry this machine runs, and which kernels it leaves to others.
void print_targets(const std::vector<Kernel> &kernels) {
    std::vector<std::string> shown;
    for (const Kernel &k : kernels) {
        if (std::find(shown.begin(), shown.end(), k.targets) != shown.end()) continue;
        shown.push_back(k.targets);
        std::printf("\ncompiled for: %s\nthis CPU runs: %s\n", k.targets.c_str(),
                    k.selected_target.empty() ? "none (the CPU lacks every target's features)"
                                              : k.selected_target.c_str());
    }
    std::string idle;
    for (const Kernel &k : kernels) {
        if (!k.serves_calls) idle += (idle.empty() ? "" : ", ") + k.name;
    }
    if (!idle.empty()) {
        std::printf("\nnot used on this CPU (tuned for, or compiled for, other targets only): %s\n",
                    idle.c_str());
    }
}

// Every schedule the build knows, highest priority first: what it does, whether it has kernels
// here, and the ops it does not serve with the reason.
void print_schedules(const std::vector<Kernel> &kernels) {
    std::printf(
        "\nschedules, highest priority first (an empty schedule name takes the first "
        "compiled one that serves the call):\n");
    for (const ScheduleInfo &s : list_schedules()) {
        const bool compiled = std::any_of(kernels.begin(), kernels.end(), [&](const Kernel &k) {
            return k.variant.schedule == s.name;
        });
        std::string kind = s.cuda ? "CUDA" : "CPU";
        if (s.autoscheduler) {
            kind =
                "autoscheduler baseline, for the benchmarks (a call smaller than the shape it "
                "was planned for fails)";
        }
        std::printf("  %-14s %s; %s\n  %14s %s\n", s.name.c_str(), kind.c_str(),
                    compiled ? "compiled" : "not compiled in this build", "", s.summary.c_str());
        // Ops refused for one reason share a line.
        std::vector<std::pair<std::string, std::string>> refused;
        for (const auto &entry : s.not_served) {
            const std::string &reason = entry.second;
            auto same = std::find_if(refused.begin(), refused.end(),
                                     [&](const auto &r) { return r.second == reason; });
            if (same == refused.end()) {
                refused.emplace_back(op_name(entry.first), reason);
            } else {
                same->first += std::string(", ") + op_name(entry.first);
            }
        }
        for (const auto &[ops, reason] : refused) {
            std::printf("  %14s does not serve %s: %s\n", "", ops.c_str(), reason.c_str());
        }
        if (s.max_head_dims_on_gpu > 0) {
            std::printf("  %14s on a GPU: d_k + d_v <= %d\n", "", s.max_head_dims_on_gpu);
        }
    }
}

void run_list() {
    const std::vector<Kernel> kernels = list_kernels();
    print_kernels(kernels);
    print_targets(kernels);
    print_schedules(kernels);
    std::string schedules;
    for (const auto &s : available_schedules()) {
        if (!is_autoscheduler_baseline(s)) schedules += (schedules.empty() ? "" : ", ") + s;
    }
    std::printf("\n%zu kernels; schedules, fastest first (the default is the first): %s\n",
                kernels.size(), schedules.c_str());
}

}  // namespace

void add_list_command(CLI::App &app) {
    auto *cmd = app.add_subcommand(
        "list", "List the compiled kernels by variant, their targets and the schedules");
    cmd->callback(run_list);
}

}  // namespace attngen::cli
