#include "registry.h"

#include <algorithm>
#include <tuple>

#include "cpu_targets.h"
#include "kernel_choice.h"

namespace attngen::detail {

const char *const kBuildTargets = ATTNGEN_BUILD_TARGETS;

const std::vector<Kernel> &registry() {
    static const std::vector<Kernel> kernels = [] {
        std::vector<Kernel> list = compiled_kernels();
        const std::string build_selected = selected_target(kBuildTargets);
        for (Kernel &k : list) {
            k.selected_target = selected_target(k.targets);
            k.serves_calls =
                serves_calls(k, k.cuda() ? std::string() : k.selected_target, build_selected);
        }
        return list;
    }();
    return kernels;
}

const std::vector<ScheduleInfo> &schedules() {
    static const std::vector<ScheduleInfo> list = [] {
        std::vector<ScheduleInfo> infos = schedule_infos();
        // Ours before the autoschedulers, CPU before CUDA, then by priority.
        auto rank = [](const ScheduleInfo &s) {
            return std::make_tuple(s.autoscheduler, s.cuda, -s.priority);
        };
        std::stable_sort(
            infos.begin(), infos.end(),
            [&](const ScheduleInfo &a, const ScheduleInfo &b) { return rank(a) < rank(b); });
        return infos;
    }();
    return list;
}

const ScheduleInfo *find_schedule_info(const std::string &name) {
    for (const ScheduleInfo &s : schedules()) {
        if (s.name == name) return &s;
    }
    return nullptr;
}

}  // namespace attngen::detail
