#include "reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attngen::reference {

double ModifierValues::modify(const AttentionShape &s, double score, int64_t b, int64_t h,
                              int64_t i, int64_t j) const {
    if (this->score.softcap) score = softcap * std::tanh(score / softcap);
    if (this->score.alibi) {
        const int64_t position = i + s.nk - s.nq;
        score += -alibi_slopes[h] * static_cast<double>(std::llabs(position - j));
    }
    if (this->score.bias) {
        const int64_t index[4] = {b, h, i, j};
        int64_t flat = 0;
        for (int d = 0; d < 4; d++)
            flat = flat * bias_shape[d] + (bias_shape[d] == 1 ? 0 : index[d]);
        score += bias[flat];
    }
    return score;
}

bool allowed(const AttentionShape &s, const std::vector<int64_t> &key_lengths, const MaskSpec &mask,
             int64_t b, int64_t i, int64_t j, const ModifierValues *values) {
    if (!key_lengths.empty() && j >= key_lengths[b]) return false;
    // Query i's position among the keys: the queries are the last Nq positions (bottom-right).
    const int64_t position = i + s.nk - s.nq;
    if (mask.causal && j > position) {
        if (!mask.prefix || j >= values->prefix_lengths[b]) return false;
    }
    if (mask.window) {
        if (values->window_left >= 0 && j < position - values->window_left) return false;
        if (values->window_right >= 0 && j > position + values->window_right) return false;
    }
    if (mask.segments && values->q_segments[b * s.nq + i] != values->kv_segments[b * s.nk + j]) {
        return false;
    }
    return true;
}

template <typename T>
void attention(const AttentionShape &s, const T *q, const T *k, const T *v,
               const std::vector<int64_t> &key_lengths, const MaskSpec &mask, T scale, T *out,
               T *lse, T *probs, const ModifierValues *values) {
    const int64_t group = s.heads / s.kv_heads;
    std::vector<T> row(s.nk);
    std::vector<char> keys(s.nk);
    for (int64_t b = 0; b < s.batch; b++) {
        for (int64_t h = 0; h < s.heads; h++) {
            const int64_t g = h / group;
            for (int64_t i = 0; i < s.nq; i++) {
                const T *qi = q + ((b * s.heads + h) * s.nq + i) * s.d_k;
                int64_t count = 0;
                bool has_nan = false;
                T max = -std::numeric_limits<T>::infinity();
                for (int64_t j = 0; j < s.nk; j++) {
                    keys[j] = allowed(s, key_lengths, mask, b, i, j, values);
                    if (!keys[j]) continue;
                    const T *kj = k + ((b * s.kv_heads + g) * s.nk + j) * s.d_k;
                    T dot = 0;
                    for (int64_t d = 0; d < s.d_k; d++) dot += qi[d] * kj[d];
                    row[j] = dot * scale;
                    if (values != nullptr && values->score.any()) {
                        row[j] = static_cast<T>(values->modify(s, row[j], b, h, i, j));
                    }
                    has_nan |= std::isnan(row[j]);
                    max = std::max(max, row[j]);
                }
                // A row whose allowed scores are all -inf has no key to weigh: it is empty.
                for (int64_t j = 0; j < s.nk; j++) {
                    if (keys[j] && (has_nan || max > -std::numeric_limits<T>::infinity())) count++;
                }
                if (count == 0) std::fill(keys.begin(), keys.end(), 0);
                T sum = 0;
                for (int64_t j = 0; j < s.nk; j++) {
                    if (!keys[j]) continue;
                    row[j] = std::exp(row[j] - max);
                    sum += row[j];
                }
                T *oi = out + ((b * s.heads + h) * s.nq + i) * s.d_v;
                for (int64_t e = 0; e < s.d_v; e++) {
                    T acc = 0;
                    for (int64_t j = 0; j < s.nk; j++) {
                        if (keys[j])
                            acc += row[j] * v[((b * s.kv_heads + g) * s.nk + j) * s.d_v + e];
                    }
                    oi[e] = count > 0 ? acc / sum : T(0);
                }
                if (lse != nullptr) {
                    lse[(b * s.heads + h) * s.nq + i] =
                        count > 0 ? max + std::log(sum) : -std::numeric_limits<T>::infinity();
                }
                if (probs != nullptr) {
                    T *pi = probs + ((b * s.heads + h) * s.nq + i) * s.nk;
                    for (int64_t j = 0; j < s.nk; j++) pi[j] = keys[j] ? row[j] / sum : T(0);
                }
            }
        }
    }
}

template <typename T>
void projection(int64_t rows, int64_t d_in, int64_t d_out, const T *x, const T *w, const T *bias,
                T *y) {
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t o = 0; o < d_out; o++) {
            T acc = bias != nullptr ? bias[o] : T(0);
            for (int64_t c = 0; c < d_in; c++) acc += x[r * d_in + c] * w[c * d_out + o];
            y[r * d_out + o] = acc;
        }
    }
}

