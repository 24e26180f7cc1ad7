#include "compute_probe.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>
#include <vector>

#include "thread_runtimes.h"

namespace attngen::bench {

namespace {

// Eight floats: one AVX register, or two SSE ones where the machine has no AVX. Zen 4 executes
// a 512-bit FMA in two halves, so 256-bit FMAs reach its full FLOP rate too; on a machine with
// full-width 512-bit FMAs the probe reaches half of it, which the fraction does not mind.
typedef float Vec8 __attribute__((vector_size(32)));

// Ten independent accumulators (fma_loop): an FMA's latency (4 cycles) times two FMA pipes
// needs eight in flight to keep both pipes busy; two more absorb the loop's own instructions.
// 2^20 iterations of ten FMAs, about 1.5 ms per thread on a 3.5 GHz core with two FMA pipes:
// long enough for the thread start (tens of microseconds) not to matter, short enough to run
// before every repetition.
constexpr long kIterations = 1L << 20;

// Runs of the probe whose best is one reading, so that a blip of a millisecond on one core (a
// timer interrupt, a wake-up) does not read as a slow machine, while a spell that takes compute
// away for seconds lowers all three. With one run per reading the medians of 7 readings were
// 0.85-0.99 on a quiet machine (12 benchmarks of (b) and (f)); with three, 0.93-1.01.
constexpr int kRunsPerReading = 3;
// Runs whose best is the initial best rate at a thread count.
constexpr int kInitialRuns = 5;

float fma_loop() {
    // Named accumulators rather than an array: GCC kept an array's elements on the stack, and
    // the loop then measured store-to-load forwarding instead of the FMA pipes.
    Vec8 a0 = Vec8{} + 1.00f, a1 = Vec8{} + 1.01f, a2 = Vec8{} + 1.02f, a3 = Vec8{} + 1.03f,
         a4 = Vec8{} + 1.04f, a5 = Vec8{} + 1.05f, a6 = Vec8{} + 1.06f, a7 = Vec8{} + 1.07f,
         a8 = Vec8{} + 1.08f, a9 = Vec8{} + 1.09f;
    // a * m + c converges to c / (1 - m) = 1, so the values stay normal floats: denormals
    // would slow the loop down on their own.
    const Vec8 m = Vec8{} + 0.999f;
    const Vec8 c = Vec8{} + 0.001f;
    for (long i = 0; i < kIterations; i++) {
        a0 = a0 * m + c;
        a1 = a1 * m + c;
        a2 = a2 * m + c;
        a3 = a3 * m + c;
        a4 = a4 * m + c;
        a5 = a5 * m + c;
        a6 = a6 * m + c;
        a7 = a7 * m + c;
        a8 = a8 * m + c;
        a9 = a9 * m + c;
        // Keeps the compiler from collapsing or shortening iterations: it cannot see through the
        // empty asm, which claims to change every accumulator in its register.
        asm volatile(""
                     : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5), "+x"(a6),
                       "+x"(a7), "+x"(a8), "+x"(a9));
    }
    const Vec8 sum = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9;
    float total = 0;
    for (int lane = 0; lane < 8; lane++) total += sum[lane];
    return total;
}

// Probe runs per second with `threads` threads, one of them the calling thread.
double probe_rate(int threads) {
    std::vector<float> sums(static_cast<std::size_t>(threads));
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (int t = 1; t < threads; t++) workers.emplace_back([&sums, t] { sums[t] = fma_loop(); });
    sums[0] = fma_loop();
    for (std::thread &worker : workers) worker.join();
    const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
    // The sums are used, so that no compiler drops the loops.
    volatile float sink = 0;
    for (float s : sums) sink = sink + s;
    return 1.0 / seconds.count();
}

// The best rate of `runs` probes.
double best_probe_rate(int threads, int runs) {
    double best = 0;
    for (int run = 0; run < runs; run++) best = std::max(best, probe_rate(threads));
    return best;
}

}  // namespace

double compute_probe_fraction(int threads) {
    settle_all_pools();
    static std::map<int, double> best;
    auto it = best.find(threads);
    if (it == best.end()) it = best.emplace(threads, best_probe_rate(threads, kInitialRuns)).first;
    const double rate = best_probe_rate(threads, kRunsPerReading);
    const double fraction = rate / it->second;
    it->second = std::max(it->second, rate);
    return fraction;
}

}  // namespace attngen::bench
