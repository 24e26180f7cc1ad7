// The table of compiled kernels. cmake/AttngenKernels.cmake generates its definition
// (kernel_registry.cpp) from the kernels the build compiled; nothing here is kept by hand.
#pragma once

#include <cstddef>
#include <cstdint>

#include "HalideRuntime.h"
#include "attngen/kernel.h"

namespace attngen::detail {

enum class Op { attention, mha };

// Signatures of the generated functions (see generators/*_generator.cpp and
// attngen/kernel.h). The first argument is the user context that Halide passes to the error
// handler.
using AttentionFn = AttentionKernelFn;
using AttentionProbsFn = AttentionProbsKernelFn;
using MhaFn = MhaKernelFn;

struct KernelEntry {
    const char *name;
    Op op;
    const char *schedule;
    const char *targets;
    const char *tuning;  // Schedule parameters it was compiled with; empty for the defaults.
    bool causal;
    bool probs;
    // 0: any value; otherwise the value the kernel is specialized to.
    int heads, kv_heads, d_k, d_v;
    // 0: any number of queries; otherwise the kernel is meant for calls with at most this many.
    int max_queries;
    // 0: any number of keys; otherwise the kernel is meant for calls with at least this many.
    int min_keys;
    // Exactly one is set, according to op and probs.
    AttentionFn attention;
    AttentionProbsFn attention_probs;
    MhaFn mha;
    // Compiled with a CUDA entry (and a CPU entry for machines without a device).
    bool cuda;
};

extern const KernelEntry kKernels[];
extern const std::size_t kNumKernels;

// The build's CPU targets (ATTNGEN_TARGETS, comma-separated, most capable first): those of every
// kernel but the CUDA ones and the tuned ones, which have one target each.
extern const char *const kBuildTargets;

// The names of Halide's autoschedulers that the build may compile baselines with
// (ATTNGEN_AUTOSCHEDULERS, comma-separated): schedule names that are not attngen's own.
extern const char *const kAutoschedulers;

}  // namespace attngen::detail
