// Helpers shared by the tests: deterministic inputs and comparison against the fp64 reference.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reference.h"

namespace attngen::test {

// Uniform values in [lo, hi) from a fixed seed, so that every run sees the same inputs.
std::vector<float> random_values(std::size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f);

std::vector<double> to_double(const std::vector<float> &v);

// Passes when actual is within the tolerance of reference::compare (see reference/compare.h).
::testing::AssertionResult Matches(const std::vector<float> &actual,
                                   const std::vector<double> &expected,
                                   const std::vector<float> &naive);

// One attention problem with its inputs and the outputs of the fp64 reference and of the naive
// float32 implementation.
struct AttentionCase {
    reference::AttentionShape shape;
    bool causal = false;
    // The other mask kinds (window, prefix, segments), whose values are in modifiers, as are the
    // score modifiers (modifiers.score says which apply).
    MaskSpec kinds;
    reference::ModifierValues modifiers;
    std::vector<int64_t> key_lengths;  // Empty: no padding.
    std::optional<float> scale;        // Empty: 1 / sqrt(d_k).
    std::vector<float> q, k, v;

    std::vector<double> out, lse, probs;       // fp64 reference.
    std::vector<float> out32, lse32, probs32;  // Naive float32.

    float effective_scale() const;
    // The mask of the case: causal with the other kinds.
    MaskSpec mask() const {
        MaskSpec m = kinds;
        m.causal = causal;
        return m;
    }
    // Draws inputs in [-magnitude, magnitude) (v in [-1, 1)) without computing the references,
    // for tests that compare a kernel with itself.
    void draw(uint32_t seed, float magnitude = 1.0f);
    // draw, then computes both references.
    void prepare(uint32_t seed, float magnitude = 1.0f);
};

}  // namespace attngen::test
