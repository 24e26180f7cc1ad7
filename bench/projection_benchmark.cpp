#include "projection_benchmark.h"

#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "HalideBuffer.h"
#include "attngen/attngen.h"
#include "counters.h"
#include "cpu_usage.h"
#include "failures.h"
#include "peaks.h"
#include "reference.h"
#include "stage_kernels.h"
#include "thread_runtimes.h"

namespace attngen::bench {

namespace {

// The layer shape (g): 2048 rows of d_model 512 into H8 x d64 = 512 features. The product
// (4 MiB of x, 1 MiB of w, 4 MiB of y) outgrows the caches the way a layer's projections do.
constexpr int kRows = 2048;
constexpr int kIn = 512;
constexpr int kOut = 512;
constexpr double kFlops = 2.0 * kRows * kIn * kOut;
// Largest |y - y_fp64| / (1 + |y_fp64|) accepted: float sums of 512 products of O(1) values.
constexpr double kTolerance = 1e-4;

struct ProjectionData {
    std::vector<float> x, w, bias;
    std::vector<double> expected;  // The fp64 reference y.
};

// Values in [-1, 1) from a fixed generator, weights scaled by 1 / sqrt(fan-in) as in
// problem_data.cpp, so that y is O(1).
const ProjectionData &projection_data() {
    static const ProjectionData data = [] {
        ProjectionData d;
        uint32_t state = 12345;
        auto next = [&state] {
            state = state * 1664525u + 1013904223u;
            return static_cast<float>(state >> 8) / static_cast<float>(1u << 23) - 1.0f;
        };
        const float w_scale = 1.0f / std::sqrt(static_cast<float>(kIn));
        d.x.resize(std::size_t{kRows} * kIn);
        d.w.resize(std::size_t{kIn} * kOut);
        d.bias.resize(kOut);
        for (float &v : d.x) v = next();
        for (float &v : d.w) v = next() * w_scale;
        for (float &v : d.bias) v = next();
        std::vector<double> x(d.x.begin(), d.x.end()), w(d.w.begin(), d.w.end()),
            bias(d.bias.begin(), d.bias.end());
        d.expected.resize(std::size_t{kRows} * kOut);
        reference::projection<double>(kRows, kIn, kOut, x.data(), w.data(), bias.data(),
                                      d.expected.data());
        return d;
    }();
    return data;
}

// Empty, or the first element that differs from the reference by more than kTolerance.
// with_bias says whether y includes the bias (OpenBLAS's product does not).
std::string check(const std::vector<float> &y, bool with_bias) {
    const ProjectionData &d = projection_data();
    for (std::size_t n = 0; n < y.size(); n++) {
        const double expected = d.expected[n] - (with_bias ? 0.0 : d.bias[n % kOut]);
        if (!(std::abs(y[n] - expected) <= kTolerance * (1.0 + std::abs(expected)))) {
            return "output differs from the fp64 reference at element " + std::to_string(n) + ": " +
                   std::to_string(y[n]) + " against " + std::to_string(expected);
        }
    }
    return "";
}

// Times `call` (which returns an error message or "") on `runtimes`, after one checked call.
void time_projection(benchmark::State &state, int threads, ThreadRuntimes runtimes,
                     const std::function<std::string()> &call,
                     const std::function<std::string()> &check_output) {
    const double peak = sgemm_peak_flops(threads);
    std::string error = call();
    if (error.empty()) error = check_output();
    note_runtime_used(runtimes);
    if (!error.empty()) {
        fail_benchmark(state, error);
        return;
    }
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
    constexpr auto rate = benchmark::Counter::kIsIterationInvariantRate;
    state.counters["GFLOPs"] = benchmark::Counter(kFlops / 1e9, rate);
    state.counters["peak_frac"] = benchmark::Counter(kFlops / peak, rate);
    set_cpu_usage_counters(state, cores);
}

void stage_kernel_projection(benchmark::State &state, const stage_kernels::StageKernel &kernel,
                             int threads) {
    const ProjectionData &d = projection_data();
    std::vector<float> y(std::size_t{kRows} * kOut);
    // Halide's dimensions are reversed: x (d_in, rows, batch), w (d_out, d_in), y (d_out, rows,
    // batch). The buffers only view the data, which stays constant.
    Halide::Runtime::Buffer<float> x(const_cast<float *>(d.x.data()), kIn, kRows, 1);
    Halide::Runtime::Buffer<float> w(const_cast<float *>(d.w.data()), kOut, kIn);
    Halide::Runtime::Buffer<float> bias(const_cast<float *>(d.bias.data()), kOut);
    Halide::Runtime::Buffer<float> out(y.data(), kOut, kRows, 1);
    set_num_threads(threads);
    state.SetLabel(kernel.name);
    time_projection(
        state, threads, kHalideThreads,
        [&] {
            const int status = kernel.projection(nullptr, x.raw_buffer(), w.raw_buffer(),
                                                 bias.raw_buffer(), out.raw_buffer());
            return status == 0 ? std::string()
                               : "kernel " + std::string(kernel.name) + " failed (Halide error " +
                                     std::to_string(status) + ")";
        },
        [&] { return check(y, true); });
}

void openblas_projection(benchmark::State &state, int threads) {
    const ProjectionData &d = projection_data();
    std::vector<float> y(std::size_t{kRows} * kOut);
    openblas_set_num_threads(threads);
    time_projection(
        state, threads, kOpenBlasThreads,
        [&] {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kRows, kOut, kIn, 1.0f,
                        d.x.data(), kIn, d.w.data(), kOut, 0.0f, y.data(), kOut);
            return std::string();
        },
        [&] { return check(y, false); });
}

}  // namespace

void register_projection_benchmarks(int threads) {
    const std::string suffix = "/threads:" + std::to_string(threads);
    // The schedules whose projection kernels are fast enough to time: the reference takes
    // seconds per call.
    for (const char *schedule : {"cpu_basic", "cpu_tiled", "cpu_fused"}) {
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
