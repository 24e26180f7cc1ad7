#include "onednn_primitives.h"

#include <limits>

namespace attngen::bench {

dnnl::memory causal_mask(const dnnl::engine &engine, dnnl::memory::dim nq, dnnl::memory::dim nk) {
    dnnl::memory::desc mask_md({1, 1, nq, nk}, dnnl::memory::data_type::f32,
                               dnnl::memory::format_tag::abcd);
    dnnl::memory mask(mask_md, engine);
    float *values = static_cast<float *>(mask.get_data_handle());
    for (dnnl::memory::dim i = 0; i < nq; i++)
        for (dnnl::memory::dim j = 0; j < nk; j++)
            values[i * nk + j] = j <= i + nk - nq ? 0.0f : -std::numeric_limits<float>::infinity();
    return mask;
}

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
