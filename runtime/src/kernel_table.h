// The table of compiled kernels. cmake/AttngenKernels.cmake generates its definition
// (kernel_registry.cpp) from the kernels the build compiled; nothing here is kept by hand.
#pragma once

#include <cstddef>
#include <cstdint>

#include "HalideRuntime.h"

namespace attngen::detail {

enum class Op { attention, mha };

// Signatures of the generated functions (see generators/*_generator.cpp). The first argument is
// the user context that Halide passes to the error handler.
using AttentionFn = int (*)(const void *ucon, halide_buffer_t *q, halide_buffer_t *k,
                            halide_buffer_t *v, halide_buffer_t *key_lengths, float scale,
                            halide_buffer_t *out, halide_buffer_t *lse);
using AttentionProbsFn = int (*)(const void *ucon, halide_buffer_t *q, halide_buffer_t *k,
                                 halide_buffer_t *v, halide_buffer_t *key_lengths, float scale,
                                 halide_buffer_t *out, halide_buffer_t *lse,
                                 halide_buffer_t *probs);
using MhaFn = int (*)(const void *ucon, halide_buffer_t *x, halide_buffer_t *memory,
                      halide_buffer_t *w_q, halide_buffer_t *w_k, halide_buffer_t *w_v,
                      halide_buffer_t *w_o, halide_buffer_t *b_q, halide_buffer_t *b_k,
                      halide_buffer_t *b_v, halide_buffer_t *b_o, halide_buffer_t *key_lengths,
                      int32_t num_heads, int32_t num_kv_heads, float scale, halide_buffer_t *y);

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
    // Exactly one is set, according to op and probs.
    AttentionFn attention;
    AttentionProbsFn attention_probs;
    MhaFn mha;
};

extern const KernelEntry kKernels[];
extern const std::size_t kNumKernels;

}  // namespace attngen::detail
