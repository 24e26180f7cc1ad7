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

}  // namespace attngen::bench
