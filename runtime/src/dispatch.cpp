#include "dispatch.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "attngen/cuda_limits.h"
#include "attngen/kernels.h"
#include "cpu_targets.h"
#include "cuda_device.h"
#include "validate.h"

namespace attngen::detail {

const char *const kScheduleOrder[] = {"cpu_fused", "cpu_tiled", "cpu_basic", "reference", nullptr};
// The same for calls that run on a CUDA device.
const char *const kCudaScheduleOrder[] = {"cuda_fused", "cuda_tiled", nullptr};

namespace {

bool too_wide_for_cuda_fused(const KernelRequest &r) {
    return r.d_k + r.d_v > kCudaFusedMaxHeadDims;
}

}  // namespace

namespace {

bool matches(int specialized, int64_t actual) {
    return specialized == 0 || specialized == actual;
}

// How many properties of a call a kernel is specialized to; more wins.
int specialization(const KernelEntry &k) {
    return (k.heads > 0) + (k.kv_heads > 0) + (k.d_k > 0) + (k.d_v > 0) + (k.max_queries > 0) +
           (k.min_keys > 0);
}

// Between two kernels that both match a call: the one specialized to more of its properties,
// then one bounded in queries (a decode or short-run kernel, whose path is organized around few
// queries) over one that is not (such as a kernel for long sequences), then the one for the
// fewest queries (a decode kernel over a short-run one), then the one for the most keys, then a
// tuned one.
bool better(const KernelEntry &a, const KernelEntry &b) {
    if (specialization(a) != specialization(b)) return specialization(a) > specialization(b);
    if ((a.max_queries > 0) != (b.max_queries > 0)) return a.max_queries > 0;
    if (a.max_queries != b.max_queries) return a.max_queries < b.max_queries;
    if (a.min_keys != b.min_keys) return a.min_keys > b.min_keys;
    return a.tuning[0] != '\0' && b.tuning[0] == '\0';
}

const char *op_name(Op op) {
    return op == Op::attention ? "attention" : "mha";
}

std::string describe(const KernelRequest &r, const std::string &schedule) {
    std::string s = std::string(op_name(r.op)) + " kernel with schedule '" + schedule + "'";
    if (r.causal) s += ", causal";
    if (r.probs) s += ", with probabilities";
    return s;
}

}  // namespace

bool serves_calls(const KernelEntry &k, const std::string &selected,
                  const std::string &build_selected) {
    if (k.cuda) return true;
    if (selected.empty()) return false;
    return k.tuning[0] == '\0' || selected == build_selected;
}

bool serves_calls_here(const KernelEntry &k) {
    static const std::vector<bool> serves = [] {
        const std::string build_selected = selected_target(kBuildTargets);
        std::vector<bool> v(kNumKernels);
        for (std::size_t n = 0; n < kNumKernels; n++) {
            const KernelEntry &e = kKernels[n];
            v[n] = serves_calls(e, e.cuda ? "" : selected_target(e.targets), build_selected);
        }
        return v;
    }();
    const std::ptrdiff_t n = &k - kKernels;
    return n >= 0 && static_cast<std::size_t>(n) < kNumKernels && serves[n];
}

Status find_kernel(const KernelRequest &request, const KernelEntry **kernel) {
    ATTNGEN_RETURN_IF_ERROR(cpu_isa_limit_status());
    std::string schedule = request.schedule;
    if (schedule.empty() && request.cuda) {
        for (const std::string &name :
             compiled_schedules(kCudaScheduleOrder, [](const KernelEntry &k) { return k.cuda; })) {
            if (name == "cuda_fused" && too_wide_for_cuda_fused(request)) continue;
            schedule = name;
            break;
        }
        if (schedule.empty()) {
            return Status::NotFound(
                "this build compiled no CUDA kernels (configure with -DATTNGEN_CUDA=ON)");
        }
    }
    if (schedule.empty()) {
        auto available = available_schedules();
        if (available.empty()) return Status::NotFound("this build compiled no kernels");
        schedule = available.front();
    }
    if (schedule == "cuda_fused" && too_wide_for_cuda_fused(request) && cuda_device_status().ok()) {
        return Status::InvalidArgument(
            "cuda_fused takes d_k + d_v <= " + std::to_string(kCudaFusedMaxHeadDims) +
            " on a GPU (a block's K and V rows must fit 48 KiB of shared memory); this call has " +
            std::to_string(request.d_k + request.d_v) + ": use the schedule cuda_tiled");
    }
    const Status chosen =
        choose_kernel(request, schedule, kKernels, kNumKernels, serves_calls_here, kernel);
    if (chosen.code() != StatusCode::kNotFound) return chosen;
    // Only a call that found no kernel pays for telling a schedule the build lacks from a variant
    // it lacks: the registry is scanned once per call on the way to a kernel.
    const std::vector<std::string> known = available_schedules();
    if (std::find(known.begin(), known.end(), schedule) != known.end()) return chosen;
    std::string list;
    for (const auto &name : known) list += (list.empty() ? "" : ", ") + name;
    return Status::NotFound("unknown schedule '" + schedule + "'; this build has: " + list);
}

Status choose_kernel(const KernelRequest &request, const std::string &schedule,
                     const KernelEntry *entries, std::size_t count,
                     const std::function<bool(const KernelEntry &)> &serves,
                     const KernelEntry **kernel) {
    const KernelEntry *best = nullptr;
    // A kernel that matches the call but runs none of its targets on this CPU (a build for more
    // capable machines only); tuned kernels left to the defaults do not count.
    const KernelEntry *not_runnable = nullptr;
    for (std::size_t n = 0; n < count; n++) {
        const KernelEntry &k = entries[n];
        if (schedule != k.schedule) continue;
        if (k.op != request.op || k.causal != request.causal || k.probs != request.probs) continue;
        if (request.cuda && !k.cuda) continue;
        if (!matches(k.heads, request.heads) || !matches(k.kv_heads, request.kv_heads) ||
            !matches(k.d_k, request.d_k) || !matches(k.d_v, request.d_v) ||
            (k.max_queries > 0 && request.queries > k.max_queries) ||
            (k.min_keys > 0 && request.keys < k.min_keys)) {
            continue;
        }
        if (!serves(k)) {
            if (k.tuning[0] == '\0') not_runnable = &k;
            continue;
        }
        if (best == nullptr || better(k, *best)) best = &k;
    }
    if (best != nullptr) {
        *kernel = best;
        return Status::Ok();
    }
    if (not_runnable != nullptr) {
        return Status::Unavailable("the " + describe(request, schedule) + " is compiled for " +
                                   not_runnable->targets +
                                   ", none of which this CPU runs (within ATTNGEN_MAX_CPU_ISA, "
                                   "when set): build with a target it runs in ATTNGEN_TARGETS");
    }
    return Status::NotFound("this build has no " + describe(request, schedule) +
                            (request.cuda ? " for CUDA" : ""));
}

Status check_kernel_fits(const KernelEntry &k, const KernelRequest &r) {
    ATTNGEN_RETURN_IF_ERROR(cpu_isa_limit_status());
    auto mismatch = [&](const std::string &what) {
        return Status::InvalidArgument(std::string("kernel ") + k.name +
                                       " does not fit the call: " + what);
    };
    if (k.op != r.op) return mismatch(std::string("it is an ") + op_name(k.op) + " kernel");
    if (k.op == Op::attention && k.attention == nullptr && k.attention_probs == nullptr) {
        return mismatch("it has no attention function");
    }
    if (k.op == Op::mha && k.mha == nullptr) return mismatch("it has no mha function");
    if (k.causal != r.causal) {
        return mismatch(k.causal ? "it is causal and the call is not"
                                 : "the call is causal and it is not");
    }
    if (r.probs && !k.probs) return mismatch("the call asks for probs and it has no probs output");
    if (!r.probs && k.probs)
        return mismatch("it outputs probs and the call gives no buffer for them");
    const std::pair<const char *, std::pair<int, int64_t>> extents[] = {
        {"heads", {k.heads, r.heads}},
        {"kv_heads", {k.kv_heads, r.kv_heads}},
        {"d_k", {k.d_k, r.d_k}},
        {"d_v", {k.d_v, r.d_v}}};
    for (const auto &[name, pair] : extents) {
        if (!matches(pair.first, pair.second)) {
            return mismatch(std::string("it is specialized to ") + name + " = " +
                            std::to_string(pair.first) + " and the call has " +
                            std::to_string(pair.second));
        }
    }
    // A decode kernel runs any number of queries correctly, only slower, and a kernel for long
    // sequences any number of keys; neither is refused.
    return Status::Ok();
}

KernelEntry entry_of(const KernelDescriptor &d) {
    KernelEntry e{};
    e.name = d.name;
    // Its kind follows from the function it carries.
    e.op = d.mha != nullptr ? Op::mha : Op::attention;
    e.schedule = "";
    e.targets = "";
    e.tuning = "";
    e.causal = d.causal;
    e.probs = d.probs;
    e.heads = d.heads;
    e.kv_heads = d.kv_heads;
    e.d_k = d.d_k;
    e.d_v = d.d_v;
    e.max_queries = d.max_queries;
    e.min_keys = 0;
    e.attention = d.attention;
    e.attention_probs = d.attention_probs;
    e.mha = d.mha;
    return e;
}

}  // namespace attngen::detail
