// Stage 4: the weighted sum O = P V.
//
// p(j, i, h, b) are the weights of each key for each query and v(e, j, h, b) the values, already
// mapped to the query head. The sum runs over the allowed keys only (see mask.h), so a
// masked key's value, even NaN, never reaches the output. row_scale(i, h, b) multiplies each
// finished row: the composed attention passes unnormalized softmax weights and 1 / row_sum
// here, which costs one multiply per output element instead of one per key.
#pragma once

#include "Halide.h"
#include "mask.h"
#include "storage.h"

namespace attngen::algorithm {

struct WeightedSumFuncs {
    Halide::Func p;          // p(j, i, h, b), the weights.
    Halide::Func v;          // v(e, j, h, b), the values.
    Halide::Func row_scale;  // row_scale(i, h, b), or undefined for 1.
    Halide::Func acc;        // acc(e, i, h, b) = sum_j p(j, i, h, b) v(e, j, h, b).
    Halide::Func out;        // out(e, i, h, b) = acc * row_scale, narrowed to the storage type.
    // The reduction over allowed keys: the dense part and the bands after and before it (see
    // mask.h).
    Halide::RDom keys, band, lower_band;
};

WeightedSumFuncs define_weighted_sum(const Halide::Func &p, const Halide::Func &v,
                                     const Halide::Expr &nk, const KeyMask &mask,
                                     const Halide::Func &row_scale = Halide::Func(),
                                     DType storage = DType::kFloat32);

}  // namespace attngen::algorithm
