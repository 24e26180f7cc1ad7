// Peer "openblas": attention composed from OpenBLAS cblas_sgemm and a plain softmax, the way
// a framework without a fused kernel computes it: per (batch, head) the whole score matrix
// S = Q K^T * scale, the mask, the row softmax, then S V.
#pragma once

#include "implementation.h"

namespace attngen::bench {

Implementation openblas_implementation();

}  // namespace attngen::bench
