// Stage 2: scores, S = Q K^T * scale, with the mask applied.
//
// q(d, i, h, b) and k(d, j, h, b) are indexed by the query head h: grouped-query attention maps
// query heads to shared key heads before this stage (see attention.h). Masked entries are -inf,
// the additive mask of docs/design.md section 1.
#pragma once

#include "Halide.h"
#include "mask.h"
#include "score_modifiers.h"

namespace attngen::algorithm {

// The operands of the dot products as bfloat16 values (Halide's BFloat(16)) for their paired
// form: q(d, i, h, b) and k(d, j, h, b), k indexed by the query head as ScoresFuncs::k is; and
// v(e, j, h, b) for the paired form of P V (weighted_sum.h), undefined where P V stays float32.
struct BFloat16Operands {
    Halide::Func q, k, v;
};

struct ScoresFuncs {
    Halide::Func q;       // q(d, i, h, b).
    Halide::Func k;       // k(d, j, h, b), already mapped to the query head.
    Halide::Func dot;     // dot(j, i, h, b) = sum_d q(d, i, h, b) k(d, j, h, b), unscaled.
    Halide::Func scores;  // scores(j, i, h, b) = dot * scale, or -inf where masked (if masked).
    Halide::RDom d;       // The reduction over the head dimension d_k.
    // The paired form (define_scores with BFloat16Operands; d is then undefined): dot's first
    // update adds q_pairs(r, i, x, h, b) k(2 x + r, j, h, b) over pairs (r of extent 2 inner,
    // x over d_k / 2), the products of bfloat16 values two at a time into each sum, which x86
    // targets with AVX512-BF16 compile to vdpbf16ps (docs/design.md section 4); the second adds
    // the last feature of an odd d_k, over odd_feature (d_k % 2 features from d_k - d_k % 2).
    // q_pairs(r, i, x, h, b) = q(2 x + r, i, h, b): a schedule stages it per block of queries so
    // that the pairs of consecutive queries are one vector.
    Halide::Func q_pairs;
    Halide::RDom pairs, odd_feature;
    // Whether scores applies a score modifier (softcap, ALiBi, a bias, a user's): then each
    // score costs more than its scale, and a schedule that reads a score twice (a row's maximum,
    // then its weight) stores the modified scores rather than recomputing them.
    bool modified = false;
    // The modifier's bias, bias(j, i, h, b), where it adds one (ScoreModifier::bias).
    Halide::Func bias;
};

// With masked = false the scores of masked keys are left as they are: for consumers that visit
// only the keys a row may see, as the softmax does (mask.h). There the select would be work
// per score for nothing, and it split cpu_fused's weights loop around a branch on the key
// bound.
//
// scale is the factor of the dot products as the consumers want them (attention's softmax works
// in base 2 and passes base_two_scale). With a modifier the score is modified in natural units
// and then turned to base 2: modifier(dot * natural_scale) * log2(e), and scale is unused.
//
// bfloat16, when given, are q and k as bfloat16 values (k mapped to the query head): the dot
// products then take the paired form. Its sums are those of the plain form up to rounding (each
// product of two bfloat16 values is exact in float32); q and k are still read for an odd d_k's
// last feature.
ScoresFuncs define_scores(const Halide::Func &q, const Halide::Func &k, const Halide::Expr &d_k,
                          const Halide::Expr &scale, const KeyMask &mask, bool masked = true,
                          const ScoreModifier &modifier = {},
                          const Halide::Expr &natural_scale = Halide::Expr(),
                          const BFloat16Operands *bfloat16 = nullptr);

}  // namespace attngen::algorithm
