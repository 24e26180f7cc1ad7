// The three oneDNN primitives of composed attention, which the oneDNN peer builds for plain
// shapes (onednn_attention.h) and for shapes with modifiers (onednn_masked.h) alike.
#pragma once

#include <dnnl.hpp>
#include <string>

namespace attngen::bench {

// The causal mask aligned bottom-right as a float32 [1, 1, Nq, Nk] tensor, broadcast over batch
// and heads by a binary-add post-op of the scores' matmul: 0 where query i may see key j
// (j <= i + Nk - Nq), -inf elsewhere. Output scales apply before post-ops, so the matmul writes
// scale * q k^T + mask.
dnnl::memory causal_mask(const dnnl::engine &engine, dnnl::memory::dim nq, dnnl::memory::dim nk);

struct OneDnnAttentionPrimitives {
    // scores = q k^T with `scores_attr` (the scale and the mask as attributes), the softmax of
    // each row of scores in place, and out = scores v; k_t describes K^T [B, H, d, Nk].
    OneDnnAttentionPrimitives(const dnnl::engine &engine, const dnnl::memory::desc &q,
                              const dnnl::memory::desc &k_t, const dnnl::memory::desc &v,
                              const dnnl::memory::desc &scores, const dnnl::memory::desc &out,
                              const dnnl::primitive_attr &scores_attr);

    dnnl::matmul scores, mix;
    dnnl::softmax_forward softmax;
    // The oneDNN implementations chosen for the three, e.g. "brg:avx512_core,jit:...".
    std::string implementations;
};

}  // namespace attngen::bench
