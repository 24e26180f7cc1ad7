#include "attention_benchmark.h"

#include <benchmark/benchmark.h>

#include <exception>
#include <memory>
#include <string>

#include "counters.h"
#include "exclusions.h"
#include "failures.h"
#include "peaks.h"
#include "reference_check.h"

namespace attngen::bench {

namespace {

// The computation of the benchmark that ran last. Google Benchmark calls a benchmark's function
// once per repetition (and while it searches for the iteration count), always consecutively, so
// keeping the last one prepares and checks each benchmark once and keeps its buffers warm
// between repetitions, while at most one benchmark's buffers are alive at a time.
struct CurrentComputation {
    std::string benchmark;
    std::unique_ptr<Computation> computation;
};

CurrentComputation &current() {
    static CurrentComputation current;
    return current;
}

// Prepares the computation, runs it once (which also warms it up) and checks its output.
// Returns an empty string or what went wrong.
std::string prepare_and_check(const BenchShape &shape, const Implementation &impl, int threads,
                              std::unique_ptr<Computation> *computation) {
    try {
        const ProblemData &data = problem_data(shape);
        *computation = impl.prepare(shape, data, threads);
        std::string error = (*computation)->run();
        note_runtime_used(impl.runtimes);
        if (!error.empty()) return error;
        return check_against_reference(shape, data, (*computation)->output());
    } catch (const std::exception &e) {
        return std::string("exception: ") + e.what();
    }
}

void run_attention_benchmark(benchmark::State &state, const std::string &benchmark,
                             const BenchShape &shape, const Implementation &impl, int threads) {
    // The peaks run OpenBLAS and OpenMP work of their own, so they are measured (once per
    // thread count) before this benchmark settles its threads.
    const double peak = sgemm_peak_flops(threads);
    const double bandwidth = shape.is_decode() ? read_bandwidth_bytes_per_second(threads) : 0.0;
    impl.set_threads(threads);

    CurrentComputation &last = current();
    if (last.benchmark != benchmark) {
        last.benchmark.clear();
        last.computation.reset();
        std::unique_ptr<Computation> computation;
        std::string error = prepare_and_check(shape, impl, threads, &computation);
        if (!error.empty()) {
            fail_benchmark(state, error);
            return;
        }
        last.benchmark = benchmark;
        last.computation = std::move(computation);
    }
    Computation &computation = *last.computation;

    settle_before_timing(impl.runtimes);
    const CpuUsage usage;
    std::string error;
    try {
        for (auto _ : state) {
            error = computation.run();
            if (!error.empty()) break;
        }
    } catch (const std::exception &e) {
        error = std::string("exception: ") + e.what();
    }
    const CpuUsage::Cores cores = usage.since_start();
    note_runtime_used(impl.runtimes);
    if (!error.empty()) {
        fail_benchmark(state, error);
        return;
    }
    state.SetLabel(computation.label());
    set_attention_counters(state, shape, peak, bandwidth, cores);
}

}  // namespace

void register_attention_benchmarks(const std::vector<Implementation> &implementations,
                                   int threads) {
    for (const BenchShape &shape : bench_shapes()) {
        for (const Implementation &impl : implementations) {
            if (!impl.supports(shape) || is_excluded(impl.name, shape.id)) continue;
            const std::string name =
                "attention/" + shape.id + "/" + impl.name + "/threads:" + std::to_string(threads);
            benchmark::RegisterBenchmark(name.c_str(),
                                         [name, &shape, impl, threads](benchmark::State &state) {
                                             run_attention_benchmark(state, name, shape, impl,
                                                                     threads);
                                         })
                ->UseRealTime()
                ->Unit(benchmark::kMillisecond);
        }
    }
}

}  // namespace attngen::bench
