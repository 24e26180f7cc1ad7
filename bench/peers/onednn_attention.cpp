// oneDNN 2.6 as Debian builds it runs on OpenMP, so its thread count is omp_set_num_threads(),
// read when a primitive is created and when it runs.
#include "onednn_attention.h"

#include <omp.h>

#include <cmath>
#include <dnnl.hpp>
#include <vector>

#include "onednn_bfloat16.h"
#include "onednn_masked.h"
#include "onednn_primitives.h"

namespace attngen::bench {

namespace {

using dnnl::memory;
using Dims = memory::dims;

// The four 4-D tensors of one attention call, [B, H, N, d] logically, with the strides (in
// floats) at which they are stored.
struct AttentionTensors {
    float *q, *k, *v, *out;
    Dims q_strides, kv_strides, out_strides;
};

// The attention part, shared by the attention and the layer computations.
class OneDnnHeads {
  public:
    OneDnnHeads(const dnnl::engine &engine, const BenchShape &s, const AttentionTensors &t)
        : engine_(engine) {
        const memory::dim B = s.batch, H = s.heads, Nq = s.nq, Nk = s.nk, d = s.d;
        const auto f32 = memory::data_type::f32;
        memory::desc q_md({B, H, Nq, d}, f32, t.q_strides);
        // K stored [B, H, Nk, d] is K^T [B, H, d, Nk] with the last two strides swapped.
        const Dims &kv = t.kv_strides;
        memory::desc k_t_md({B, H, d, Nk}, f32, Dims{kv[0], kv[1], kv[3], kv[2]});
        memory::desc v_md({B, H, Nk, d}, f32, kv);
        memory::desc scores_md({B, H, Nq, Nk}, f32, memory::format_tag::abcd);
        memory::desc out_md({B, H, Nq, d}, f32, t.out_strides);

        dnnl::primitive_attr scores_attr;
        scores_attr.set_output_scales(0, {1.0f / std::sqrt(static_cast<float>(d))});
        if (s.causal) {
            mask_ = causal_mask(engine_, Nq, Nk);
            dnnl::post_ops post_ops;
            post_ops.append_binary(dnnl::algorithm::binary_add, mask_.get_desc());
            scores_attr.set_post_ops(post_ops);
        }
        primitives_ = std::make_unique<OneDnnAttentionPrimitives>(engine_, q_md, k_t_md, v_md,
                                                                  scores_md, out_md, scores_attr);

        q_ = memory(q_md, engine_, t.q);
        k_t_ = memory(k_t_md, engine_, t.k);
        v_ = memory(v_md, engine_, t.v);
        scores_mem_ = memory(scores_md, engine_);
        out_ = memory(out_md, engine_, t.out);
    }

    void run(dnnl::stream &stream) {
        std::unordered_map<int, memory> scores_args = {
            {DNNL_ARG_SRC, q_}, {DNNL_ARG_WEIGHTS, k_t_}, {DNNL_ARG_DST, scores_mem_}};
        if (mask_) scores_args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] = mask_;
        primitives_->scores.execute(stream, scores_args);
        primitives_->softmax.execute(stream,
                                     {{DNNL_ARG_SRC, scores_mem_}, {DNNL_ARG_DST, scores_mem_}});
        primitives_->mix.execute(
            stream, {{DNNL_ARG_SRC, scores_mem_}, {DNNL_ARG_WEIGHTS, v_}, {DNNL_ARG_DST, out_}});
    }

    // The oneDNN implementations chosen for the three primitives, e.g. "brg:avx512_core".
    const std::string &implementations() const { return primitives_->implementations; }

  private:
    dnnl::engine engine_;
    std::unique_ptr<OneDnnAttentionPrimitives> primitives_;
    memory q_, k_t_, v_, scores_mem_, out_, mask_;
};

Dims contiguous_strides(const BenchShape &s, int64_t heads, int64_t n) {
    return {heads * n * s.d, n * s.d, s.d, 1};
}

class OneDnnAttention : public Computation {
  public:
    OneDnnAttention(const BenchShape &s, const ProblemData &p)
        : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_), out_(output_size(s)) {
        // oneDNN takes non-const handles; the inputs are only read.
        AttentionTensors t{
            const_cast<float *>(p.q.data()),      const_cast<float *>(p.k.data()),
            const_cast<float *>(p.v.data()),      out_.data(),
            contiguous_strides(s, s.heads, s.nq), contiguous_strides(s, s.kv_heads, s.nk),
            contiguous_strides(s, s.heads, s.nq)};
        heads_ = std::make_unique<OneDnnHeads>(engine_, s, t);
    }

