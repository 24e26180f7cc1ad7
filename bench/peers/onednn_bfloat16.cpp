#include "onednn_bfloat16.h"

#include <cmath>
#include <dnnl.hpp>
#include <vector>

#include "onednn_primitives.h"

namespace attngen::bench {

namespace {

using dnnl::memory;
using Dims = memory::dims;

class OneDnnBfloat16Attention : public Computation {
  public:
    OneDnnBfloat16Attention(const BenchShape &s, const ProblemData &p)
        : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_), out16_(output_size(s)) {
        const memory::dim B = s.batch, H = s.heads, Nq = s.nq, Nk = s.nk, d = s.d;
        const auto bf16 = memory::data_type::bf16, f32 = memory::data_type::f32;
        const auto abcd = memory::format_tag::abcd;
        memory::desc q_md({B, H, Nq, d}, bf16, abcd);
        // K stored [B, H, Nk, d] is K^T [B, H, d, Nk] with the last two strides swapped.
        memory::desc k_t_md({B, H, d, Nk}, bf16, Dims{H * Nk * d, Nk * d, 1, d});
        memory::desc v_md({B, H, Nk, d}, bf16, abcd);
        memory::desc scores_md({B, H, Nq, Nk}, f32, abcd);
        memory::desc probs_md({B, H, Nq, Nk}, bf16, abcd);
        memory::desc out_md({B, H, Nq, d}, bf16, abcd);

        dnnl::primitive_attr scores_attr;
        scores_attr.set_output_scales(0, {1.0f / std::sqrt(static_cast<float>(d))});
        if (s.causal) {
            mask_ = causal_mask(engine_, Nq, Nk);
            dnnl::post_ops post_ops;
            post_ops.append_binary(dnnl::algorithm::binary_add, mask_.get_desc());
            scores_attr.set_post_ops(post_ops);
        }
        dnnl::matmul::primitive_desc scores_pd(dnnl::matmul::desc(q_md, k_t_md, scores_md),
                                               scores_attr, engine_);
        dnnl::softmax_v2_forward::primitive_desc softmax_pd(
            dnnl::softmax_v2_forward::desc(dnnl::prop_kind::forward_inference,
                                           dnnl::algorithm::softmax_accurate, scores_md, probs_md,
                                           3),
            engine_);
        dnnl::matmul::primitive_desc mix_pd(dnnl::matmul::desc(probs_md, v_md, out_md), engine_);
        scores_ = dnnl::matmul(scores_pd);
        softmax_ = dnnl::softmax_v2_forward(softmax_pd);
        mix_ = dnnl::matmul(mix_pd);
        implementations_ = std::string(scores_pd.impl_info_str()) + "," +
                           softmax_pd.impl_info_str() + "," + mix_pd.impl_info_str();

        // oneDNN takes non-const handles; the inputs are only read.
        q_ = memory(q_md, engine_, const_cast<uint16_t *>(p.q16.data()));
        k_t_ = memory(k_t_md, engine_, const_cast<uint16_t *>(p.k16.data()));
        v_ = memory(v_md, engine_, const_cast<uint16_t *>(p.v16.data()));
        scores_mem_ = memory(scores_md, engine_);
        probs_mem_ = memory(probs_md, engine_);
        out_ = memory(out_md, engine_, out16_.data());
    }

    std::string run() override {
        std::unordered_map<int, memory> scores_args = {
            {DNNL_ARG_SRC, q_}, {DNNL_ARG_WEIGHTS, k_t_}, {DNNL_ARG_DST, scores_mem_}};
        if (mask_) scores_args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] = mask_;
        scores_.execute(stream_, scores_args);
        softmax_.execute(stream_, {{DNNL_ARG_SRC, scores_mem_}, {DNNL_ARG_DST, probs_mem_}});
        mix_.execute(stream_,
                     {{DNNL_ARG_SRC, probs_mem_}, {DNNL_ARG_WEIGHTS, v_}, {DNNL_ARG_DST, out_}});
        stream_.wait();
        return "";
    }
    const float *output() const override {
        widen_all(out16_, DType::kBFloat16, widened_);
        return widened_.data();
    }
    std::string label() const override { return implementations_; }

  private:
    dnnl::engine engine_;
    dnnl::stream stream_;
    std::vector<uint16_t> out16_;
    mutable Floats widened_;
    dnnl::matmul scores_, mix_;
    dnnl::softmax_v2_forward softmax_;
    std::string implementations_;
    memory q_, k_t_, v_, scores_mem_, probs_mem_, out_, mask_;
};

}  // namespace

std::unique_ptr<Computation> onednn_bfloat16_attention(const BenchShape &shape,
                                                       const ProblemData &data) {
    return std::make_unique<OneDnnBfloat16Attention>(shape, data);
}

}  // namespace attngen::bench
