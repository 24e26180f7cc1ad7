// libFuzzer target for the runtime's public API: attngen::attention with shapes, strides (BHSD,
// BSHD, padded, reversed), head counts, key lengths, scales, masks, score and mask modifiers
// (windows, prefixes, segments, softcap, ALiBi, broadcast biases), optional outputs, schedule
// names and the storage types of q and out and of k and v (float32, bfloat16, float16; float32
// queries with a 16-bit KV cache) drawn from the input. A 16-bit call is checked on inputs rounded
// to its type, against twice the error of the plain implementation in that precision
// (reference/low_precision.h).
//
// Every call must either return an error status, or return ok with outputs that match the fp64
// reference (reference/reference.h, with the tolerance of reference/compare.h) and with nothing
// written outside the outputs' elements. A call that the draw made invalid on purpose (a
// mismatched extent, an out-of-range key length, a non-contiguous innermost dimension, an
// output aliasing an input, a non-finite scale) must fail. Sizes stay small so that the
// reference is cheap and the fuzzer runs many calls per second.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "attngen/attngen.h"
#include "compare.h"
#include "drawn_modifiers.h"
#include "low_precision.h"
#include "reference.h"
#include "test_util.h"

namespace {

using attngen::AttentionArgs;
using attngen::DType;
using attngen::Status;
using attngen::TensorView;
using attngen::test::random_values;

constexpr float kSentinel = -12345.0f;

[[noreturn]] void fail(const std::string &what) {
    std::fprintf(stderr, "attention_fuzz: %s\n", what.c_str());
    __builtin_trap();
}

// A rank-4 tensor [B, H, N, D] stored with a drawn layout: a permutation of the three outer
// dimensions, padding after each, and optionally a reversed outer dimension (negative stride).
// `dense` holds its logical values in [B, H, N, D] order. A tensor of a 16-bit type (use_16_bits)
// keeps its elements in storage16, in the same layout, and storage then holds their float32
// values only where fill or gather put them.
struct Stored {
    std::vector<float> storage;
    std::vector<uint16_t> storage16;
    DType dtype = DType::kFloat32;
    std::vector<int64_t> shape;
    int64_t strides[4] = {0, 0, 0, 1};
    int64_t offset = 0;  // Of element (0, 0, 0, 0) in storage.

