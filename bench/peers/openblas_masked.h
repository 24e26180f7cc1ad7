// The OpenBLAS peer on shapes with modifiers (shapes.h): the composition of openblas_attention.h
// with the softcap as a tanh pass over the scores and the rest as a dense additive mask
// (peers/additive_mask.h), by blocks of query rows.
#pragma once

#include <memory>

#include "implementation.h"

namespace attngen::bench {

std::unique_ptr<Computation> openblas_masked_attention(const BenchShape &shape,
                                                       const ProblemData &data, int threads);

}  // namespace attngen::bench
