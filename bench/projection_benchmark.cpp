#include "projection_benchmark.h"

#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "HalideBuffer.h"
#include "attngen/attngen.h"
#include "compare.h"
#include "compute_probe.h"
#include "counters.h"
#include "cpu_usage.h"
#include "failures.h"
#include "peaks.h"
#include "problem_data.h"
#include "reference.h"
#include "shapes.h"
#include "stage_kernels.h"
#include "thread_runtimes.h"

namespace attngen::bench {

namespace {

// The layer shape (g), whose x and w_q the bench already makes: 2048 rows of d_model 512 into
// H8 x d64 = 512 features. The product (4 MiB of x, 1 MiB of w, 4 MiB of y) outgrows the caches
// the way a layer's projections do. The layer has no biases, so the stage kernels add a zero bias
// and compute the same product as cblas_sgemm.
const BenchShape &layer_shape() {
    for (const BenchShape &shape : bench_shapes()) {
        if (shape.is_mha()) return shape;
    }
    throw std::logic_error("bench_shapes() has no multi-head layer shape");
}

struct ProjectionData {
    int rows = 0, in = 0, out = 0;
    const Floats *x = nullptr, *w = nullptr;  // problem_data's x and w_q.
    Floats bias;                              // Zeros.
    std::vector<double> expected;             // The fp64 reference y.
    std::vector<float> naive;                 // The naive float32 y (compare.h).

    double flops() const { return 2.0 * rows * in * out; }
};

const ProjectionData &projection_data() {
    static const ProjectionData data = [] {
        const BenchShape &shape = layer_shape();
        const ProblemData &p = problem_data(shape);
        ProjectionData d;
        d.rows = static_cast<int>(shape.batch * shape.nq);
        d.in = static_cast<int>(shape.d_model);
        d.out = static_cast<int>(shape.heads * shape.d);
        d.x = &p.x;
        d.w = &p.w_q;
        d.bias.assign(d.out, 0.0f);
        const std::vector<double> x(p.x.begin(), p.x.end()), w(p.w_q.begin(), p.w_q.end()),
            bias(d.out, 0.0);
        d.expected.resize(std::size_t(d.rows) * d.out);
        d.naive.resize(d.expected.size());
        reference::projection<double>(d.rows, d.in, d.out, x.data(), w.data(), bias.data(),
                                      d.expected.data());
        reference::projection<float>(d.rows, d.in, d.out, p.x.data(), p.w_q.data(), d.bias.data(),
                                     d.naive.data());
        return d;
    }();
    return data;
}

// Empty, or how y differs from the fp64 reference (reference::compare's yardstick).
std::string check(const Floats &y) {
    const ProjectionData &d = projection_data();
    const reference::Comparison c =
        reference::compare(y.data(), d.expected.data(), d.naive.data(), std::int64_t(y.size()));
    return c.ok ? std::string()
                : "output differs from the fp64 reference: " + reference::describe(c);
}

// Times `call` (which returns an error message or "") on `runtimes`, after one checked call.
void time_projection(benchmark::State &state, int threads, ThreadRuntimes runtimes,
                     const std::function<std::string()> &call,
                     const std::function<std::string()> &check_output) {
    const double peak = sgemm_peak_flops(threads);
    const double flops = projection_data().flops();
    std::string error = call();
    if (error.empty()) error = check_output();
    note_runtime_used(runtimes);
    if (!error.empty()) {
        fail_benchmark(state, error);
        return;
    }
    const double fma_frac = compute_probe_fraction(threads);
    settle_before_timing(runtimes);
    const CpuUsage usage;
    for (auto _ : state) {
        error = call();
        if (!error.empty()) break;
    }
    const CpuUsage::Cores cores = usage.since_start();
    note_runtime_used(runtimes);
    if (!error.empty()) {
        fail_benchmark(state, error);
        return;
    }
    set_flop_counters(state, flops, peak);
    set_cpu_usage_counters(state, cores);
    set_compute_probe_counter(state, fma_frac);
}

void stage_kernel_projection(benchmark::State &state, const stage_kernels::StageKernel &kernel,
                             int threads) {
    const ProjectionData &d = projection_data();
    Floats y(std::size_t(d.rows) * d.out);
    // Halide's dimensions are reversed: x (d_in, rows, batch), w (d_out, d_in), y (d_out, rows,
    // batch). The buffers only view the data, which stays constant.
    Halide::Runtime::Buffer<float> x(const_cast<float *>(d.x->data()), d.in, d.rows, 1);
    Halide::Runtime::Buffer<float> w(const_cast<float *>(d.w->data()), d.out, d.in);
    Halide::Runtime::Buffer<float> bias(const_cast<float *>(d.bias.data()), d.out);
    Halide::Runtime::Buffer<float> out(y.data(), d.out, d.rows, 1);
    set_num_threads(threads);
    state.SetLabel(kernel.kernel.name);
    time_projection(
        state, threads, kHalideThreads,
        [&] {
            const int status = kernel.projection(nullptr, x.raw_buffer(), w.raw_buffer(),
                                                 bias.raw_buffer(), out.raw_buffer());
            return status == 0 ? std::string()
                               : "kernel " + kernel.kernel.name + " failed (Halide error " +
                                     std::to_string(status) + ")";
        },
        [&] { return check(y); });
}

void openblas_projection(benchmark::State &state, int threads) {
    const ProjectionData &d = projection_data();
    Floats y(std::size_t(d.rows) * d.out);
    openblas_set_num_threads(threads);
    time_projection(
        state, threads, kOpenBlasThreads,
        [&] {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d.rows, d.out, d.in, 1.0f,
                        d.x->data(), d.in, d.w->data(), d.out, 0.0f, y.data(), d.out);
            return std::string();
        },
        [&] { return check(y); });
}

}  // namespace

void register_projection_benchmarks(int threads) {
    const std::string suffix = "/threads:" + std::to_string(threads);
    // The schedules whose projection kernels are fast enough to time: the reference takes
    // seconds per call, and cpu_fused has no stage kernels (its multi-head layer runs cpu_tiled's
    // projection GEMMs).
    for (const char *schedule : {"cpu_basic", "cpu_tiled"}) {
        const stage_kernels::StageKernel *kernel =
            stage_kernels::find("projection", schedule, false);
        if (kernel == nullptr) continue;
        benchmark::RegisterBenchmark(("projection/" + std::string(schedule) + suffix).c_str(),
                                     [kernel, threads](benchmark::State &state) {
                                         stage_kernel_projection(state, *kernel, threads);
                                     })
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
    }
    benchmark::RegisterBenchmark(("projection/openblas" + suffix).c_str(), openblas_projection,
                                 threads)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
}

}  // namespace attngen::bench
