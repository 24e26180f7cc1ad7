#include "thread_runtimes.h"

#include <chrono>
#include <thread>

namespace attngen::bench {

namespace {

// Twice OpenBLAS's spin time at 3 GHz, the longest of the three.
constexpr std::chrono::milliseconds kSettleTime(200);

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

}  // namespace attngen::bench
