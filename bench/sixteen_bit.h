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

// A float32 value rounded to float16 (to nearest, ties to even), as its bits.
inline uint16_t float16_bits(float value) {
    const _Float16 half = static_cast<_Float16>(value);
    uint16_t bits;
    std::memcpy(&bits, &half, sizeof bits);
    return bits;
}

// The value of bfloat16 bits, exactly.
inline float from_bfloat16_bits(uint16_t bits) {
    const uint32_t wide = static_cast<uint32_t>(bits) << 16;
    float value;
    std::memcpy(&value, &wide, sizeof value);
    return value;
}

// The value of float16 bits, exactly.
inline float from_float16_bits(uint16_t bits) {
    _Float16 half;
    std::memcpy(&half, &bits, sizeof half);
    return static_cast<float>(half);
}

}  // namespace attngen::bench
