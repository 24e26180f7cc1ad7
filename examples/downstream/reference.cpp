#include "reference.h"

#include <cmath>
#include <limits>

void reference_attention(const Shape &s, const std::vector<float> &q, const std::vector<float> &k,
                         const std::vector<float> &v, bool causal,
                         const std::vector<int32_t> &key_lengths, std::vector<double> *out,
                         std::vector<double> *lse) {
    out->assign(s.batch * s.heads * s.nq * s.d_v, 0.0);
    lse->assign(s.batch * s.heads * s.nq, -std::numeric_limits<double>::infinity());
    const double scale = 1.0 / std::sqrt(static_cast<double>(s.d_k));
    const int64_t group = s.heads / s.kv_heads;
    std::vector<double> scores(s.nk);
    for (int64_t b = 0; b < s.batch; b++) {
        const int64_t keys = key_lengths.empty() ? s.nk : key_lengths[b];
        for (int64_t h = 0; h < s.heads; h++) {
            const int64_t kv = h / group;
            for (int64_t i = 0; i < s.nq; i++) {
                const float *qi = &q[((b * s.heads + h) * s.nq + i) * s.d_k];
                // The keys this query may see, then a softmax over them relative to their maximum.
                int64_t visible = keys;
                if (causal && i + s.nk - s.nq + 1 < visible) visible = i + s.nk - s.nq + 1;
                if (visible <= 0) continue;
                double max_score = -std::numeric_limits<double>::infinity();
                for (int64_t j = 0; j < visible; j++) {
                    const float *kj = &k[((b * s.kv_heads + kv) * s.nk + j) * s.d_k];
                    double dot = 0;
                    for (int64_t d = 0; d < s.d_k; d++) dot += double(qi[d]) * kj[d];
                    scores[j] = dot * scale;
                    if (scores[j] > max_score) max_score = scores[j];
                }
                double sum = 0;
                for (int64_t j = 0; j < visible; j++) sum += std::exp(scores[j] - max_score);
                double *o = &(*out)[((b * s.heads + h) * s.nq + i) * s.d_v];
                for (int64_t j = 0; j < visible; j++) {
                    const double p = std::exp(scores[j] - max_score) / sum;
                    const float *vj = &v[((b * s.kv_heads + kv) * s.nk + j) * s.d_v];
                    for (int64_t d = 0; d < s.d_v; d++) o[d] += p * vj[d];
                }
                (*lse)[(b * s.heads + h) * s.nq + i] = max_score + std::log(sum);
            }
        }
    }
}
