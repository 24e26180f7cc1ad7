// Compiled with -O3 -ffast-math (bench/CMakeLists.txt), and only this file: fast-math lets GCC
// vectorize the std::exp loop with glibc's vector exp (libmvec, 16 lanes with AVX-512) and
// reassociate the max and the sum, as a tuned framework softmax would; without it the exp is a
// scalar call per element and the peer would spend most of its time there.
//
// The causal mask is the -inf of the formula: a masked score's weight is exp(-inf - max) = 0.
// Those zeros are written directly instead of passing -inf (or -FLT_MAX, since fast-math assumes
// finite values) through exp: libmvec handles arguments below about -87 on a scalar fallback
// path, which made the causal peer twice as slow as the full one (measured).
#include "softmax_rows.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attngen::bench {

void masked_softmax_rows(float *scores, int64_t rows, int64_t cols, bool causal,
                         int64_t key_offset) {
    for (int64_t i = 0; i < rows; i++) {
        float *row = scores + i * cols;
        const int64_t allowed = causal ? std::clamp<int64_t>(i + key_offset + 1, 0, cols) : cols;
        // With no allowed key the row is all zeros, the attngen convention.
        std::fill(row + allowed, row + cols, 0.0f);
        if (allowed == 0) continue;
        float max = row[0];
        for (int64_t j = 1; j < allowed; j++) max = std::max(max, row[j]);
        float sum = 0;
        for (int64_t j = 0; j < allowed; j++) {
            row[j] = std::exp(row[j] - max);
            sum += row[j];
        }
        const float inverse = 1.0f / sum;
        for (int64_t j = 0; j < allowed; j++) row[j] *= inverse;
    }
}

void softcap_scores(float *scores, int64_t n, float cap) {
    // libmvec has a vector tanhf, which fast-math lets GCC call here.
    const float inverse = 1.0f / cap;
    for (int64_t i = 0; i < n; i++) scores[i] = cap * std::tanh(scores[i] * inverse);
}

void additive_softmax_rows(float *scores, const float *mask, int64_t rows, int64_t cols) {
    // Fast-math assumes finite values, so the -inf of the mask is never passed through the
    // arithmetic: a hidden key is told by its mask entry (below kHidden), its score is set to
    // the lowest float for the maximum and its weight to 0. The exponent is clamped at -87,
    // above which libmvec's exp stays on its vector path (see the top of the file).
    constexpr float kHidden = -1e30f;
    const float lowest = std::numeric_limits<float>::lowest();
    for (int64_t i = 0; i < rows; i++) {
        float *row = scores + i * cols;
        const float *mask_row = mask + i * cols;
        float max = lowest;
        for (int64_t j = 0; j < cols; j++) {
            row[j] = mask_row[j] > kHidden ? row[j] + mask_row[j] : lowest;
            max = std::max(max, row[j]);
        }
        if (max == lowest) {
            std::fill(row, row + cols, 0.0f);
            continue;
        }
        float sum = 0;
        for (int64_t j = 0; j < cols; j++) {
            const float weight = std::exp(std::max(row[j] - max, -87.0f));
            row[j] = mask_row[j] > kHidden ? weight : 0.0f;
            sum += row[j];
        }
        const float inverse = 1.0f / sum;
        for (int64_t j = 0; j < cols; j++) row[j] *= inverse;
    }
}

}  // namespace attngen::bench
