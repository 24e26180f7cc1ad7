// cpu_tiled: every stage as its own register-tiled, vectorized, parallel kernel, materializing
// its whole output before the next stage starts (per head for the composed attention). It is
// the fast way to run stages separately, the schedule of the stage generators, and the
// baseline that shows what fusion saves.
#pragma once

#include "schedule.h"

namespace attngen::schedules {

class CpuTiled final : public Schedule {
  public:
    const char *name() const override { return "cpu_tiled"; }
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
    std::map<std::string, int> attention_params(const Context &ctx) const override;
};

}  // namespace attngen::schedules
