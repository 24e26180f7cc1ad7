// One set of primitives for a block of rows, run on each block with the tensors' handles moved
// to its rows: every block has the same rows (peers/additive_mask.h).
#include "onednn_masked.h"

#include <cmath>
#include <dnnl.hpp>

#include "additive_mask.h"
#include "onednn_primitives.h"

namespace attngen::bench {

namespace {

using dnnl::memory;
using Dims = memory::dims;

class OneDnnMaskedAttention : public Computation {
  public:
    OneDnnMaskedAttention(const BenchShape &s, const ProblemData &p, int threads)
        : shape_(s),
          data_(p),
          engine_(dnnl::engine::kind::cpu, 0),
          stream_(engine_),
          masks_(s, p, threads),
          out_(output_size(s)) {
        const memory::dim B = s.batch, H = s.heads, Nk = s.nk, d = s.d, R = masks_.rows();
        const auto f32 = memory::data_type::f32;
        // A block of rows of q and out [B, H, Nq, d]: R rows at the strides of the whole.
        const Dims q_strides = {H * s.nq * d, s.nq * d, d, 1};
        memory::desc q_md({B, H, R, d}, f32, q_strides);
        // K stored [B, H, Nk, d] is K^T [B, H, d, Nk] with the last two strides swapped.
        memory::desc k_t_md({B, H, d, Nk}, f32, Dims{H * Nk * d, Nk * d, 1, d});
        memory::desc v_md({B, H, Nk, d}, f32, memory::format_tag::abcd);
        memory::desc scores_md({B, H, R, Nk}, f32, memory::format_tag::abcd);
        memory::desc mask_md({B, masks_.heads(), R, Nk}, f32, memory::format_tag::abcd);

        // Output scales apply before post-ops: the matmul writes scale q k^T, capped as
        // C tanh(scale q k^T / C) by an output scale of scale / C and a tanh post-op whose own
        // scale is C, plus the mask.
        const float scale = 1.0f / std::sqrt(static_cast<float>(d));
        const float softcap = s.modifiers.softcap;
        dnnl::primitive_attr scores_attr;
        dnnl::post_ops post_ops;
        if (softcap > 0) {
            scores_attr.set_output_scales(0, {scale / softcap});
            post_ops.append_eltwise(softcap, dnnl::algorithm::eltwise_tanh, 0.0f, 0.0f);
        } else {
            scores_attr.set_output_scales(0, {scale});
        }
        post_ops.append_binary(dnnl::algorithm::binary_add, mask_md);
        scores_attr.set_post_ops(post_ops);
        primitives_ = std::make_unique<OneDnnAttentionPrimitives>(engine_, q_md, k_t_md, v_md,
                                                                  scores_md, q_md, scores_attr);

        // oneDNN takes non-const handles; the inputs are only read.
        q_ = memory(q_md, engine_, const_cast<float *>(p.q.data()));
        k_t_ = memory(k_t_md, engine_, const_cast<float *>(p.k.data()));
        v_ = memory(v_md, engine_, const_cast<float *>(p.v.data()));
        scores_mem_ = memory(scores_md, engine_);
        out_mem_ = memory(q_md, engine_, out_.data());
        mask_ = memory(mask_md, engine_, masks_.block(0));
    }

    std::string run() override {
        const int64_t rows = masks_.rows(), offset = rows * shape_.d;
        for (int64_t index = 0; index < masks_.count(); index++) {
            mask_.set_data_handle(masks_.block(index));
            q_.set_data_handle(const_cast<float *>(data_.q.data()) + index * offset);
            out_mem_.set_data_handle(out_.data() + index * offset);
            primitives_->scores.execute(
                stream_,
                {{DNNL_ARG_SRC, q_},
                 {DNNL_ARG_WEIGHTS, k_t_},
                 {DNNL_ARG_DST, scores_mem_},
                 {DNNL_ARG_ATTR_MULTIPLE_POST_OP(post_op_of_mask()) | DNNL_ARG_SRC_1, mask_}});
            primitives_->softmax.execute(
                stream_, {{DNNL_ARG_SRC, scores_mem_}, {DNNL_ARG_DST, scores_mem_}});
            primitives_->mix.execute(
                stream_,
                {{DNNL_ARG_SRC, scores_mem_}, {DNNL_ARG_WEIGHTS, v_}, {DNNL_ARG_DST, out_mem_}});
        }
        stream_.wait();
        return "";
    }
    const float *output() const override { return out_.data(); }
    std::string label() const override { return primitives_->implementations; }

  private:
    // The index of the mask's post-op: after the tanh where there is one.
    int post_op_of_mask() const { return shape_.modifiers.softcap > 0 ? 1 : 0; }

    const BenchShape &shape_;
    const ProblemData &data_;
    dnnl::engine engine_;
    dnnl::stream stream_;
    MaskBlocks masks_;
    Floats out_;
    std::unique_ptr<OneDnnAttentionPrimitives> primitives_;
    memory q_, k_t_, v_, scores_mem_, out_mem_, mask_;
};

}  // namespace

std::unique_ptr<Computation> onednn_masked_attention(const BenchShape &shape,
                                                     const ProblemData &data, int threads) {
    return std::make_unique<OneDnnMaskedAttention>(shape, data, threads);
}

}  // namespace attngen::bench
