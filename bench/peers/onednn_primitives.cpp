#include "onednn_primitives.h"

namespace attngen::bench {

OneDnnAttentionPrimitives::OneDnnAttentionPrimitives(
    const dnnl::engine &engine, const dnnl::memory::desc &q, const dnnl::memory::desc &k_t,
    const dnnl::memory::desc &v, const dnnl::memory::desc &scores_md, const dnnl::memory::desc &out,
    const dnnl::primitive_attr &scores_attr) {
    dnnl::matmul::primitive_desc scores_pd(dnnl::matmul::desc(q, k_t, scores_md), scores_attr,
                                           engine);
    dnnl::softmax_forward::primitive_desc softmax_pd(
        dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, scores_md, 3), engine);
    dnnl::matmul::primitive_desc mix_pd(dnnl::matmul::desc(scores_md, v, out), engine);
    scores = dnnl::matmul(scores_pd);
    softmax = dnnl::softmax_forward(softmax_pd);
    mix = dnnl::matmul(mix_pd);
    implementations = std::string(scores_pd.impl_info_str()) + "," + softmax_pd.impl_info_str() +
                      "," + mix_pd.impl_info_str();
}

}  // namespace attngen::bench
