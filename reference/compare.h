// How close a float32 result is to the fp64 reference.
//
// A float32 kernel cannot match fp64 exactly; how far it may be depends on the problem (long
// reductions, large values). The yardstick is a naive float32 implementation of the same
// formula (reference<float>): the kernel's worst error may be a small multiple of the naive
// one's, plus a few float32 ulps of the result's magnitude for problems where the naive error
// happens to be 0.
#pragma once

#include <cstdint>
#include <string>

namespace attngen::reference {

struct Comparison {
    bool ok = true;
    double max_error = 0;    // Largest |actual - reference|.
    double naive_error = 0;  // Largest |naive - reference|.
    double tolerance = 0;
    double max_reference = 0;  // Largest |reference|, the scale of the result.
    int64_t worst = -1;        // Index of the largest error, or of the first mismatch.
    std::string problem;       // Empty, or what failed: a NaN, an infinity that differs, ...
};

// Infinite reference values (an LSE of -inf) must be matched exactly; every finite one must be
// within tolerance = factor * naive_error + ulps * FLT_EPSILON * max_reference.
Comparison compare(const float *actual, const double *expected, const float *naive, int64_t n,
                   double factor = 8.0, double ulps = 16.0);

// A one-line summary for test failures and the demo.
std::string describe(const Comparison &c);

}  // namespace attngen::reference
