// cpu_fused: scores, softmax and weighted sum computed per block of query rows, so that no
// Nq x Nk buffer ever exists.
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
    SearchSpace attention_search_space(const Context &ctx) const override;
};

}  // namespace attngen::schedules
