// The benchmarks "peak/sgemm/threads:<n>" and "peak/read_bandwidth/threads:<n>": the two peaks of
// peaks.h timed like every other benchmark, so that RESULTS.md reports their medians too.
#pragma once

namespace attngen::bench {

void register_peak_benchmarks(int threads);

}  // namespace attngen::bench
