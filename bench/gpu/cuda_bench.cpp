// The CUDA kernels on device memory: cuda_fused and cuda_tiled on the GPU shapes of
// tools/gpu_check.sh, timed by Google Benchmark. Inputs and outputs live in device memory
// (allocated through the Halide runtime that the kernels share), so a measurement is the
// kernels alone, as for PyTorch's SDPA on CUDA tensors; each call returns after the device
// finished (the runtime waits before it detaches device pointers).
//
// Counters: GFLOP/s (4 B H Nq Nk D; causal counts half) and, for the decode shape, GB/s of K and
// V read. Each benchmark first checks its output against cpu_fused on the same inputs and
// reports max_abs_diff; above 1e-3 it fails instead of timing.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "HalideBuffer.h"
#include "HalideRuntimeCuda.h"
#include "attngen/attngen.h"

namespace {

using attngen::AttentionArgs;
using attngen::TensorView;

struct Shape {
    const char *label;
    int64_t batch, heads, nq, nk, d;
    bool causal;
};

// The shapes of the CPU benchmark that the GPU check covers: (b), (c), (d) and (e).
const Shape kShapes[] = {
    {"b_B1_H8_N2048_D64", 1, 8, 2048, 2048, 64, false},
    {"c_B1_H16_N4096_D64", 1, 16, 4096, 4096, 64, false},
    {"d_B1_H8_N2048_D64_causal", 1, 8, 2048, 2048, 64, true},
    {"e_decode_B1_H32_Nq1_Nk4096_D128", 1, 32, 1, 4096, 128, false},
};

// A float32 array with a copy in device memory.
struct DeviceArray {
    Halide::Runtime::Buffer<float> buffer;
    bool copied = false;
    explicit DeviceArray(const std::vector<float> &host) : buffer(static_cast<int>(host.size())) {
        std::copy(host.begin(), host.end(), buffer.data());
        buffer.set_host_dirty();
        copied = buffer.copy_to_device(halide_cuda_device_interface()) == 0;
    }
    bool ok() const { return copied; }
    void *device() {
        return reinterpret_cast<void *>(halide_cuda_get_device_ptr(nullptr, buffer.raw_buffer()));
    }
    std::vector<float> host() {
        buffer.set_device_dirty();
        buffer.copy_to_host();
        return {buffer.data(), buffer.data() + buffer.number_of_elements()};
    }
};

std::vector<float> random_values(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (auto &x : v) x = dist(rng);
    return v;
}

void BM_Attention(benchmark::State &state, Shape s, std::string schedule) {
    if (attngen::Status st = attngen::cuda_status(); !st.ok()) {
        state.SkipWithError(("no CUDA device: " + st.message()).c_str());
        return;
    }
    const auto q = random_values(s.batch * s.heads * s.nq * s.d, 1);
    const auto k = random_values(s.batch * s.heads * s.nk * s.d, 2);
    const auto v = random_values(s.batch * s.heads * s.nk * s.d, 3);
    std::vector<float> out(s.batch * s.heads * s.nq * s.d, 0.0f);

    // The CPU result the device must reproduce.
    std::vector<float> expected(out.size());
    AttentionArgs cpu;
    cpu.q = TensorView::f32(q.data(), {s.batch, s.heads, s.nq, s.d});
    cpu.k = TensorView::f32(k.data(), {s.batch, s.heads, s.nk, s.d});
    cpu.v = TensorView::f32(v.data(), {s.batch, s.heads, s.nk, s.d});
    cpu.out = TensorView::f32(expected.data(), {s.batch, s.heads, s.nq, s.d});
    cpu.causal = s.causal;
    if (attngen::Status st = attngen::attention(cpu); !st.ok()) {
        state.SkipWithError(("CPU reference failed: " + st.to_string()).c_str());
        return;
    }

    DeviceArray dq(q), dk(k), dv(v), dout(out);
    if (!dq.ok() || !dk.ok() || !dv.ok() || !dout.ok()) {
        state.SkipWithError("could not allocate device memory");
        return;
    }
    AttentionArgs args = cpu;
    args.q =
        TensorView::f32(static_cast<float *>(dq.device()), {s.batch, s.heads, s.nq, s.d}).on_cuda();
    args.k =
        TensorView::f32(static_cast<float *>(dk.device()), {s.batch, s.heads, s.nk, s.d}).on_cuda();
    args.v =
        TensorView::f32(static_cast<float *>(dv.device()), {s.batch, s.heads, s.nk, s.d}).on_cuda();
    args.out = TensorView::f32(static_cast<float *>(dout.device()), {s.batch, s.heads, s.nq, s.d})
                   .on_cuda();
    args.placement = attngen::Placement::kCuda;
    args.schedule = schedule;
    attngen::CallInfo info;
    if (attngen::Status st = attngen::attention(args, &info); !st.ok()) {
        state.SkipWithError(st.to_string().c_str());
        return;
    }
    double max_diff = 0;
    const auto got = dout.host();
    for (std::size_t n = 0; n < got.size(); n++) {
        max_diff = std::max(max_diff, std::fabs(double(got[n]) - expected[n]));
    }
    if (!(max_diff <= 1e-3)) {
        state.SkipWithError(
            ("result differs from cpu_fused by " + std::to_string(max_diff)).c_str());
        return;
    }
    for (auto _ : state) {
        attngen::Status st = attngen::attention(args);
        if (!st.ok()) {
            state.SkipWithError(st.to_string().c_str());
            return;
        }
    }
    double flops = 4.0 * s.batch * s.heads * s.nq * s.nk * s.d * (s.causal ? 0.5 : 1.0);
    state.counters["GFLOP/s"] =
        benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    double kv_bytes = 2.0 * s.batch * s.heads * s.nk * s.d * sizeof(float);
    state.counters["KV_GB/s"] =
        benchmark::Counter(kv_bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["max_abs_diff"] = max_diff;
    state.SetLabel(info.kernel);
}

const bool kRegistered = [] {
    for (const Shape &s : kShapes) {
        for (const char *schedule : {"cuda_fused", "cuda_tiled"}) {
            benchmark::RegisterBenchmark(
                (std::string("attngen_") + schedule + "/" + s.label).c_str(), BM_Attention, s,
                std::string(schedule))
                ->Unit(benchmark::kMillisecond)
                ->UseRealTime();
        }
    }
    return true;
}();

}  // namespace

BENCHMARK_MAIN();
