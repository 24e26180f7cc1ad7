#include "additive_mask.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attngen::bench {

int64_t chunk_rows(const BenchShape &s) {
    constexpr double kMaxBlockBytes = 256.0 * 1024 * 1024;
    int64_t rows = s.nq;
    while (rows % 2 == 0 && 4.0 * s.batch * s.heads * rows * s.nk > kMaxBlockBytes) rows /= 2;
    return rows;
}

AdditiveMask::AdditiveMask(const BenchShape &shape, const ProblemData &data)
    : shape_(shape), data_(data) {
    const ShapeModifiers &m = shape.modifiers;
    const bool bias_by_head = !m.bias_dims.empty() && m.bias_dims[1] != 1;
    heads_ = m.alibi || bias_by_head ? shape.heads : 1;
}

int64_t AdditiveMask::size(int64_t rows) const {
    return shape_.batch * heads_ * rows * shape_.nk;
}

void AdditiveMask::fill(int64_t first_row, int64_t rows, float *mask, int threads) const {
    const BenchShape &s = shape_;
    const ShapeModifiers &m = s.modifiers;
    const float minus_inf = -std::numeric_limits<float>::infinity();
    const std::vector<int64_t> &bias = m.bias_dims;
    const int64_t blocks = s.batch * heads_ * rows;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t block = 0; block < blocks; block++) {
        const int64_t b = block / (heads_ * rows), h = block / rows % heads_;
        const int64_t i = first_row + block % rows, position = i + s.nk - s.nq;
        // The causal mask and the window allow an interval of keys; the documents test each.
        int64_t first = 0, end = s.nk;
        if (s.causal) end = std::min(end, position + 1);
        if (m.window_left >= 0) first = std::max(first, position - m.window_left);
        const int32_t *kv_segments =
            m.documents > 0 ? data_.kv_segments.data() + b * s.nk : nullptr;
        const int32_t q_segment = m.documents > 0 ? data_.q_segments[b * s.nq + i] : 0;
        const float slope = m.alibi ? data_.alibi_slopes[h] : 0.0f;
        const float *bias_row = nullptr;
        if (!bias.empty()) {
            const int64_t bb = bias[0] == 1 ? 0 : b, bh = bias[1] == 1 ? 0 : h,
                          bi = bias[2] == 1 ? 0 : i;
            bias_row = data_.bias.data() + ((bb * bias[1] + bh) * bias[2] + bi) * bias[3];
        }
        float *row = mask + block * s.nk;
        for (int64_t j = 0; j < s.nk; j++) {
            const bool allowed =
                j >= first && j < end && (!kv_segments || kv_segments[j] == q_segment);
            float value = -slope * static_cast<float>(std::abs(position - j));
            if (bias_row) value += bias_row[bias[3] == 1 ? 0 : j];
            row[j] = allowed ? value : minus_inf;
        }
    }
}

MaskBlocks::MaskBlocks(const BenchShape &shape, const ProblemData &data, int threads)
    : mask_(shape, data),
      rows_(chunk_rows(shape)),
      count_(shape.nq / rows_),
      threads_(threads),
      buffer_(mask_.size(rows_)) {
    if (count_ == 1) mask_.fill(0, rows_, buffer_.data(), threads_);
}

float *MaskBlocks::block(int64_t index) {
    if (count_ > 1) mask_.fill(index * rows_, rows_, buffer_.data(), threads_);
    return buffer_.data();
}

}  // namespace attngen::bench
