// Threads: libtorch's own parallel loops (softmax, elementwise ops) run on OpenMP and its float
// matmuls on the BLAS it was built with, OpenBLAS in Debian, which has its own thread pool; both
// are set to the benchmark's thread count (at::set_num_threads alone leaves OpenBLAS at its
// default of one thread per core). With two threads each pool's idle workers spin while the
// other pool works, so on two cores this peer gains little from its second thread (measured on
// (b): 142 ms at one thread, 151 ms at two).
#include "torch_attention.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <cblas.h>

#include <limits>
#include <optional>
#include <vector>

#include "torch_masked.h"

namespace attngen::bench {

namespace {

at::Tensor wrap(const Floats &data, at::IntArrayRef shape) {
    // from_blob does not copy; the inputs are only read.
    return at::from_blob(const_cast<float *>(data.data()), shape, at::kFloat);
}

// A tensor as the shape stores it: its bfloat16 bits, or its float32 values.
at::Tensor wrap_stored(const Floats &values, const std::vector<uint16_t> &bits, DType storage,
                       at::IntArrayRef shape) {
    if (storage == DType::kFloat32) return wrap(values, shape);
    return at::from_blob(const_cast<uint16_t *>(bits.data()), shape, at::kBFloat16);
}

// The causal mask aligned bottom-right as an additive float mask [Nq, Nk]: 0 where query i may
// see key j (j <= i + Nk - Nq), -inf elsewhere. Returns nothing for a square causal problem,
// where torch's is_causal (aligned top-left) is the same mask and is used instead.
std::optional<at::Tensor> explicit_causal_mask(const BenchShape &s) {
    if (!s.causal || s.nq == s.nk) return std::nullopt;
    at::Tensor allowed = at::ones({s.nq, s.nk}, at::kBool).tril(s.nk - s.nq);
    return at::zeros({s.nq, s.nk}, at::kFloat)
        .masked_fill_(allowed.logical_not(), -std::numeric_limits<float>::infinity());
}

// q, k, v [B, H, N, d] (any strides) -> [B, H, Nq, d].
at::Tensor attend(const BenchShape &s, const at::Tensor &q, const at::Tensor &k,
                  const at::Tensor &v, const std::optional<at::Tensor> &mask) {
    const bool is_causal = s.causal && !mask.has_value();
    c10::optional<at::Tensor> attn_mask;
    if (mask.has_value()) attn_mask = *mask;
    return std::get<0>(at::_scaled_dot_product_attention(q, k, v, attn_mask, /*dropout_p=*/0.0,
                                                         /*need_attn_weights=*/false, is_causal));
}

class TorchAttention : public Computation {
  public:
    // A bfloat16 shape runs SDPA on bfloat16 tensors: torch's math attention in that type.
    TorchAttention(const BenchShape &s, const ProblemData &p)
        : shape_(s), mask_(explicit_causal_mask(s)) {
        q_ = wrap_stored(p.q, p.q16, s.storage, {s.batch, s.heads, s.nq, s.d});
        k_ = wrap_stored(p.k, p.k16, s.kv_storage, {s.batch, s.kv_heads, s.nk, s.d});
        v_ = wrap_stored(p.v, p.v16, s.kv_storage, {s.batch, s.kv_heads, s.nk, s.d});
        if (mask_.has_value()) mask_ = mask_->to(q_.scalar_type());
    }

    std::string run() override {
        c10::InferenceMode inference;
        out_ = attend(shape_, q_, k_, v_, mask_);
        if (!out_.is_contiguous()) out_ = out_.contiguous();
        return "";
    }
    const float *output() const override {
        if (out_.scalar_type() == at::kFloat) return out_.data_ptr<float>();
        widened_ = out_.to(at::kFloat);
        return widened_.data_ptr<float>();
    }

  private:
    const BenchShape &shape_;
    std::optional<at::Tensor> mask_;
    at::Tensor q_, k_, v_, out_;
    mutable at::Tensor widened_;
};

class TorchLayer : public Computation {
  public:
    TorchLayer(const BenchShape &s, const ProblemData &p)
        : shape_(s), mask_(explicit_causal_mask(s)) {
        const int64_t width = s.heads * s.d;
        x_ = wrap(p.x, {s.batch, s.nq, s.d_model});
        w_q_ = wrap(p.w_q, {s.d_model, width});
        w_k_ = wrap(p.w_k, {s.d_model, width});
        w_v_ = wrap(p.w_v, {s.d_model, width});
        w_o_ = wrap(p.w_o, {width, s.d_model});
    }

    std::string run() override {
        c10::InferenceMode inference;
        const BenchShape &s = shape_;
        // [B, N, H d] -> [B, H, N, d] as a strided view, as torch.nn.MultiheadAttention does.
        auto split = [&s](const at::Tensor &t) {
            return t.view({s.batch, s.nq, s.heads, s.d}).transpose(1, 2);
        };
        at::Tensor q = split(at::matmul(x_, w_q_)), k = split(at::matmul(x_, w_k_)),
                   v = split(at::matmul(x_, w_v_));
        at::Tensor heads =
            attend(s, q, k, v, mask_).transpose(1, 2).reshape({s.batch, s.nq, s.heads * s.d});
        out_ = at::matmul(heads, w_o_);
        if (!out_.is_contiguous()) out_ = out_.contiguous();
        return "";
    }
    const float *output() const override { return out_.data_ptr<float>(); }

  private:
    const BenchShape &shape_;
    std::optional<at::Tensor> mask_;
    at::Tensor x_, w_q_, w_k_, w_v_, w_o_, out_;
};

}  // namespace

Implementation torch_implementation() {
    Implementation impl;
    impl.name = "torch";
    impl.peer = true;
    impl.runtimes = kOpenMpThreads | kOpenBlasThreads;
    // at::_scaled_dot_product_attention in 1.13 pairs query head h with key head h. Its CPU
    // matmuls take bfloat16 but not float16 ("addmm_impl_cpu_" not implemented for 'Half'), and
    // a matmul's operands must share a type.
    impl.supports = [](const BenchShape &s) {
        return s.kv_heads == s.heads &&
               (!s.sixteen_bit() || (s.storage == DType::kBFloat16 && !s.modifiers.any()));
    };
    impl.set_threads = [](int threads) {
        at::set_num_threads(threads);
        openblas_set_num_threads(threads);
    };
    impl.prepare = [](const BenchShape &s, const ProblemData &p,
                      int threads) -> std::unique_ptr<Computation> {
        if (s.is_mha()) return std::make_unique<TorchLayer>(s, p);
        if (s.modifiers.any()) return torch_masked_attention(s, p, threads);
        return std::make_unique<TorchAttention>(s, p);
    };
    return impl;
}

}  // namespace attngen::bench
