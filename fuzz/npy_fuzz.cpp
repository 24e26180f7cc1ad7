// libFuzzer target for the command line's .npy reader (tools/attngen/npy.h).
//
// Any byte string must either be rejected with a message or parse into an array whose element
// count matches its shape; a float32 array must survive a write and a second read unchanged.
// A crash, a sanitizer report or a broken invariant (a trap) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "npy.h"

namespace {

[[noreturn]] void fail(const char *what) {
    std::fprintf(stderr, "npy_fuzz: %s\n", what);
    __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, std::size_t size) {
    const std::string bytes(reinterpret_cast<const char *>(data), size);
    attngen::npy::Array array;
    std::string error;
    if (!attngen::npy::parse("fuzz.npy", bytes, &array, &error)) {
        if (error.empty()) fail("rejected without a message");
        if (error.find('\n') != std::string::npos) fail("message spans several lines");
        return 0;
    }
    int64_t count = 1;
    for (int64_t extent : array.shape) {
        if (extent < 0) fail("negative extent accepted");
        // Array::num_elements multiplies the extents in int64_t: an accepted shape must not
        // overflow it, whatever order its zero and huge extents come in.
        if (__builtin_mul_overflow(count, extent, &count)) fail("extents overflow int64");
    }
    if (count != array.num_elements()) fail("num_elements differs from the shape");
    std::size_t held = 0;
    switch (array.dtype) {
        case attngen::DType::kFloat32:
            held = array.f32.size();
            break;
        case attngen::DType::kInt32:
            held = array.i32.size();
            break;
        case attngen::DType::kInt64:
            held = array.i64.size();
            break;
        case attngen::DType::kBFloat16:
        case attngen::DType::kFloat16:
            held = array.u16.size();
            break;
    }
    if (static_cast<int64_t>(held) != count) fail("element storage differs from the shape");
    if (array.dtype == attngen::DType::kFloat32) {
        // What the command line writes, it must read back bit for bit.
        const std::string again = attngen::npy::serialize_f32(array.shape, array.f32.data());
        attngen::npy::Array round;
        if (!attngen::npy::parse("again.npy", again, &round, &error)) fail("own output rejected");
        if (round.shape != array.shape) fail("shape changed by a round trip");
        if (round.f32.size() != array.f32.size() ||
            (!round.f32.empty() &&
             std::memcmp(round.f32.data(), array.f32.data(), 4 * array.f32.size()) != 0)) {
            fail("data changed by a round trip");
        }
    }
    if (array.dtype == attngen::DType::kBFloat16 || array.dtype == attngen::DType::kFloat16) {
        // The 16-bit outputs too, in their own descr ('<f2', or '<u2' for bfloat16 bits).
        const std::string again =
            attngen::npy::serialize_16(array.shape, array.dtype, array.u16.data());
        attngen::npy::Array round;
        if (!attngen::npy::parse("again.npy", again, &round, &error)) fail("own output rejected");
        if (round.shape != array.shape || round.dtype != array.dtype || round.bits != array.bits) {
            fail("shape or dtype changed by a round trip");
        }
        if (round.u16 != array.u16) fail("data changed by a round trip");
    }
    return 0;
}
