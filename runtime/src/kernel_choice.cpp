#include "kernel_choice.h"

#include <algorithm>

namespace attngen::detail {

namespace {

bool matches(int specialized, int64_t actual) {
    return specialized == 0 || specialized == actual;
}

// The modifiers of the call that the closest kernel of its op, schedule and causal rule lacks
// ("window, softcap"), so that a refusal says what to compile; empty where no such kernel
// exists or one has them all (it was refused for something else, which describe() shows).
std::string missing_modifiers(const KernelRequest &r, const std::string &schedule,
                              const std::vector<Kernel> &kernels) {
    std::vector<std::string> closest;
    bool found = false;
    for (const Kernel &k : kernels) {
        const Variant &v = k.variant;
        if (v.schedule != schedule || v.op != r.op || v.mask.causal != r.mask.causal) continue;
        const std::pair<bool, const char *> kinds[] = {
            {r.mask.window && !v.mask.window, "window"},
            {r.mask.prefix && !v.mask.prefix, "prefix"},
            {r.mask.segments && !v.mask.segments, "segments"},
            {r.score.softcap && !v.score.softcap, "softcap"},
            {r.score.alibi && !v.score.alibi, "alibi"},
            {r.score.bias && !v.score.bias, "bias"}};
        std::vector<std::string> missing;
        for (const auto &[lacks, name] : kinds) {
            if (lacks) missing.push_back(name);
        }
        if (missing.empty()) return "";
        if (!found || missing.size() < closest.size()) closest = missing;
        found = true;
    }
    std::string list;
    for (const std::string &name : closest) list += (list.empty() ? "" : ", ") + name;
    return list;
}

}  // namespace

std::string describe(const KernelRequest &r, const std::string &schedule) {
    std::string s = std::string(op_name(r.op)) + " kernel with schedule '" + schedule + "'";
    if (r.storage != DType::kFloat32 || r.kv_storage != r.storage) {
        s += " storing " + std::string(dtype_name(r.storage));
        if (r.kv_storage != r.storage)
            s += " with k and v in " + std::string(dtype_name(r.kv_storage));
    }
    if (r.mask != MaskSpec{}) s += ", mask " + r.mask.to_string();
    if (r.score.any()) s += ", score " + r.score.to_string();
    if (r.probs) s += ", with probabilities";
    return s;
}

bool fits(const Variant &v, const KernelRequest &r) {
    // A user-written modifier changes what the kernel computes in a way no request describes.
    return !v.user_modified() && v.op == r.op && v.storage == r.storage &&
           v.kv_storage == r.kv_storage && v.mask.covers(r.mask) && v.score.covers(r.score) &&
           v.probs == r.probs && matches(v.heads, r.heads) && matches(v.kv_heads, r.kv_heads) &&
           matches(v.d_k, r.d_k) && matches(v.d_v, r.d_v) &&
           (v.max_queries == 0 || r.queries <= v.max_queries) &&
           (v.min_keys == 0 || r.keys >= v.min_keys);
}

bool better(const Variant &a, const Variant &b) {
    const int extra_a = a.mask.extra_kinds() + a.score.extra_kinds();
    const int extra_b = b.mask.extra_kinds() + b.score.extra_kinds();
    if (extra_a != extra_b) return extra_a < extra_b;
    if (a.specialization() != b.specialization()) return a.specialization() > b.specialization();
    if ((a.max_queries > 0) != (b.max_queries > 0)) return a.max_queries > 0;
    if (a.max_queries != b.max_queries) return a.max_queries < b.max_queries;
    if (a.min_keys != b.min_keys) return a.min_keys > b.min_keys;
    return !a.tuning.empty() && b.tuning.empty();
}

bool too_wide_for_gpu(const ScheduleInfo &s, const KernelRequest &r) {
    return s.max_head_dims_on_gpu > 0 && r.d_k + r.d_v > s.max_head_dims_on_gpu;
}

Status default_schedule(const KernelRequest &r, const std::vector<ScheduleInfo> &schedules,
                        const std::vector<Kernel> &kernels, std::string *schedule) {
    // The schedule of highest priority with a kernel that fits the call (a call with a 16-bit
    // KV cache and many queries, for which cpu_fused has only decode kernels, goes to the
    // reference schedule). Else the one of highest priority with a kernel of the call's op
    // whose modifiers cover the call's, so that the error names the preferred schedule and what
    // its kernels lack.
    auto best_of = [&](bool fitting) {
        const ScheduleInfo *best = nullptr;
        for (const ScheduleInfo &s : schedules) {
            if (s.cuda != r.cuda || (r.cuda && too_wide_for_gpu(s, r))) continue;
            if (best != nullptr && best->priority >= s.priority) continue;
            const bool compiled = std::any_of(kernels.begin(), kernels.end(), [&](const Kernel &k) {
                if (k.variant.schedule != s.name) return false;
                if (fitting) return fits(k.variant, r) && (!r.cuda || k.cuda());
                return k.variant.op == r.op && k.variant.mask.covers(r.mask) &&
                       k.variant.score.covers(r.score);
            });
            if (compiled) best = &s;
        }
        return best;
    };
    const ScheduleInfo *best = best_of(/*fitting=*/true);
    if (best == nullptr) best = best_of(/*fitting=*/false);
    if (best != nullptr) {
        *schedule = best->name;
        return Status::Ok();
    }
    if (r.cuda) {
        return Status::NotFound("this build compiled no CUDA " + std::string(op_name(r.op)) +
                                " kernels (configure with -DATTNGEN_CUDA=ON)");
    }
    return Status::NotFound("this build compiled no " + std::string(op_name(r.op)) + " kernels");
}

Status choose_kernel(const KernelRequest &request, const std::string &schedule,
                     const std::vector<Kernel> &kernels,
                     const std::function<bool(const Kernel &)> &serves, const Kernel **kernel) {
    const Kernel *best = nullptr;
    // A kernel that fits the call but runs none of its targets on this CPU (a build for more
    // capable machines only); tuned kernels left to the defaults do not count.
    const Kernel *not_runnable = nullptr;
    for (const Kernel &k : kernels) {
        if (k.variant.schedule != schedule || !fits(k.variant, request)) continue;
        if (request.cuda && !k.cuda()) continue;
        if (!serves(k)) {
            if (k.variant.tuning.empty()) not_runnable = &k;
            continue;
        }
        if (best == nullptr || better(k.variant, best->variant)) best = &k;
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
    const std::string missing = missing_modifiers(request, schedule, kernels);
    return Status::NotFound("this build has no " + describe(request, schedule) +
                            (request.cuda ? " for CUDA" : "") +
                            (missing.empty() ? "" : "; the closest one lacks " + missing));
}

bool serves_calls(const Kernel &k, const std::string &selected, const std::string &build_selected) {
    if (k.cuda()) return true;
    if (selected.empty()) return false;
    return k.variant.tuning.empty() || selected == build_selected;
}

Status check_kernel_fits(const Kernel &k, const KernelRequest &r) {
    auto mismatch = [&](const std::string &what) {
        return Status::InvalidArgument("kernel " + k.name + " does not fit the call: " + what);
    };
    const Variant &v = k.variant;
    if (k.argv == nullptr || k.metadata == nullptr) {
        return mismatch(
            "it has no entry point (it was generated from a variant spec that this runtime "
            "cannot read: are its generators and this runtime of one attngen version?)");
    }
    if (v.op != r.op) return mismatch(std::string("it is an ") + op_name(v.op) + " kernel");
    if (v.storage != r.storage) {
        return mismatch(std::string("it stores ") + dtype_name(v.storage) + " and the call has " +
                        dtype_name(r.storage));
    }
    if (v.kv_storage != r.kv_storage) {
        return mismatch(std::string("it stores k and v in ") + dtype_name(v.kv_storage) +
                        " and the call has " + dtype_name(r.kv_storage));
    }
    if (!v.mask.covers(r.mask)) {
        return mismatch("its mask is " + v.mask.to_string() + " and the call's is " +
                        r.mask.to_string());
    }
    if (!v.score.covers(r.score)) {
        return mismatch("its score modifiers are " + v.score.to_string() + " and the call's are " +
                        r.score.to_string());
    }
    if (r.probs && !v.probs) return mismatch("the call asks for probs and it has no probs output");
    if (!r.probs && v.probs) {
        return mismatch("it outputs probs and the call gives no buffer for them");
    }
    const std::pair<const char *, std::pair<int, int64_t>> extents[] = {
        {"heads", {v.heads, r.heads}},
        {"kv_heads", {v.kv_heads, r.kv_heads}},
        {"d_k", {v.d_k, r.d_k}},
        {"d_v", {v.d_v, r.d_v}}};
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

}  // namespace attngen::detail
