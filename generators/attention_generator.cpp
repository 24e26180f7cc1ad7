// The composed attention kernel: q [B, H, Nq, d_k], k [B, H_kv, Nk, d_k], v [B, H_kv, Nk, d_v],
// key_lengths [B] -> out [B, H, Nq, d_v], lse [B, H, Nq] and, for a variant with probs,
// probs [B, H, Nq, Nk]. The variant (generator parameter "variant", a spec) says everything
// else: mask, score modifiers, specialized extents, schedule and tuning;
// pipeline/attention_pipeline.h builds it. Each modifier of the variant adds its inputs
// (pipeline::ModifierInputs names them), which the runtime passes by name; so does each extra
// input of a user's modifiers (generator parameter "inputs", user_modifier_registry.h).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "Halide.h"
#include "pipeline/attention_pipeline.h"
#include "support.h"
#include "user_modifier_registry.h"

namespace attngen::generators {
namespace {

using namespace Halide;

class AttentionGenerator : public Generator<AttentionGenerator> {
  public:
    GeneratorParam<std::string> variant_spec{"variant",
                                             "op:attention,mask:none,schedule:reference"};
    // The extra inputs of a user's modifiers, name:type:rank joined by '+'; empty for none.
    GeneratorParam<std::string> inputs_spec{"inputs", ""};

    Input<Buffer<float, 4>> q{"q"};
    Input<Buffer<float, 4>> k{"k"};
    Input<Buffer<float, 4>> v{"v"};
    Input<Buffer<int32_t, 1>> key_lengths{"key_lengths"};
    Input<float> scale{"scale"};

    Output<Buffer<float, 4>> out{"out"};
    Output<Buffer<float, 3>> lse{"lse"};
    Output<Buffer<float, 4>> *probs = nullptr;

    void configure() {
        variant_ = parse_variant(variant_spec, {Op::kAttention});
        if (variant_.probs) probs = add_output<Buffer<float, 4>>("probs");
        add_modifier_inputs();
    }

    void generate() {
        pipeline_.emplace(variant_, get_target(),
                          pipeline::AttentionInputs{q, k, v, key_lengths, scale, modifiers()},
                          auto_schedule);
        out = pipeline_->out();
        lse = pipeline_->lse();
        std::optional<OutputImageParam> probs_param;
        if (probs != nullptr) {
            *probs = pipeline_->probs();
            probs_param = *probs;
        }
        pipeline_->constrain_outputs(out, lse, probs_param);
        pipeline_->set_estimates(pipeline::Estimates::of(variant_));
        scale.set_estimate(0.125f);
    }

    // Without a schedule of ours (an autoscheduler's turn), nothing.
    void schedule() { pipeline_->schedule(); }

  private:
    void add_modifier_inputs() {
        if (variant_.mask.window) {
            window_left_ = add_input<int32_t>("window_left");
            window_right_ = add_input<int32_t>("window_right");
        }
        if (variant_.mask.prefix) prefix_lengths_ = add_input<Buffer<int32_t, 1>>("prefix_lengths");
        if (variant_.mask.segments) {
            q_segments_ = add_input<Buffer<int32_t, 2>>("q_segments");
            kv_segments_ = add_input<Buffer<int32_t, 2>>("kv_segments");
        }
        if (variant_.score.softcap) softcap_ = add_input<float>("softcap");
        if (variant_.score.alibi) alibi_slopes_ = add_input<Buffer<float, 1>>("alibi_slopes");
        if (variant_.score.bias) bias_ = add_input<Buffer<float, 4>>("bias");
        for (const ExtraInput &extra : parse_extra_inputs(inputs_spec)) {
            if (!variant_.user_modified()) {
                schedules::schedule_error("inputs are for user modifiers, and variant '" +
                                          variant_.to_string() + "' has none");
            }
            check_extra_input_name(extra.name);
            user_inputs_.emplace_back(extra.name,
                                      add_input<Buffer<>>(extra.name, extra.type, extra.rank));
        }
    }

    // An extra input must not take the name of another argument of the kernel.
    void check_extra_input_name(const std::string &name) const {
        for (const char *taken : {"q", "k", "v", "key_lengths", "scale", "out", "lse", "probs",
                                  "window_left", "window_right", "prefix_lengths", "q_segments",
                                  "kv_segments", "softcap", "alibi_slopes", "bias"}) {
            if (name == taken) {
                schedules::schedule_error("input '" + name +
                                          "' takes the name of one of the "
                                          "kernel's own arguments");
            }
        }
    }

    pipeline::ModifierInputs modifiers() const {
        pipeline::ModifierInputs m;
        if (window_left_ != nullptr) {
            window_left_->set_estimate(1024);
            window_right_->set_estimate(0);
            m.window_left = *window_left_;
            m.window_right = *window_right_;
        }
        if (prefix_lengths_ != nullptr) m.prefix_lengths = *prefix_lengths_;
        if (q_segments_ != nullptr) {
            m.q_segments = *q_segments_;
            m.kv_segments = *kv_segments_;
        }
        if (softcap_ != nullptr) {
            softcap_->set_estimate(30.0f);
            m.softcap = *softcap_;
        }
        if (alibi_slopes_ != nullptr) m.alibi_slopes = *alibi_slopes_;
        if (bias_ != nullptr) m.bias = *bias_;
        if (!variant_.score_mod.empty())
            m.user_score = registered_score_modifier(variant_.score_mod);
        if (!variant_.mask_mod.empty()) m.user_mask = registered_mask_modifier(variant_.mask_mod);
        for (const auto &[name, input] : user_inputs_) m.user_inputs.emplace_back(name, *input);
        return m;
    }

    Variant variant_;
    Input<int32_t> *window_left_ = nullptr, *window_right_ = nullptr;
    Input<Buffer<int32_t, 1>> *prefix_lengths_ = nullptr;
    Input<Buffer<int32_t, 2>> *q_segments_ = nullptr, *kv_segments_ = nullptr;
    Input<float> *softcap_ = nullptr;
    Input<Buffer<float, 1>> *alibi_slopes_ = nullptr;
    Input<Buffer<float, 4>> *bias_ = nullptr;
    std::vector<std::pair<std::string, Input<Buffer<>> *>> user_inputs_;
    // Made in generate(), where the inputs and the target are known.
    std::optional<pipeline::AttentionPipeline> pipeline_;
};

}  // namespace
}  // namespace attngen::generators

HALIDE_REGISTER_GENERATOR(attngen::generators::AttentionGenerator, attention)