    void layout(FuzzedDataProvider &in, const std::vector<int64_t> &dims, bool allow_reversed) {
        shape = dims;
        int order[3] = {0, 1, 2};
        // 0: BHSD, 1: BSHD, others: any permutation of the outer dimensions.
        const int perm = in.ConsumeIntegralInRange<int>(0, 5);
        static const int kPerms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                         {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
        std::copy(kPerms[perm], kPerms[perm] + 3, order);
        // Innermost first: D contiguous, then the outer dimensions in the drawn order
        // (order[2] varies fastest after D), each padded by a few elements.
        int64_t step = shape[3] + in.ConsumeIntegralInRange<int>(0, 3);
        for (int k = 2; k >= 0; k--) {
            const int d = order[k];
            strides[d] = step;
            step = step * shape[d] + in.ConsumeIntegralInRange<int>(0, 2);
        }
        int64_t lo = 0, hi = 0;
        if (allow_reversed && in.ConsumeBool()) {
            const int d = in.ConsumeIntegralInRange<int>(0, 2);
            strides[d] = -strides[d];
        }
        for (int d = 0; d < 4; d++) {
            const int64_t reach = (shape[d] - 1) * strides[d];
            if (reach < 0) lo += reach;
            if (reach > 0) hi += reach;
        }
        offset = -lo;
        storage.assign(hi - lo + 1, kSentinel);
    }

    void use_16_bits(DType type) {
        dtype = type;
        storage16.assign(storage.size(), sentinel16());
    }

    uint16_t sentinel16() const { return attngen::reference::to_bits(dtype, kSentinel); }

    int64_t at(int64_t b, int64_t h, int64_t n, int64_t d) const {
        return offset + b * strides[0] + h * strides[1] + n * strides[2] + d * strides[3];
    }

    void fill(const std::vector<float> &dense) {
        int64_t x = 0;
        for (int64_t b = 0; b < shape[0]; b++)
            for (int64_t h = 0; h < shape[1]; h++)
                for (int64_t n = 0; n < shape[2]; n++)
                    for (int64_t d = 0; d < shape[3]; d++) storage[at(b, h, n, d)] = dense[x++];
        if (dtype != DType::kFloat32) {
            for (std::size_t e = 0; e < storage.size(); e++) {
                if (storage[e] != kSentinel) {
                    storage16[e] = attngen::reference::to_bits(dtype, storage[e]);
                }
            }
        }
    }

    std::vector<float> gather() const {
        if (dtype != DType::kFloat32) {
            std::vector<float> dense;
            for (int64_t b = 0; b < shape[0]; b++)
                for (int64_t h = 0; h < shape[1]; h++)
                    for (int64_t n = 0; n < shape[2]; n++)
                        for (int64_t d = 0; d < shape[3]; d++) {
                            dense.push_back(
                                attngen::reference::from_bits(dtype, storage16[at(b, h, n, d)]));
                        }
            return dense;
        }
        std::vector<float> dense;
        for (int64_t b = 0; b < shape[0]; b++)
            for (int64_t h = 0; h < shape[1]; h++)
                for (int64_t n = 0; n < shape[2]; n++)
                    for (int64_t d = 0; d < shape[3]; d++) dense.push_back(storage[at(b, h, n, d)]);
        return dense;
    }

    // Every storage element that is not an element of the view still holds the sentinel.
    bool padding_untouched() const {
        std::vector<bool> used(storage.size(), false);
        for (int64_t b = 0; b < shape[0]; b++)
            for (int64_t h = 0; h < shape[1]; h++)
                for (int64_t n = 0; n < shape[2]; n++)
                    for (int64_t d = 0; d < shape[3]; d++) used[at(b, h, n, d)] = true;
        for (std::size_t x = 0; x < storage.size(); x++) {
            if (used[x]) continue;
            if (dtype != DType::kFloat32 ? storage16[x] != sentinel16()
                                         : std::memcmp(&storage[x], &kSentinel, 4) != 0) {
                return false;
            }
        }
        return true;
    }

    // Whether any element, of the view or not, differs from the sentinel.
    bool written() const {
        if (dtype != DType::kFloat32) {
            for (uint16_t x : storage16) {
                if (x != sentinel16()) return true;
            }
            return false;
        }
        for (float x : storage) {
            if (std::memcmp(&x, &kSentinel, 4) != 0) return true;
        }
        return false;
    }

    TensorView view() {
        void *data = dtype != DType::kFloat32 ? static_cast<void *>(storage16.data() + offset)
                                              : static_cast<void *>(storage.data() + offset);
        TensorView v =
            TensorView::contiguous(data, dtype, {shape[0], shape[1], shape[2], shape[3]});
        return v.with_strides({strides[0], strides[1], strides[2], strides[3]});
    }
};

std::string describe(const attngen::reference::AttentionShape &s, bool causal, float scale,
                     const std::string &schedule) {
    char text[256];
    std::snprintf(text, sizeof text,
                  "B%lld H%lld Hkv%lld Nq%lld Nk%lld dk%lld dv%lld%s scale %g %s",
                  (long long)s.batch, (long long)s.heads, (long long)s.kv_heads, (long long)s.nq,
                  (long long)s.nk, (long long)s.d_k, (long long)s.d_v, causal ? " causal" : "",
                  scale, schedule.c_str());
    return text;
}

// The tolerance of reference/compare.h, a multiple of the naive float32 implementation's error
// plus `ulps` float32 ulps of the result's scale, with ulps widened for large scores: a score s
// is rounded to within |s| d_k eps in float32 whatever the order of the sum, and the weights
// e^(s - max) inherit that as a relative error. The naive implementation may be luckier than
// that on a given input (its rounding of the scores can happen to cancel), so its error alone
// does not bound a kernel's that sums in another order.
// A 16-bit call's factor is issue 41's 2, against the plain implementation in its precision.
//
// `scale_floor` is the least result scale the ulps count from. The lse is an exponent, whose
// error acts in absolute terms (a probability e^(s - lse) is off by the relative amount lse is off
// absolutely), and the online softmax computes it as (m + log2 l) ln 2 with m a whole number above
// the row's largest score: l, the largest weight at most, rounds to a float near 1/2 to 1, so an
// lse near 0 carries an absolute error of about a float32 ulp of 1 (3e-8 at lse 1.6e-4, where a
// row of one key gave the naive implementation no error at all). Its ulps count from 1.
void check(const char *what, const std::vector<float> &actual, const std::vector<double> &expected,
           const std::vector<float> &naive, double max_abs_score, int64_t d_k,
           const std::string &call, double factor, double scale_floor = 0.0) {
    double ulps = 16.0 + 4.0 * static_cast<double>(d_k) * max_abs_score;
    double max_reference = 0;
    for (double e : expected) {
        if (std::isfinite(e)) max_reference = std::max(max_reference, std::fabs(e));
    }
    if (max_reference < scale_floor) {
        ulps *= max_reference > 0 ? scale_floor / max_reference : 1.0;
    }
    auto c = attngen::reference::compare(actual.data(), expected.data(), naive.data(),
                                         static_cast<int64_t>(actual.size()), factor, ulps);
    if (!c.ok) {
        fail(std::string(what) + " differs from the reference: " + attngen::reference::describe(c) +
             " (" + call + ")");
    }
}

// The largest |q_i . k_j| * |scale| term sum over rows and keys: the scale of the scores' rounding.
double max_abs_score(const attngen::reference::AttentionShape &s, const std::vector<float> &q,
                     const std::vector<float> &k, float scale) {
    double worst = 0;
    const int64_t group = s.heads / s.kv_heads;
    for (int64_t b = 0; b < s.batch; b++)
        for (int64_t h = 0; h < s.heads; h++)
            for (int64_t i = 0; i < s.nq; i++)
                for (int64_t j = 0; j < s.nk; j++) {
                    double sum = 0;
                    for (int64_t d = 0; d < s.d_k; d++) {
                        sum += std::fabs(q[((b * s.heads + h) * s.nq + i) * s.d_k + d] *
                                         k[((b * s.kv_heads + h / group) * s.nk + j) * s.d_k + d]);
                    }
                    worst = std::max(worst, sum * std::fabs(scale));
                }
    return worst;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    attngen::reference::AttentionShape s;
    s.batch = in.ConsumeIntegralInRange<int64_t>(1, 3);
    s.kv_heads = in.ConsumeIntegralInRange<int64_t>(1, 3);
    s.heads = s.kv_heads * in.ConsumeIntegralInRange<int64_t>(1, 3);
    s.nq = in.ConsumeIntegralInRange<int64_t>(1, 40);
    s.nk = in.ConsumeIntegralInRange<int64_t>(1, 40);
    s.d_k = in.ConsumeIntegralInRange<int64_t>(1, 24);
    s.d_v = in.ConsumeIntegralInRange<int64_t>(1, 24);
    const bool causal = in.ConsumeBool();
    const bool with_lse = in.ConsumeBool();
    const bool with_probs = in.ConsumeBool();

    std::optional<float> scale;
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
        case 0:
            break;  // The default, 1 / sqrt(d_k).
        case 1:
            scale = 0.0f;
            break;
        default:
            scale = in.ConsumeFloatingPointInRange<float>(-4.0f, 4.0f);
            break;
    }
    const float magnitude = in.ConsumeBool() ? 1.0f : 30.0f;

