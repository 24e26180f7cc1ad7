// Threads: the (batch, head) pairs are the parallel loop (OpenMP, one scratch score matrix per
// thread) and each sgemm inside it runs on its calling thread (openblas_set_num_threads(1)).
// Every shape here has at least 8 heads, so the two cores stay busy without splitting one head's
// product, and the softmax runs in parallel with no extra synchronization. One head at a time
// with a two-thread sgemm and a parallel softmax measured slower (128 ms against 65 ms on shape
// (b) at two threads). The layer's projections are single large products and use OpenBLAS's
// own threads.
#include "openblas_attention.h"

#include <cblas.h>
#include <omp.h>

#include <cmath>
#include <vector>

#include "openblas_masked.h"
#include "softmax_rows.h"

namespace attngen::bench {

namespace {

// One head: out [nq, d] = softmax(q [nq, d] k [nk, d]^T * scale + mask) v [nk, d], with the
// given row strides; scores is nq x nk scratch.
void attention_head(const float *q, int64_t ldq, const float *k, int64_t ldk, const float *v,
                    int64_t ldv, float *out, int64_t ldo, int64_t nq, int64_t nk, int64_t d,
                    bool causal, float *scores) {
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nq, nk, d, scale, q, ldq, k, ldk, 0.0f,
                scores, nk);
    masked_softmax_rows(scores, nq, nk, causal, nk - nq);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nq, d, nk, 1.0f, scores, nk, v, ldv,
                0.0f, out, ldo);
}

// Where the heads of one call live: pointers to (batch 0, head 0) and the strides, in floats,
// between batch elements, between heads and between rows.
struct HeadLayout {
    const float *q, *k, *v;
    float *out;
    int64_t q_batch, q_head, q_row;
    int64_t kv_batch, kv_head, kv_row;
    int64_t out_batch, out_head, out_row;
};

void all_heads(const BenchShape &s, const HeadLayout &l, int threads, Floats &scratch) {
    const int64_t pairs = s.batch * s.heads, group = s.heads / s.kv_heads;
    openblas_set_num_threads(1);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t pair = 0; pair < pairs; pair++) {
        const int64_t b = pair / s.heads, h = pair % s.heads, kv = h / group;
        float *scores = scratch.data() + omp_get_thread_num() * s.nq * s.nk;
        attention_head(
            l.q + b * l.q_batch + h * l.q_head, l.q_row, l.k + b * l.kv_batch + kv * l.kv_head,
            l.kv_row, l.v + b * l.kv_batch + kv * l.kv_head, l.kv_row,
            l.out + b * l.out_batch + h * l.out_head, l.out_row, s.nq, s.nk, s.d, s.causal, scores);
    }
}

class OpenBlasAttention : public Computation {
  public:
    OpenBlasAttention(const BenchShape &s, const ProblemData &p, int threads)
        : shape_(s),
          data_(p),
          threads_(threads),
          out_(output_size(s)),
          scratch_(threads * s.nq * s.nk) {}

    std::string run() override {
        const BenchShape &s = shape_;
        // [B, H, N, d] tensors: heads are contiguous [N, d] blocks.
        HeadLayout layout{data_.q.data(),
                          data_.k.data(),
                          data_.v.data(),
                          out_.data(),
                          s.heads * s.nq * s.d,
                          s.nq * s.d,
                          s.d,
                          s.kv_heads * s.nk * s.d,
                          s.nk * s.d,
                          s.d,
                          s.heads * s.nq * s.d,
                          s.nq * s.d,
                          s.d};
        all_heads(s, layout, threads_, scratch_);
        return "";
    }
    const float *output() const override { return out_.data(); }

  private:
    const BenchShape &shape_;
    const ProblemData &data_;
    int threads_;
    Floats out_, scratch_;
};

class OpenBlasLayer : public Computation {
  public:
    OpenBlasLayer(const BenchShape &s, const ProblemData &p, int threads)
        : shape_(s),
          data_(p),
          threads_(threads),
          out_(output_size(s)),
          scratch_(threads * s.nq * s.nk) {
        const int64_t rows = s.batch * s.nq, width = s.heads * s.d;
        q_.resize(rows * width);
        k_.resize(rows * width);
        v_.resize(rows * width);
        heads_.resize(rows * width);
    }

    std::string run() override {
        const BenchShape &s = shape_;
        const int64_t width = s.heads * s.d;
        openblas_set_num_threads(threads_);
        project(data_.x.data(), s.d_model, data_.w_q.data(), width, q_.data());
        project(data_.x.data(), s.d_model, data_.w_k.data(), width, k_.data());
        project(data_.x.data(), s.d_model, data_.w_v.data(), width, v_.data());
        // The projections are [B, N, H d]: head h is columns h d .. (h + 1) d, so each head is
        // read in place with a row stride of H d, and written the same way into the
        // concatenation that the output projection reads.
        HeadLayout layout{q_.data(),    k_.data(), v_.data(),    heads_.data(), s.nq * width,
                          s.d,          width,     s.nk * width, s.d,           width,
                          s.nq * width, s.d,       width};
        all_heads(s, layout, threads_, scratch_);
        openblas_set_num_threads(threads_);
        project(heads_.data(), width, data_.w_o.data(), s.d_model, out_.data());
        return "";
    }
    const float *output() const override { return out_.data(); }

  private:
    // y [B N, cols] = x [B N, inner] w [inner, cols].
    void project(const float *x, int64_t inner, const float *w, int64_t cols, float *y) const {
        const int64_t rows = shape_.batch * shape_.nq;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, cols, inner, 1.0f, x, inner, w,
                    cols, 0.0f, y, cols);
    }

    const BenchShape &shape_;
    const ProblemData &data_;
    int threads_;
    Floats out_, scratch_, q_, k_, v_, heads_;
};

}  // namespace

Implementation openblas_implementation() {
    Implementation impl;
    impl.name = "openblas";
    impl.peer = true;
    impl.runtimes = kOpenMpThreads | kOpenBlasThreads;
    // The layer keeps one projection width for Q, K and V: no grouped-query layers.
    // sgemm only: no 16-bit shapes.
    impl.supports = [](const BenchShape &s) {
        return !s.sixteen_bit() && (!s.is_mha() || s.kv_heads == s.heads);
    };
    impl.set_threads = [](int threads) { openblas_set_num_threads(threads); };
    impl.prepare = [](const BenchShape &s, const ProblemData &p,
                      int threads) -> std::unique_ptr<Computation> {
        if (s.is_mha()) return std::make_unique<OpenBlasLayer>(s, p, threads);
        if (s.modifiers.any()) return openblas_masked_attention(s, p, threads);
        return std::make_unique<OpenBlasAttention>(s, p, threads);
    };
    return impl;
}

}  // namespace attngen::bench
