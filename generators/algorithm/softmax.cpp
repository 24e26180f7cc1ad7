#include "softmax.h"

#include <limits>
#include <tuple>

#include "dims.h"
#include "numerics.h"

namespace attngen::algorithm {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;

SoftmaxFuncs define_softmax(const Func &scores, const Expr &nk, const KeyMask &mask,
                            const Expr &to_base_two) {
    const Dims &v = dims();
    const Func &key_end = mask.end;
    const Expr empty_row = key_end(v.i, v.b) <= 0;
    const std::vector<Expr> row{v.i, v.h, v.b};
    SoftmaxFuncs f;
    f.scores = scores;
    // The score of a key as a power of two. A factor of 1 (scores already in base 2) vanishes
    // in Halide's simplifier.
    auto exponent = [&](Expr key) { return scores(key, v.i, v.h, v.b) * to_base_two; };

    f.row_max = Func("row_max");
    // The lowest finite float rather than -inf: a row whose allowed scores are all -inf (an
    // input of -inf) then still has a finite maximum to subtract.
    f.row_max(row) = std::numeric_limits<float>::lowest();
    std::tie(f.max_keys, f.max_band) = reduce_over_keys(
        f.row_max, row, mask, nk, exponent, [](Expr a, Expr x) { return Halide::max(a, x); },
        "max_keys");

    f.weights = Func("weights");
    f.weights(v.j, v.i, v.h, v.b) = exp2_nonpositive(exponent(v.j) - f.row_max(v.i, v.h, v.b));

    f.row_sum = Func("row_sum");
    f.row_sum(row) = 0.0f;
    std::tie(f.sum_keys, f.sum_band) = reduce_over_keys(
        f.row_sum, row, mask, nk, [&](Expr key) { return f.weights(key, v.i, v.h, v.b); },
        [](Expr a, Expr x) { return a + x; }, "sum_keys");

    f.inv_sum = Func("inv_sum");
    f.inv_sum(v.i, v.h, v.b) = Halide::select(empty_row, 0.0f, 1.0f / f.row_sum(v.i, v.h, v.b));

    f.probs = Func("probs");
    f.probs(v.j, v.i, v.h, v.b) = Halide::select(
        v.j < key_end(v.i, v.b), f.weights(v.j, v.i, v.h, v.b) * f.inv_sum(v.i, v.h, v.b), 0.0f);

    f.lse = Func("lse");
    // The row maximum is a power of two: ln(2^m l) = m ln 2 + ln l. A NaN row sum (a NaN or
    // +inf among the allowed scores) must give a NaN lse; Halide's log would make it finite.
    Expr row_sum = f.row_sum(v.i, v.h, v.b);
    Expr lse = f.row_max(v.i, v.h, v.b) * kLn2 + Halide::log(row_sum);
    f.lse(v.i, v.h, v.b) = Halide::select(empty_row, Expr(-std::numeric_limits<float>::infinity()),
                                          keep_nan(row_sum, lse));
    return f;
}

}  // namespace attngen::algorithm
