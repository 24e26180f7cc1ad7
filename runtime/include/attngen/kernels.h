// What this build compiled, and process-wide settings of the kernels.
#pragma once

#include <string>
#include <vector>

#include "attngen/status.h"

namespace attngen {

struct KernelInfo {
    std::string name;      // e.g. "attention_f32_causal_d64_cpu_basic".
    std::string op;        // "attention" or "mha".
    std::string schedule;  // e.g. "cpu_basic".
    std::string targets;   // The Halide targets it was compiled for.
    bool causal = false;
    bool probs = false;  // Whether it can output the probabilities.
    // 0 where the kernel accepts any value; otherwise the value it is specialized to.
    int heads = 0, kv_heads = 0, d_k = 0, d_v = 0;
    // 0 where the kernel serves any number of queries; otherwise the most it is meant for
    // (a decode kernel). The runtime prefers such a kernel when a call fits.
    int max_queries = 0;
    // 0 where the kernel serves any number of keys; otherwise the fewest it is meant for (a
    // kernel for long sequences). The runtime prefers such a kernel when a call fits.
    int min_keys = 0;
    std::string tuning;  // Schedule parameters it was compiled with; empty for the defaults.
    // The one of `targets` that runs on this CPU (the most capable one it supports, within
    // ATTNGEN_MAX_CPU_ISA); empty if none can.
    std::string selected_target;
    // Whether the dispatch picks it on this CPU for the calls it fits: a CPU kernel if this CPU
    // runs one of its targets; a tuned kernel (compiled for the one target whose machines it was
    // tuned on) only where the build's other kernels run that target too, so a kernel tuned for
    // AVX-512 machines leaves the calls of an AVX2 machine to the default kernels.
    bool serves_calls = false;
    // Compiled with a CUDA entry (cuda_tiled, cuda_fused); its CPU entry runs without a device.
    bool cuda = false;
};

// Whether `schedule` names one of Halide's autoschedulers (Adams2019, Li2018, Mullapudi2016).
// Their kernels, compiled with ATTNGEN_BUILD_AUTOSCHEDULED=ON, are baselines for the benchmarks,
// each planned for the shape of its estimates: a call smaller than their tiles fails (the
// failures seen are Halide's bounds errors, returned as a status), so the test suite leaves them
// out and the benchmark checks their output at every shape it times. available_schedules() lists
// them after the schedules the runtime knows.
bool is_autoscheduler_baseline(const std::string &schedule);

// Every compiled attention and mha kernel, in build order.
std::vector<KernelInfo> list_kernels();

// The schedule names with at least one compiled kernel, fastest first: the order in which an
// empty schedule name picks them.
std::vector<std::string> available_schedules();

// The same, limited to the schedules with a compiled kernel of this op ("attention" or "mha";
// cuda_fused, for one, fuses attention only). Empty for another op name.
std::vector<std::string> available_schedules(const std::string &op);

// The environment variable ATTNGEN_MAX_CPU_ISA (avx512, avx2, sse41 or armv8), read once at
// startup, keeps kernels compiled for several targets from using more capable ones: for tests,
// and for reproducing a result of another machine. A call fails with kInvalidArgument while it
// holds another value.

// Ok when this process can run CUDA kernels (a driver and a device); otherwise kUnavailable with
// the reason. Also kUnavailable when this build compiled no CUDA kernels. Probed once; setting
// ATTNGEN_DISABLE_CUDA=1 before the first call makes every CUDA kernel use its CPU entry.
Status cuda_status();

// Threads the kernels may use, the calling thread included; 0 restores the default
// (HL_NUM_THREADS when set, else one per core). Negative values count as 0; at most 256. Returns
// the previous value. Process-wide. The runtime's pool runs the parallel loops of every Halide
// pipeline in the process once a kernel has been called.
int set_num_threads(int threads);

// How long an idle worker of the kernels' thread pool keeps spinning (one core busy) before it
// sleeps, in microseconds: back-to-back calls then find it awake instead of paying to wake it.
// 0 sleeps at once, as Halide's own pool does; negative restores the default, 1000. Workers never
// spin while the thread count exceeds the cores. Returns the previous value. Process-wide.
int set_spin_wait_microseconds(int microseconds);

}  // namespace attngen
