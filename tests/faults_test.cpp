// Faults inside a kernel: an allocation that fails while a generated kernel runs becomes an
// out-of-memory Status, and the kernel frees every block it had allocated before the failure.
// The failures are injected through the runtime's own Halide allocator (runtime/src/allocator.h),
// which every kernel, and every worker thread of a kernel, allocates its scratch from.
#include <gtest/gtest.h>

#include <cmath>

#include "allocator.h"
#include "attngen/attngen.h"
#include "runtime_test_util.h"

namespace attngen::test {
namespace {

class FaultsTest : public ::testing::TestWithParam<std::string> {
  protected:
    void TearDown() override { detail::fail_allocations_after(-1); }
};

// Fails the first, second, third, fifth, ninth, ... allocation of one call (each doubling the
// allocations allowed), until the call makes no more allocations than are allowed to succeed. Each
// failing call must report out of memory and leave no block allocated; the call that finally
// succeeds must match the reference.
TEST_P(FaultsTest, AllocationFailureInKernelReturnsStatusAndLeaksNothing) {
    AttentionCase c;
    // Long enough that every schedule keeps scratch (scores, statistics, per-block buffers) on
    // the heap rather than on the stack; two heads so that parallel loops have several tasks.
    c.shape = {1, 2, 2, 150, 150, 16, 16};
    c.causal = true;
    c.prepare(31);
    std::vector<float> out, lse;
    AttentionArgs args = ArgsFor(c, &out, &lse, nullptr);
    args.schedule = GetParam();
    // One thread, so that the order of allocations, and therefore which one fails, is the same
    // in every run; the last cases below fail allocations on several workers at once.
    set_num_threads(1);

    int failed_calls = 0;
    bool succeeded = false;
    for (long allowed = 0; allowed < (1L << 20) && !succeeded; allowed = 2 * allowed + 1) {
        SCOPED_TRACE("allocations allowed: " + std::to_string(allowed));
        detail::release_cached_blocks();
        const long live_before = detail::live_blocks();
        detail::fail_allocations_after(allowed);
        Status status = attention(args);
        detail::fail_allocations_after(-1);
        EXPECT_EQ(detail::live_blocks(), live_before) << "blocks leaked by a failed kernel";
        if (status.ok()) {
            succeeded = true;
            EXPECT_TRUE(Matches(out, c.out, c.out32));
            EXPECT_TRUE(Matches(lse, c.lse, c.lse32));
        } else {
            failed_calls++;
            EXPECT_EQ(status.code(), StatusCode::kOutOfMemory) << status.to_string();
            EXPECT_NE(status.message().find("kernel"), std::string::npos) << status.to_string();
        }
    }
    set_num_threads(0);
    EXPECT_TRUE(succeeded) << "the call never succeeded with up to 2^20 allocations";
    // Without a single failing call the test would check nothing.
    EXPECT_GT(failed_calls, 0) << "the kernel made no heap allocation that could fail";

    // Several workers at once: the failure of one task must not leak the others' blocks.
    set_num_threads(4);
    for (long allowed : {1L, 2L, 3L}) {
        detail::release_cached_blocks();
        const long live_before = detail::live_blocks();
        detail::fail_allocations_after(allowed);
        Status status = attention(args);
        detail::fail_allocations_after(-1);
        EXPECT_EQ(detail::live_blocks(), live_before) << "allowed " << allowed;
        if (!status.ok()) EXPECT_EQ(status.code(), StatusCode::kOutOfMemory);
    }
    set_num_threads(0);
}

std::string ScheduleName(const ::testing::TestParamInfo<std::string> &info) {
    return info.param;
}

INSTANTIATE_TEST_SUITE_P(Schedules, FaultsTest, ::testing::ValuesIn(TestedSchedules()),
                         ScheduleName);

}  // namespace
}  // namespace attngen::test
