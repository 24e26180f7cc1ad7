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

// Whether the dispatch may pick kernel k, given the target of k that this CPU runs (`selected`,
// empty if none) and the one of the build's targets (`build_selected`): a CPU kernel only if it
// runs here; a tuned kernel, compiled for the one target it was tuned for, only where that is
// the target the rest of the build runs here, since its parameters were measured on a machine of
// that class. A CUDA kernel always: its CPU entry is the architecture's floor target.
bool serves_calls(const KernelEntry &k, const std::string &selected,
                  const std::string &build_selected);

// serves_calls for a kernel of the registry on this CPU (decided once per process, after the
// ATTNGEN_MAX_CPU_ISA limit has been read).
bool serves_calls_here(const KernelEntry &k);

// ok if the kernel can serve the request; otherwise kInvalidArgument naming what differs.
Status check_kernel_fits(const KernelEntry &kernel, const KernelRequest &request);

// A registry entry for a kernel compiled elsewhere (its schedule and targets unknown here): an
// mha kernel if it carries an mha function, else an attention kernel.
KernelEntry entry_of(const KernelDescriptor &kernel);

}  // namespace attngen::detail
