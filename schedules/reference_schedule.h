// The reference schedule: every stage computed over its whole domain before the next one
// starts (compute_root), in plain serial loops. It is the slowest schedule and the simplest to
// trust, so it anchors the tests of every other schedule.
#pragma once

#include "schedule.h"

namespace attngen::schedules {

class Reference final : public Schedule {
  public:
    const char *name() const override { return "reference"; }
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
};

}  // namespace attngen::schedules
