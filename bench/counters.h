// The counters every attention benchmark reports, as rates over the measured (real) time:
//
//   GFLOPs     shape.flops() / time, in 1e9 FLOP/s (see shapes.h for what is counted)
//   peak_frac  that rate / the sgemm peak measured with the same thread count
//   KV_GBps    decode shapes only: K and V bytes read / time, in 1e9 byte/s
//   read_GBps  decode shapes only: the read bandwidth measured with the same threads right
//              before the timed loop (peaks.h), in 1e9 byte/s
//   bw_frac    decode shapes only: KV_GBps / read_GBps
//   cpu_util   CPU time of the whole process / real time over the timed loop: the number of
//              cores kept busy, which shows whether an implementation used the threads it was
//              given (spinning idle workers count as busy)
//   other_load the cores that other processes took meanwhile (cpu_usage.h), or while the read
//              bandwidth was measured, whichever is more
//   fma_frac   the machine's compute right before the timed loop over the best the process has
//              seen with the same threads (compute_probe.h); near 1 unless the host took some
#pragma once

#include <benchmark/benchmark.h>

#include "cpu_usage.h"
#include "shapes.h"

namespace attngen::bench {

void set_attention_counters(benchmark::State &state, const BenchShape &shape,
                            double peak_flops_per_second, double bandwidth_bytes_per_second,
                            const CpuUsage::Cores &cores);

// GFLOPs and peak_frac of a benchmark that does `flops` per iteration; set_attention_counters
// and the projection benchmarks share it.
void set_flop_counters(benchmark::State &state, double flops, double peak_flops_per_second);

// fma_frac: the machine's compute right before the timed loop, as a fraction of the best the
// process has seen at that thread count (compute_probe.h).
void set_compute_probe_counter(benchmark::State &state, double fma_frac);

// Only the CPU usage counters, for the peak benchmarks.
void set_cpu_usage_counters(benchmark::State &state, const CpuUsage::Cores &cores);

}  // namespace attngen::bench
