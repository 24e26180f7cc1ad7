// Checks an implementation's output against the fp64 reference (attngen_reference) before it is
// timed, so that no benchmark reports the speed of a wrong answer.
//
// The reference is plain loops in double, far too slow for the whole of the large shapes, so it
// checks slices: the last rows of the first and the last (batch, head) pair (of the first and the
// last batch element for a layer). The last rows are the ones a causal mask aligned bottom-right
// lets see the most keys, and the last R rows of a causal problem are exactly the causal problem
// with Nq = R against the same keys, so the reference runs on the slice alone. A shape with
// modifiers checks them too: the reference applies each literally (docs/modifiers.md), on the
// slice's rows of the bias and the segments and its head's ALiBi slope; packed documents also
// check the first rows of the second document.
#pragma once

#include <string>

#include "problem_data.h"
#include "shapes.h"

namespace attngen::bench {

// The largest accepted error, relative to the largest magnitude of the reference slice, for an
// output stored in float32: float32 kernels land near 1e-6; 1e-3 catches any wrong mask, scale
// or layout.
constexpr double kMaxRelativeError = 1e-3;

// The largest accepted error for `shape`'s output type. The reference runs on the inputs rounded
// to their storage (problem_data.h), so only the computation and the output's rounding differ:
// float16's 11 significant bits round an output by at most 2^-12 of itself, so 4e-3 (16 times
// that) leaves room for the computation; bfloat16's 8 bits round it by 2^-9, and the bfloat16
// peers also round the probabilities (oneDNN) or the scores and the probabilities (torch's math
// attention) to bfloat16 before P V, so 3e-2. Both still catch a wrong mask or layout, whose
// errors are of the order of the outputs themselves.
double max_relative_error(const BenchShape &shape);

// Rows per checked slice.
constexpr int64_t kCheckedRows = 128;

// Empty when `output` (the whole output of `shape`, in the layout of problem_data.h) matches the
// reference on every checked slice; otherwise what differs and by how much.
std::string check_against_reference(const BenchShape &shape, const ProblemData &data,
                                    const float *output);

}  // namespace attngen::bench
