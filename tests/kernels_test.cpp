// Every compiled attention kernel, specialized or not, is reached by the dispatch and matches
// the reference: a variant that no call selects would be dead code, and a wrong one would hide
// behind the generic kernels in the other tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "attngen/attngen.h"
#include "runtime_test_util.h"

namespace attngen::test {
namespace {

class KernelTest : public ::testing::TestWithParam<Kernel> {};

// A shape that the kernel's specializations accept, with lengths that are not multiples of any
// tile so that every tail path runs.
AttentionCase CaseFor(const Kernel &k, int64_t nq) {
    AttentionCase c;
    c.shape = ShapeFor(k, nq);
    c.causal = k.variant.mask.causal;
    c.key_lengths = {c.shape.nk, c.shape.nk - 7};
    UseEveryModifierOf(k.variant, &c);
    return c;
}

// Runs the call CaseFor(k, nq) through the dispatch (schedule k.variant.schedule), checks out, lse
// and probs against fp64, and returns the kernel that served it.
std::string RunCaseFor(const Kernel &k, int64_t nq) {
    AttentionCase c = CaseFor(k, nq);
    c.storage = k.variant.storage;
    c.kv_storage = k.variant.kv_storage;
    c.prepare(21);
    std::vector<float> out, lse, probs;
    ModifierTensors tensors;
    AttentionArgs args =
        ArgsWithModifiersFor(c, &tensors, &out, &lse, k.variant.probs ? &probs : nullptr);
    StoredTensors stored;
    stored.use_in(c, &args);
    args.schedule = k.variant.schedule;
    CallInfo info;
    Status status = attention(args, &info);
    EXPECT_TRUE(status.ok()) << status.to_string();
    stored.widen_out(&out);
    const double factor = NaiveErrorFactor(c.storage);
    EXPECT_TRUE(Matches(out, c.out, c.out32, factor)) << "out of " << info.kernel;
    EXPECT_TRUE(Matches(lse, c.lse, c.lse32, factor)) << "lse of " << info.kernel;
    if (k.variant.probs)
        EXPECT_TRUE(Matches(probs, c.probs, c.probs32)) << "probs of " << info.kernel;
    return info.kernel;
}

// The query counts of the calls that kernel k must serve: both ends of its query bound, or a
// count beyond every bound.
std::vector<int64_t> QueryCountsFor(const Kernel &k) {
    if (k.variant.max_queries > 0) return {FewestQueriesFor(k), k.variant.max_queries};
    return {QueriesBeyondEveryBound(k)};
}

TEST_P(KernelTest, IsSelectedForMatchingCallsAndMatchesReference) {
    const Kernel &k = GetParam();
    ATTNGEN_SKIP_UNLESS_SERVED(k);
    for (int64_t nq : QueryCountsFor(k)) {
        SCOPED_TRACE("Nq=" + std::to_string(nq));
        EXPECT_EQ(RunCaseFor(k, nq), k.name);
    }
}

// A kernel that does not serve calls on this CPU (a tuned kernel whose target is not the one the
// build runs here, see Kernel::serves_calls) leaves the calls of its bucket to a kernel that
// does, and is tested, and they still match the reference.
TEST(KernelBounds, KernelsTunedForAnotherTargetLeaveTheirCallsToTheDefaults) {
    const std::vector<Kernel> kernels = list_kernels();
    int idle = 0;
    for (const Kernel &k : AttentionKernels()) {
        if (k.serves_calls) continue;
        idle++;
        SCOPED_TRACE(k.name);
        // Every kernel but a tuned one has the build's targets, which include one this CPU runs
        // (or the program could not have started its kernels).
        EXPECT_FALSE(k.variant.tuning.empty());
        EXPECT_EQ(k.targets.find(','), std::string::npos) << "a tuned kernel has one target";
        for (int64_t nq : QueryCountsFor(k)) {
            SCOPED_TRACE("Nq=" + std::to_string(nq));
            const std::string served = RunCaseFor(k, nq);
            EXPECT_NE(served, k.name);
            for (const Kernel &other : kernels) {
                if (other.name == served) EXPECT_TRUE(other.serves_calls) << served;
            }
        }
    }
    if (idle == 0) GTEST_SKIP() << "every compiled kernel serves calls on this CPU";
}

INSTANTIATE_TEST_SUITE_P(Compiled, KernelTest, ::testing::ValuesIn(AttentionKernels()), KernelName);

// Runs a non-causal cpu_fused call of the shape (B1 H2 KV1, head dims d) in the storage type given
// and returns the kernel that served it, after checking its result.
std::string KernelForCall(int64_t nq, int64_t nk, int64_t d, DType storage = DType::kFloat32) {
    AttentionCase c;
    c.shape = {1, 2, 1, nq, nk, d, d};
    c.key_lengths = {nk};
    c.storage = storage;
    c.prepare(22);
    std::vector<float> out, lse;
    AttentionArgs args = ArgsFor(c, &out, &lse, nullptr, NAN);
    StoredTensors stored;
    stored.use_in(c, &args, NAN);
    args.schedule = "cpu_fused";
    CallInfo info;
    Status status = attention(args, &info);
    EXPECT_TRUE(status.ok()) << status.to_string();
    stored.widen_out(&out);
    const double factor = NaiveErrorFactor(storage);
    EXPECT_TRUE(Matches(out, c.out, c.out32, factor)) << "out of " << info.kernel;
    EXPECT_TRUE(Matches(lse, c.lse, c.lse32, factor)) << "lse of " << info.kernel;
    return info.kernel;
}

// A kernel for long sequences takes calls from its key bound on; one key fewer goes to another
// kernel.
TEST(KernelBounds, LongSequenceKernelsServeCallsFromTheirKeyBoundOn) {
    int long_kernels = 0;
    for (const Kernel &k : AttentionKernels()) {
        if (k.variant.min_keys == 0 || k.variant.schedule != "cpu_fused" || !k.serves_calls)
            continue;
        long_kernels++;
        SCOPED_TRACE(k.name);
        const int64_t nq = QueriesBeyondEveryBound(k);
        EXPECT_NE(KernelForCall(nq, k.variant.min_keys - 1, k.variant.d_k), k.name);
        EXPECT_EQ(KernelForCall(nq, k.variant.min_keys, k.variant.d_k), k.name);
    }
    if (long_kernels == 0) GTEST_SKIP() << "this build has no cpu_fused kernel for long sequences";
}

// Block kernels split P V's keys into chunks once a head's values (Nk x d_v floats) exceed half
// of a 1 MiB L2, 2048 x 64 floats (cpu_fused's kChunkedValueFloats): calls past that size run a
// specialization that the short calls of KernelTest never reach. 301 keys more, so that no chunk
// of 128 to 1024 keys divides them.
TEST(KernelBounds, BlockKernelsMatchTheReferenceWithValuesBeyondTheCache) {
    int block_kernels = 0;
    for (const Kernel &k : AttentionKernels()) {
        // Kernels with modifiers serve only calls that pass them.
        if (!k.serves_calls || k.variant.schedule != "cpu_fused" || k.variant.mask.causal ||
            k.variant.mask.extra_kinds() > 0 || k.variant.score.any() || k.variant.probs ||
            k.variant.max_queries > 0 || k.variant.min_keys > 0 || k.variant.d_k <= 0 ||
            k.variant.d_k != k.variant.d_v || (k.variant.heads > 0 && k.variant.heads != 2)) {
            continue;
        }
        block_kernels++;
        SCOPED_TRACE(k.name);
        const int64_t nk = 2048 * 64 / k.variant.d_v + 301;
        EXPECT_EQ(KernelForCall(QueriesBeyondEveryBound(), nk, k.variant.d_k, k.variant.storage),
                  k.name);
    }
    if (block_kernels == 0)
        GTEST_SKIP() << "this build has no cpu_fused block kernel of one head dim";
}

// A decode step of head dim 64 or 128 runs on the decode kernel of its head dim (the tightest
// query bound among them), also with as many keys as a kernel for long sequences takes: the
// decode path splits the keys across threads.
TEST(KernelBounds, DecodeStepsRunOnTheDecodeKernelOfTheirHeadDim) {
    for (const int64_t d : {64, 128}) {
        std::string decode;
        int bound = 0;
        int64_t long_keys = 0;  // The key bound of the head dim's kernel for long sequences.
        for (const Kernel &k : list_kernels()) {
            if (!k.serves_calls) continue;
            if (k.variant.op == Op::kAttention && k.variant.d_k == d && k.variant.d_v == d) {
                long_keys = std::max<int64_t>(long_keys, k.variant.min_keys);
            }
            if (k.variant.op == Op::kAttention && k.variant.schedule == "cpu_fused" &&
                !k.variant.mask.causal && !k.variant.probs && k.variant.max_queries > 0 &&
                k.variant.d_k == d && k.variant.d_v == d &&
                (decode.empty() || k.variant.max_queries < bound)) {
                decode = k.name;
                bound = k.variant.max_queries;
            }
        }
        if (decode.empty()) continue;
        SCOPED_TRACE(decode);
        EXPECT_EQ(KernelForCall(1, 300, d), decode);
        EXPECT_EQ(KernelForCall(1, std::max<int64_t>(long_keys, 300) + 37, d), decode);
    }
}

}  // namespace
}  // namespace attngen::test
