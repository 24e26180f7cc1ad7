// Picks the compiled kernel for a call: by operation, schedule and variant, preferring the kernel
// that is specialized to the most of the call's extents.
#pragma once

#include <string>

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
};

// Known schedules, fastest first; an empty schedule name takes the first one compiled.
extern const char *const kScheduleOrder[];

Status find_kernel(const KernelRequest &request, const KernelEntry **kernel);

}  // namespace attngen::detail
