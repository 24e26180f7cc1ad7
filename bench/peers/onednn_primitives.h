// The three oneDNN primitives of composed attention, which the oneDNN peer builds for plain
// shapes (onednn_attention.h) and for shapes with modifiers (onednn_masked.h) alike.
#pragma once

#include <dnnl.hpp>
#include <string>

namespace attngen::bench {

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
