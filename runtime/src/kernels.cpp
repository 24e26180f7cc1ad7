#include "attngen/kernels.h"

#include <algorithm>

#include "HalideRuntime.h"
#include "cuda_device.h"
#include "dispatch.h"
#include "registry.h"
#include "thread_pool.h"

namespace attngen {

std::vector<Kernel> list_kernels() {
    return detail::registry();
}

std::vector<ScheduleInfo> list_schedules() {
    return detail::schedules();
}

std::vector<std::string> available_schedules() {
    return detail::compiled_schedules(nullptr);
}

std::vector<std::string> available_schedules(const std::string &op) {
    for (Op o : {Op::kAttention, Op::kMha}) {
        if (op == op_name(o)) return detail::compiled_schedules(&o);
    }
    return {};
}

Status cuda_status() {
    const auto &kernels = detail::registry();
    if (std::none_of(kernels.begin(), kernels.end(), [](const Kernel &k) { return k.cuda(); })) {
        return Status::Unavailable(
            "this build compiled no CUDA kernels (configure with -DATTNGEN_CUDA=ON)");
    }
    return detail::cuda_device_status();
}

bool is_autoscheduler_baseline(const std::string &schedule) {
    const ScheduleInfo *info = detail::find_schedule_info(schedule);
    return info != nullptr && info->autoscheduler;
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
