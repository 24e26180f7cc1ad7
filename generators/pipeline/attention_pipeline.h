// The attention pipeline of a variant: the keys its mask allows (algorithm/mask.h), the
// formulation its schedule asks for (the composed stages of algorithm/attention.h, or the online
// softmax of algorithm/online_attention.h), the buffer contract and the autoschedulers'
// estimates. The attention generator and the tuner's JIT kernels both build their pipelines
// here, so that the kernel a tuning measured is the kernel the build compiles, and this is the
// one place that chooses between the two formulations.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "Halide.h"
#include "algorithm/attention.h"
#include "algorithm/online_attention.h"
#include "attngen/user_modifiers.h"
#include "attngen/variant.h"
#include "schedule.h"

namespace attngen::pipeline {

// The extents that Halide's autoschedulers plan for (the variant's own where it is specialized).
struct Estimates {
    int batch = 1, heads = 8, kv_heads = 8, queries = 1024, keys = 1024, d_k = 64, d_v = 64;
    static Estimates of(const Variant &variant);
};

// The run-time values of a variant's modifiers (attngen/variant.h), each defined where the variant
// has the modifier and undefined otherwise. The names are the kernel's argument names, by which
// the runtime passes them. Queries and keys are those of the attention inside the kernel: q and
// k of the attention generator, x and memory of the multi-head layer.
struct ModifierInputs {
    Halide::Expr window_left, window_right;      // int32 "window_left", "window_right".
    Halide::ImageParam prefix_lengths;           // int32 [B] "prefix_lengths".
    Halide::ImageParam q_segments, kv_segments;  // int32 [B, Nq], [B, Nk] (Halide order).
    Halide::Expr softcap;                        // float32 "softcap".
    Halide::ImageParam alibi_slopes;             // float32 [H] "alibi_slopes".
    Halide::ImageParam bias;                     // float32 [B, H, Nq, Nk]; dims of 1 broadcast.
    // A user's modifiers (attngen/user_modifiers.h; null for none) and the extra inputs they
    // read, by name.
    ScoreModifierFunction user_score = nullptr;
    MaskModifierFunction user_mask = nullptr;
    std::vector<std::pair<std::string, Halide::ImageParam>> user_inputs;

    // The buffer inputs among them that are defined.
    std::vector<Halide::ImageParam> buffers() const;
    // The allowed keys of a mask spec, from these values and the key lengths.
    algorithm::KeyMask key_mask(const MaskSpec &spec, const Halide::Func &key_lengths,
                                const Halide::Expr &nq, const Halide::Expr &nk) const;
    // The score modifier of a score spec, from these values.
    algorithm::ScoreModifier score_modifier(const ScoreSpec &spec, const Halide::Expr &nq,
                                            const Halide::Expr &nk) const;
    // The estimates of the defined buffers.
    void set_estimates(const Estimates &estimates) const;
};

struct AttentionInputs {
    // [B, H, Nq, d_k], [B, H_kv, Nk, d_k], [B, H_kv, Nk, d_v] (Halide order), of the variant's
    // storage type (algorithm/storage.h).
    Halide::ImageParam q, k, v;
    Halide::ImageParam key_lengths;  // int32 [B].
    Halide::Expr scale;
    ModifierInputs modifiers;
};

class AttentionPipeline {
  public:
    // Defines the pipeline and constrains the inputs: zero mins everywhere, and the extents the
    // variant is specialized to, so that a call with other extents is an error rather than a
    // wrong answer. autoscheduled: one of Halide's autoschedulers will schedule it (the composed
    // formulation; schedule() then does nothing).
    AttentionPipeline(const Variant &variant, const Halide::Target &target,
                      const AttentionInputs &inputs, bool autoscheduled);

    Halide::Func out() const;
    Halide::Func lse() const;
    Halide::Func probs() const;

    // The same contract for the outputs (probs only for a variant with probs), and the
    // estimates of every input and output.
    void constrain_outputs(Halide::OutputImageParam out, Halide::OutputImageParam lse,
                           std::optional<Halide::OutputImageParam> probs);
    void set_estimates(const Estimates &estimates);

    // Applies the variant's schedule; nothing for an autoscheduled pipeline.
    void schedule();

  private:
    Variant variant_;
    AttentionInputs inputs_;
    const schedules::Schedule *schedule_ = nullptr;
    schedules::Context ctx_;
    bool online_ = false;
    algorithm::AttentionFuncs composed_;
    algorithm::OnlineAttentionFuncs online_funcs_;
};

}  // namespace attngen::pipeline
