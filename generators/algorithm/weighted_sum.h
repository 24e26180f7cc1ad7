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
    // The paired form (define_weighted_sum given bfloat16 values; keys is then undefined). acc's
    // first update adds p_pairs(r, i, x, h, b) v_pairs(r, e, x, h, b) over pairs (r of extent 2
    // inner, x over the pairs of keys 2 x, 2 x + 1 that lie inside the dense part): products of
    // bfloat16 values two at a time, as in the paired form of the scores (scores.h), which x86
    // targets with AVX512-BF16 compile to vdpbf16ps. p_pairs(r, i, x) = p(2 x + r, i) rounded to
    // bfloat16, as FlashAttention rounds P on GPUs, and v_pairs(r, e, x) = v(e, 2 x + r): a
    // schedule stages both so that the two keys of a pair are adjacent. The second update adds,
    // in float32, the dense part's last key where it ends at an odd key, over edge; the bands
    // follow as in the plain form.
    Halide::Func p_pairs, v_pairs;
    Halide::RDom pairs, edge;

    // The index of band's update: after the dense part's one update, or its two in the paired
    // form; lower_band's is the next.
    int band_stage() const { return pairs.defined() ? 2 : 1; }
};

// bfloat16_v, when given, holds v(e, j, h, b) as Halide's BFloat(16) values (the same values as
// v): P V then takes the paired form above where the mask has no per-key test (mask.h, allowed:
// a refused key inside a pair would pass its value, even NaN, to the other key's sum) and its
// dense part starts at key 0 (no window: no kernel pairs one yet, so that form is not written).
WeightedSumFuncs define_weighted_sum(const Halide::Func &p, const Halide::Func &v,
                                     const Halide::Expr &nk, const KeyMask &mask,
                                     const Halide::Func &row_scale = Halide::Func(),
                                     DType storage = DType::kFloat32,
                                     const Halide::Func *bfloat16_v = nullptr);

}  // namespace attngen::algorithm
