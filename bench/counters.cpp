#include "counters.h"

#include <ctime>

namespace attngen::bench {

void set_attention_counters(benchmark::State &state, const BenchShape &shape,
                            double peak_flops_per_second, double bandwidth_bytes_per_second,
                            double cpu_util) {
    using benchmark::Counter;
    // kIsIterationInvariantRate multiplies by the iterations and divides by the time, which is
    // the real time because every benchmark is registered with UseRealTime().
    constexpr auto rate = Counter::kIsIterationInvariantRate;
    state.counters["GFLOPs"] = Counter(shape.flops() / 1e9, rate);
    state.counters["peak_frac"] = Counter(shape.flops() / peak_flops_per_second, rate);
    if (shape.is_decode()) {
        state.counters["KV_GBps"] = Counter(shape.kv_bytes() / 1e9, rate);
        state.counters["bw_frac"] = Counter(shape.kv_bytes() / bandwidth_bytes_per_second, rate);
    }
    state.counters["cpu_util"] = Counter(cpu_util);
}

double process_cpu_seconds() {
    timespec now{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

}  // namespace attngen::bench
