// Helpers shared by the tests: deterministic inputs and comparison against the fp64 reference.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "low_precision.h"
#include "reference.h"

namespace attngen::test {

// Uniform values in [lo, hi) from a fixed seed, so that every run sees the same inputs.
std::vector<float> random_values(std::size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f);

std::vector<double> to_double(const std::vector<float> &v);

// Passes when actual is within the tolerance of reference::compare (see reference/compare.h):
// factor times the naive implementation's error, plus a few float32 ulps.
::testing::AssertionResult Matches(const std::vector<float> &actual,
                                   const std::vector<double> &expected,
                                   const std::vector<float> &naive, double factor = 8.0);

// The factor of Matches for a kernel's outputs against the naive implementation of its storage
// type: issue 41 holds a 16-bit kernel to twice the error of a plain implementation in that
// precision (reference/low_precision.h); float32 kernels keep the factor of 8 against naive
// float32 that the suite always used.
inline double NaiveErrorFactor(DType storage) {
    return storage == DType::kFloat32 ? 8.0 : 2.0;
}

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
    // The storage type of q, k, v and out. For a 16-bit one, prepare() rounds the inputs to it
    // (q, k and v hold the rounded values), the fp64 reference computes on those, and out32 and
    // lse32 are those of the plain implementation in that precision
    // (reference::attention_in_storage) instead of naive float32.
    DType storage = DType::kFloat32;
    // The storage type of k and v when it differs from storage's (float32 queries with a 16-bit
    // KV cache): prepare() rounds k and v to it, and out32 and lse32 stay naive float32 when
    // storage is float32 (such a kernel computes in float32 from exactly widened keys and values).
    std::optional<DType> kv_storage;
    DType kv_type() const { return kv_storage.value_or(storage); }
    std::vector<float> q, k, v;

    std::vector<double> out, lse, probs;       // fp64 reference.
    std::vector<float> out32, lse32, probs32;  // Naive float32 (out32, lse32: see storage).

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
    // Computes both references from the inputs as they are (rounding them to storage first), for
    // tests that choose their own inputs.
    void compute_references();
};

}  // namespace attngen::test
