// The thread pools the implementations run on, and the pause between benchmarks that switch
// from one pool to another.
//
// Each pool keeps its workers busy-waiting for a while after parallel work so that the next
// parallel region starts fast: OpenBLAS for about 2^28 cycles (THREAD_TIMEOUT, ~0.1 s),
// libgomp (OpenMP, used by oneDNN, libtorch and the OpenBLAS peer's loop over heads) for
// GOMP_SPINCOUNT = 300000 iterations, attngen's runtime for 1 ms
// (attngen::set_spin_wait_microseconds). On a two-core machine a benchmark that
// starts while another pool still spins shares its cores with those workers and is measured
// slower than it is. So the benchmarks record which pools they used, and one that is about to
// time work on other pools first sleeps until the idle workers have gone to sleep too.
#pragma once

namespace attngen::bench {

using ThreadRuntimes = unsigned;  // A set of the flags below.
constexpr ThreadRuntimes kHalideThreads = 1u << 0;
constexpr ThreadRuntimes kOpenMpThreads = 1u << 1;
constexpr ThreadRuntimes kOpenBlasThreads = 1u << 2;

// Records that work just ran on `runtimes`.
void note_runtime_used(ThreadRuntimes runtimes);

// Sleeps when a pool outside `next` has run since the last pause, so that its workers stop
// spinning before `next` is timed.
void settle_before_timing(ThreadRuntimes next);

// Sleeps until every pool that ran since the last pause has stopped spinning, for as long as the
// slowest of them needs, so that a measurement of the machine itself (compute_probe.h) runs on
// idle cores.
void settle_all_pools();

}  // namespace attngen::bench
