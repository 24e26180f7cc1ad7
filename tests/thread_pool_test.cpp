// The runtime's thread pool (runtime/src/thread_pool.h) through Halide's do_par_for contract:
// every task runs exactly once, nested and concurrent loops included; the first failure is
// returned; no more threads than asked run tasks; idle workers stop spinning; a forked child
// gets a pool of its own; and kernel calls go through the pool.
#include "thread_pool.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "attngen/attention.h"
#include "attngen/kernels.h"

namespace attngen::detail {
namespace {

// Restores the default thread count and spin time after each test.
class ThreadPoolTest : public ::testing::Test {
  protected:
    void TearDown() override {
        set_pool_threads(0);
        set_pool_spin_microseconds(-1);
    }
};

// A loop's closure: a counter per task index and the threads that ran them.
struct Counts {
    explicit Counts(int size) : runs(size) {}
    std::vector<std::atomic<int>> runs;
    std::mutex mutex;
    std::set<std::thread::id> threads;
};

int count_task(void *, int index, uint8_t *closure) {
    auto *counts = reinterpret_cast<Counts *>(closure);
    counts->runs[index].fetch_add(1);
    std::lock_guard<std::mutex> lock(counts->mutex);
    counts->threads.insert(std::this_thread::get_id());
    return 0;
}

void expect_each_ran_once(const Counts &counts) {
    for (std::size_t i = 0; i < counts.runs.size(); i++) {
        EXPECT_EQ(counts.runs[i].load(), 1) << "task " << i;
    }
}

TEST_F(ThreadPoolTest, EveryTaskRunsExactlyOnce) {
    for (int threads : {1, 2, 3, 8}) {
        set_pool_threads(threads);
        for (int size : {0, 1, 2, 3, 7, 64, 1000}) {
            SCOPED_TRACE(std::to_string(threads) + " threads, " + std::to_string(size) + " tasks");
            Counts counts(size);
            EXPECT_EQ(
                pool_do_par_for(nullptr, count_task, 0, size, reinterpret_cast<uint8_t *>(&counts)),
                0);
            expect_each_ran_once(counts);
        }
    }
}

TEST_F(ThreadPoolTest, TaskIndicesStartAtTheLoopMinimum) {
    set_pool_threads(3);
    Counts counts(40);
    // Indices 10 .. 49 land in runs[0 .. 39]; any other index fails the loop.
    auto task = [](void *, int index, uint8_t *closure) {
        if (index < 10 || index >= 50) return -1;
        reinterpret_cast<Counts *>(closure)->runs[index - 10].fetch_add(1);
        return 0;
    };
    EXPECT_EQ(pool_do_par_for(nullptr, task, 10, 40, reinterpret_cast<uint8_t *>(&counts)), 0);
    expect_each_ran_once(counts);
}

TEST_F(ThreadPoolTest, NoMoreThreadsThanAskedRunTasks) {
    // Falling counts: workers started for a larger count must stay out of later loops.
    for (int threads : {3, 2, 1}) {
        set_pool_threads(threads);
        Counts counts(2000);
        // Tasks that take a while, so that every worker has the chance to join.
        auto task = [](void *, int index, uint8_t *closure) {
            const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
            while (std::chrono::steady_clock::now() < until) {
            }
            return count_task(nullptr, index, closure);
        };
        ASSERT_EQ(pool_do_par_for(nullptr, task, 0, 2000, reinterpret_cast<uint8_t *>(&counts)), 0);
        expect_each_ran_once(counts);
        EXPECT_LE(static_cast<int>(counts.threads.size()), threads) << threads << " threads";
        if (threads == 1) EXPECT_EQ(*counts.threads.begin(), std::this_thread::get_id());
    }
}

// Three levels of loops, as a kernel's batch, head and query-tile loops: 3 x 5 x 7 leaves.
struct Nest {
    std::atomic<int> leaves[3][5][7];
};
struct Level {
    Nest *nest;
    int outer = -1, middle = -1;
};

int leaf_task(void *, int index, uint8_t *closure) {
    auto *level = reinterpret_cast<Level *>(closure);
    level->nest->leaves[level->outer][level->middle][index].fetch_add(1);
    return 0;
}

int middle_task(void *uc, int index, uint8_t *closure) {
    Level inner = *reinterpret_cast<Level *>(closure);
    inner.middle = index;
    return pool_do_par_for(uc, leaf_task, 0, 7, reinterpret_cast<uint8_t *>(&inner));
}

int outer_task(void *uc, int index, uint8_t *closure) {
    Level inner = *reinterpret_cast<Level *>(closure);
    inner.outer = index;
    return pool_do_par_for(uc, middle_task, 0, 5, reinterpret_cast<uint8_t *>(&inner));
}

void expect_nest_complete(Nest &nest) {
    for (auto &a : nest.leaves) {
        for (auto &b : a) {
            for (auto &c : b) EXPECT_EQ(c.exchange(0), 1);
        }
    }
}

TEST_F(ThreadPoolTest, NestedLoopsRunEveryTaskOnce) {
    for (int threads : {1, 2, 4}) {
        set_pool_threads(threads);
        Nest nest{};
        Level top{&nest};
        EXPECT_EQ(pool_do_par_for(nullptr, outer_task, 0, 3, reinterpret_cast<uint8_t *>(&top)), 0);
        expect_nest_complete(nest);
    }
}

TEST_F(ThreadPoolTest, ConcurrentCallersEachGetTheirWholeLoop) {
    // As several threads calling kernels at once: each caller's nested loops must finish, with
    // every task run once, while the workers help them all.
    set_pool_threads(3);
    std::vector<Nest> nests(6);
    std::vector<int> results(6, -1);
    std::vector<std::thread> callers;
    for (int c = 0; c < 6; c++) {
        callers.emplace_back([&, c] {
            for (int repeat = 0; repeat < 50 && results[c] <= 0; repeat++) {
                Level top{&nests[c]};
                results[c] =
                    pool_do_par_for(nullptr, outer_task, 0, 3, reinterpret_cast<uint8_t *>(&top));
                for (auto &a : nests[c].leaves) {
                    for (auto &b : a) {
                        for (auto &leaf : b) {
                            if (leaf.exchange(0) != 1) results[c] = 1;
                        }
                    }
                }
            }
        });
    }
    for (auto &t : callers) t.join();
    for (int c = 0; c < 6; c++) EXPECT_EQ(results[c], 0) << "caller " << c;
}

TEST_F(ThreadPoolTest, FirstFailureIsReturnedAndNoTaskRunsTwice) {
    for (int threads : {1, 2, 4}) {
        set_pool_threads(threads);
        Counts counts(500);
        auto task = [](void *, int index, uint8_t *closure) {
            count_task(nullptr, index, closure);
            return index == 37 ? -7 : 0;
        };
        EXPECT_EQ(pool_do_par_for(nullptr, task, 0, 500, reinterpret_cast<uint8_t *>(&counts)), -7);
        EXPECT_EQ(counts.runs[37].load(), 1);
        for (auto &r : counts.runs) EXPECT_LE(r.load(), 1);
    }
}

TEST_F(ThreadPoolTest, SetThreadsReturnsThePreviousCount) {
    set_pool_threads(3);
    EXPECT_EQ(set_pool_threads(5), 3);
    EXPECT_EQ(set_pool_threads(1000), 5);
    EXPECT_EQ(set_pool_threads(2), 256) << "the count is clamped to 256";
    // The public API clamps negative counts to 0, the default.
    EXPECT_EQ(set_num_threads(-4), 2);
    const int default_threads = set_num_threads(7);
    EXPECT_GE(default_threads, 1);
    EXPECT_EQ(set_num_threads(0), 7);
}

TEST_F(ThreadPoolTest, SetSpinReturnsThePreviousTime) {
    set_pool_spin_microseconds(-1);
    EXPECT_EQ(set_pool_spin_microseconds(0), kDefaultSpinMicroseconds);
    EXPECT_EQ(set_spin_wait_microseconds(250), 0);
    EXPECT_EQ(set_spin_wait_microseconds(-3), 250);
    EXPECT_EQ(set_spin_wait_microseconds(-1), kDefaultSpinMicroseconds);
}

double process_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

// CPU time the whole process spends in `wall` seconds of this thread sleeping.
double cpu_while_sleeping(double wall) {
    const double before = process_cpu_seconds();
    std::this_thread::sleep_for(std::chrono::duration<double>(wall));
    return process_cpu_seconds() - before;
}

TEST_F(ThreadPoolTest, IdleWorkersStopSpinningAfterTheSpinTime) {
    const int threads =
        std::max(2, std::min(4, static_cast<int>(std::thread::hardware_concurrency())));
    set_pool_threads(threads);
    set_pool_spin_microseconds(20000);
    Counts counts(64);
    ASSERT_EQ(pool_do_par_for(nullptr, count_task, 0, 64, reinterpret_cast<uint8_t *>(&counts)), 0);
    // Right after the loop the workers spin (each close to a core); 50 ms later, past the 20 ms
    // spin time, they sleep. The bounds leave room for a loaded machine.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_LT(cpu_while_sleeping(0.1), 0.03) << "idle workers still use CPU past the spin time";
}

TEST_F(ThreadPoolTest, WorkersSpinForTheSpinTime) {
    // The other side of the bound above: a test that cannot tell spinning from sleeping would
    // pass it trivially. Needs a core per worker, or spinning is turned off by design.
    if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one core: workers never spin";
    set_pool_threads(2);
    set_pool_spin_microseconds(400000);
    Counts counts(64);
    ASSERT_EQ(pool_do_par_for(nullptr, count_task, 0, 64, reinterpret_cast<uint8_t *>(&counts)), 0);
    EXPECT_GT(cpu_while_sleeping(0.1), 0.03) << "the worker did not spin after the loop";
    set_pool_spin_microseconds(0);
    // Let it reach the end of its spin time (the new setting applies to the next idle period).
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
}

TEST_F(ThreadPoolTest, ZeroSpinTimeStillRunsEveryTask) {
    set_pool_threads(3);
    set_pool_spin_microseconds(0);
    for (int repeat = 0; repeat < 200; repeat++) {
        Counts counts(16);
        ASSERT_EQ(pool_do_par_for(nullptr, count_task, 0, 16, reinterpret_cast<uint8_t *>(&counts)),
                  0);
        expect_each_ran_once(counts);
    }
}

// Two tasks that each wait, up to 5 s, until both have started: the loop succeeds only when two
// threads run them at the same time.
int meet_task(void *, int, uint8_t *closure) {
    auto *started = reinterpret_cast<std::atomic<int> *>(closure);
    started->fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (started->load() < 2) {
        if (std::chrono::steady_clock::now() > deadline) return 1;
        std::this_thread::yield();
    }
    return 0;
}

int two_threads_meet() {
    std::atomic<int> started{0};
    return pool_do_par_for(nullptr, meet_task, 0, 2, reinterpret_cast<uint8_t *>(&started));
}

// Runs two_threads_meet in a forked child, which an alarm ends if it hangs. The child's exit
// status, or -1 when a signal ended it.
int two_threads_meet_in_child() {
    const pid_t pid = fork();
    if (pid == 0) {
        alarm(20);
        _exit(two_threads_meet());
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return -2;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(ThreadPoolTest, ForkedChildRunsLoopsOnWorkersOfItsOwn) {
    set_pool_threads(2);
    // The parent's worker exists before the fork; the child does not have it.
    ASSERT_EQ(two_threads_meet(), 0);
    EXPECT_EQ(two_threads_meet_in_child(), 0);
    // And the parent's pool still works after the fork.
    EXPECT_EQ(two_threads_meet(), 0);
}

TEST_F(ThreadPoolTest, ForkWhileAnotherThreadRunsLoopsLeavesTheChildAPool) {
    set_pool_threads(2);
    // Another thread runs loops without pause, so that forks land at every point of the pool's
    // bookkeeping, some of them while a worker holds its lock.
    std::atomic<bool> stop{false};
    std::thread busy([&] {
        while (!stop.load()) {
            Counts counts(64);
            pool_do_par_for(nullptr, count_task, 0, 64, reinterpret_cast<uint8_t *>(&counts));
        }
    });
    for (int i = 0; i < 20; i++) EXPECT_EQ(two_threads_meet_in_child(), 0) << "fork " << i;
    stop.store(true);
    busy.join();
}

TEST_F(ThreadPoolTest, KernelCallsRunOnThePool) {
    // A kernel call installs the pool as Halide's do_par_for; reading the handler back means
    // replacing it for a moment.
    std::vector<float> q(2 * 4 * 16 * 8, 0.5f), out(q.size());
    AttentionArgs args;
    args.q = TensorView::f32(q.data(), {2, 4, 16, 8});
    args.k = args.q;
    args.v = args.q;
    args.out = TensorView::f32(out.data(), {2, 4, 16, 8});
    ASSERT_TRUE(attention(args).ok());
    halide_do_par_for_t installed = halide_set_custom_do_par_for(halide_default_do_par_for);
    halide_set_custom_do_par_for(installed);
    EXPECT_EQ(installed, &pool_do_par_for);
    for (float x : out) EXPECT_FLOAT_EQ(x, 0.5f);
}

}  // namespace
}  // namespace attngen::detail
