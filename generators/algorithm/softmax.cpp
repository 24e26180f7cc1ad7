#include "softmax.h"

#include <limits>

#include "dims.h"
#include "numerics.h"

namespace attngen::algorithm {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;

SoftmaxFuncs define_softmax(const Func &scores, const Expr &nk, const KeyMask &mask,
                            const Expr &to_base_two) {
    const Dims &v = dims();
    const std::vector<Expr> row{v.i, v.h, v.b};
    SoftmaxFuncs f;
    f.scores = scores;
    // The score of a key as a power of two. A factor of 1 (scores already in base 2) vanishes
    // in Halide's simplifier.
    auto exponent = [&](Expr key) { return scores(key, v.i, v.h, v.b) * to_base_two; };

    f.row_max = Func("row_max");
    // The lowest finite float rather than -inf: a row whose allowed scores are all -inf (an
    // input of -inf) then still has a finite maximum to subtract. The second value is the
    // largest magnitude of an allowed score, as bits (magnitude_bits), which tells whether the
    // row has a NaN score: the pass over the scores that finds the maximum finds it too, two
    // integer operations per vector in a pass that waits on memory more than on arithmetic,
    // and the exponentials need no NaN guard of their own.
    const Halide::Tuple no_score(std::numeric_limits<float>::lowest(), Expr(uint32_t{0}));
    f.row_max(row) = no_score;
    KeyReduction max_keys = reduce_tuple_over_keys(
        f.row_max, row, mask, nk,
        [&](Expr key) {
            // Strict, so that LLVM cannot assume that the score whose bits are tested is not NaN.
            const Expr y = Halide::strict_float(exponent(key));
            return Halide::Tuple(y, magnitude_bits(y));
        },
        [](const Halide::Tuple &a, const Halide::Tuple &x) {
            return Halide::Tuple(Halide::max(a[0], x[0]), Halide::max(a[1], x[1]));
        },
        no_score, "max_keys");
    f.max_keys = max_keys.dense;
    f.max_band = max_keys.band;
    f.max_lower_band = max_keys.lower_band;
    const Expr row_max = f.row_max(v.i, v.h, v.b)[0];
    // A NaN among the allowed scores, or +inf (whose weight would be 2^(inf - inf)), makes the
    // row NaN, as in PyTorch; -inf is an ordinary score whose weight vanishes.
    const Expr inf_bits = Expr(uint32_t{0x7f800000});
    const Expr nan_row = f.row_max(v.i, v.h, v.b)[1] > inf_bits ||
                         Halide::reinterpret<uint32_t>(row_max) == inf_bits;

    // A row is empty when it has no allowed key, or when every allowed score is -inf (a bias or
    // an input of -inf): its maximum then stayed the lowest float, and its weights, 0 each
    // after exp2_nonpositive's clamp, must not divide 0 by 0. A row of NaN scores may keep
    // that maximum too (float max ignores NaN under LLVM's no-NaNs flag): it is NaN, not empty.
    const Expr empty_row = mask.end(v.i, v.b) <= mask.begin_at(v.i, v.b) ||
                           (Halide::reinterpret<uint32_t>(row_max) == lowest_bits() && !nan_row);

    f.weights = Func("weights");
    // The exponent computed strictly, as for the maximum, so that the key with the maximum gets
    // exactly 0 and no key a positive argument: with the product contracted into a multiply-add
    // with the subtraction (LLVM does so where a schedule inlines the scores), the difference
    // was the product's rounding error, up to half an ulp of the score, which at scores from
    // about 1e12 (2^-24 of them is far beyond the exponent range) gave the row's maximum a weight
    // of 0 or a garbage power of two, and the row NaN or -inf (cpu_fused, 2026-12-07).
    // The subtraction is strict too: LLVM's AArch64 backend fuses a multiply into an addition
    // or subtraction that allows contraction even when the multiply itself does not (its machine
    // combiner looks at the addition only), and did so here (fmla on the negated maximum).
    f.weights(v.j, v.i, v.h, v.b) =
        exp2_nonpositive_of_number(Halide::strict_float(exponent(v.j) - row_max));

    f.row_sum = Func("row_sum");
    f.row_sum(row) = 0.0f;
    KeyReduction sum_keys = reduce_over_keys(
        f.row_sum, row, mask, nk, [&](Expr key) { return f.weights(key, v.i, v.h, v.b); },
        [](Expr a, Expr x) { return a + x; }, Expr(0.0f), "sum_keys");
    f.sum_keys = sum_keys.dense;
    f.sum_band = sum_keys.band;
    f.sum_lower_band = sum_keys.lower_band;

    f.inv_sum = Func("inv_sum");
    f.inv_sum(v.i, v.h, v.b) =
        nan_where(nan_row, Halide::select(empty_row, 0.0f, 1.0f / f.row_sum(v.i, v.h, v.b)));

    f.probs = Func("probs");
    f.probs(v.j, v.i, v.h, v.b) = Halide::select(
        mask.allows(v.j, v.i, v.b), f.weights(v.j, v.i, v.h, v.b) * f.inv_sum(v.i, v.h, v.b), 0.0f);

    f.lse = Func("lse");
    // The row maximum is a power of two: ln(2^m l) = m ln 2 + ln l. A NaN row has a finite row
    // sum (its weights are numbers), so its NaN comes from the flag.
    Expr lse = row_max * kLn2 + Halide::log(f.row_sum(v.i, v.h, v.b));
    f.lse(v.i, v.h, v.b) = Halide::select(empty_row, Expr(-std::numeric_limits<float>::infinity()),
                                          nan_where(nan_row, lse));
    return f;
}

}  // namespace attngen::algorithm
