// The benchmarks "peak/sgemm/threads:<n>" and "peak/read_bandwidth/threads:<n>": the two peaks of
// peaks.h timed like every other benchmark, so that RESULTS.md reports their medians too.
#pragma once

#include <vector>

namespace attngen::bench {

void register_peak_benchmarks(const std::vector<int> &thread_counts);

}  // namespace attngen::bench
