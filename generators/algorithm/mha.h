// The multi-head attention layer: projections, attention per head, and the output projection
// (docs/design.md section 1).
//
// x(c, i, b) is [B, Nq, d_model], memory(c, j, b) is [B, Nk, d_mem] (memory = x for
// self-attention). Head h uses columns h*d_k .. (h+1)*d_k of X W_Q, and the head outputs are
// concatenated in head order before W_O.
#pragma once

#include "Halide.h"
#include "attention.h"
#include "online_attention.h"
#include "projection.h"

namespace attngen::algorithm {

struct MhaShape {
    // The attention between the projections, whose output stays float32 (its storage field is
    // float32's: the layer rounds only y).
    AttentionShape attention;
    Halide::Expr d_model, d_mem;  // Widths of x and of memory.
    // The type y is stored in (storage.h); the inputs reach the algorithm widened to float32.
    DType storage = DType::kFloat32;
};

struct MhaWeights {
    Halide::Func w_q, w_k, w_v, w_o;  // w(o, c) in the X·W convention.
    Halide::Func b_q, b_k, b_v, b_o;  // Biases, b(o).
};

struct MhaFuncs {
    ProjectionFuncs q_proj, k_proj, v_proj;
    Halide::Func q_heads, k_heads, v_heads;  // Projections split into heads: q(d, i, h, b).
    // The attention between the projections: composed (attention), or with `online` blocking
    // the online softmax (online_attention), whose groups of queries walk only the key blocks
    // that hold an allowed key.
    bool online = false;
    AttentionFuncs attention;
    OnlineAttentionFuncs online_attention;
    Halide::Func concat;  // concat(c, i, b): head outputs side by side, c = h * d_v + e.
    ProjectionFuncs out_proj;
    // y(o, i, b), the layer output: out_proj.y, or it rounded to MhaShape::storage.
    Halide::Func y;
};

// mask: the allowed keys of memory for the queries of x; modifier: the score modifier
// (score_modifiers.h), empty for none. Both index heads by query head, as define_attention does.
// online: the blocking of the online formulation, as a schedule chose it; null for the composed
// one. clamp_query_rows: the attention reads the projected queries' rows clamped to the last one,
// for a schedule that computes rows past Nq (Schedule::reads_queries_past_nq).
MhaFuncs define_mha(const Halide::Func &x, const Halide::Func &memory, const MhaWeights &weights,
                    const KeyMask &mask, const MhaShape &shape, const Halide::Expr &scale,
                    const ScoreModifier &modifier = {}, const OnlineBlocking *online = nullptr,
                    bool clamp_query_rows = false);

}  // namespace attngen::algorithm
