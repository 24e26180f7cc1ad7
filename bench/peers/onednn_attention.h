// Peer "onednn": attention composed from oneDNN primitives: a batched matmul Q K^T with the
// scale as output scale and the causal mask as a binary-add post-op, the softmax primitive on
// the last axis, and a batched matmul P V. The (batch, head) pairs are the matmuls' batch
// dimensions, so each step is one primitive call over all heads.
#pragma once

#include "implementation.h"

namespace attngen::bench {

Implementation onednn_implementation();

}  // namespace attngen::bench
