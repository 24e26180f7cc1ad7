#include "numerics.h"

#include <limits>

namespace attngen::algorithm {

using Halide::Expr;

Expr exp_f32(Expr x) {
    const Expr input = x;
    x = Halide::clamp(x, -87.0f, 88.0f);
    // k = round(x / ln 2) by the shifter 1.5 * 2^23 + 127: adding it leaves k + 127 in the low
    // mantissa bits of the sum (rounded to nearest by the addition itself), where one shift
    // turns them into the exponent bits of 2^k and one subtraction into k. That is four
    // instructions where round(), a conversion, an add and a shift took eight on AVX-512 (Halide
    // 14 rounds a 16-lane vector as two 8-lane halves). k + 127 stays in [1, 254] on the clamped
    // range, so 2^k is a normal float.
    const Expr shifted = x * 1.44269504088896341f + 12583039.0f;
    const Expr shifted_bits = Halide::reinterpret<uint32_t>(shifted);
    const Expr k = Halide::cast<float>(
        Halide::reinterpret<int32_t>(shifted_bits - Halide::Expr(uint32_t{0x4B40007F})));
    // ln 2 split into a part with few mantissa bits (so that k * ln2_hi is exact for |k| < 2^9)
    // and the remainder.
    Expr r = x - k * 0.693359375f;
    r = r - k * -2.12194440e-4f;
    // e^r on [-ln2/2, ln2/2] by a degree-6 polynomial in Horner form (six multiply-adds), fitted
    // to the relative error (about 2e-9 before rounding; scripts/exp_coefficients.py). The
    // constant term is exactly 1, so e^0 is exactly 1.
    Expr p = 1.3843652559e-03f;
    p = p * r + 8.3741564304e-03f;
    p = p * r + 4.1668001562e-02f;
    p = p * r + 1.6666431725e-01f;
    p = p * r + 4.9999994040e-01f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    const Expr two_to_k = Halide::reinterpret<float>(shifted_bits << Halide::Expr(uint32_t{23}));
    // The clamp turns NaN into a finite bound (min and max pick their non-NaN operand), which
    // would give a NaN score a finite weight of about e^88 and let the row's output look valid.
    // A NaN argument yields NaN instead, so that a NaN (or +inf, as inf - inf) among a row's
    // allowed scores makes the row NaN, as in PyTorch.
    return keep_nan(input, p * two_to_k);
}

Expr keep_nan(Expr x, Expr value) {
    Expr bits = Halide::reinterpret<uint32_t>(x);
    // NaN: all exponent bits set and a nonzero mantissa, i.e. above +inf once the sign is cleared.
    Expr is_nan = (bits & Halide::Expr(uint32_t{0x7fffffff})) > Halide::Expr(uint32_t{0x7f800000});
    return Halide::reinterpret<float>(
        Halide::select(is_nan, bits, Halide::reinterpret<uint32_t>(value)));
}

Expr masked_score() {
    return Expr(-std::numeric_limits<float>::infinity());
}

}  // namespace attngen::algorithm
