// What this build compiled, and process-wide settings of the kernels.
#pragma once

#include <string>
#include <vector>

#include "attngen/kernel.h"
#include "attngen/schedules.h"
#include "attngen/status.h"

namespace attngen {

// Whether `schedule` names one of Halide's autoschedulers (Adams2019, Li2018, Mullapudi2016).
// Their kernels, compiled with ATTNGEN_BUILD_AUTOSCHEDULED=ON, are baselines for the benchmarks,
// each planned for the shape of its estimates: a call smaller than their tiles fails (the
// failures seen are Halide's bounds errors, returned as a status), so the test suite leaves them
// out and the benchmark checks their output at every shape it times.
bool is_autoscheduler_baseline(const std::string &schedule);

// Every compiled attention and mha kernel, in build order, with where this process runs it.
std::vector<Kernel> list_kernels();

// The schedule names with at least one compiled kernel, fastest first: an empty schedule name
// picks the first of them that serves the call.
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
