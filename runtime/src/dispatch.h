// Picks the compiled kernel for a call: by operation, schedule and variant, preferring the kernel
// that is specialized to the most of the call's extents.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "attngen/kernel.h"
#include "attngen/status.h"
#include "kernel_table.h"

namespace attngen::detail {

struct KernelRequest {
    Op op = Op::attention;
    std::string schedule;  // Empty: the first available in kScheduleOrder.
    bool causal = false;
    bool probs = false;
    int64_t heads = 0, kv_heads = 0, d_k = 0, d_v = 0;
    int64_t queries = 0;  // Nq of the call.
    int64_t keys = 0;     // Nk of the call.
    bool cuda = false;    // Only kernels with a CUDA entry; empty schedule prefers cuda_fused.
};

// Known schedules, fastest first; an empty schedule name takes the first one compiled.
extern const char *const kScheduleOrder[];
// The same for calls that run on a CUDA device.
extern const char *const kCudaScheduleOrder[];

// The schedules of the compiled kernels that `keep` accepts, each once: those in `order` (a
// nullptr-terminated list) in its order, then any others in build order.
std::vector<std::string> compiled_schedules(const char *const *order,
                                            const std::function<bool(const KernelEntry &)> &keep);

Status find_kernel(const KernelRequest &request, const KernelEntry **kernel);

// ok if the kernel can serve the request; otherwise kInvalidArgument naming what differs.
Status check_kernel_fits(const KernelEntry &kernel, const KernelRequest &request);

// A registry entry for a kernel compiled elsewhere (its schedule and targets unknown here): an
// mha kernel if it carries an mha function, else an attention kernel.
KernelEntry entry_of(const KernelDescriptor &kernel);

}  // namespace attngen::detail