    // Key lengths: none, int32 or int64, each in [0, nk].
    const int lengths_kind = in.ConsumeIntegralInRange<int>(0, 2);
    std::vector<int64_t> lengths;
    std::vector<int32_t> lengths32;
    if (lengths_kind != 0) {
        for (int64_t b = 0; b < s.batch; b++) {
            lengths.push_back(in.ConsumeIntegralInRange<int64_t>(0, s.nk));
            lengths32.push_back(static_cast<int32_t>(lengths.back()));
        }
    }

    const std::string schedules[] = {"", "cpu_fused", "cpu_tiled", "cpu_basic", "reference"};
    const std::string schedule = schedules[in.ConsumeIntegralInRange<int>(0, 4)];

    // At most one deliberate error per call, so that a successful call can be blamed on it.
    enum Defect {
        kNone,
        kHeadDim,
        kValueLength,
        kHeadsNotMultiple,
        kKeyLengthTooLarge,
        kKeyLengthNegative,
        kInnerStride,
        kOutputAliasesInput,
        kNonFiniteScale,
        kZeroExtent,
        kOutputShape,
        kMixedTypes,
        kDefectCount
    };
    const int defect_draw = in.ConsumeIntegralInRange<int>(0, 2 * kDefectCount);
    const Defect defect = defect_draw < kDefectCount ? static_cast<Defect>(defect_draw) : kNone;

