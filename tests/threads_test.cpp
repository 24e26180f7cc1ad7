// Many threads calling one kernel at once get the same answer as one thread alone; one call gives
// bitwise the same answer whatever the size of the kernels' thread pool; many threads running
// different shapes through the runtime at once each get their own correct answer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>

#include "attngen/attngen.h"
#include "runtime_test_util.h"

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

TEST_P(ThreadsTest, SameCallIsBitwiseIdenticalAcrossThreadCounts) {
    // Halide's parallel loops split work at fixed tile boundaries and never combine partial
    // results in the order threads finish, so the pool size must not change a single bit. The
    // decode shape (one query, many keys) reaches the kernels that split the keys across tasks.
    struct Shape {
        int64_t heads, kv_heads, nq, nk, d;
    };
    for (Shape sh : {Shape{4, 2, 70, 150, 16}, Shape{8, 8, 1, 1500, 64}}) {
        SCOPED_TRACE("Nq=" + std::to_string(sh.nq) + " Nk=" + std::to_string(sh.nk));
        const int64_t B = 2;
        auto q = random_values(B * sh.heads * sh.nq * sh.d, 11),
             k = random_values(B * sh.kv_heads * sh.nk * sh.d, 12),
             v = random_values(B * sh.kv_heads * sh.nk * sh.d, 13);
        std::vector<int64_t> lengths = {sh.nk, sh.nk - 7};
        auto call = [&](int threads, std::vector<float> *out, std::vector<float> *lse) {
            set_num_threads(threads);
            out->assign(B * sh.heads * sh.nq * sh.d, NAN);
            lse->assign(B * sh.heads * sh.nq, NAN);
            AttentionArgs args;
            args.q = TensorView::f32(q.data(), {B, sh.heads, sh.nq, sh.d});
            args.k = TensorView::f32(k.data(), {B, sh.kv_heads, sh.nk, sh.d});
            args.v = TensorView::f32(v.data(), {B, sh.kv_heads, sh.nk, sh.d});
            args.out = TensorView::f32(out->data(), {B, sh.heads, sh.nq, sh.d});
            args.lse = TensorView::f32(lse->data(), {B, sh.heads, sh.nq});
            args.key_lengths = TensorView::i64(lengths.data(), {B});
            args.causal = true;
            args.schedule = GetParam();
            Status status = attention(args);
            set_num_threads(0);
            return status;
        };
        std::vector<float> expected_out, expected_lse;
        ASSERT_TRUE(call(1, &expected_out, &expected_lse).ok());
        for (int threads : {2, 3, 8, 1}) {
            std::vector<float> out, lse;
            ASSERT_TRUE(call(threads, &out, &lse).ok());
            EXPECT_EQ(std::memcmp(out.data(), expected_out.data(), out.size() * 4), 0)
                << "out differs with " << threads << " threads";
            EXPECT_EQ(std::memcmp(lse.data(), expected_lse.data(), lse.size() * 4), 0)
                << "lse differs with " << threads << " threads";
        }
    }
}

// Many threads, each running its own sequence of shapes (batch, heads, grouped-query heads,
// lengths, head dims, masks, schedules) through the runtime at once; every result is checked
// against the fp64 reference.
TEST(Stress, ManyThreadsWithDifferentShapesAllMatchReference) {
    const std::vector<std::string> schedules = TestedSchedules();
    ASSERT_FALSE(schedules.empty());
    constexpr int kThreads = 12, kCallsPerThread = 6;
    std::vector<AttentionCase> cases;
    std::vector<std::string> case_schedules;
    for (int t = 0; t < kThreads; t++) {
        for (int n = 0; n < kCallsPerThread; n++) {
            const int id = t * kCallsPerThread + n;
            AttentionCase c;
            const int64_t kv_heads = 1 + id % 3, groups = 1 + (id / 3) % 3;
            const int64_t batch = 1 + id % 2;
            const int64_t nq = 1 + (id * 37) % 90, nk = 1 + (id * 53) % 130;
            const int64_t d_k = 1 + (id * 11) % 40, d_v = 1 + (id * 7) % 33;
            c.shape = {batch, kv_heads * groups, kv_heads, nq, nk, d_k, d_v};
            c.causal = id % 2 == 1;
            if (id % 4 >= 2) {
                for (int64_t b = 0; b < batch; b++) c.key_lengths.push_back((nk * (b + 1)) / 2);
            }
            c.prepare(100 + id);
            cases.push_back(std::move(c));
            case_schedules.push_back(schedules[id % schedules.size()]);
        }
    }
    std::vector<std::vector<float>> outs(cases.size()), lses(cases.size());
    std::vector<Status> statuses(cases.size());
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; t++) {
        threads.emplace_back([&, t] {
            for (int n = 0; n < kCallsPerThread; n++) {
                const int id = t * kCallsPerThread + n;
                AttentionArgs args = ArgsFor(cases[id], &outs[id], &lses[id], nullptr);
                args.schedule = case_schedules[id];
                statuses[id] = attention(args);
            }
        });
    }
    for (auto &th : threads) th.join();
    for (std::size_t id = 0; id < cases.size(); id++) {
        const auto &s = cases[id].shape;
        SCOPED_TRACE("call " + std::to_string(id) + ": " + case_schedules[id] + " B" +
                     std::to_string(s.batch) + " H" + std::to_string(s.heads) + " Hkv" +
                     std::to_string(s.kv_heads) + " Nq" + std::to_string(s.nq) + " Nk" +
                     std::to_string(s.nk) + " dk" + std::to_string(s.d_k) + " dv" +
                     std::to_string(s.d_v) + (cases[id].causal ? " causal" : ""));
        ASSERT_TRUE(statuses[id].ok()) << statuses[id].to_string();
        EXPECT_TRUE(Matches(outs[id], cases[id].out, cases[id].out32)) << "out";
        EXPECT_TRUE(Matches(lses[id], cases[id].lse, cases[id].lse32)) << "lse";
    }
}

std::string ScheduleName(const ::testing::TestParamInfo<std::string> &info) {
    return info.param;
}

INSTANTIATE_TEST_SUITE_P(Schedules, ThreadsTest, ::testing::ValuesIn(TestedSchedules()),
                         ScheduleName);

}  // namespace
}  // namespace attngen::test
