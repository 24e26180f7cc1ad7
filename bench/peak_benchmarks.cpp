#include "peak_benchmarks.h"

#include <benchmark/benchmark.h>

#include <string>

#include "counters.h"
#include "peaks.h"
#include "thread_runtimes.h"

namespace attngen::bench {

namespace {

void sgemm_peak(benchmark::State &state, int threads) {
    run_sgemm_peak_once(threads);  // Warm-up: buffers and OpenBLAS's threads.
    settle_before_timing(kOpenBlasThreads);
    const CpuUsage usage;
    for (auto _ : state) run_sgemm_peak_once(threads);
    set_cpu_usage_counters(state, usage.since_start());
    state.counters["GFLOPs"] = benchmark::Counter(sgemm_peak_flops_per_call() / 1e9,
                                                  benchmark::Counter::kIsIterationInvariantRate);
}

void read_bandwidth(benchmark::State &state, int threads) {
    run_read_bandwidth_once(threads);  // Warm-up: maps the array's pages.
    settle_before_timing(kOpenMpThreads);
    const CpuUsage usage;
    for (auto _ : state) benchmark::DoNotOptimize(run_read_bandwidth_once(threads));
    set_cpu_usage_counters(state, usage.since_start());
    state.counters["GBps"] = benchmark::Counter(read_bandwidth_bytes_per_call() / 1e9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

void register_peak_benchmarks(int threads) {
    const std::string suffix = "/threads:" + std::to_string(threads);
    benchmark::RegisterBenchmark(("peak/sgemm" + suffix).c_str(), sgemm_peak, threads)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("peak/read_bandwidth" + suffix).c_str(), read_bandwidth, threads)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
}

}  // namespace attngen::bench