    Stored q, k, v, out, lse, probs;
    q.layout(in, {s.batch, s.heads, s.nq, s.d_k}, true);
    k.layout(in, {s.batch, s.kv_heads, s.nk, s.d_k + (defect == kHeadDim ? 1 : 0)}, true);
    v.layout(in, {s.batch, s.kv_heads, s.nk + (defect == kValueLength ? 1 : 0), s.d_v}, true);
    out.layout(in, {s.batch, s.heads, s.nq + (defect == kOutputShape ? 1 : 0), s.d_v}, true);
    // lse [B, H, Nq] is stored as [B, H, 1, Nq], so that Nq is its contiguous innermost
    // dimension; its view below drops the dimension of extent 1.
    lse.layout(in, {s.batch, s.heads, 1, s.nq}, false);
    probs.layout(in, {s.batch, s.heads, s.nq, s.nk}, true);

    const uint32_t seed = in.ConsumeIntegral<uint32_t>();
    attngen::fuzz::DrawnModifiers modifiers;
    modifiers.draw(in, s, causal, defect == kNone);
    // The storage types of q and out and of k and v: all float32 a third of the time, all 16-bit
    // a third, float32 queries with a 16-bit KV cache a third.
    const std::pair<DType, DType> kStorages[] = {
        {DType::kFloat32, DType::kFloat32},   {DType::kFloat32, DType::kFloat32},
        {DType::kBFloat16, DType::kBFloat16}, {DType::kFloat16, DType::kFloat16},
        {DType::kFloat32, DType::kBFloat16},  {DType::kFloat32, DType::kFloat16}};
    const auto [storage, kv_storage] = kStorages[in.ConsumeIntegralInRange<int>(0, 5)];
    if (storage != DType::kFloat32) {
        for (Stored *t : {&q, &out}) t->use_16_bits(storage);
    }
    if (kv_storage != DType::kFloat32) {
        for (Stored *t : {&k, &v}) t->use_16_bits(kv_storage);
    }
    auto qd = random_values(s.batch * s.heads * s.nq * s.d_k, seed, -magnitude, magnitude);
    auto kd = random_values(s.batch * s.kv_heads * s.nk * s.d_k, seed + 1, -magnitude, magnitude);
    auto vd = random_values(s.batch * s.kv_heads * s.nk * s.d_v, seed + 2);
    // The references compute on the values the kernel reads.
    for (float &x : qd) x = attngen::reference::round_to(storage, x);
    for (std::vector<float> *dense : {&kd, &vd}) {
        for (float &x : *dense) x = attngen::reference::round_to(kv_storage, x);
    }
    q.fill(qd);
    if (defect != kHeadDim) k.fill(kd);
    if (defect != kValueLength) v.fill(vd);

    AttentionArgs args;
    args.q = q.view();
    args.k = k.view();
    args.v = v.view();
    args.out = out.view();
    if (with_lse) {
        args.lse = TensorView::f32(lse.storage.data() + lse.offset, {s.batch, s.heads, s.nq})
                       .with_strides({lse.strides[0], lse.strides[1], 1});
    }
    if (with_probs) args.probs = probs.view();
    if (lengths_kind == 1) args.key_lengths = TensorView::i32(lengths32.data(), {s.batch});
    if (lengths_kind == 2) args.key_lengths = TensorView::i64(lengths.data(), {s.batch});
    args.causal = causal;
    args.scale = scale;
    args.schedule = schedule;
    args.modifiers = modifiers.views(s);

