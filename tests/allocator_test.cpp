// The runtime's allocator for kernel scratch (runtime/src/allocator.h), through Halide's
// halide_malloc and halide_free, where the kernels reach it.
#include "allocator.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "HalideRuntime.h"

namespace attngen::test {
namespace {

// Each test starts from an empty cache, whatever ran before it on this thread.
class Allocator : public ::testing::Test {
  protected:
    void SetUp() override { detail::release_cached_blocks(); }
    void TearDown() override { detail::release_cached_blocks(); }
};

TEST_F(Allocator, BlocksAre64ByteAligned) {
    for (std::size_t bytes : {1u, 100u, 4096u, 1u << 20}) {
        void *p = halide_malloc(nullptr, bytes);
        ASSERT_NE(p, nullptr);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << bytes;
        halide_free(nullptr, p);
    }
}

TEST_F(Allocator, LargeBlocksAreReusedForRequestsOfSimilarSize) {
    void *first = halide_malloc(nullptr, 512 * 1024);
    halide_free(nullptr, first);
    void *second = halide_malloc(nullptr, 400 * 1024);
    EXPECT_EQ(second, first) << "a freed block within 2x of the request should be reused";
    halide_free(nullptr, second);
    void *small = halide_malloc(nullptr, 100 * 1024);
    EXPECT_NE(small, first) << "a block more than twice the request must not be handed out";
    halide_free(nullptr, small);
}

TEST_F(Allocator, BlocksFromHalidesDefaultAllocatorAreFreedByIt) {
    // Memory that Halide's runtime allocated before attngen's allocator was installed.
    void *p = halide_default_malloc(nullptr, 256 * 1024);
    ASSERT_NE(p, nullptr);
    halide_free(nullptr, p);  // Must route to halide_default_free, not crash.
}

}  // namespace
}  // namespace attngen::test