    std::string run() override {
        heads_->run(stream_);
        stream_.wait();
        return "";
    }
    const float *output() const override { return out_.data(); }
    std::string label() const override { return heads_->implementations(); }

  private:
    dnnl::engine engine_;
    dnnl::stream stream_;
    Floats out_;
    std::unique_ptr<OneDnnHeads> heads_;
};

// A 2-D matmul y [rows, cols] = x [rows, inner] w [inner, cols] on fixed buffers.
class Projection {
  public:
    Projection(const dnnl::engine &engine, int64_t rows, int64_t inner, int64_t cols,
               const float *x, const float *w, float *y) {
        const auto f32 = memory::data_type::f32;
        const auto ab = memory::format_tag::ab;
        memory::desc x_md({rows, inner}, f32, ab), w_md({inner, cols}, f32, ab),
            y_md({rows, cols}, f32, ab);
        dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(x_md, w_md, y_md), engine);
        matmul_ = dnnl::matmul(pd);
        x_ = memory(x_md, engine, const_cast<float *>(x));
        w_ = memory(w_md, engine, const_cast<float *>(w));
        y_ = memory(y_md, engine, y);
    }
    void run(dnnl::stream &stream) {
        matmul_.execute(stream, {{DNNL_ARG_SRC, x_}, {DNNL_ARG_WEIGHTS, w_}, {DNNL_ARG_DST, y_}});
    }

  private:
    dnnl::matmul matmul_;
    memory x_, w_, y_;
};

class OneDnnLayer : public Computation {
  public:
    OneDnnLayer(const BenchShape &s, const ProblemData &p)
        : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_), out_(output_size(s)) {
        const int64_t rows = s.batch * s.nq, width = s.heads * s.d;
        q_.resize(rows * width);
        k_.resize(rows * width);
        v_.resize(rows * width);
        heads_out_.resize(rows * width);
        projections_.emplace_back(engine_, rows, s.d_model, width, p.x.data(), p.w_q.data(),
                                  q_.data());
        projections_.emplace_back(engine_, rows, s.d_model, width, p.x.data(), p.w_k.data(),
                                  k_.data());
        projections_.emplace_back(engine_, rows, s.d_model, width, p.x.data(), p.w_v.data(),
                                  v_.data());
        // The projections are [B, N, H, d]; the matmuls read and write the heads in place
        // through strides instead of transposing them.
        const Dims bnhd = {s.nq * width, s.d, width, 1};
        AttentionTensors t{q_.data(), k_.data(), v_.data(), heads_out_.data(), bnhd, bnhd, bnhd};
        heads_ = std::make_unique<OneDnnHeads>(engine_, s, t);
        output_projection_ = std::make_unique<Projection>(
            engine_, rows, width, s.d_model, heads_out_.data(), p.w_o.data(), out_.data());
    }

    std::string run() override {
        for (Projection &projection : projections_) projection.run(stream_);
        heads_->run(stream_);
        output_projection_->run(stream_);
        stream_.wait();
        return "";
    }
    const float *output() const override { return out_.data(); }
    std::string label() const override { return heads_->implementations(); }

  private:
    dnnl::engine engine_;
    dnnl::stream stream_;
    Floats out_, q_, k_, v_, heads_out_;
    std::vector<Projection> projections_;
    std::unique_ptr<OneDnnHeads> heads_;
    std::unique_ptr<Projection> output_projection_;
};

}  // namespace

Implementation onednn_implementation() {
    Implementation impl;
    impl.name = "onednn";
    impl.peer = true;
    impl.runtimes = kOpenMpThreads;
    // The batched matmuls pair query head h with key head h: no grouped-query attention. Of the
    // 16-bit types, oneDNN 2.6 computes bfloat16 matmuls on x86 CPUs but not float16 ones, and
    // no matmul of float32 queries by 16-bit keys.
    impl.supports = [](const BenchShape &s) {
        return s.kv_heads == s.heads &&
               (!s.sixteen_bit() || (s.storage == DType::kBFloat16 && !s.modifiers.any()));
    };
    impl.set_threads = [](int threads) { omp_set_num_threads(threads); };
    impl.prepare = [](const BenchShape &s, const ProblemData &p,
                      int threads) -> std::unique_ptr<Computation> {
        if (s.is_mha()) return std::make_unique<OneDnnLayer>(s, p);
        if (s.storage == DType::kBFloat16) return onednn_bfloat16_attention(s, p);
        if (s.modifiers.any()) return onednn_masked_attention(s, p, threads);
        return std::make_unique<OneDnnAttention>(s, p);
    };
    return impl;
}

}  // namespace attngen::bench
