// 16-bit storage types in the oracle: conversions between float32 and the bit patterns of
// bfloat16 and IEEE binary16, and the yardstick of a 16-bit kernel's accuracy, attention as a
// plain implementation in that precision computes it.
//
// The yardstick rounds where PyTorch's math attention on bf16/f16 tensors rounds (each operator's
// result is stored in the tensor type, with float32 accumulation inside a matrix product and a
// softmax): the scores after the product and after the scale, the probabilities, and the output.
// Issue 41 holds a 16-bit kernel to at most twice that implementation's error against the fp64
// reference on the same rounded inputs, the yardstick FlashAttention's tests use.
#pragma once

#include <cstdint>
#include <vector>

#include "attngen/tensor.h"
#include "reference.h"

namespace attngen::reference {

// Round to nearest, ties to even; NaN stays NaN (quiet), and values beyond the largest finite
// value of the type become infinities of their sign.
uint16_t to_bf16_bits(float x);
float from_bf16_bits(uint16_t bits);
uint16_t to_f16_bits(float x);
float from_f16_bits(uint16_t bits);

// The bits of x in a 16-bit storage type (kBFloat16 or kFloat16), and back.
uint16_t to_bits(DType storage, float x);
float from_bits(DType storage, uint16_t bits);
// x rounded to the storage type (kFloat32: x itself).
float round_to(DType storage, float x);

// The plain same-precision attention described above, on inputs already rounded to `storage`
// (float32 values): out [B, H, Nq, d_v] rounded to storage, lse [B, H, Nq] in float32 (a kernel's
// lse is float32 whatever its storage); lse may be null. Masks and score modifiers as in
// reference::attention.
void attention_in_storage(DType storage, const AttentionShape &s, const float *q, const float *k,
                          const float *v, const std::vector<int64_t> &key_lengths,
                          const MaskSpec &mask, float scale, float *out, float *lse,
                          const ModifierValues *values = nullptr);

}  // namespace attngen::reference
