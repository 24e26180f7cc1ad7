// The stage kernels (projection, scores, softmax, weighted_sum) compiled by this build, each a
// Halide pipeline of one stage. Tests and benchmarks call them directly; the runtime's public
// API serves the composed attention and mha kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "HalideRuntime.h"

namespace attngen::stage_kernels {

// x [B, N, d_in], w [d_in, d_out], bias [d_out] -> y [B, N, d_out].
using ProjectionFn = int (*)(const void *ucon, halide_buffer_t *x, halide_buffer_t *w,
                             halide_buffer_t *bias, halide_buffer_t *y);
// q [B, H, Nq, d_k], k [B, H_kv, Nk, d_k], key_lengths [B] -> scores [B, H, Nq, Nk].
using ScoresFn = int (*)(const void *ucon, halide_buffer_t *q, halide_buffer_t *k,
                         halide_buffer_t *key_lengths, float scale, halide_buffer_t *scores);
// scores [B, H, Nq, Nk], key_lengths [B] -> probs [B, H, Nq, Nk], lse [B, H, Nq].
using SoftmaxFn = int (*)(const void *ucon, halide_buffer_t *scores, halide_buffer_t *key_lengths,
                          halide_buffer_t *probs, halide_buffer_t *lse);
// p [B, H, Nq, Nk], v [B, H_kv, Nk, d_v], key_lengths [B] -> out [B, H, Nq, d_v].
using WeightedSumFn = int (*)(const void *ucon, halide_buffer_t *p, halide_buffer_t *v,
                              halide_buffer_t *key_lengths, halide_buffer_t *out);

struct StageKernel {
    const char *name;
    const char *op;
    const char *schedule;
    bool causal;
    // Exactly one is set, according to op.
    ProjectionFn projection;
    ScoresFn scores;
    SoftmaxFn softmax;
    WeightedSumFn weighted_sum;
};

extern const StageKernel kStageKernels[];
extern const std::size_t kNumStageKernels;

// The kernel of this op, schedule and mask, or nullptr.
inline const StageKernel *find(const std::string &op, const std::string &schedule, bool causal) {
    for (std::size_t n = 0; n < kNumStageKernels; n++) {
        const StageKernel &k = kStageKernels[n];
        if (op == k.op && schedule == k.schedule && causal == k.causal) return &k;
    }
    return nullptr;
}

}  // namespace attngen::stage_kernels
