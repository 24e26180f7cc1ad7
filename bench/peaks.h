// The two practical peaks of this machine that the benchmark's fractions are relative to,
// measured in the same process and with the same thread count as the benchmark that uses them:
//
// - compute: OpenBLAS cblas_sgemm with 2048 x 2048 matrices, about the best float32 rate that
//   tuned code reaches here (attention is two matrix products and a softmax);
// - memory: a plain vectorized sum over a 256 MiB float array, far larger than the caches,
//   split over the threads: the rate at which a decode step can stream its KV cache.
#pragma once

namespace attngen::bench {

// One 2048^3 product on `threads` OpenBLAS threads; buffers are made on the first call.
void run_sgemm_peak_once(int threads);
double sgemm_peak_flops_per_call();

// One pass over the 256 MiB array on `threads` OpenMP threads; returns the sum so that the
// reads cannot be optimized away.
float run_read_bandwidth_once(int threads);
double read_bandwidth_bytes_per_call();

// The name of the kernels OpenBLAS chose for this CPU (its DYNAMIC_ARCH dispatch), which the
// results print next to the peak: a CPU that OpenBLAS does not know gets older kernels.
const char *openblas_kernels();

// The best rate of five runs after a warm-up, in FLOP/s. Measured on the first call for each
// thread count and cached.
double sgemm_peak_flops(int threads);

// The best rate of `runs` passes over the 256 MiB array after a warm-up pass, in byte/s,
// measured now and not cached: a decode benchmark takes it right before its own timed loop.
double read_bandwidth_now(int threads, int runs);

}  // namespace attngen::bench
