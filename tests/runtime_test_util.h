// Helpers of the tests that call the runtime (runtime_test, scratch_reuse_test): test_util.h has
// none of these, as it also serves tests that do not link the runtime.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "attngen/attngen.h"
#include "test_util.h"

namespace attngen {

// How GoogleTest names a kernel parameter in its messages: by its name, not its bytes.
inline void PrintTo(const Kernel &k, std::ostream *os) {
    *os << k.name;
}

}  // namespace attngen

namespace attngen::test {

// The schedules the suite runs every test with: every compiled one but the autoscheduler
// baselines of a bench build, which serve only calls as large as the shapes they were planned
// for (is_autoscheduler_baseline); the benchmark checks those at every shape it times.
inline std::vector<std::string> TestedSchedules(const std::string &op = "") {
    std::vector<std::string> schedules;
    for (const auto &s : op.empty() ? available_schedules() : available_schedules(op)) {
        if (!is_autoscheduler_baseline(s)) schedules.push_back(s);
    }
    return schedules;
}

// Every compiled attention kernel of TestedSchedules(), to instantiate a test for each; mha
// kernels have no variants beyond schedule and mask, which the schedule-parameterized tests
// cover.
inline std::vector<Kernel> AttentionKernels() {
    std::vector<Kernel> kernels;
    for (const auto &k : list_kernels()) {
        if (k.variant.op == Op::kAttention && !is_autoscheduler_baseline(k.variant.schedule)) {
            kernels.push_back(k);
        }
    }
    return kernels;
}

// The tuned kernel that takes every call of untuned kernel k, or nullptr: one of k's own variant
// that serves calls here, which the dispatch prefers to k (kernel_choice.cpp, better). A build
// from a tuning database that retuned a default kernel's bucket on this target has such a pair.
inline const Kernel *TunedReplacementOf(const Kernel &k) {
    static const std::vector<Kernel> kernels = list_kernels();
    if (!k.variant.tuning.empty()) return nullptr;
    for (const Kernel &other : kernels) {
        if (!other.serves_calls || other.variant.tuning.empty()) continue;
        Variant untuned = other.variant;
        untuned.tuning.clear();
        untuned.tuned_for.clear();
        if (untuned.to_string() == k.variant.to_string()) return &other;
    }
    return nullptr;
}

// Skips a test of kernel k where the dispatch does not pick it (Kernel::serves_calls: this CPU
// runs none of its targets, or it was tuned on machines of another target; or a tuned kernel of
// its variant takes its calls). The test list still names it, so that a run under another
// ATTNGEN_MAX_CPU_ISA or on another machine says what it left out;
// KernelBounds.KernelsTunedForAnotherTargetLeaveTheirCallsToTheDefaults checks that such calls
// go to a kernel that is tested.
#define ATTNGEN_SKIP_UNLESS_SERVED(k)                                                             \
    do {                                                                                          \
        if (!(k).serves_calls) {                                                                  \
            GTEST_SKIP() << (k).name << " does not serve calls on this CPU: compiled for "        \
                         << (k).targets << ", this CPU runs "                                     \
                         << ((k).selected_target.empty() ? "none of them" : (k).selected_target); \
        }                                                                                         \
        if (const Kernel *tuned = TunedReplacementOf(k)) {                                        \
            GTEST_SKIP() << (k).name << " serves no call: " << tuned->name                        \
                         << ", tuned from its variant, takes them";                               \
        }                                                                                         \
    } while (0)

// The largest query bound (max_queries) among the kernels that serve calls here, 0 when none has
// one.
inline int64_t LargestQueryBound() {
    int64_t bound = 0;
    for (const auto &k : list_kernels()) {
        if (k.serves_calls) bound = std::max<int64_t>(bound, k.variant.max_queries);
    }
    return bound;
}
// Nq for a call that a kernel without a query bound (max_queries 0) must serve: above the bound of
// every decode or tuned kernel compiled (the dispatch prefers those for calls within their
// bound), and not a multiple of any tile.
inline int64_t QueriesBeyondEveryBound() {
    const int64_t bound = LargestQueryBound();
    return bound >= 37 ? bound + 37 : 37;
}

// The fewest queries beyond every compiled query bound: one more than the largest. A kernel for
// long sequences (min_keys) is tested with these rather than QueriesBeyondEveryBound(): each
// query row of its calls costs over 8000 keys of work in the fp64 and fp32 references and in the
// kernel, which made such a test take 10-20 s under qemu and up to 49 s under the sanitizers. The
// count still leaves a partial group of queries (the bound is 8 or a tuned 64, the groups 8, 16
// or 32 queries), and each test's keys already cover every key block's tail.
inline int64_t FewestQueriesBeyondEveryBound() {
    return LargestQueryBound() + 1;
}

// Nq for a test call that kernel k, which has no query bound, must serve (as above).
inline int64_t QueriesBeyondEveryBound(const Kernel &k) {
    return k.variant.min_keys > 0 ? FewestQueriesBeyondEveryBound() : QueriesBeyondEveryBound();
}

// The fewest queries for which the dispatch prefers kernel k, which has a query bound: one more
// than the next tighter bound among the compiled kernels (1 where k's is the tightest), since the
// tightest bound that fits a call wins.
inline int64_t FewestQueriesFor(const Kernel &k) {
    int64_t below = 0;
    for (const auto &other : list_kernels()) {
        if (other.serves_calls && other.variant.max_queries > 0 &&
            other.variant.max_queries < k.variant.max_queries) {
            below = std::max<int64_t>(below, other.variant.max_queries);
        }
    }
    return below + 1;
}

// Nk for such a test call: 8 keys more than its queries (45 at Nq 37), so that causal rows see
// between 9 and Nk keys.
inline int64_t KeysFor(int64_t nq) {
    return std::max<int64_t>(45, nq + 8);
}

// Nk for a test call that kernel k must serve: as above, and for a kernel meant for long
// sequences (min_keys) 37 keys beyond its bound, which no block of keys divides.
inline int64_t KeysFor(const Kernel &k, int64_t nq) {
    return k.variant.min_keys > 0 ? std::max<int64_t>(KeysFor(nq), k.variant.min_keys + 37)
                                  : KeysFor(nq);
}

// The shape of a test call that kernel k must serve with nq queries: two batch elements (the
// callers mask the second one's last keys by its length), the kernel's head counts or 4 query
// heads sharing 2 key/value heads, its head dims or 24 and 20. A kernel for long sequences gets 2
// query heads sharing one: its calls have over 8000 keys, and at 4 heads the fp64 and fp32
// references made each such test take 20-50 s under the sanitizers.
inline reference::AttentionShape ShapeFor(const Kernel &k, int64_t nq) {
    const bool long_keys = k.variant.min_keys > 0;
    const int64_t heads = k.variant.heads > 0 ? k.variant.heads : (long_keys ? 2 : 4);
    const int64_t kv_heads = k.variant.kv_heads > 0 ? k.variant.kv_heads : (long_keys ? 1 : 2);
    return {2,
            heads,
            kv_heads,
            nq,
            KeysFor(k, nq),
            k.variant.d_k > 0 ? k.variant.d_k : 24,
            k.variant.d_v > 0 ? k.variant.d_v : 20};
}

inline std::string KernelName(const ::testing::TestParamInfo<Kernel> &info) {
    return info.param.name;
}

// The tensors of a case's modifiers in the runtime's types, kept alive for the call.
struct ModifierTensors {
    std::vector<float> slopes, bias;
    std::vector<int64_t> prefix, q_segments, kv_segments;

