// The runtime's promise that kernel scratch is reused from call to call, seen as a program sees
// it. This file uses the public API only, so that the test program links what a user's program
// links: a runtime part that nothing in the program references is left out of it.
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/resource.h>

#include <vector>

#include "attngen/attngen.h"
#include "runtime_test_util.h"

// AddressSanitizer replaces malloc with an allocator of its own, whose mappings this test does
// not control.
#if defined(__SANITIZE_ADDRESS__)
#define ATTNGEN_MALLOC_REPLACED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTNGEN_MALLOC_REPLACED 1
#endif
#endif

namespace attngen::test {
namespace {

// Minor page faults of this process so far: each is a page touched for the first time since it
// was mapped.
long MinorFaults() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
}

TEST(ScratchReuse, FusedCallsAfterTheFirstFaultInNoFreshPages) {
#ifdef ATTNGEN_MALLOC_REPLACED
    GTEST_SKIP() << "AddressSanitizer's allocator serves this build's memory, not glibc's";
#endif
    // glibc decides from what the process freed before whether a block of a few hundred KiB comes
    // from its heap or from mmap, and whether the heap gives freed pages back. A fixed threshold
    // makes it map every block of 64 KiB or more and unmap it when freed, so that scratch that
    // goes back to glibc after each block faults in fresh pages in every test run, not only in
    // some programs.
    ASSERT_EQ(mallopt(M_MMAP_THRESHOLD, 64 * 1024), 1);
    const int previous_threads = set_num_threads(2);
    // B1 H8 Nq256 Nk1024 D64, the benchmark's shape f: each of the 64 blocks of 32 queries
    // allocates its scores and weights, 128 KiB each. Left to glibc's own heuristics, a program
    // linked without the runtime's allocator faulted 700 to 760 pages a call at this shape, and
    // a call took 3.6 instead of 2.6 ms on two threads of a Zen 4.
    AttentionCase c;
    c.shape = {1, 8, 8, 256, 1024, 64, 64};
    c.draw(1);
    std::vector<float> out;
    AttentionArgs args = ArgsFor(c, &out, nullptr, nullptr);
    args.schedule = "cpu_fused";
    // The first calls fill the caches of the calling thread and of the pool's workers.
    for (int call = 0; call < 3; call++) ASSERT_TRUE(attention(args).ok());
    const long before = MinorFaults();
    const int calls = 20;
    for (int call = 0; call < calls; call++) ASSERT_TRUE(attention(args).ok());
    const long faults = MinorFaults() - before;
    set_num_threads(previous_threads);
    RecordProperty("minor_faults", std::to_string(faults));
    // With the threshold above and without the runtime's allocator, these 20 calls faulted
    // 59103 and 58245 pages in two runs.
    EXPECT_LT(faults, calls) << faults << " page faults in " << calls << " calls";
}

}  // namespace
}  // namespace attngen::test
