// The float32 value of one element of a 16-bit tensor (attngen/tensor.h: bfloat16 as the high half
// of a float32, float16 as IEEE binary16), for the few values the runtime reads itself, such as
// the biases of a 16-bit multi-head layer. Exact: both types are subsets of float32.
#pragma once

#include <cstdint>

#include "attngen/tensor.h"

namespace attngen::detail {

// bits of an element of a kBFloat16 or kFloat16 tensor, as float32.
float stored_to_float(DType storage, uint16_t bits);

}  // namespace attngen::detail
