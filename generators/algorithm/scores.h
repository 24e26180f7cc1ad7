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

struct ScoresFuncs {
    Halide::Func q;       // q(d, i, h, b).
    Halide::Func k;       // k(d, j, h, b), already mapped to the query head.
    Halide::Func dot;     // dot(j, i, h, b) = sum_d q(d, i, h, b) k(d, j, h, b), unscaled.
    Halide::Func scores;  // scores(j, i, h, b) = dot * scale, or -inf where masked (if masked).
    Halide::RDom d;       // The reduction over the head dimension d_k.
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
ScoresFuncs define_scores(const Halide::Func &q, const Halide::Func &k, const Halide::Expr &d_k,
                          const Halide::Expr &scale, const KeyMask &mask, bool masked = true,
                          const ScoreModifier &modifier = {},
                          const Halide::Expr &natural_scale = Halide::Expr());

}  // namespace attngen::algorithm
