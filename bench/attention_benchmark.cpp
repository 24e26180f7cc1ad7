#include "attention_benchmark.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <string>

#include "compute_probe.h"
#include "counters.h"
#include "exclusions.h"
#include "failures.h"
#include "peaks.h"
#include "reference_check.h"
#include "thread_runtimes.h"

namespace attngen::bench {

namespace {

// Passes over the read-bandwidth array (after one warm-up) whose best rate is a decode
// benchmark's reference bandwidth.
constexpr int kReferenceBandwidthRuns = 3;

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
    // The sgemm peak runs OpenBLAS work of its own, so it is measured (once per thread count)
    // before this benchmark settles its threads.
    const double peak = sgemm_peak_flops(threads);
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

    // The machine's compute right now (compute_probe.h), probed once every pool that ran (this
    // benchmark's previous repetition among them) has stopped spinning.
    const double fma_frac = compute_probe_fraction(threads);

    // A decode benchmark's bandwidth fraction is of the read bandwidth measured right here, in
    // every repetition, rather than of one measurement taken when the first benchmark started:
    // the memory bandwidth that the other tenants of the host leave this machine moves by half
    // within minutes (bench run of 2026-11-29 16:00, two threads: in round 2 the best of five
    // passes read 42.0 GB/s when the first benchmark started and the peak benchmark's median was
    // 27.0 GB/s; in round 3, 21.5 and 41.3 GB/s), and the CPU load counters cannot see it.
    // Measured next to the timed loop, the reference and the benchmark share the machine's
    // state. The warm-up and three passes take about 35 ms (8 to 9 ms each at two threads).
    // The probe above has let every pool settle, so the reference runs on idle cores.
    double bandwidth = 0.0;
    CpuUsage::Cores reference_cores;
    if (shape.is_decode()) {
        const CpuUsage reference_usage;
        bandwidth = read_bandwidth_now(threads, kReferenceBandwidthRuns);
        reference_cores = reference_usage.since_start();
    }

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
    CpuUsage::Cores cores = usage.since_start();
    // A reference measured while another process ran would flatter the fraction, so that load
    // marks the repetition as disturbed too.
    cores.others = std::max(cores.others, reference_cores.others);
    note_runtime_used(impl.runtimes);
    if (!error.empty()) {
        fail_benchmark(state, error);
        return;
    }
    state.SetLabel(computation.label());
    set_attention_counters(state, shape, peak, bandwidth, cores);
    set_compute_probe_counter(state, fma_frac);
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
