#include "low_precision.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace attngen::reference {

namespace {

uint32_t bits_of(float x) {
    uint32_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

float float_of(uint32_t b) {
    float x;
    std::memcpy(&x, &b, sizeof x);
    return x;
}

}  // namespace

uint16_t to_bf16_bits(float x) {
    const uint32_t b = bits_of(x);
    if ((b & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((b >> 16) | 0x0040u);
    // Adding 0x7fff plus the lowest kept bit rounds half to even; a carry into the exponent is
    // the right result, up to infinity.
    return static_cast<uint16_t>((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

float from_bf16_bits(uint16_t bits) {
    return float_of(static_cast<uint32_t>(bits) << 16);
}

uint16_t to_f16_bits(float x) {
    const uint32_t b = bits_of(x);
    const uint16_t sign = static_cast<uint16_t>((b >> 16) & 0x8000u);
    const uint32_t magnitude = b & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return sign | 0x7e00u;  // NaN.
    // 65520 = 65504 + half an ulp, the first value that rounds up to infinity.
    if (magnitude >= 0x477ff000u) return sign | 0x7c00u;
    if (magnitude < 0x38800000u) {
        // Below 2^-14, the smallest normal: multiples of 2^-24. Scaling by 2^24 is exact, and
        // nearbyint rounds half to even in the default rounding mode (1024 is the smallest normal).
        const float units = std::nearbyint(std::fabs(x) * 16777216.0f);
        return sign | static_cast<uint16_t>(units);
    }
    uint32_t h = (((magnitude >> 23) - 112u) << 10) | ((magnitude >> 13) & 0x3ffu);
    const uint32_t rest = magnitude & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++;
    return sign | static_cast<uint16_t>(h);
}

float from_f16_bits(uint16_t bits) {
    const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
    const uint32_t exponent = (bits >> 10) & 0x1fu, fraction = bits & 0x3ffu;
    if (exponent == 0) {
        const float value = static_cast<float>(fraction) / 16777216.0f;
        return sign ? -value : value;
    }
    if (exponent == 31) return float_of(sign | 0x7f800000u | (fraction << 13));
    return float_of(sign | ((exponent + 112u) << 23) | (fraction << 13));
}

uint16_t to_bits(DType storage, float x) {
    return storage == DType::kBFloat16 ? to_bf16_bits(x) : to_f16_bits(x);
}

float from_bits(DType storage, uint16_t bits) {
    return storage == DType::kBFloat16 ? from_bf16_bits(bits) : from_f16_bits(bits);
}

float round_to(DType storage, float x) {
    if (storage != DType::kBFloat16 && storage != DType::kFloat16) return x;
    return from_bits(storage, to_bits(storage, x));
}

void attention_in_storage(DType storage, const AttentionShape &s, const float *q, const float *k,
                          const float *v, const std::vector<int64_t> &key_lengths,
                          const MaskSpec &mask, float scale, float *out, float *lse,
                          const ModifierValues *values) {
    const auto round = [storage](float x) { return round_to(storage, x); };
    const float inf = std::numeric_limits<float>::infinity();
    const int64_t group = s.heads / s.kv_heads;
    std::vector<float> row(s.nk);
    std::vector<char> keys(s.nk);
    for (int64_t b = 0; b < s.batch; b++) {
        for (int64_t h = 0; h < s.heads; h++) {
            const int64_t g = h / group;
            for (int64_t i = 0; i < s.nq; i++) {
                const float *qi = q + ((b * s.heads + h) * s.nq + i) * s.d_k;
                bool has_nan = false;
                float max = -inf;
                for (int64_t j = 0; j < s.nk; j++) {
                    keys[j] = allowed(s, key_lengths, mask, b, i, j, values);
                    if (!keys[j]) continue;
                    const float *kj = k + ((b * s.kv_heads + g) * s.nk + j) * s.d_k;
                    float dot = 0;
                    for (int64_t d = 0; d < s.d_k; d++) dot += qi[d] * kj[d];
                    row[j] = round(round(dot) * scale);
                    if (values != nullptr && values->score.any()) {
                        row[j] = round(static_cast<float>(values->modify(s, row[j], b, h, i, j)));
                    }
                    has_nan |= std::isnan(row[j]);
                    max = std::max(max, row[j]);
                }
                int64_t count = 0;
                for (int64_t j = 0; j < s.nk; j++) count += keys[j] && (has_nan || max > -inf);
                float sum = 0;
                for (int64_t j = 0; j < s.nk; j++) {
                    if (count == 0 || !keys[j]) continue;
                    row[j] = std::exp(row[j] - max);
                    sum += row[j];
                }
                float *oi = out + ((b * s.heads + h) * s.nq + i) * s.d_v;
                for (int64_t e = 0; e < s.d_v; e++) {
                    float acc = 0;
                    for (int64_t j = 0; j < s.nk; j++) {
                        if (count > 0 && keys[j]) {
                            acc += round(row[j] / sum) *
                                   v[((b * s.kv_heads + g) * s.nk + j) * s.d_v + e];
                        }
                    }
                    oi[e] = count > 0 ? round(acc) : 0.0f;
                }
                if (lse != nullptr) {
                    lse[(b * s.heads + h) * s.nq + i] = count > 0 ? max + std::log(sum) : -inf;
                }
            }
        }
    }
}

}  // namespace attngen::reference
