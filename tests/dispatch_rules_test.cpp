// The dispatch's rule for which kernels serve calls on a CPU (detail::serves_calls), on entries
// made up here: one build cannot hold every case, and the machine decides which it can show.
#include <gtest/gtest.h>

#include "attngen/kernels.h"
#include "dispatch.h"

namespace attngen::detail {
namespace {

constexpr const char *kAvx512 = "x86-64-linux-avx-avx2-avx512-avx512_skylake-f16c-fma-sse41";
constexpr const char *kAvx2 = "x86-64-linux-avx-avx2-f16c-fma-sse41";

KernelEntry Entry(const char *tuning, bool cuda = false) {
    KernelEntry e{};
    e.name = "made_up";
    e.schedule = "cpu_fused";
    e.targets = "";
    e.tuning = tuning;
    e.cuda = cuda;
    return e;
}

TEST(DispatchRules, AKernelServesWhereTheCpuRunsOneOfItsTargets) {
    EXPECT_TRUE(serves_calls(Entry(""), kAvx2, kAvx2));
    EXPECT_FALSE(serves_calls(Entry(""), "", kAvx2));
}

TEST(DispatchRules, ATunedKernelServesOnlyWhereTheBuildRunsItsTarget) {
    // Tuned on AVX-512 machines: on one of those it serves.
    EXPECT_TRUE(serves_calls(Entry("value_key_chunk=128"), kAvx512, kAvx512));
    // On an AVX2 machine it cannot run at all.
    EXPECT_FALSE(serves_calls(Entry("value_key_chunk=128"), "", kAvx2));
    // Tuned on AVX2 machines: an AVX-512 machine runs its code, but the build's other kernels run
    // AVX-512 code there, and the tuning was not measured on such a machine.
    EXPECT_FALSE(serves_calls(Entry("value_key_chunk=128"), kAvx2, kAvx512));
}

TEST(DispatchRules, ACudaKernelAlwaysServesThroughItsCpuEntry) {
    EXPECT_TRUE(serves_calls(Entry("", true), "", kAvx512));
}

// The baselines are told apart by the names the build compiles them under (the registry's list
// of ATTNGEN_AUTOSCHEDULERS), whether or not this build compiled any.
TEST(DispatchRules, AutoschedulerBaselinesAreKnownByTheBuildsNames) {
    for (const char *name : {"Adams2019", "Li2018", "Mullapudi2016"})
        EXPECT_TRUE(is_autoscheduler_baseline(name)) << name;
    for (const char *name : {"cpu_fused", "reference", "Adams", "Li2018,", ""})
        EXPECT_FALSE(is_autoscheduler_baseline(name)) << name;
}

}  // namespace
}  // namespace attngen::detail
