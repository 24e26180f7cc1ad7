#include "numerics.h"

#include <limits>

namespace attngen::algorithm {

using Halide::Expr;

Expr exp2_nonpositive_of_number(Expr x) {
    // Below the floor (numerics.h says why it is 2^-64) x becomes -127, where k = -127 and r = 0
    // make the scaling below give exactly 0 (a -inf score too). From the floor up, k >= -64 and
    // the scaling is exact. There is no clamp above: x <= 0 here, and the result stays accurate
    // up to x = 127. A NaN compares false and passes through (exp2_nonpositive returns it).
    x = Halide::select(x < kExp2Floor, -127.0f, x);
    // k = round(x) by a shifter: adding 1.5 * 2^23 leaves k in the low mantissa bits of the sum
    // (rounded to nearest by the addition itself), and subtracting it again gives k as a float.
    // Both operations are strict: Halide treats float addition as associative and would fold
    // (x + s) - s back to x. r = x - k is then exact (x and k are within a factor of two of
    // each other, or k is 0), so base 2 needs no Cody-Waite reduction: no multiply by 1/ln 2 and
    // no two-part ln 2, as e^x would.
    const Expr shifter = 12582912.0f;
    const Expr shifted = Halide::strict_float(x + shifter);
    const Expr k = Halide::strict_float(shifted - shifter);
    const Expr r = x - k;
    // 2^r on [-1/2, 1/2] by a degree-5 polynomial in Horner form, fitted to the relative error
    // (9e-8 before rounding; scripts/exp_coefficients.py). The constant term is exactly 1, so
    // 2^0 is exactly 1. Degree 6 (2e-9) measured 1.2 ulp at worst instead of 2.2, and one
    // multiply-add per weight more: 0.8% of B1 H8 N2048 d64.
    Expr p = 1.3264724985e-03f;
    p = p * r + 9.6715139225e-03f;
    p = p * r + 5.5507335812e-02f;
    p = p * r + 2.4022242427e-01f;
    p = p * r + 6.9314700365e-01f;
    p = p * r + 1.0f;
    // 2^r 2^k by adding k to the exponent bits of 2^r: one shift moves the shifter's low bits
    // (k in two's complement; the bits above them leave the word) into the exponent field, and
    // an integer addition takes the place of a float multiply by 2^k, which would need a slot on
    // the multiply-add pipes that the polynomial already fills. The scaling is exact for
    // k >= -126; k = -127 comes with r = 0 only (below the floor), and gives 0 (p is then exactly
    // 1, whose exponent field k cancels).
    const Expr scaled_bits = Halide::reinterpret<uint32_t>(p) +
                             (Halide::reinterpret<uint32_t>(shifted) << Halide::Expr(uint32_t{23}));
    return Halide::reinterpret<float>(scaled_bits);
}

Expr exp2_nonpositive(Expr x) {
    // The argument is computed strictly, so that LLVM cannot assume it is not NaN (below).
    x = Halide::strict_float(x);
    const Expr scaled_bits = Halide::reinterpret<uint32_t>(exp2_nonpositive_of_number(x));
    // The clamp turns NaN into a finite bound, which would give a NaN score a finite weight and
    // let its row's output look valid. A NaN argument yields NaN instead, so that a NaN among a
    // row's allowed scores (or +inf, as inf - inf) makes the row NaN, as in PyTorch. is_nan is
    // evaluated strictly (one compare on AVX-512), and the choice is made on the bits: a float
    // select carries LLVM's no-NaNs flag, under which select(is_nan(x), x, y) may fold to y.
    return Halide::reinterpret<float>(
        Halide::select(Halide::is_nan(x), Halide::reinterpret<uint32_t>(x), scaled_bits));
}

Expr exp2_of_integral(Expr x) {
    // Computed strictly, as exp2_nonpositive's argument: inf - inf must stay NaN for keep_nan.
    x = Halide::strict_float(x);
    // k = x clamped to one below the floor (so that the conversion is defined for any number,
    // -inf included), then 2^k = the float whose exponent field is k + 127; below the floor 0.
    const Expr k = Halide::cast<int32_t>(Halide::max(x, kExp2Floor - 1.0f));
    const Expr power =
        Halide::reinterpret<float>(Halide::cast<uint32_t>(k + 127) << Halide::Expr(uint32_t{23}));
    return keep_nan(x, Halide::select(k < static_cast<int>(kExp2Floor), 0.0f, power));
}

Expr base_two_scale(Expr scale) {
    return Halide::strict_float(scale * kLog2e);
}

Expr keep_nan(Expr x, Expr value) {
    Expr bits = Halide::reinterpret<uint32_t>(x);
    // NaN: all exponent bits set and a nonzero mantissa, i.e. above +inf once the sign is cleared.
    Expr is_nan = (bits & Halide::Expr(uint32_t{0x7fffffff})) > Halide::Expr(uint32_t{0x7f800000});
    return Halide::reinterpret<float>(
        Halide::select(is_nan, bits, Halide::reinterpret<uint32_t>(value)));
}

Expr magnitude_bits(Expr x) {
    return Halide::reinterpret<uint32_t>(x) & Halide::Expr(uint32_t{0x7fffffff});
}

Expr nan_where(Expr condition, Expr value) {
    return Halide::reinterpret<float>(Halide::select(condition, Halide::Expr(uint32_t{0x7fc00000}),
                                                     Halide::reinterpret<uint32_t>(value)));
}

Expr lowest_bits() {
    return Expr(uint32_t{0xff7fffff});
}

Expr masked_score() {
    return Expr(-std::numeric_limits<float>::infinity());
}

}  // namespace attngen::algorithm
