// The composed attention algorithm: scores, softmax and weighted sum (docs/design.md section 1).
//
// Inputs are q(d, i, h, b) with H query heads, and k(d, j, g, b), v(e, j, g, b) with H_kv key and
// value heads; query head h reads key/value head h / (H / H_kv) (grouped-query attention, and
// plain multi-head attention when H_kv = H). The algorithm is the same for every schedule; a
// schedule decides what is fused and what is materialized.
#pragma once

#include "Halide.h"
#include "mask.h"
#include "scores.h"
#include "softmax.h"
#include "storage.h"
#include "weighted_sum.h"

namespace attngen::algorithm {

// Extents of one attention call. Each may be a constant (a specialized kernel) or read from the
// buffers at run time.
struct AttentionShape {
    Halide::Expr nq, nk;    // Query and key sequence lengths.
    Halide::Expr d_k, d_v;  // Head dims of queries/keys and of values.
    Halide::Expr heads;     // H, query heads.
    Halide::Expr kv_heads;  // H_kv, key/value heads; H is a multiple of H_kv.
    // The type out is stored in (storage.h); the inputs reach the algorithm widened to float32.
    DType storage = DType::kFloat32;
};

struct AttentionFuncs {
    Halide::Func q, k, v;                 // The inputs; k and v indexed by key/value head.
    Halide::Func k_for_head, v_for_head;  // k and v indexed by query head.
    KeyMask mask;                         // The allowed keys (mask.h).
    ScoresFuncs scores;
    SoftmaxFuncs softmax;
    WeightedSumFuncs weighted_sum;
    Halide::Func out;      // out(e, i, h, b), the attention output O.
    Halide::Func lse;      // lse(i, h, b), the log-sum-exp of each row.
    Halide::Func probs;    // probs(j, i, h, b), the probabilities P.
    AttentionShape shape;  // For schedules that specialize on extents.
};

// Maps a tensor indexed by key/value head to one indexed by query head.
Halide::Func for_query_heads(const Halide::Func &kv, const AttentionShape &shape,
                             const std::string &name);

// modifier: the score modifier of the variant (score_modifiers.h), empty for none. bfloat16: q
// and k (indexed by key/value head) as bfloat16 values, for the paired form of the dot products
// (scores.h), or null.
AttentionFuncs define_attention(const Halide::Func &q, const Halide::Func &k, const Halide::Func &v,
                                const KeyMask &mask, const AttentionShape &shape,
                                const Halide::Expr &scale, const ScoreModifier &modifier = {},
                                const BFloat16Operands *bfloat16 = nullptr);

}  // namespace attngen::algorithm
