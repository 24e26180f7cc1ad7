// Numerical building blocks shared by the stages.
#pragma once

#include "Halide.h"

namespace attngen::algorithm {

// log2(e) and ln(2) rounded to float32: the factors between natural and base-2 exponents.
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2 = 0.693147180559945309f;

// 2^x for float32 arguments x <= 0, the exponentials of softmax (scores minus their maximum are
// never positive; softmax.h works in base 2). Vectorizes on every target; accurate to 2.0 ulp
// at worst down to the floor below (2^22 points of [-125, 0] against double exp2 when the floor
// was lower; mean 0.67 ulp). About 16 vector instructions per vector of results on AVX-512, NaN
// guard included.
//
// Halide's exp() is vectorized too but about 6 ulp (and natural), and fast_exp() about 27 ulp
// and undefined on underflow. Base 2 makes the reduction exact: x = k + r with k = round(x),
// then a degree-5 polynomial for 2^r, and k added to its exponent bits.
//
// Arguments below kExp2Floor give exactly 0 (2^(-inf) too). Positive arguments are outside the
// contract: up to 127 the result is still as accurate (a rounding error above 0 does no harm),
// beyond that undefined. A NaN argument gives NaN.
Halide::Expr exp2_nonpositive(Halide::Expr x);

// The floor of the exponentials: a weight below 2^-64 is 0. Every weight is relative to a maximum
// whose own weight is exactly 1 (a row's) or at least 1/2 (the online softmax's, rounded up to a
// whole number), so a key dropped this way would have changed its row's sum by less than 2^-63:
// for every key count an int32 holds (2^31), less than 2^-32 in all, far below a float's 2^-24. And
// it keeps the weighted values normal floats: a weight of at least 2^-64 times a value of magnitude
// at least 2^-62 is one, while a weight near 2^-126 times a value below 1 is subnormal, which
// Intel cores compute by a microcode assist per instruction that makes or reads one (Halide sets
// no flush-to-zero mode). With ALiBi over 2048 keys, whose far keys' weights fall through that
// range, the floor at 2^-127 (the smallest exact zero) left (bs) of the bench at 1.40-1.45x the
// time of plain (b) on an Intel Xeon (family 6 model 207); at 2^-64, 1.15-1.18x, as with
// flush-to-zero set (1.17x), and plain (b) unchanged (kernels compiled ahead of time each way
// and called in turns, 45 calls each, medians of the per-call ratios in five runs).
constexpr float kExp2Floor = -64.0f;

// 2^x for integral float32 x <= 0: the factors by which the online softmax rescales its running
// sum and weighted values, whose maxima are whole numbers (online_attention.h). An exact power of
// two built in the exponent bits, in about half the vector instructions of exp2_nonpositive
// (no polynomial): the merge computes two for every value feature of a query and key block. Below
// kExp2Floor the result is 0, as exp2_nonpositive's; NaN gives NaN. Non-integral arguments are
// outside the contract.
Halide::Expr exp2_of_integral(Halide::Expr x);

// exp2_nonpositive without its NaN guard and without computing x strictly, for a stage that
// deals with NaN once per row instead of once per element (the softmax, softmax.h): a NaN
// argument gives an unspecified number (NaN through the floor's comparison, or 0 where LLVM folds
// that comparison under its no-NaNs flag). Three vector instructions fewer per vector of results,
// and LLVM may fuse the multiply and subtract that usually compute x into one multiply-add.
Halide::Expr exp2_nonpositive_of_number(Halide::Expr x);

// scale log2(e), the factor that turns dot products into base-2 scores. Computed once, as a
// strict product: Halide's simplifier would otherwise rewrite dot * (scale * c) as
// (dot * scale) * c, two multiplies per score.
Halide::Expr base_two_scale(Halide::Expr scale);

// value, or x itself when x is NaN. Halide's log() (like the clamp in exp2_nonpositive) maps a
// NaN argument to a finite number, so a stage that must pass a NaN on says so with this. The test
// is made on the bits: Halide compiles float code with LLVM's no-NaNs flag, under which a float
// comparison with NaN may be folded away.
Halide::Expr keep_nan(Halide::Expr x, Halide::Expr value);

// The bits of |x|: above those of +inf (0x7f800000) exactly when x is NaN. Integer operations on
// the bits cannot be folded away under LLVM's no-NaNs flag, as float comparisons with NaN can.
Halide::Expr magnitude_bits(Halide::Expr x);

// NaN where condition holds, else value; chosen on the bits (see keep_nan).
Halide::Expr nan_where(Halide::Expr condition, Halide::Expr value);

// The bits of the lowest finite float, the starting maximum of a row: a row maximum that still
// has them saw no score above -inf.
Halide::Expr lowest_bits();

// The additive mask value of a disallowed key in the scores output.
Halide::Expr masked_score();

}  // namespace attngen::algorithm
