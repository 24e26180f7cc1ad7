// Numerical building blocks shared by the stages.
#pragma once

#include "Halide.h"

namespace attngen::algorithm {

// e^x for float32 that vectorizes on every target and is accurate to about 1.2 ulp over the
// range where the result is a normal float (1.17 ulp at worst over 2^22 points of [-87, 0] and
// as many of [0, 88], against double-precision exp).
//
// Halide's exp() is vectorized too but about 6 ulp, and fast_exp() about 27 ulp and undefined on
// underflow. Softmax weights feed every output, so we pay a few instructions more for the
// accurate form: a Cody-Waite reduction x = k ln2 + r with |r| <= ln2/2, a degree-6 polynomial
// for e^r, and 2^k built directly in the exponent bits. About 20 vector instructions per vector
// of results on AVX-512, NaN guard included.
//
// Inputs are clamped to [-87, 88] so that 2^k stays a normal float: below -87 the true value is
// under 1.7e-38, which is negligible next to the row maximum's weight of 1. Softmax never calls
// this with positive arguments above 0 (scores are shifted by the row maximum). A NaN argument
// gives NaN (the clamp alone would make it a finite bound), so e^(-inf) is about 1.6e-38, e^NaN
// is NaN and e^(+inf) is e^88.
Halide::Expr exp_f32(Halide::Expr x);

// value, or x itself when x is NaN. Halide's log() (like the clamp in exp_f32) maps a NaN
// argument to a finite number, so a stage that must pass a NaN on says so with this. The test is
// made on the bits: Halide compiles float code with LLVM's no-NaNs flag, under which a float
// comparison with NaN may be folded away.
Halide::Expr keep_nan(Halide::Expr x, Halide::Expr value);

// The additive mask value of a disallowed key in the scores output.
Halide::Expr masked_score();

}  // namespace attngen::algorithm
