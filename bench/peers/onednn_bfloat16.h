// The oneDNN peer on bfloat16 shapes: the plain composition of onednn_attention.h in oneDNN's
// own low precision, as a bfloat16 model runs it. Q K^T of bfloat16 q and k accumulates and
// writes float32 scores (with the scale and the causal mask as attributes, as in float32), the
// softmax primitive reads them and writes the probabilities in bfloat16 (softmax_v2, whose source
// and destination types may differ), and P V of bfloat16 P and v writes bfloat16 out. oneDNN
// picks its bfloat16 kernels for the CPU (AVX512-BF16 or AMX where present).
#pragma once

#include <memory>

#include "implementation.h"

namespace attngen::bench {

// For an attention shape whose storage is bfloat16, without modifiers or grouped-query heads.
std::unique_ptr<Computation> onednn_bfloat16_attention(const BenchShape &shape,
                                                       const ProblemData &data);

}  // namespace attngen::bench
