// The loop variables shared by every stage. Halide matches Vars by name, so stages and schedules
// that construct their own Var("i") refer to the same dimension; keeping them in one place makes
// the convention explicit.
//
// Tensors are logical [B, H, N, D] (docs/design.md section 2); Halide lists dimensions innermost
// first, so a query tensor is q(d, i, h, b).
#pragma once

#include "Halide.h"

namespace attngen::algorithm {

struct Dims {
    Halide::Var d{"d"};  // Query/key feature, 0 .. d_k.
    Halide::Var e{"e"};  // Value feature, 0 .. d_v.
    Halide::Var i{"i"};  // Query position, 0 .. Nq.
    Halide::Var j{"j"};  // Key position, 0 .. Nk.
    Halide::Var h{"h"};  // Head.
    Halide::Var b{"b"};  // Batch element.
    Halide::Var o{"o"};  // Projection output feature.
    Halide::Var n{"n"};  // Sequence position of a projection input.
};

inline const Dims &dims() {
    static const Dims instance;
    return instance;
}

}  // namespace attngen::algorithm
