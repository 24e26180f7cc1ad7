#include "peaks.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <vector>

#include "aligned_floats.h"
#include "thread_runtimes.h"

namespace attngen::bench {

namespace {

constexpr int kSgemmSize = 2048;
constexpr std::size_t kReadFloats = (std::size_t{256} << 20) / sizeof(float);
constexpr int kPeakRuns = 5;

struct SgemmBuffers {
    Floats a, b, c;
    SgemmBuffers() {
        const std::size_t n = std::size_t{kSgemmSize} * kSgemmSize;
        // Values do not matter to the speed of a GEMM; small ones keep the sums finite.
        a.assign(n, 0.5f);
        b.assign(n, 0.25f);
        c.assign(n, 0.0f);
    }
};

SgemmBuffers &sgemm_buffers() {
    static SgemmBuffers buffers;
    return buffers;
}

const Floats &read_array() {
    // Ones, written once, so that every page is mapped before the first timed pass.
    static const Floats data(kReadFloats, 1.0f);
    return data;
}

// The best rate of `runs` calls of `run` after one untimed call. Another process can only
// slow a run down, so the best run is the closest to what the machine can do; a median of five
// came out at half the two-thread peak when a compile job ran during the measurement.
double best_rate(const std::function<void()> &run, double work_per_call, int runs) {
    run();
    std::vector<double> rates;
    for (int i = 0; i < runs; i++) {
        auto start = std::chrono::steady_clock::now();
        run();
        std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
        rates.push_back(work_per_call / seconds.count());
    }
    return *std::max_element(rates.begin(), rates.end());
}

}  // namespace

void run_sgemm_peak_once(int threads) {
    SgemmBuffers &m = sgemm_buffers();
    openblas_set_num_threads(threads);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kSgemmSize, kSgemmSize, kSgemmSize, 1.0f,
                m.a.data(), kSgemmSize, m.b.data(), kSgemmSize, 0.0f, m.c.data(), kSgemmSize);
    note_runtime_used(kOpenBlasThreads);
}

double sgemm_peak_flops_per_call() {
    return 2.0 * kSgemmSize * kSgemmSize * kSgemmSize;
}

float run_read_bandwidth_once(int threads) {
    const float *data = read_array().data();
    float total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    {
        // Each thread reads one contiguous part. The simd reduction lets the compiler keep
        // several vector accumulators without -ffast-math, so the loop is bound by memory.
        const std::size_t parts = omp_get_num_threads(), part = omp_get_thread_num();
        const std::size_t begin = kReadFloats * part / parts,
                          end = kReadFloats * (part + 1) / parts;
        float sum = 0;
#pragma omp simd reduction(+ : sum)
        for (std::size_t i = begin; i < end; i++) sum += data[i];
        total += sum;
    }
    note_runtime_used(kOpenMpThreads);
    return total;
}

double read_bandwidth_bytes_per_call() {
    return static_cast<double>(kReadFloats * sizeof(float));
}

const char *openblas_kernels() {
    return openblas_get_corename();
}

double sgemm_peak_flops(int threads) {
    static std::map<int, double> cache;
    auto it = cache.find(threads);
    if (it == cache.end()) {
        double rate = best_rate([threads] { run_sgemm_peak_once(threads); },
                                sgemm_peak_flops_per_call(), kPeakRuns);
        it = cache.emplace(threads, rate).first;
    }
    return it->second;
}

double read_bandwidth_now(int threads, int runs) {
    volatile float sink = 0;
    return best_rate([threads, &sink] { sink = run_read_bandwidth_once(threads); },
                     read_bandwidth_bytes_per_call(), runs);
}

}  // namespace attngen::bench
