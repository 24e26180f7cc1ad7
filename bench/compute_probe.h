// How much of its usual compute the machine gives this process right now.
//
// The rounds of 2026-12-03 (14:03 UTC, 2-core Zen 4) ran cpu_fused on (c) at two threads in
// 337, 653 and 357 ms: in round 2 every repetition took the one-thread time (696 ms), with a
// coefficient of variation of 0.0%, both cores busy (cpu_util 1.99) and no other process on the
// machine (other_load 0.01). The benchmarks after it recovered within seconds, and 5 repeated
// runs of the same benchmark afterwards all took 344-366 ms. Whatever halved the machine's
// compute was outside this process and invisible to /proc/stat (steal time included), such as
// the hypervisor running both of the virtual machine's CPUs on one physical core.
//
// This probe makes such a spell visible: right before each repetition's timed loop it runs a
// fixed number of register-resident FMAs on each of the benchmark's threads and reports the rate
// as a fraction of the best rate the process has seen at that thread count (the fma_frac
// counter). A repetition measured while the machine delivered half its compute reads about 0.5;
// one whose kernel was slow on its own reads about 1. make_results.py counts a round of a
// benchmark as clean only when its median fma_frac is near 1.
#pragma once

namespace attngen::bench {

// Lets every thread pool that ran stop spinning, then runs the probe on `threads` threads
// (plain threads of its own, which exit before it returns, so the timed loop after it shares its
// cores with nothing) and returns its rate over the best rate so far at that thread count.
// The first call for a thread count takes the best of a few runs as the initial best.
double compute_probe_fraction(int threads);

}  // namespace attngen::bench
