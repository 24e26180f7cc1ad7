// cpu_basic: every stage materialized as in the reference schedule, but each loop nest
// vectorized along its contiguous dimension and parallel over heads and batch elements. It is
// the simplest schedule that uses the whole machine, and a stepping stone for the tiled and
// fused schedules.
#pragma once

#include "schedule.h"

namespace attngen::schedules {

class CpuBasic final : public Schedule {
  public:
    const char *name() const override { return "cpu_basic"; }
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
