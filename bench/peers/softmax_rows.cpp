// Compiled with -O3 -ffast-math (bench/CMakeLists.txt) and only this file: fast-math lets GCC
// vectorize the std::exp loop with glibc's vector exp (libmvec, 16 lanes with AVX-512) and
// reassociate the sums, as a tuned framework softmax would; without it the exp is a scalar
// call per element and the peer would spend most of its time there.
//
// -ffast-math assumes that no value is infinite, so masked scores are set to -FLT_MAX instead
// of -inf. The effect is the same: exp(-FLT_MAX - max) underflows to exactly 0.
#include "softmax_rows.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace attngen::bench {

void masked_softmax_rows(float *scores, int64_t rows, int64_t cols, bool causal,
                         int64_t key_offset) {
    constexpr float kMasked = -FLT_MAX;
    for (int64_t i = 0; i < rows; i++) {
        float *row = scores + i * cols;
        if (causal) {
            const int64_t allowed = std::clamp<int64_t>(i + key_offset + 1, 0, cols);
            if (allowed == 0) {
                // No allowed key: the attngen convention is a row of zeros.
                std::fill(row, row + cols, 0.0f);
                continue;
            }
            std::fill(row + allowed, row + cols, kMasked);
        }
        float max = kMasked;
        for (int64_t j = 0; j < cols; j++) max = std::max(max, row[j]);
        float sum = 0;
        for (int64_t j = 0; j < cols; j++) {
            row[j] = std::exp(row[j] - max);
            sum += row[j];
        }
        const float inverse = 1.0f / sum;
        for (int64_t j = 0; j < cols; j++) row[j] *= inverse;
    }
}

}  // namespace attngen::bench
