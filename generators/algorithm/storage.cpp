#include "storage.h"

namespace attngen::algorithm {

using Halide::Expr;

namespace {

Expr u32(uint32_t value) {
    return Expr(value);
}

// Halide 14 converts float16 with code of its own on x86 (no vcvtph2ps), whose widening turned
// a NaN into a number (NonFiniteTest on the f16 kernels). These are the conversions written
// out, integer arithmetic but for one floating-point operation each, with the rules of the
// hardware's.

// float16 bits (an int16) to float32. Sign-extended to 32 bits and shifted by 13, the sign,
// exponent and fraction sit where float32 keeps them once the copies of the sign in bits 28-30
// are cleared; that float32 is the value times 2^-112 (a normal float16's exponent e reads as
// e - 127 instead of e - 15, a subnormal's fraction as a float32 subnormal's), and one
// multiplication by 2^112, a power of two, makes it exact with its sign. Infinities and NaN
// (exponent 31) get all ones in the exponent and keep their fraction. Seven instructions per
// vector with AVX-512 (sign-extending load, shift, and, multiply, and, compare, masked or), where
// the form with a select per case took fourteen and Halide's own conversion about sixteen
// (objdump of the decode kernels): with the former, decode against a float16 KV cache took
// 0.91-0.95x the float32 decode's time, with this one 0.78x (Zen 5, 2026-12-07). A caller that
// sets the CPU's denormals-are-zero flag gets float16 subnormals as zero here, as that flag does
// to float32 subnormals.
Expr float16_bits_to_float(const Expr &h) {
    const Expr x = Halide::reinterpret<uint32_t>(Halide::cast<int32_t>(h));
    const Expr placed = (x << 13) & u32(0x8fffe000);
    const Expr scaled =
        Halide::reinterpret<uint32_t>(Halide::reinterpret<float>(placed) * Expr(0x1p112f));
    const Expr special = (x & u32(0x7c00)) == u32(0x7c00);
    return Halide::reinterpret<float>(Halide::select(special, scaled | u32(0x7f800000), scaled));
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
            return float16_bits_to_float(Halide::reinterpret(Halide::Int(16), stored));
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
