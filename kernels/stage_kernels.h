// The stage kernels (projection, scores, softmax, weighted_sum) compiled by this build, each a
// Halide pipeline of one stage, with a typed call for each op. Tests and benchmarks call them
// directly; the runtime's public API serves the composed attention and mha kernels.
#pragma once

#include <string>
#include <vector>

#include "HalideRuntime.h"
#include "attngen/kernel.h"

namespace attngen::stage_kernels {

// One compiled stage kernel. Each call passes the buffers by the names the stage's generator
// gives them (generators/<op>_generator.cpp) and returns the kernel's result, or -1 when the
// kernel is not of that op.
struct StageKernel {
    Kernel kernel;

    const std::string &schedule() const { return kernel.variant.schedule; }
    // x [B, N, d_in], w [d_in, d_out], bias [d_out] -> y [B, N, d_out].
    int projection(void *ucon, halide_buffer_t *x, halide_buffer_t *w, halide_buffer_t *bias,
                   halide_buffer_t *y) const;
    // q [B, H, Nq, d_k], k [B, H_kv, Nk, d_k], key_lengths [B] -> scores [B, H, Nq, Nk].
    int scores(void *ucon, halide_buffer_t *q, halide_buffer_t *k, halide_buffer_t *key_lengths,
               float scale, halide_buffer_t *scores) const;
    // scores [B, H, Nq, Nk], key_lengths [B] -> probs [B, H, Nq, Nk], lse [B, H, Nq].
    int softmax(void *ucon, halide_buffer_t *scores, halide_buffer_t *key_lengths,
                halide_buffer_t *probs, halide_buffer_t *lse) const;
    // p [B, H, Nq, Nk], v [B, H_kv, Nk, d_v], key_lengths [B] -> out [B, H, Nq, d_v].
    int weighted_sum(void *ucon, halide_buffer_t *p, halide_buffer_t *v,
                     halide_buffer_t *key_lengths, halide_buffer_t *out) const;
};

// Every compiled stage kernel, in build order.
const std::vector<StageKernel> &all();

// The kernel of this op, schedule and mask, or nullptr.
const StageKernel *find(const std::string &op, const std::string &schedule, bool causal);

}  // namespace attngen::stage_kernels
