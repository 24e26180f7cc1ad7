// cuda_fused: attention as one CUDA kernel per group of 32 queries and head, with the online
// softmax of algorithm/online_attention.h. A thread block walks the keys in blocks of 32: it
// stages the block's K and V rows in shared memory, computes the 32 x 32 scores, their
// per-query maxima, weights and sums in shared memory, and folds the block into a running
// maximum, sum and output that each thread keeps for its (query, value features). No Nq x Nk
// buffer exists, and causal attention never visits a block that its group cannot see.
//
// The stage kernels and the multi-head layer use cuda_tiled's schedules. A kernel for a target
// without CUDA runs the same online algorithm over the same key blocks and query groups, in the
// register tiles of cpu_fused's key-block path, so a library that holds CUDA and CPU entries
// computes the same results on both, and the CPU entry checks the GPU kernel's algorithm and
// blocking on machines without a GPU.
#pragma once

#include "schedule.h"

namespace attngen::schedules {

class CudaFused final : public Schedule {
  public:
    const char *name() const override { return "cuda_fused"; }
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

    bool uses_online_softmax(const Context &ctx) const override;
    void online_attention(algorithm::OnlineAttentionFuncs &f, bool with_probs,
                          const Context &ctx) const override;
    OnlineLayout online_layout(const Context &ctx) const override;
    // Thread-block shapes of the GPU kernels (none for a CPU target, whose entry has no
    // parameters of its own).
    SearchSpace attention_search_space(const Context &ctx) const override;
};

}  // namespace attngen::schedules
