#include "dispatch.h"

#include <algorithm>

#include "cpu_targets.h"
#include "cuda_device.h"
#include "registry.h"
#include "validate.h"

namespace attngen::detail {

namespace {

bool has_kernel(const std::string &schedule, const Op *op) {
    for (const Kernel &k : registry()) {
        if (k.variant.schedule == schedule && (op == nullptr || k.variant.op == *op)) return true;
    }
    return false;
}

std::string joined(const std::vector<std::string> &names) {
    std::string list;
    for (const auto &name : names) list += (list.empty() ? "" : ", ") + name;
    return list;
}

// Why a named schedule cannot take the call, or ok: unknown to this build, not serving the op
// by design (with the reason its info gives), compiled without any kernel here, or too wide for
// its shared memory on a GPU.
Status check_named_schedule(const KernelRequest &r, const std::string &schedule) {
    const ScheduleInfo *info = find_schedule_info(schedule);
    if (info == nullptr) {
        return Status::NotFound("unknown schedule '" + schedule +
                                "'; this build has: " + joined(compiled_schedules(nullptr)));
    }
    const auto refused = info->not_served.find(r.op);
    if (refused != info->not_served.end()) {
        return Status::NotFound("schedule '" + schedule + "' does not serve " + op_name(r.op) +
                                ": " + refused->second);
    }
    if (!has_kernel(schedule, nullptr)) {
        return Status::NotFound("this build compiled no kernels of schedule '" + schedule +
                                "' (kernels/variants.txt" +
                                (info->cuda ? " and -DATTNGEN_CUDA=ON" : std::string()) +
                                "); it has: " + joined(compiled_schedules(nullptr)));
    }
    if (too_wide_for_gpu(*info, r) && cuda_device_status().ok()) {
        return Status::InvalidArgument(
            schedule + " takes d_k + d_v <= " + std::to_string(info->max_head_dims_on_gpu) +
            " on a GPU (a block's K and V rows must fit 48 KiB of shared memory); this call has " +
            std::to_string(r.d_k + r.d_v) + ": use another schedule (attngen list names them)");
    }
    return Status::Ok();
}

}  // namespace

std::vector<std::string> compiled_schedules(const Op *op) {
    std::vector<std::string> names;
    for (const ScheduleInfo &s : schedules()) {
        if (has_kernel(s.name, op)) names.push_back(s.name);
    }
    return names;
}

Status find_kernel(const KernelRequest &request, const std::string &named, const Kernel **kernel) {
    ATTNGEN_RETURN_IF_ERROR(cpu_isa_limit_status());
    std::string schedule = named;
    if (schedule.empty()) {
        ATTNGEN_RETURN_IF_ERROR(default_schedule(request, schedules(), registry(), &schedule));
    } else {
        ATTNGEN_RETURN_IF_ERROR(check_named_schedule(request, schedule));
    }
    return choose_kernel(
        request, schedule, registry(), [](const Kernel &k) { return k.serves_calls; }, kernel);
}

Status check_given_kernel(const Kernel &kernel, const KernelRequest &request) {
    ATTNGEN_RETURN_IF_ERROR(cpu_isa_limit_status());
    return check_kernel_fits(kernel, request);
}

}  // namespace attngen::detail
