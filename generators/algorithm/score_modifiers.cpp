#include "score_modifiers.h"

#include "dims.h"
#include "numerics.h"

namespace attngen::algorithm {

using Halide::Expr;

Expr capped_tanh(const Expr &s, const Expr &bound, const Expr &inverse_cap) {
    // C tanh(s / C) = c P(y) / Q(y) with c = clamp(s, -9C, 9C) and y = (c / C)^2, P and Q of
    // degree 4 (scripts/tanh_coefficients.py: relative error 3.6e-7 at most in float32): beyond
    // |s / C| = 9, tanh rounds to +-1, which the fit reaches at 9. Written around c rather than
    // around x = s / C, C tanh(x) needs no multiply by C at the end. Two clamps, eight
    // multiply-adds, three multiplies, a division and the NaN test; the result is not clamped to
    // [-C, C]: in float32 the fit exceeds 1 by at most 2.4e-7 (near x = 8.3), within its
    // error. Against the form before (x clamped to [-9, 9], its result to [-1, 1], then times
    // C): three vector instructions fewer per score, on Intel's AVX-512 each a slot of the two
    // pipes that the dot products' multiply-adds use.
    // Where (1 - t) / (1 + t) with t = 2^(-2|x| log2 e) needed an exp2 (with a NaN test of its
    // own), a Taylor series below |x| = 1/4 (where 1 - t cancels), a select between them and
    // the sign put back, the rational function took 0.92 against 1.10 ns per tanh in a
    // JIT-compiled AVX-512 loop (the best of 200 runs, Intel Xeon). The division stays: a
    // reciprocal estimate with a Newton step took 1.05-1.08 ns there, and was slower on AMD too.
    const Expr clamped = Halide::clamp(s, -bound, bound);
    const Expr x = clamped * inverse_cap;
    const Expr y = x * x;
    Expr num = 1.3419569456e-08f;
    num = num * y + 2.0661080271e-05f;
    num = num * y + 3.4989849664e-03f;
    num = num * y + 1.3383971155e-01f;
    num = num * y + 1.0f;
    Expr den = 7.8046258523e-07f;
    den = den * y + 3.2910201116e-04f;
    den = den * y + 2.5890164077e-02f;
    den = den * y + 4.6717292070e-01f;
    den = den * y + 1.0f;
    // Under LLVM's no-NaNs flag the clamp may turn a NaN argument into a finite bound (a NaN
    // score would then escape the softmax's NaN rule): a NaN argument is put back on the bits.
    return keep_nan(s, clamped * num / den);
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
            // softcap on a kernel with one. One select per score, next to the tanh. The bound 9C
            // and 1/C are computed once per call, so that each score costs no division by C.
            score = Halide::select(in.softcap > 0.0f,
                                   capped_tanh(score, 9.0f * in.softcap, 1.0f / in.softcap), score);
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
