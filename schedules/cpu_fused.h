// cpu_fused: scores, softmax and weighted sum computed per block of query rows, so that no
// Nq x Nk buffer ever exists. Three paths, chosen by parameters (see FusedParams in the .cpp):
// the block path (the default), the decode path for a few queries against many keys, and the
// key-block path, an online softmax over blocks of keys that tuned kernels may take for long
// key sequences.
#pragma once

#include "schedule.h"

namespace attngen::schedules {

class CpuFused final : public Schedule {
  public:
    const char *name() const override { return "cpu_fused"; }
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
    OnlineLayout online_layout(const Context &ctx) const override;
    void online_attention(algorithm::OnlineAttentionFuncs &f, bool with_probs,
                          const Context &ctx) const override;
    SearchSpace attention_search_space(const Context &ctx) const override;
    std::map<std::string, int> attention_params(const Context &ctx) const override;
};

}  // namespace attngen::schedules
