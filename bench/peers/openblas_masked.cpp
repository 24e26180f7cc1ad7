// Threads as in openblas_attention.cpp: the (batch, head) pairs of a block of rows are the
// parallel loop, each with single-threaded sgemms and its own scratch scores.
#include "openblas_masked.h"

#include <cblas.h>
#include <omp.h>

#include <cmath>

#include "additive_mask.h"
#include "softmax_rows.h"

namespace attngen::bench {

namespace {

class OpenBlasMaskedAttention : public Computation {
  public:
    OpenBlasMaskedAttention(const BenchShape &s, const ProblemData &p, int threads)
        : shape_(s),
          data_(p),
          threads_(threads),
          masks_(s, p, threads),
          out_(output_size(s)),
          scratch_(threads * masks_.rows() * s.nk) {}

    std::string run() override {
        const BenchShape &s = shape_;
        const int64_t rows = masks_.rows(), pairs = s.batch * s.heads;
        const int64_t group = s.heads / s.kv_heads, mask_heads = masks_.heads();
        const float scale = 1.0f / std::sqrt(static_cast<float>(s.d));
        const float softcap = s.modifiers.softcap;
        for (int64_t index = 0; index < masks_.count(); index++) {
            const float *mask = masks_.block(index);
            const int64_t first_row = index * rows;
            openblas_set_num_threads(1);
#pragma omp parallel for num_threads(threads_) schedule(static)
            for (int64_t pair = 0; pair < pairs; pair++) {
                const int64_t b = pair / s.heads, h = pair % s.heads;
                const int64_t kv = b * s.kv_heads + h / group;
                float *scores = scratch_.data() + omp_get_thread_num() * rows * s.nk;
                const float *k = data_.k.data() + kv * s.nk * s.d;
                const float *v = data_.v.data() + kv * s.nk * s.d;
                const int64_t q_offset = (pair * s.nq + first_row) * s.d;
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, s.nk, s.d, scale,
                            data_.q.data() + q_offset, s.d, k, s.d, 0.0f, scores, s.nk);
                if (softcap > 0) softcap_scores(scores, rows * s.nk, softcap);
                const int64_t mask_head = mask_heads == 1 ? 0 : h;
                additive_softmax_rows(scores, mask + (b * mask_heads + mask_head) * rows * s.nk,
                                      rows, s.nk);
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, s.d, s.nk, 1.0f,
                            scores, s.nk, v, s.d, 0.0f, out_.data() + q_offset, s.d);
            }
        }
        return "";
    }
    const float *output() const override {
        return out_.data();
    }

  private:
    const BenchShape &shape_;
    const ProblemData &data_;
    int threads_;
    MaskBlocks masks_;
    Floats out_, scratch_;
};

}  // namespace

std::unique_ptr<Computation> openblas_masked_attention(const BenchShape &shape,
                                                       const ProblemData &data, int threads) {
    return std::make_unique<OpenBlasMaskedAttention>(shape, data, threads);
}

}  // namespace attngen::bench
