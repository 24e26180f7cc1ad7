// The tuner's measuring environment: the targets it may measure for on this machine, and the
// thread pool its candidates run on (the one the built kernels run on).
#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <string>
#include <thread>

#include "host_target.h"
#include "jit_attention.h"
#include "thread_pool.h"
#include "tune_shape.h"

namespace attngen::tuner {
namespace {

TEST(HostTarget, TheHostTargetRunsHere) {
    EXPECT_EQ(missing_on_host(Halide::get_host_target()), "");
}

TEST(HostTarget, NamesWhatTheMachineLacks) {
    const Halide::Target host = Halide::get_host_target();
    if (host.arch == Halide::Target::X86) {
        // An x86 target with an ARM extension: no machine runs it.
        EXPECT_EQ(missing_on_host(Halide::Target("x86-64-linux-sse41-arm_dot_prod")),
                  "arm_dot_prod");
        EXPECT_EQ(missing_on_host(Halide::Target("arm-64-linux")), "arm-64");
    } else {
        EXPECT_EQ(missing_on_host(Halide::Target("x86-64-linux-sse41")), "x86-64");
    }
}

TEST(HostTarget, FirstRunnableSkipsTargetsTheMachineCannotRun) {
    const std::string host = Halide::get_host_target().to_string();
    EXPECT_EQ(first_runnable({"x86-64-linux-sse41-arm_dot_prod", "not-a-target", host}), host);
    EXPECT_EQ(first_runnable({"x86-64-linux-sse41-arm_dot_prod"}), "");
    EXPECT_EQ(first_runnable({}), "");
}

// The tuner times its candidates on the thread pool that the built kernels run on
// (runtime/src/thread_pool.h). After a call, a worker of that pool spins for the pool's spin
// time; Halide's JIT pool puts its workers to sleep almost at once.
TEST(JitAttention, CandidatesRunOnTheRuntimesThreadPool) {
    if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one core: workers never spin";
    detail::set_pool_threads(2);
    detail::set_pool_spin_microseconds(400000);
    Bucket bucket;
    bucket.d_k = bucket.d_v = 64;
    TuneShape estimate;
    JitAttention kernel(bucket, Candidate{"cpu_fused", {}}, Halide::get_host_target(), estimate);
    // Two batch elements of 4 heads, 64 queries: 16 parallel tasks.
    Halide::Buffer<float> q(64, 64, 4, 2), out(64, 64, 4, 2), lse(64, 4, 2);
    q.fill(0.5f);
    Halide::Buffer<int32_t> lengths(2);
    lengths.fill(64);
    ASSERT_EQ(kernel.run(q, q, q, lengths, 0.125f, out, lse), 0) << kernel.last_error();
    auto process_cpu_seconds = [] {
        timespec t{};
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        return t.tv_sec + 1e-9 * t.tv_nsec;
    };
    const double before = process_cpu_seconds();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_GT(process_cpu_seconds() - before, 0.03) << "no worker of the runtime's pool spun";
    EXPECT_FLOAT_EQ(out(5, 7, 1, 1), 0.5f);
    detail::set_pool_spin_microseconds(-1);
    detail::set_pool_threads(0);
}

}  // namespace
}  // namespace attngen::tuner
