// Benchmark failures that must reach the exit code: Google Benchmark reports a benchmark that
// called SkipWithError but still exits with 0, and the smoke test needs a failing status.
#pragma once

#include <benchmark/benchmark.h>

#include <string>

namespace attngen::bench {

// Marks the benchmark as failed with `message` (SkipWithError) and remembers it.
void fail_benchmark(benchmark::State &state, const std::string &message);

// Whether any benchmark failed so far in this process.
bool any_benchmark_failed();

}  // namespace attngen::bench
