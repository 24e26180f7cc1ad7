// cuda_tiled: every stage as its own CUDA kernel. Projection, scores and weighted sum are
// register-tiled GEMMs (each thread accumulates a 4 x 4 tile of outputs in registers); the
// softmax gives each row a warp whose lanes reduce strided keys and then combine through
// shuffles. Like cpu_tiled it materializes each stage's output (the Nq x Nk scores included), so
// it is the baseline that shows what cuda_fused saves.
//
// A kernel for a target without CUDA (the CPU entries of a library that also holds a CUDA entry)
// gets cpu_tiled's schedule of the same algorithm.
#pragma once

#include "schedule.h"

namespace attngen::schedules {

class CudaTiled final : public Schedule {
  public:
    const char *name() const override { return "cuda_tiled"; }
    void projection(algorithm::ProjectionFuncs &f, const Context &ctx) const override;
    void scores(algorithm::ScoresFuncs &f, algorithm::KeyMask mask,
                const Context &ctx) const override;
    void softmax(algorithm::SoftmaxFuncs &f, algorithm::KeyMask mask,
                 const Context &ctx) const override;
    void weighted_sum(algorithm::WeightedSumFuncs &f, algorithm::KeyMask mask,
                      const Context &ctx) const override;
    void attention(algorithm::AttentionFuncs &f, bool with_probs,
                   const Context &ctx) const override;
    void mha(algorithm::MhaFuncs &f, const Context &ctx) const override;
    // Tile shapes of the GPU kernels (none for a CPU target, whose entry is cpu_tiled's).
    SearchSpace attention_search_space(const Context &ctx) const override;
};

// Whether a kernel for this context runs on a GPU (the target has a GPU feature).
bool targets_gpu(const Context &ctx);

// The same target and bucket without parameters: the context of the schedule a CUDA schedule
// delegates to (its parameters belong to its own kernels) and of its defaults.
Context without_params(const Context &ctx);

}  // namespace attngen::schedules
