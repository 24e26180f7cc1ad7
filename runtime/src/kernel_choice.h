// Which compiled kernel serves a call: the rules of the dispatch over Kernel values, without the
// registry, so that the tuner applies them to the build's variant table (to find the kernel that
// the default build runs for a shape) and tests to made-up kernels. Halide-free.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attngen/kernel.h"
#include "attngen/schedules.h"
#include "attngen/status.h"

namespace attngen::detail {

// What a call needs from a kernel.
struct KernelRequest {
    Op op = Op::kAttention;
    DType storage = DType::kFloat32;     // Of q and out.
    DType kv_storage = DType::kFloat32;  // Of k and v.
    MaskSpec mask;
    ScoreSpec score;
    bool probs = false;
    int64_t heads = 0, kv_heads = 0, d_k = 0, d_v = 0;
    int64_t queries = 0;  // Nq of the call.
    int64_t keys = 0;     // Nk of the call.
    bool cuda = false;    // Only kernels with a CUDA entry.
};

// "attention kernel with schedule 'cpu_fused', causal, with probabilities".
std::string describe(const KernelRequest &request, const std::string &schedule);

// Whether the variant computes what the call asks (op, storage, outputs, a mask and score
// modifiers that cover the call's) and its specializations match the call's extents, query and
// key bounds included. Never a kernel with a user-written modifier: only a call that names it
// knows what it computes.
bool fits(const Variant &variant, const KernelRequest &request);

// Between two kernels that both fit a call: the one with fewer modifiers the call does not use
// (each costs work per score; the runtime passes them neutral values), then the one specialized
// to more of its properties, then
// one bounded in queries (a decode or short-run kernel, whose path is organized around few
// queries) over one that is not (such as a kernel for long sequences), then the one for the
// fewest queries (a decode kernel over a short-run one), then the one for the most keys, then a
// tuned one.
bool better(const Variant &a, const Variant &b);

// The schedule that an empty schedule name stands for: the one of highest priority among
// `schedules` for the call's device (CUDA or CPU) that has a kernel in `kernels` that fits the
// call and, on a GPU, takes the call's head dims; if no schedule has one, the one of highest
// priority with a kernel of the call's op and modifiers, so that the error names the preferred
// schedule and what its kernels lack. NotFound when there is none.
Status default_schedule(const KernelRequest &request, const std::vector<ScheduleInfo> &schedules,
                        const std::vector<Kernel> &kernels, std::string *schedule);

// Whether a schedule refuses the call's head dims on a GPU (ScheduleInfo::max_head_dims_on_gpu).
bool too_wide_for_gpu(const ScheduleInfo &schedule, const KernelRequest &request);

// The kernel among `kernels` with the given schedule that fits the call and that `serves`
// accepts, the most specialized first. When none does: Unavailable if some kernel fits but
// `serves` refuses it and it is untuned (this CPU runs none of its targets: the call needs a
// build with another target), else NotFound (a tuned kernel left to the defaults is no reason
// to refuse a call; the build simply has no kernel for it).
Status choose_kernel(const KernelRequest &request, const std::string &schedule,
                     const std::vector<Kernel> &kernels,
                     const std::function<bool(const Kernel &)> &serves, const Kernel **kernel);

// Whether the dispatch may pick kernel k, given the target of k that this CPU runs (`selected`,
// empty if none) and the one of the build's targets (`build_selected`): a CPU kernel only if it
// runs here; a tuned kernel, compiled for the one target it was tuned for, only where that is the
// target the rest of the build runs here, since its parameters were measured on a machine of that
// class. A CUDA kernel always: its CPU entry is the architecture's floor target.
bool serves_calls(const Kernel &k, const std::string &selected, const std::string &build_selected);

// Ok if the kernel (one named by the caller) can serve the request; otherwise kInvalidArgument
// naming what differs.
Status check_kernel_fits(const Kernel &kernel, const KernelRequest &request);

}  // namespace attngen::detail
