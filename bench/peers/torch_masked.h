// The torch peer on shapes with modifiers (shapes.h), by blocks of query rows, with the dense
// additive mask of peers/additive_mask.h as SDPA's float attn_mask; with a softcap, which SDPA
// has no place for, the math formulation (matmul, C tanh(s / C), the mask, softmax, matmul) as
// Gemma 2's reference code writes it with torch.tanh.
#pragma once

#include <memory>

#include "implementation.h"

namespace attngen::bench {

std::unique_ptr<Computation> torch_masked_attention(const BenchShape &shape,
                                                    const ProblemData &data, int threads);

}  // namespace attngen::bench