template <typename T>
void scores(const AttentionShape &s, const T *q, const T *k, T scale, T *out) {
    const int64_t group = s.heads / s.kv_heads;
    for (int64_t b = 0; b < s.batch; b++) {
        for (int64_t h = 0; h < s.heads; h++) {
            for (int64_t i = 0; i < s.nq; i++) {
                for (int64_t j = 0; j < s.nk; j++) {
                    T dot = 0;
                    for (int64_t d = 0; d < s.d_k; d++) {
                        dot += q[((b * s.heads + h) * s.nq + i) * s.d_k + d] *
                               k[((b * s.kv_heads + h / group) * s.nk + j) * s.d_k + d];
                    }
                    out[((b * s.heads + h) * s.nq + i) * s.nk + j] = dot * scale;
                }
            }
        }
    }
}

namespace {

// [B, N, heads * width] -> [B, heads, N, width].
template <typename T>
std::vector<T> split_heads(const std::vector<T> &y, int64_t batch, int64_t n, int64_t heads,
                           int64_t width) {
    std::vector<T> out(y.size());
    for (int64_t b = 0; b < batch; b++)
        for (int64_t t = 0; t < n; t++)
            for (int64_t h = 0; h < heads; h++)
                for (int64_t c = 0; c < width; c++)
                    out[((b * heads + h) * n + t) * width + c] =
                        y[(b * n + t) * heads * width + h * width + c];
    return out;
}

}  // namespace

template <typename T>
void mha(const MhaShape &s, const T *x, const T *memory, const T *w_q, const T *w_k, const T *w_v,
         const T *w_o, const T *b_q, const T *b_k, const T *b_v, const T *b_o,
         const std::vector<int64_t> &key_lengths, const MaskSpec &mask, T scale, T *y,
         const ModifierValues *values) {
    std::vector<T> qp(s.batch * s.nq * s.heads * s.d_k), kp(s.batch * s.nk * s.kv_heads * s.d_k),
        vp(s.batch * s.nk * s.kv_heads * s.d_v);
    projection(s.batch * s.nq, s.d_model, s.heads * s.d_k, x, w_q, b_q, qp.data());
    projection(s.batch * s.nk, s.d_mem, s.kv_heads * s.d_k, memory, w_k, b_k, kp.data());
    projection(s.batch * s.nk, s.d_mem, s.kv_heads * s.d_v, memory, w_v, b_v, vp.data());
    std::vector<T> q = split_heads(qp, s.batch, s.nq, s.heads, s.d_k);
    std::vector<T> k = split_heads(kp, s.batch, s.nk, s.kv_heads, s.d_k);
    std::vector<T> v = split_heads(vp, s.batch, s.nk, s.kv_heads, s.d_v);
    AttentionShape a{s.batch, s.heads, s.kv_heads, s.nq, s.nk, s.d_k, s.d_v};
    std::vector<T> o(s.batch * s.heads * s.nq * s.d_v);
    attention<T>(a, q.data(), k.data(), v.data(), key_lengths, mask, scale, o.data(), nullptr,
                 nullptr, values);
    // Concatenate heads in head order: [B, H, Nq, d_v] -> [B, Nq, H * d_v].
    std::vector<T> concat(o.size());
    for (int64_t b = 0; b < s.batch; b++)
        for (int64_t h = 0; h < s.heads; h++)
            for (int64_t i = 0; i < s.nq; i++)
                for (int64_t e = 0; e < s.d_v; e++)
                    concat[(b * s.nq + i) * s.heads * s.d_v + h * s.d_v + e] =
                        o[((b * s.heads + h) * s.nq + i) * s.d_v + e];
    projection(s.batch * s.nq, s.heads * s.d_v, s.d_out, concat.data(), w_o, b_o, y);
}

#define ATTNGEN_INSTANTIATE(T)                                                                    \
    template void attention<T>(const AttentionShape &, const T *, const T *, const T *,           \
                               const std::vector<int64_t> &, const MaskSpec &, T, T *, T *, T *,  \
                               const ModifierValues *);                                           \
    template void projection<T>(int64_t, int64_t, int64_t, const T *, const T *, const T *, T *); \
    template void scores<T>(const AttentionShape &, const T *, const T *, T, T *);                \
    template void mha<T>(const MhaShape &, const T *, const T *, const T *, const T *, const T *, \
                         const T *, const T *, const T *, const T *, const T *,                   \
                         const std::vector<int64_t> &, const MaskSpec &, T, T *,                  \
                         const ModifierValues *);

ATTNGEN_INSTANTIATE(float)
ATTNGEN_INSTANTIATE(double)

}  // namespace attngen::reference
