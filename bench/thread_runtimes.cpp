#include "thread_runtimes.h"

#include <chrono>
#include <thread>

namespace attngen::bench {

namespace {

// Twice OpenBLAS's spin time at 3 GHz, the longest of the three.
constexpr std::chrono::milliseconds kSettleTime(200);
// What the other two pools need. libgomp's 300000 spins of a pause instruction take a few
// milliseconds; attngen's runtime spins for 1 ms. Both with a margin of several times.
constexpr std::chrono::milliseconds kOpenMpSettleTime(20);
constexpr std::chrono::milliseconds kHalideSettleTime(5);

// The pools that ran since the last pause. Benchmarks run one at a time on the main thread.
ThreadRuntimes used_since_pause = 0;

}  // namespace

void note_runtime_used(ThreadRuntimes runtimes) {
    used_since_pause |= runtimes;
}

void settle_before_timing(ThreadRuntimes next) {
    if ((used_since_pause & ~next) != 0) std::this_thread::sleep_for(kSettleTime);
    used_since_pause = next;
}

void settle_all_pools() {
    if ((used_since_pause & kOpenBlasThreads) != 0) {
        std::this_thread::sleep_for(kSettleTime);
    } else if ((used_since_pause & kOpenMpThreads) != 0) {
        std::this_thread::sleep_for(kOpenMpSettleTime);
    } else if ((used_since_pause & kHalideThreads) != 0) {
        std::this_thread::sleep_for(kHalideSettleTime);
    }
    used_since_pause = 0;
}

}  // namespace attngen::bench
