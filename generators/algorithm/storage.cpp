#include "storage.h"

namespace attngen::algorithm {

using Halide::Expr;

namespace {

Expr u32(uint32_t value) {
    return Expr(value);
}

// Halide 14 converts float16 with code of its own on x86 (no vcvtph2ps), whose widening turned
// a NaN into a number (NonFiniteTest on the f16 kernels). These are the conversions written
// out, integer arithmetic but for one subtraction, with the rules of the hardware's.

// float16 bits (in a uint32) to float32: the exponent rebiased from 15 to 127; infinities and
// NaN keep all ones; a subnormal (exponent 0) is its fraction times 2^-24, made exact by a float
// subtraction of 2^-14 from 2^-14 (1 + fraction / 1024).
Expr float16_bits_to_float(const Expr &h) {
    const Expr sign = (h & u32(0x8000)) << 16;
    const Expr shifted = (h & u32(0x7fff)) << 13;
    const Expr exponent = h & u32(0x7c00);
    const Expr normal = shifted + u32(112u << 23);
    const Expr inf_nan = shifted | u32(0x7f800000);
    const Expr subnormal = Halide::reinterpret<uint32_t>(
        Halide::reinterpret<float>(shifted + u32(113u << 23)) - Expr(0x1p-14f));
    const Expr bits =
        Halide::select(exponent == u32(0x7c00), inf_nan, exponent == u32(0), subnormal, normal);
    return Halide::reinterpret<float>(bits | sign);
}

// float32 to float16 bits (uint16), to nearest, ties to even: NaN gives a quiet NaN, magnitudes
// from 65520 (65504 plus half an ulp) infinity, normal results the rounding trick of bfloat16
// on 13 dropped bits, and results below 2^-14 the sum with 0.5, whose ulp is float16's
// subnormal step 2^-24, so that the float addition rounds them.
Expr float_to_float16_bits(const Expr &value) {
    const Expr bits = Halide::reinterpret<uint32_t>(value);
    const Expr sign = (bits >> 16) & u32(0x8000);
    const Expr magnitude = bits & u32(0x7fffffff);
    const Expr normal =
        ((magnitude + (u32(0xfff) + ((magnitude >> 13) & u32(1)))) >> 13) - u32(112u << 10);
    const Expr subnormal =
        Halide::reinterpret<uint32_t>(Halide::reinterpret<float>(magnitude) + Expr(0.5f)) -
        u32(0x3f000000);
    const Expr result =
        Halide::select(magnitude > u32(0x7f800000), u32(0x7e00), magnitude >= u32(0x477ff000),
                       u32(0x7c00), magnitude < u32(0x38800000), subnormal, normal);
    return Halide::cast<uint16_t>(result | sign);
}

}  // namespace

Halide::Type storage_type(DType storage) {
    switch (storage) {
        case DType::kBFloat16:
            return Halide::UInt(16);
        case DType::kFloat16:
            return Halide::Float(16);
        default:
            return Halide::Float(32);
    }
}

Expr widen(const Expr &stored, DType storage) {
    switch (storage) {
        case DType::kBFloat16:
            return Halide::reinterpret<float>(Halide::cast<uint32_t>(stored) << 16);
        case DType::kFloat16:
            return float16_bits_to_float(
                Halide::cast<uint32_t>(Halide::reinterpret(Halide::UInt(16), stored)));
        default:
            return stored;
    }
}

Expr narrow(const Expr &value, DType storage) {
    switch (storage) {
        case DType::kBFloat16: {
            // Adding 0x7fff plus the lowest kept bit rounds half to even (a carry into the
            // exponent is the right result, up to infinity). A NaN keeps its sign and gets the
            // quiet bit, so that rounding cannot turn it into an infinity.
            const Expr bits = Halide::reinterpret<uint32_t>(value);
            const Expr rounded = (bits + (Expr(uint32_t{0x7fff}) + ((bits >> 16) & 1))) >> 16;
            const Expr is_nan = (bits & Expr(uint32_t{0x7fffffff})) > Expr(uint32_t{0x7f800000});
            return Halide::cast<uint16_t>(
                Halide::select(is_nan, (bits >> 16) | Expr(uint32_t{0x40}), rounded));
        }
        case DType::kFloat16:
            return Halide::reinterpret(Halide::Float(16), float_to_float16_bits(value));
        default:
            return value;
    }
}

Halide::Func widened(const Halide::Func &stored, DType storage, const std::string &name) {
    if (storage == DType::kFloat32) return stored;
    Halide::Func f(name);
    const std::vector<Halide::Var> args = stored.args();
    f(args) = widen(stored(args), storage);
    return f;
}

Halide::Func as_bfloat16(const Halide::Func &stored, const std::string &name) {
    Halide::Func f(name);
    const std::vector<Halide::Var> args = stored.args();
    f(args) = Halide::reinterpret(Halide::BFloat(16), stored(args));
    return f;
}

Halide::Func bfloat16_of_widened(const Halide::Func &widened, const std::string &name) {
    Halide::Func f(name);
    const std::vector<Halide::Var> args = widened.args();
    f(args) = Halide::reinterpret(
        Halide::BFloat(16),
        Halide::cast<uint16_t>(Halide::reinterpret<uint32_t>(widened(args)) >> 16));
    return f;
}

}  // namespace attngen::algorithm
