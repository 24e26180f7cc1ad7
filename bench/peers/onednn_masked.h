// The oneDNN peer on shapes with modifiers (shapes.h): the composition of onednn_attention.h by
// blocks of query rows, with the softcap as a tanh post-op and the rest as a dense additive
// mask (peers/additive_mask.h) in a binary-add post-op of the scores' matmul.
#pragma once

#include <memory>

#include "implementation.h"

namespace attngen::bench {

std::unique_ptr<Computation> onednn_masked_attention(const BenchShape &shape,
                                                     const ProblemData &data, int threads);

}  // namespace attngen::bench