    Modifiers views(const AttentionCase &c) { return views(c.shape, c.kinds, c.modifiers); }

    // kinds: the mask kinds whose values m holds (causal aside).
    Modifiers views(const reference::AttentionShape &s, const MaskSpec &kinds,
                    const reference::ModifierValues &m) {
        Modifiers mods;
        if (m.score.softcap) mods.softcap = static_cast<float>(m.softcap);
        if (m.score.alibi) {
            slopes.assign(m.alibi_slopes.begin(), m.alibi_slopes.end());
            mods.alibi_slopes = TensorView::f32(slopes.data(), {s.heads});
        }
        if (m.score.bias) {
            bias.assign(m.bias.begin(), m.bias.end());
            const int64_t *e = m.bias_shape;
            mods.bias = TensorView::f32(bias.data(), {e[0], e[1], e[2], e[3]});
        }
        if (kinds.window) {
            if (m.window_left >= 0) mods.window_left = m.window_left;
            if (m.window_right >= 0) mods.window_right = m.window_right;
        }
        if (kinds.prefix) {
            prefix = m.prefix_lengths;
            mods.prefix_lengths = TensorView::i64(prefix.data(), {s.batch});
        }
        if (kinds.segments) {
            q_segments = m.q_segments;
            kv_segments = m.kv_segments;
            mods.q_segments = TensorView::i64(q_segments.data(), {s.batch, s.nq});
            mods.kv_segments = TensorView::i64(kv_segments.data(), {s.batch, s.nk});
        }
        return mods;
    }
};

// Gives the case every modifier of variant v with values that change the result: a window, prefix
// lengths, packed documents of 8 keys, a softcap, ALiBi slopes and a bias over every score. A
// call with all of them goes to a kernel with exactly v's modifiers, whichever others exist.
inline void UseEveryModifierOf(const Variant &v, AttentionCase *c) {
    const auto &s = c->shape;
    reference::ModifierValues &m = c->modifiers;
    c->kinds = v.mask;
    c->kinds.causal = false;
    if (v.mask.window) {
        m.window_left = 11;
        m.window_right = v.mask.causal ? -1 : 4;
    }
    if (v.mask.prefix) m.prefix_lengths.assign(s.batch, s.nk / 2);
    if (v.mask.segments) {
        for (int64_t b = 0; b < s.batch; b++) {
            for (int64_t j = 0; j < s.nk; j++) m.kv_segments.push_back(j / 8);
            for (int64_t i = 0; i < s.nq; i++) {
                m.q_segments.push_back(std::max<int64_t>(i + s.nk - s.nq, 0) / 8);
            }
        }
    }
    m.score = v.score;
    m.softcap = 4.0;
    for (int64_t h = 0; h < s.heads; h++) m.alibi_slopes.push_back(0.25 / (h + 1));
    if (v.score.bias) {
        const int64_t full[4] = {s.batch, s.heads, s.nq, s.nk};
        std::copy(full, full + 4, m.bias_shape);
        for (float x : random_values(s.batch * s.heads * s.nq * s.nk, 5)) m.bias.push_back(x);
    }
}

// Whether kernel k has modifiers beyond causal.
inline bool HasModifiers(const Kernel &k) {
    return k.variant.mask.extra_kinds() + k.variant.score.extra_kinds() > 0;
}

// The arguments of attngen::attention for the case's inputs (contiguous [B, H, N, D]) and the
// given outputs, sized and filled with `fill` (NaN shows an element a kernel did not write);
// lse and probs may be null, key lengths are passed when the case has them.
inline AttentionArgs ArgsFor(const AttentionCase &c, std::vector<float> *out,
                             std::vector<float> *lse, std::vector<float> *probs, float fill = NAN) {
    const auto &s = c.shape;
    AttentionArgs args;
    args.q = TensorView::f32(c.q.data(), {s.batch, s.heads, s.nq, s.d_k});
    args.k = TensorView::f32(c.k.data(), {s.batch, s.kv_heads, s.nk, s.d_k});
    args.v = TensorView::f32(c.v.data(), {s.batch, s.kv_heads, s.nk, s.d_v});
    out->assign(s.batch * s.heads * s.nq * s.d_v, fill);
    args.out = TensorView::f32(out->data(), {s.batch, s.heads, s.nq, s.d_v});
    if (lse != nullptr) {
        lse->assign(s.batch * s.heads * s.nq, fill);
        args.lse = TensorView::f32(lse->data(), {s.batch, s.heads, s.nq});
    }
    if (probs != nullptr) {
        probs->assign(s.batch * s.heads * s.nq * s.nk, fill);
        args.probs = TensorView::f32(probs->data(), {s.batch, s.heads, s.nq, s.nk});
    }
    if (!c.key_lengths.empty()) {
        args.key_lengths = TensorView::i64(c.key_lengths.data(), {s.batch});
    }
    args.causal = c.causal;
    args.scale = c.scale;
    return args;
}

// ArgsFor with the case's modifiers, viewed from `tensors`.
inline AttentionArgs ArgsWithModifiersFor(const AttentionCase &c, ModifierTensors *tensors,
                                          std::vector<float> *out, std::vector<float> *lse,
                                          std::vector<float> *probs, float fill = NAN) {
    AttentionArgs args = ArgsFor(c, out, lse, probs, fill);
    args.modifiers = tensors->views(c);
    return args;
}

// The 16-bit tensors of a call whose case stores bfloat16 or float16 (AttentionCase::storage and
// kv_storage): each 16-bit input as the bits of the case's values (rounded to the type), and out,
// which the kernel writes, filled with `fill` (as ArgsFor's outputs), when q's type is 16-bit.
// use_in points the arguments at them; widen_out gives the output back as float32 values, so
// that the checks of float32 calls serve all. A float32 tensor keeps ArgsFor's view.
class StoredTensors {
  public:
    void use_in(const AttentionCase &c, AttentionArgs *args, float fill = NAN) {
        storage_ = c.storage;
        const auto &s = c.shape;
        const auto stored = [](DType type, const std::vector<float> &values,
                               std::vector<uint16_t> *bits, TensorView *view,
                               std::initializer_list<int64_t> shape) {
            if (type == DType::kFloat32) return;
            bits->clear();
            for (float x : values) bits->push_back(reference::to_bits(type, x));
            *view = TensorView::contiguous(bits->data(), type, shape);
        };
        stored(c.storage, c.q, &q_, &args->q, {s.batch, s.heads, s.nq, s.d_k});
        stored(c.kv_type(), c.k, &k_, &args->k, {s.batch, s.kv_heads, s.nk, s.d_k});
        stored(c.kv_type(), c.v, &v_, &args->v, {s.batch, s.kv_heads, s.nk, s.d_v});
        if (storage_ == DType::kFloat32) return;
        out_.assign(s.batch * s.heads * s.nq * s.d_v, reference::to_bits(storage_, fill));
        args->out = TensorView::contiguous(out_.data(), storage_, {s.batch, s.heads, s.nq, s.d_v});
    }

    void widen_out(std::vector<float> *out) const {
        if (storage_ == DType::kFloat32) return;
        out->clear();
        for (uint16_t b : out_) out->push_back(reference::from_bits(storage_, b));
    }

    const std::vector<uint16_t> &out_bits() const { return out_; }

  private:
    DType storage_ = DType::kFloat32;
    std::vector<uint16_t> q_, k_, v_, out_;
};

}  // namespace attngen::test
