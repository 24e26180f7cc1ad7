// The thread pool that runs the generated kernels' parallel loops, in place of Halide's.
//
// Halide's pool puts its workers to sleep on a condition variable almost at once when they find
// no work, and a prefill kernel reaches the pool three times per call (batch, heads, query
// tiles), so every call pays for waking them. This pool's workers spin for a bounded time after
// their last task, as an OpenMP runtime's do, and only then sleep: back-to-back calls (a model's
// layers, a benchmark's iterations) find them awake. Nested parallel loops are jobs of their
// own that idle threads take, so a thread never waits while there is a task it could run. A
// child made by fork() starts workers of its own on its first parallel loop.
#pragma once

#include <cstdint>

#include "HalideRuntime.h"

namespace attngen::detail {

// Threads that run a parallel loop, the caller included; 0 restores the default (HL_NUM_THREADS
// when set, else one per core). Clamped to [1, 256]. Returns the previous value.
int set_pool_threads(int threads);

// How long, in microseconds, an idle worker spins before it sleeps; negative restores the
// default, kDefaultSpinMicroseconds. Returns the previous value.
int set_pool_spin_microseconds(int microseconds);

// One millisecond: longer than the gap between back-to-back kernel calls or between a model's
// layers, short enough that a process that stops calling kernels frees its cores almost at once.
// OpenMP runtimes also spin before they sleep: libgomp 300,000 iterations by default, libomp
// 200 ms (KMP_BLOCKTIME).
constexpr int kDefaultSpinMicroseconds = 1000;

// Halide's do_par_for contract: runs task(user_context, min + i, closure) for i in [0, size),
// returns 0 or the first non-zero result of a task; after a task fails, tasks not yet started
// are skipped. The runtime installs it with halide_set_custom_do_par_for (halide_call.cpp); the
// autotuner sets it as the do_par_for of the pipelines it JIT-compiles.
int pool_do_par_for(void *user_context, halide_task_t task, int min, int size, uint8_t *closure);

}  // namespace attngen::detail
