#include "numerics.h"

#include <limits>

namespace attngen::algorithm {

using Halide::Expr;

Expr exp_f32(Expr x) {
    const Expr input = x;
    x = Halide::clamp(x, -87.0f, 88.0f);
    Expr k = Halide::round(x * 1.44269504088896341f);
    // ln 2 split into a part with few mantissa bits (so that k * ln2_hi is exact for |k| < 2^9)
    // and the remainder.
    Expr r = x - k * 0.693359375f;
    r = r - k * -2.12194440e-4f;
    // Minimax coefficients of (e^r - 1 - r) / r^2 on [-ln2/2, ln2/2].
    Expr p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    Expr two_to_k = Halide::reinterpret<float>((Halide::cast<int32_t>(k) + 127) << 23);
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
