// The bits of bfloat16 and float16 values, for the benchmarks' 16-bit inputs and outputs (the
// attention benchmark's and the CUDA benchmark's alike).
#pragma once

#include <cstdint>
#include <cstring>

namespace attngen::bench {

// A float32 value rounded to bfloat16 (to nearest, ties to even), as its bits. The inputs are
// finite.
inline uint16_t bfloat16_bits(float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return static_cast<uint16_t>((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

// A float32 value rounded to float16 (to nearest, ties to even), as its bits. Written out
// rather than through _Float16, which clang 14 (the sanitizer build's compiler) lacks on x86:
// magnitudes from 65520 (65504 plus half an ulp) become infinity, normal results round the 13
// dropped bits as bfloat16_bits() does its 16, and results below 2^-14 are rounded by adding
// 0.5, whose ulp is float16's subnormal step 2^-24.
inline uint16_t float16_bits(float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    const uint32_t sign = (bits >> 16) & 0x8000u, magnitude = bits & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);
    if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
    if (magnitude < 0x38800000u) {
        float small;
        std::memcpy(&small, &magnitude, sizeof small);
        small += 0.5f;
        uint32_t sum;
        std::memcpy(&sum, &small, sizeof sum);
        return static_cast<uint16_t>(sign | (sum - 0x3f000000u));
    }
    const uint32_t rounded = (magnitude + 0xfffu + ((magnitude >> 13) & 1u)) >> 13;
    return static_cast<uint16_t>(sign | (rounded - (112u << 10)));
}

// The value of bfloat16 bits, exactly.
inline float from_bfloat16_bits(uint16_t bits) {
    const uint32_t wide = static_cast<uint32_t>(bits) << 16;
    float value;
    std::memcpy(&value, &wide, sizeof value);
    return value;
}

// The value of float16 bits, exactly: a subnormal is its fraction times 2^-24, a normal value
// has its exponent rebiased from 15 to 127, infinities and NaN keep all ones.
inline float from_float16_bits(uint16_t bits) {
    const uint32_t sign = (bits & 0x8000u) << 16, exponent = (bits >> 10) & 0x1fu,
                   fraction = bits & 0x3ffu;
    uint32_t wide;
    if (exponent == 0) {
        const float magnitude = static_cast<float>(fraction) * 0x1p-24f;
        std::memcpy(&wide, &magnitude, sizeof wide);
    } else if (exponent == 0x1f) {
        wide = 0x7f800000u | (fraction << 13);
    } else {
        wide = ((exponent + 112u) << 23) | (fraction << 13);
    }
    wide |= sign;
    float value;
    std::memcpy(&value, &wide, sizeof value);
    return value;
}

}  // namespace attngen::bench