    std::vector<int64_t> bad_lengths;
    switch (defect) {
        case kHeadsNotMultiple:
            if (s.kv_heads > 1) {
                args.q.shape[1] = s.heads + 1;
                args.out.shape[1] = s.heads + 1;
            }
            break;
        case kKeyLengthTooLarge:
        case kKeyLengthNegative:
            bad_lengths.assign(s.batch, 0);
            bad_lengths[in.ConsumeIntegralInRange<int64_t>(0, s.batch - 1)] =
                defect == kKeyLengthTooLarge ? s.nk + 1 : -1;
            args.key_lengths = TensorView::i64(bad_lengths.data(), {s.batch});
            break;
        case kInnerStride:
            if (s.d_k > 1) args.q.strides[3] = 2;
            break;
        case kOutputAliasesInput:
            args.out = TensorView::contiguous(args.q.data, storage, {s.batch, s.heads, s.nq, s.d_v})
                           .with_strides({q.strides[0], q.strides[1], q.strides[2], 1});
            break;
        case kMixedTypes:
            // k's elements read as another storage type than v's (its bytes are not its values,
            // but the call must be refused before any is read).
            args.k.dtype = kv_storage == DType::kFloat32 ? DType::kBFloat16 : DType::kFloat32;
            break;
        case kNonFiniteScale:
            args.scale = in.ConsumeBool() ? NAN : INFINITY;
            break;
        case kZeroExtent:
            args.k.shape[2] = 0;
            args.v.shape[2] = 0;
            break;
        default:
            break;
    }
    // Some defects cannot be expressed for this shape (one kv head, d_k = 1): then the call is
    // valid after all. An aliasing output needs d_v <= d_k to stay inside q's storage.
    bool must_fail = defect != kNone || modifiers.defect;
    if (defect == kHeadsNotMultiple && s.kv_heads == 1) must_fail = false;
    if (defect == kInnerStride && s.d_k == 1) must_fail = false;
    if (defect == kOutputAliasesInput && s.d_v > s.d_k) {
        args.out = out.view();
        must_fail = false;
    }

    attngen::CallInfo info;
    const Status status = attngen::attention(args, &info);
    const float effective_scale = args.scale ? *args.scale : 1.0f / std::sqrt(float(s.d_k));
    const std::string call = describe(s, causal, effective_scale, schedule) + " defect " +
                             std::to_string(defect) + " kernel " + info.kernel;
    if (!status.ok()) {
        if (status.message().empty()) fail("error without a message: " + call);
        // A valid call may only fail for want of a kernel (a schedule without, say, a
        // probabilities variant in this build).
        if (!must_fail && status.code() != attngen::StatusCode::kNotFound) {
            fail("valid call failed: " + status.to_string() + " (" + call + ")");
        }
        // Nothing is written when a call fails.
        for (const Stored *t : {&out, &lse, &probs}) {
            if (t->written()) fail("a failed call wrote: " + call);
        }
        return 0;
    }
    if (must_fail) fail("invalid call succeeded: " + call);

    // The reference on the dense logical tensors.
    const std::size_t rows = s.batch * s.heads * s.nq;
    std::vector<double> ref_out(rows * s.d_v), ref_lse(rows), ref_probs(rows * s.nk);
    std::vector<float> naive_out(rows * s.d_v), naive_lse(rows), naive_probs(rows * s.nk);
    const std::vector<double> qx(qd.begin(), qd.end()), kx(kd.begin(), kd.end()),
        vx(vd.begin(), vd.end());
    attngen::MaskSpec mask = modifiers.kinds;
    mask.causal = causal;
    attngen::reference::attention<double>(s, qx.data(), kx.data(), vx.data(), lengths, mask,
                                          effective_scale, ref_out.data(), ref_lse.data(),
                                          ref_probs.data(), &modifiers.values);
    attngen::reference::attention<float>(s, qd.data(), kd.data(), vd.data(), lengths, mask,
                                         effective_scale, naive_out.data(), naive_lse.data(),
                                         naive_probs.data(), &modifiers.values);
    double factor = 8.0;
    if (storage != DType::kFloat32) {
        attngen::reference::attention_in_storage(storage, s, qd.data(), kd.data(), vd.data(),
                                                 lengths, mask, effective_scale, naive_out.data(),
                                                 naive_lse.data(), &modifiers.values);
        factor = 2.0;
    }
    const double scores = max_abs_score(s, qd, kd, effective_scale) + modifiers.added_magnitude(s);
    check("out", out.gather(), ref_out, naive_out, scores, s.d_k, call, factor);
    if (!out.padding_untouched()) fail("out's padding was written: " + call);
    if (with_lse) {
        check("lse", lse.gather(), ref_lse, naive_lse, scores, s.d_k, call, factor, 1.0);
        if (!lse.padding_untouched()) fail("lse's padding was written: " + call);
    }
    if (with_probs) {
        check("probs", probs.gather(), ref_probs, naive_probs, scores, s.d_k, call, 8.0);
        if (!probs.padding_untouched()) fail("probs' padding was written: " + call);
    }
    return 0;
}
