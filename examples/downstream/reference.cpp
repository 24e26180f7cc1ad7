#include "reference.h"

#include <cmath>
#include <limits>

void reference_attention(const Shape &s, const std::vector<float> &q, const std::vector<float> &k,
                         const std::vector<float> &v, const Rules &rules, std::vector<double> *out,
                         std::vector<double> *lse) {
    constexpr double kMinusInf = -std::numeric_limits<double>::infinity();
    out->assign(s.batch * s.heads * s.nq * s.d_v, 0.0);
    lse->assign(s.batch * s.heads * s.nq, kMinusInf);
    const double scale = 1.0 / std::sqrt(static_cast<double>(s.d_k));
    const int64_t group = s.heads / s.kv_heads;
    std::vector<double> scores(s.nk);
    for (int64_t b = 0; b < s.batch; b++) {
        for (int64_t h = 0; h < s.heads; h++) {
            const int64_t kv = h / group;
            for (int64_t i = 0; i < s.nq; i++) {
                const float *qi = &q[((b * s.heads + h) * s.nq + i) * s.d_k];
                // The scores of the allowed keys (-inf for the others), then a softmax over them
                // relative to their maximum.
                double max_score = kMinusInf;
                for (int64_t j = 0; j < s.nk; j++) {
                    scores[j] = kMinusInf;
                    if (rules.allowed && !rules.allowed(b, i, j)) continue;
                    const float *kj = &k[((b * s.kv_heads + kv) * s.nk + j) * s.d_k];
                    double dot = 0;
                    for (int64_t d = 0; d < s.d_k; d++) dot += double(qi[d]) * kj[d];
                    scores[j] = dot * scale + (rules.bias ? rules.bias(b, h, i, j) : 0.0);
                    if (scores[j] > max_score) max_score = scores[j];
                }
                if (max_score == kMinusInf) continue;
                double sum = 0;
                for (int64_t j = 0; j < s.nk; j++) sum += std::exp(scores[j] - max_score);
                double *o = &(*out)[((b * s.heads + h) * s.nq + i) * s.d_v];
                for (int64_t j = 0; j < s.nk; j++) {
                    const double p = std::exp(scores[j] - max_score) / sum;
                    if (p == 0.0) continue;
                    const float *vj = &v[((b * s.kv_heads + kv) * s.nk + j) * s.d_v];
                    for (int64_t d = 0; d < s.d_v; d++) o[d] += p * vj[d];
                }
                (*lse)[(b * s.heads + h) * s.nq + i] = max_score + std::log(sum);
            }
        }
    }
}

Rules causal_rules(const Shape &s, bool causal, const std::vector<int32_t> &key_lengths) {
    Rules rules;
    rules.allowed = [s, causal, key_lengths](int64_t b, int64_t i, int64_t j) {
        if (!key_lengths.empty() && j >= key_lengths[b]) return false;
        return !causal || j <= i + s.nk - s.nq;
    };
    return rules;
}
