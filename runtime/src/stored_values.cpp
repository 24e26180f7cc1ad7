#include "stored_values.h"

#include <cmath>
#include <cstring>

namespace attngen::detail {

float stored_to_float(DType storage, uint16_t bits) {
    if (storage == DType::kBFloat16) {
        const uint32_t wide = uint32_t(bits) << 16;
        float value;
        std::memcpy(&value, &wide, sizeof value);
        return value;
    }
    // float16: sign, 5 exponent bits (bias 15), 10 fraction bits; exponent 0 is subnormal
    // (fraction x 2^-24) and 31 infinity or NaN.
    const float sign = (bits & 0x8000) != 0 ? -1.0f : 1.0f;
    const int exponent = (bits >> 10) & 0x1f;
    const int fraction = bits & 0x3ff;
    if (exponent == 0x1f) return fraction == 0 ? sign * INFINITY : std::nanf("");
    if (exponent == 0) return sign * std::ldexp(float(fraction), -24);
    return sign * std::ldexp(float(fraction + 1024), exponent - 25);
}

}  // namespace attngen::detail
