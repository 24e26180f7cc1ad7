#include "attngen/kernels.h"

#include <algorithm>
#include <functional>
#include <sstream>
#include <string>

#include "HalideRuntime.h"
#include "cpu_targets.h"
#include "cuda_device.h"
#include "dispatch.h"
#include "kernel_table.h"
#include "thread_pool.h"

namespace attngen {

namespace {

// The op's name in KernelInfo and available_schedules(op).
const char *op_string(detail::Op op) {
    return op == detail::Op::attention ? "attention" : "mha";
}

}  // namespace

std::vector<KernelInfo> list_kernels() {
    std::vector<KernelInfo> kernels;
    for (std::size_t n = 0; n < detail::kNumKernels; n++) {
        const detail::KernelEntry &k = detail::kKernels[n];
        KernelInfo info;
        info.name = k.name;
        info.op = op_string(k.op);
        info.schedule = k.schedule;
        info.targets = k.targets;
        info.causal = k.causal;
        info.probs = k.probs;
        info.heads = k.heads;
        info.kv_heads = k.kv_heads;
        info.d_k = k.d_k;
        info.d_v = k.d_v;
        info.max_queries = k.max_queries;
        info.min_keys = k.min_keys;
        info.tuning = k.tuning;
        info.selected_target = detail::selected_target(k.targets);
        info.serves_calls = detail::serves_calls_here(k);
        info.cuda = k.cuda;
        kernels.push_back(info);
    }
    return kernels;
}

namespace detail {

std::vector<std::string> compiled_schedules(const char *const *order,
                                            const std::function<bool(const KernelEntry &)> &keep) {
    std::vector<std::string> compiled;
    for (std::size_t n = 0; n < kNumKernels; n++) {
        if (!keep(kKernels[n])) continue;
        std::string s = kKernels[n].schedule;
        if (std::find(compiled.begin(), compiled.end(), s) == compiled.end()) compiled.push_back(s);
    }
    // Known schedules in speed order, then any others in build order.
    std::vector<std::string> ordered;
    for (const char *const *s = order; *s != nullptr; s++) {
        if (std::find(compiled.begin(), compiled.end(), *s) != compiled.end())
            ordered.push_back(*s);
    }
    for (const auto &s : compiled) {
        if (std::find(ordered.begin(), ordered.end(), s) == ordered.end()) ordered.push_back(s);
    }
    return ordered;
}

}  // namespace detail

std::vector<std::string> available_schedules() {
    return detail::compiled_schedules(detail::kScheduleOrder,
                                      [](const detail::KernelEntry &) { return true; });
}

std::vector<std::string> available_schedules(const std::string &op) {
    return detail::compiled_schedules(detail::kScheduleOrder, [&](const detail::KernelEntry &k) {
        return op == op_string(k.op);
    });
}

Status cuda_status() {
    bool compiled = false;
    for (std::size_t n = 0; n < detail::kNumKernels; n++) compiled |= detail::kKernels[n].cuda;
    if (!compiled) {
        return Status::Unavailable(
            "this build compiled no CUDA kernels (configure with -DATTNGEN_CUDA=ON)");
    }
    return detail::cuda_device_status();
}

bool is_autoscheduler_baseline(const std::string &schedule) {
    std::stringstream names(detail::kAutoschedulers);
    for (std::string name; std::getline(names, name, ',');) {
        if (name == schedule) return true;
    }
    return false;
}

int set_num_threads(int threads) {
    // Halide's own pool runs nothing of ours (every parallel loop goes through the runtime's
    // pool), but it is kept at the same size for any Halide pipeline that bypasses do_par_for.
    halide_set_num_threads(std::max(threads, 0));
    return detail::set_pool_threads(threads);
}

int set_spin_wait_microseconds(int microseconds) {
    return detail::set_pool_spin_microseconds(microseconds);
}

}  // namespace attngen
