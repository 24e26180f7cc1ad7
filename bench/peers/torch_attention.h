// Peer "torch": libtorch 1.13's own scaled dot-product attention operator
// (at::_scaled_dot_product_attention, the op behind torch.nn.functional's attention in 1.13,
// which on the CPU composes matmul, the mask, softmax and matmul), and for a layer the
// projections as at::matmul around it, as torch.nn.MultiheadAttention computes them.
// Built only when libtorch is found (CMake option ATTNGEN_BENCH_TORCH).
#pragma once

#include "implementation.h"

namespace attngen::bench {

Implementation torch_implementation();

}  // namespace attngen::bench
