// Many threads calling one kernel at once get the same answer as one thread alone.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>

#include "attngen/attngen.h"
#include "test_util.h"

namespace attngen::test {
namespace {

class ThreadsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ThreadsTest, EightThreadsCallingOneKernelGetIdenticalResults) {
    const int64_t B = 2, H = 4, N = 65, D = 16;
    auto q = random_values(B * H * N * D, 1), k = random_values(B * H * N * D, 2),
         v = random_values(B * H * N * D, 3);
    auto call = [&](std::vector<float> *out, std::vector<float> *lse) {
        out->assign(B * H * N * D, NAN);
        lse->assign(B * H * N, NAN);
        AttentionArgs args;
        args.q = TensorView::f32(q.data(), {B, H, N, D});
        args.k = TensorView::f32(k.data(), {B, H, N, D});
        args.v = TensorView::f32(v.data(), {B, H, N, D});
        args.out = TensorView::f32(out->data(), {B, H, N, D});
        args.lse = TensorView::f32(lse->data(), {B, H, N});
        args.causal = true;
        args.schedule = GetParam();
        return attention(args);
    };
    std::vector<float> expected_out, expected_lse;
    ASSERT_TRUE(call(&expected_out, &expected_lse).ok());

    constexpr int kThreads = 8, kCallsPerThread = 5;
    std::vector<std::vector<float>> outs(kThreads), lses(kThreads);
    std::vector<int> failures(kThreads, 0), mismatches(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; t++) {
        threads.emplace_back([&, t] {
            for (int c = 0; c < kCallsPerThread; c++) {
                if (!call(&outs[t], &lses[t]).ok()) failures[t]++;
                // Bitwise: the same kernel on the same input must not depend on concurrency.
                if (std::memcmp(outs[t].data(), expected_out.data(), outs[t].size() * 4) != 0 ||
                    std::memcmp(lses[t].data(), expected_lse.data(), lses[t].size() * 4) != 0) {
                    mismatches[t]++;
                }
            }
        });
    }
    for (auto &th : threads) th.join();
    for (int t = 0; t < kThreads; t++) {
        EXPECT_EQ(failures[t], 0) << "thread " << t;
        EXPECT_EQ(mismatches[t], 0) << "thread " << t;
    }
}

TEST_P(ThreadsTest, ErrorsInConcurrentCallsStayWithTheirCall) {
    // Half the threads make a valid call and half an invalid one; each gets its own status.
    auto q = random_values(1 * 2 * 8 * 8, 4), k = random_values(1 * 2 * 8 * 8, 5);
    std::vector<int> wrong(8, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; t++) {
        threads.emplace_back([&, t] {
            std::vector<float> out(1 * 2 * 8 * 8);
            AttentionArgs args;
            args.q = TensorView::f32(q.data(), {1, 2, 8, 8});
            args.k = TensorView::f32(k.data(), {1, 2, 8, 8});
            args.v = TensorView::f32(k.data(), {1, 2, 8, 8});
            args.out = TensorView::f32(out.data(), {1, 2, 8, 8});
            args.schedule = GetParam();
            if (t % 2 == 1) args.v = TensorView::f32(k.data(), {1, 2, 4, 8});
            Status s = attention(args);
            if (s.ok() != (t % 2 == 0)) wrong[t]++;
        });
    }
    for (auto &th : threads) th.join();
    for (int t = 0; t < 8; t++) EXPECT_EQ(wrong[t], 0) << "thread " << t;
}

std::string ScheduleName(const ::testing::TestParamInfo<std::string> &info) {
    return info.param;
}

INSTANTIATE_TEST_SUITE_P(Schedules, ThreadsTest, ::testing::ValuesIn(available_schedules()),
                         ScheduleName);

}  // namespace
}  // namespace attngen::test
