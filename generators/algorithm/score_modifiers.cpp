#include "score_modifiers.h"

#include "dims.h"
#include "numerics.h"

namespace attngen::algorithm {

using Halide::Expr;

Expr tanh_by_exp2(const Expr &x) {
    // tanh|x| = (1 - t) / (1 + t) with t = e^(-2|x|) = 2^(-2 |x| log2(e)) in (0, 1]: the
    // exponent is never positive, as exp2_nonpositive needs, and a large |x| gives t near 0
    // rather than an overflow. Below |x| = 1/4, 1 - t cancels (its error is t's, about 1e-7,
    // against a result near 2|x|), so there an odd Taylor polynomial of degree 9 takes over,
    // whose truncation error is below 2e-8 relative. The sign is put back on the bits.
    const Expr magnitude = Halide::abs(x);
    const Expr t = exp2_nonpositive(magnitude * (-2.0f * kLog2e));
    const Expr x2 = magnitude * magnitude;
    Expr series = 62.0f / 2835.0f;
    series = series * x2 - 17.0f / 315.0f;
    series = series * x2 + 2.0f / 15.0f;
    series = series * x2 - 1.0f / 3.0f;
    series = magnitude + magnitude * x2 * series;
    const Expr tanh_magnitude = Halide::select(magnitude < 0.25f, series, (1.0f - t) / (1.0f + t));
    const Expr sign = Halide::reinterpret<uint32_t>(x) & Expr(uint32_t{0x80000000});
    // Under LLVM's no-NaNs flag the select above may take either side for a NaN argument, and
    // the result was finite (a NaN score then escaped the softmax's NaN rule): a NaN argument is
    // put back on the bits.
    return keep_nan(
        x, Halide::reinterpret<float>(Halide::reinterpret<uint32_t>(tanh_magnitude) | sign));
}

ScoreModifier define_score_modifier(const ScoreSpec &spec, const ScoreInputs &in, const Expr &nq,
                                    const Expr &nk) {
    if (!spec.any() && !in.user) return {};
    ScoreModifier modifier;
    if (spec.bias) {
        // min(index, extent - 1) reads 0 along a broadcast dim; bounds inference sees that the
        // reads stay within the extents, so that a broadcast bias needs no buffer of the call's
        // full size (whose B H Nq Nk elements could pass Halide's 2^31 limit).
        const Dims &v = dims();
        const Expr row = Halide::min(Halide::clamp(v.i, 0, nq - 1), in.bias_rows - 1);
        modifier.bias = Halide::Func("score_bias");
        // The key's clamp is likely a no-op: a schedule that stages the bias in whole vectors of
        // keys (rounding past Nk) then gets a loop without it, whose loads are dense, and one
        // with it for the last vector.
        modifier.bias(v.j, v.i, v.h, v.b) =
            in.bias(Halide::clamp(Halide::likely(v.j), 0, nk - 1), row,
                    Halide::min(v.h, in.bias_heads - 1), Halide::min(v.b, in.bias_batch - 1));
    }
    modifier.apply = [spec, in, nq, nk, bias = modifier.bias](const Expr &s, const Expr &j,
                                                              const Expr &i, const Expr &h,
                                                              const Expr &b) {
        Expr score = s;
        if (spec.softcap) {
            // A softcap of 0 is off: the value by which the runtime runs a call without a
            // softcap on a kernel with one. One select per score, next to a tanh. The reciprocal
            // of C is computed once per call, so that each score costs a multiplication.
            const Expr inverse_cap = 1.0f / in.softcap;
            score = Halide::select(in.softcap > 0.0f,
                                   in.softcap * tanh_by_exp2(score * inverse_cap), score);
        }
        if (spec.alibi) {
            // The distance converted before its magnitude is taken: abs of an int32 is a uint32,
            // whose conversion to float takes several instructions on AVX2 and SSE. Exact below
            // 2^24 keys.
            const Expr distance = Halide::abs(Halide::cast<float>(i + (nk - nq) - j));
            score -= in.alibi_slopes(h) * distance;
        }
        if (spec.bias) score += bias(j, i, h, b);
        // Clamped like the bias's indices: rows and keys past the ends are computed by some
        // schedules and never used, and a user's table lookup must not read past its tensor.
        if (in.user) {
            score = in.user(score, Halide::clamp(j, 0, nk - 1), Halide::clamp(i, 0, nq - 1), h, b);
        }
        return score;
    };
    return modifier;
}

}  // namespace attngen::algorithm
