// Stage 3: a numerically stable softmax over each row of scores.
//
// For a row with allowed keys [0, key_end): m = max s, w_j = e^(s_j - m), l = sum w_j,
// p_j = w_j / l, lse = m + log l. Subtracting the row maximum keeps every exponent <= 0, so
// scores near 1e4 neither overflow nor lose the row. A row with no allowed key has l = 0; it
// gets p = 0 and lse = -inf instead of 0/0.
//
// The exponentials are powers of two: with y = s log2(e), w_j = 2^(y_j - max y) is the same
// weight, and 2^x needs no Cody-Waite reduction (numerics.h). The factor to_base_two turns a
// score into its y: log2(e) for scores in natural units (the softmax stage's input), 1 where
// the producer already folded log2(e) into its own multiply (the composed attention scales its
// dot products by scale log2(e)). row_max is then max y, and lse = m ln 2 + log l.
//
// A row with a NaN or +inf among its allowed scores is NaN: out, lse and the allowed probs. The
// pass that finds the maximum also finds such rows, and 1/l and lse carry the NaN; the weights
// themselves skip a NaN test per element (numerics.h: exp2_nonpositive_of_number).
//
// The unnormalized weights w and 1/l are separate Funcs so that the weighted sum can multiply
// by 1/l once per output element instead of once per key.
#pragma once

#include "Halide.h"
#include "mask.h"
#include "numerics.h"

namespace attngen::algorithm {

struct SoftmaxFuncs {
    Halide::Func scores;  // scores(j, i, h, b), the input.
    // row_max(i, h, b): {the largest y over allowed keys (base 2), the largest magnitude of an
    // allowed y as bits (numerics.h: magnitude_bits), above 0x7f800000 when some y is NaN}.
    Halide::Func row_max;
    Halide::Func weights;  // weights(j, i, h, b) = 2^(y - row_max), unnormalized.
    Halide::Func row_sum;  // row_sum(i, h, b) = sum of weights over allowed keys.
    Halide::Func inv_sum;  // inv_sum(i, h, b) = 1 / row_sum, or 0 for a row with no key.
    Halide::Func probs;    // probs(j, i, h, b) = weights * inv_sum, 0 where masked.
    Halide::Func lse;      // lse(i, h, b) = row_max + log(row_sum), -inf for a row with no key.
    // The key reductions of row_max and row_sum: the dense part and the bands after and before
    // it (see mask.h), each its own update definition (the bands undefined where the mask has
    // none).
    Halide::RDom max_keys, max_band, max_lower_band;
    Halide::RDom sum_keys, sum_band, sum_lower_band;
};

SoftmaxFuncs define_softmax(const Halide::Func &scores, const Halide::Expr &nk, const KeyMask &mask,
                            const Halide::Expr &to_base_two = kLog2e);

}  // namespace attngen::algorithm
