// The counters every attention benchmark reports, as rates over the measured (real) time:
//
//   GFLOPs     shape.flops() / time, in 1e9 FLOP/s (see shapes.h for what is counted)
//   peak_frac  that rate / the sgemm peak measured with the same thread count
//   KV_GBps    decode shapes only: K and V bytes read / time, in 1e9 byte/s
//   bw_frac    decode shapes only: that rate / the read bandwidth measured with the same threads
#pragma once

#include <benchmark/benchmark.h>

#include "shapes.h"

namespace attngen::bench {

void set_attention_counters(benchmark::State &state, const BenchShape &shape,
                            double peak_flops_per_second, double bandwidth_bytes_per_second);

}  // namespace attngen::bench
