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

// The registry's kernel for a call: the request's schedule, or the first compiled one of
// kScheduleOrder (kCudaScheduleOrder for a CUDA call), then choose_kernel among the kernels that
// serve calls on this CPU. NotFound names the compiled schedules when the schedule is none of
// them.
Status find_kernel(const KernelRequest &request, const KernelEntry **kernel);

// The kernel among entries[0, count) with the given schedule that matches the call and that
// `serves` accepts, the most specialized first. When none does: Unavailable if some kernel
// matches but `serves` refuses it and it is untuned (this CPU runs none of its targets: the call
// needs a build with another target), else NotFound (a tuned kernel left to the defaults is no
// reason to refuse a call; the build simply has no kernel for it).
Status choose_kernel(const KernelRequest &request, const std::string &schedule,
                     const KernelEntry *entries, std::size_t count,
                     const std::function<bool(const KernelEntry &)> &serves,
                     const KernelEntry **kernel);

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
