// Stage 1: projection, Y = X W + bias.
//
// X is [B, N, d_in] (x(c, n, b) in Halide order), W is [d_in, d_out] in the X·W convention of
// docs/design.md section 1 (w(o, c)), the bias is [d_out]. The result is y(o, n, b).
#pragma once

#include "Halide.h"

namespace attngen::algorithm {

struct ProjectionFuncs {
    Halide::Func x;        // x(c, n, b), the input rows.
    Halide::Func w;        // w(o, c), the weights.
    Halide::Func bias;     // bias(o).
    Halide::Func product;  // product(o, n, b) = sum_c x(c, n, b) w(o, c), the GEMM.
    Halide::Func y;        // y(o, n, b) = product + bias.
    Halide::RDom c;        // The reduction over input features.
};

// The Funcs are named prefix + "product" and prefix + "y", or output_name for y where given: a
// pipeline's outputs are named after the generator's (the runtime passes them by name).
ProjectionFuncs define_projection(const Halide::Func &x, const Halide::Func &w,
                                  const Halide::Func &bias, const Halide::Expr &d_in,
                                  const std::string &prefix = "",
                                  const std::string &output_name = "");

}  // namespace attngen::algorithm
