#include "torch_masked.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <cmath>

#include "additive_mask.h"

namespace attngen::bench {

namespace {

at::Tensor wrap(const float *data, at::IntArrayRef shape) {
    // from_blob does not copy; the inputs are only read.
    return at::from_blob(const_cast<float *>(data), shape, at::kFloat);
}

class TorchMaskedAttention : public Computation {
  public:
    TorchMaskedAttention(const BenchShape &s, const ProblemData &p, int threads)
        : shape_(s), masks_(s, p, threads) {
        q_ = wrap(p.q.data(), {s.batch, s.heads, s.nq, s.d});
        k_ = wrap(p.k.data(), {s.batch, s.kv_heads, s.nk, s.d});
        v_ = wrap(p.v.data(), {s.batch, s.kv_heads, s.nk, s.d});
        out_ = at::empty({s.batch, s.heads, s.nq, s.d}, at::kFloat);
    }

    std::string run() override {
        c10::InferenceMode inference;
        const BenchShape &s = shape_;
        const int64_t rows = masks_.rows();
        for (int64_t index = 0; index < masks_.count(); index++) {
            at::Tensor mask = wrap(masks_.block(index), {s.batch, masks_.heads(), rows, s.nk});
            at::Tensor q = q_.narrow(2, index * rows, rows);
            out_.narrow(2, index * rows, rows).copy_(attend(q, mask));
        }
        return "";
    }
    const float *output() const override { return out_.data_ptr<float>(); }

  private:
    at::Tensor attend(const at::Tensor &q, const at::Tensor &mask) const {
        const float softcap = shape_.modifiers.softcap;
        if (softcap <= 0) {
            return std::get<0>(at::_scaled_dot_product_attention(q, k_, v_, mask, /*dropout_p=*/0.0,
                                                                 /*need_attn_weights=*/false,
                                                                 /*is_causal=*/false));
        }
        const double scale = 1.0 / std::sqrt(static_cast<double>(shape_.d));
        at::Tensor scores = at::matmul(q, k_.transpose(-2, -1));
        scores.mul_(scale / softcap).tanh_().mul_(softcap).add_(mask);
        return at::matmul(at::softmax(scores, -1), v_);
    }

    const BenchShape &shape_;
    MaskBlocks masks_;
    at::Tensor q_, k_, v_, out_;
};

}  // namespace

std::unique_ptr<Computation> torch_masked_attention(const BenchShape &shape,
                                                    const ProblemData &data, int threads) {
    return std::make_unique<TorchMaskedAttention>(shape, data, threads);
}

}  // namespace attngen::bench
