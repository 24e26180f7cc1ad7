// The generator inputs of a variant's score and mask modifiers (docs/modifiers.md), declared in
// one place for every generator that compiles them (attention and mha): the runtime passes them
// by name (runtime/src/modifiers.cpp), so both kinds of kernel must take them under the same
// names, types and ranks. A user's modifiers (attention only) add the extra inputs that the
// generator parameter "inputs" declares (user_modifier_registry.h).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "Halide.h"
#include "attngen/variant.h"
#include "pipeline/attention_pipeline.h"
#include "user_modifier_registry.h"

namespace attngen::generators {

class ModifierGeneratorInputs {
  public:
    // Adds an input for each modifier of the variant to the generator; call it from configure(),
    // where Halide accepts new inputs.
    void declare(Halide::Internal::GeneratorBase *generator, const Variant &variant,
                 const std::string &extra_inputs = "") {
        using Halide::Buffer;
        variant_ = variant;
        if (variant.mask.window) {
            window_left_ = generator->add_input<int32_t>("window_left");
            window_right_ = generator->add_input<int32_t>("window_right");
        }
        if (variant.mask.prefix) {
            prefix_lengths_ = generator->add_input<Buffer<int32_t, 1>>("prefix_lengths");
        }
        if (variant.mask.segments) {
            q_segments_ = generator->add_input<Buffer<int32_t, 2>>("q_segments");
            kv_segments_ = generator->add_input<Buffer<int32_t, 2>>("kv_segments");
        }
        if (variant.score.softcap) softcap_ = generator->add_input<float>("softcap");
        if (variant.score.alibi) {
            alibi_slopes_ = generator->add_input<Buffer<float, 1>>("alibi_slopes");
        }
        if (variant.score.bias) bias_ = generator->add_input<Buffer<float, 4>>("bias");
        for (const ExtraInput &extra : parse_extra_inputs(extra_inputs)) {
            if (!variant.user_modified()) {
                schedules::schedule_error("inputs are for user modifiers, and variant '" +
                                          variant.to_string() + "' has none");
            }
            check_extra_input_name(extra.name);
            user_inputs_.emplace_back(
                extra.name, generator->add_input<Buffer<>>(extra.name, extra.type, extra.rank));
        }
    }

    // The declared inputs as the pipeline takes them, with the estimates of the scalars (the
    // buffers' come with the extents, pipeline::ModifierInputs::set_estimates); call it from
    // generate().
    pipeline::ModifierInputs values() const {
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
        if (!variant_.score_mod.empty()) {
            m.user_score = registered_score_modifier(variant_.score_mod);
        }
        if (!variant_.mask_mod.empty()) m.user_mask = registered_mask_modifier(variant_.mask_mod);
        for (const auto &[name, input] : user_inputs_) m.user_inputs.emplace_back(name, *input);
        return m;
    }

  private:
    // An extra input must not take the name of another argument of the kernel.
    static void check_extra_input_name(const std::string &name) {
        for (const char *taken : {"q", "k", "v", "key_lengths", "scale", "out", "lse", "probs",
                                  "window_left", "window_right", "prefix_lengths", "q_segments",
                                  "kv_segments", "softcap", "alibi_slopes", "bias"}) {
            if (name == taken) {
                schedules::schedule_error("input '" + name +
                                          "' takes the name of one of the kernel's own arguments");
            }
        }
    }

    Variant variant_;
    // Owned by the generator (add_input); null where the variant has no such modifier.
    Halide::GeneratorInput<int32_t> *window_left_ = nullptr, *window_right_ = nullptr;
    Halide::GeneratorInput<Halide::Buffer<int32_t, 1>> *prefix_lengths_ = nullptr;
    Halide::GeneratorInput<Halide::Buffer<int32_t, 2>> *q_segments_ = nullptr,
                                                       *kv_segments_ = nullptr;
    Halide::GeneratorInput<float> *softcap_ = nullptr;
    Halide::GeneratorInput<Halide::Buffer<float, 1>> *alibi_slopes_ = nullptr;
    Halide::GeneratorInput<Halide::Buffer<float, 4>> *bias_ = nullptr;
    std::vector<std::pair<std::string, Halide::GeneratorInput<Halide::Buffer<>> *>> user_inputs_;
};

}  // namespace attngen::generators
