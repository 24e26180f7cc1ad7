// Attention in the formulation a schedule asks for: the composed stages of
// algorithm/attention.h, or the online softmax of algorithm/online_attention.h (same results)
// for a schedule whose uses_online_softmax says so, blocked as its online_layout says. The
// attention generator and the tuner's JIT kernels both build their pipelines through this, so
// that the kernel a tuning measured is the kernel the build compiles.
#pragma once

#include "Halide.h"
#include "algorithm/attention.h"
#include "algorithm/online_attention.h"
#include "schedule.h"

namespace attngen::schedules {

class AttentionFormulation {
  public:
    // schedule may be null (one of Halide's autoschedulers will schedule the pipeline): the
    // composed formulation.
    AttentionFormulation(const Schedule *schedule, const Context &ctx, const Halide::Func &q,
                         const Halide::Func &k, const Halide::Func &v,
                         const Halide::Func &key_lengths, const algorithm::AttentionShape &shape,
                         const Halide::Expr &scale, bool causal);

    Halide::Func out() const;
    Halide::Func lse() const;
    Halide::Func probs() const;

    // Applies the schedule; nothing when it is null.
    void schedule(bool with_probs);

  private:
    const Schedule *schedule_;
    Context ctx_;
    bool online_;
    algorithm::AttentionFuncs composed_;
    algorithm::OnlineAttentionFuncs online_funcs_;
};

}  // namespace attngen::schedules
