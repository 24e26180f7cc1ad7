// T5's relative position buckets (Raffel et al. 2020), bidirectional as in its encoder: plain C++,
// shared by the score modifier (t5_bias.cpp, at build time) and the example's reference.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>

constexpr int kT5Buckets = 32;       // Half for keys before the query, half for keys after.
constexpr int kT5MaxDistance = 128;  // Distances from here on share the last bucket.
constexpr int kT5ExactBuckets = 8;   // Distances below this have a bucket each.

// The bucket of key j for a query at position p, relative = j - p: the first half of the
// buckets for keys at or before the query, the second for keys after it; exact distances below
// kT5ExactBuckets, logarithmically wider ones up to kT5MaxDistance.
inline int t5_bucket(int64_t relative) {
    const int half = kT5Buckets / 2;
    const int side = relative > 0 ? half : 0;
    const int64_t distance = std::llabs(relative);
    if (distance < kT5ExactBuckets) return side + static_cast<int>(distance);
    const double wide = std::log(static_cast<double>(distance) / kT5ExactBuckets) /
                        std::log(static_cast<double>(kT5MaxDistance) / kT5ExactBuckets) *
                        (half - kT5ExactBuckets);
    const int bucket = kT5ExactBuckets + static_cast<int>(wide);
    return side + (bucket < half - 1 ? bucket : half - 1);
}
