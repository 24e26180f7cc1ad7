#include "counters.h"

namespace attngen::bench {

void set_attention_counters(benchmark::State &state, const BenchShape &shape,
                            double peak_flops_per_second, double bandwidth_bytes_per_second,
                            const CpuUsage::Cores &cores) {
    using benchmark::Counter;
    constexpr auto rate = Counter::kIsIterationInvariantRate;
    set_flop_counters(state, shape.flops(), peak_flops_per_second);
    if (shape.is_decode()) {
        state.counters["KV_GBps"] = Counter(shape.kv_bytes() / 1e9, rate);
        state.counters["read_GBps"] = Counter(bandwidth_bytes_per_second / 1e9);
        state.counters["bw_frac"] = Counter(shape.kv_bytes() / bandwidth_bytes_per_second, rate);
    }
    set_cpu_usage_counters(state, cores);
}

void set_flop_counters(benchmark::State &state, double flops, double peak_flops_per_second) {
    using benchmark::Counter;
    // kIsIterationInvariantRate multiplies by the iterations and divides by the time, which is
    // the real time because every benchmark is registered with UseRealTime().
    constexpr auto rate = Counter::kIsIterationInvariantRate;
    state.counters["GFLOPs"] = Counter(flops / 1e9, rate);
    state.counters["peak_frac"] = Counter(flops / peak_flops_per_second, rate);
}

void set_compute_probe_counter(benchmark::State &state, double fma_frac) {
    state.counters["fma_frac"] = benchmark::Counter(fma_frac);
}

void set_cpu_usage_counters(benchmark::State &state, const CpuUsage::Cores &cores) {
    state.counters["cpu_util"] = benchmark::Counter(cores.own);
    state.counters["other_load"] = benchmark::Counter(cores.others);
}

}  // namespace attngen::bench
