// The composed attention kernel: q [B, H, Nq, d_k], k [B, H_kv, Nk, d_k], v [B, H_kv, Nk, d_v],
// key_lengths [B] -> out [B, H, Nq, d_v], lse [B, H, Nq] and, for a variant with probs,
// probs [B, H, Nq, Nk]. The variant (generator parameter "variant", a spec) says everything
// else: mask, score modifiers, specialized extents, schedule and tuning;
// pipeline/attention_pipeline.h builds it. Each modifier of the variant adds its inputs
// (modifier_inputs.h declares them), which the runtime passes by name; so does each extra input
// of a user's modifiers (generator parameter "inputs", user_modifier_registry.h).
#include <optional>
#include <string>

#include "Halide.h"
#include "algorithm/storage.h"
#include "modifier_inputs.h"
#include "pipeline/attention_pipeline.h"
#include "support.h"

namespace attngen::generators {
namespace {

using namespace Halide;

class AttentionGenerator : public Generator<AttentionGenerator> {
  public:
    GeneratorParam<std::string> variant_spec{"variant",
                                             "op:attention,mask:none,schedule:reference"};
    // The extra inputs of a user's modifiers, name:type:rank joined by '+'; empty for none.
    GeneratorParam<std::string> inputs_spec{"inputs", ""};

    // The inputs and outputs are declared in configure(), where the variant gives q and out its
    // storage type and k and v its kv_storage (algorithm/storage.h), in the order of the
    // kernel's arguments.
    GeneratorInput<Buffer<>> *q = nullptr, *k = nullptr, *v = nullptr;
    GeneratorInput<Buffer<int32_t, 1>> *key_lengths = nullptr;
    GeneratorInput<float> *scale = nullptr;

    GeneratorOutput<Buffer<>> *out = nullptr;
    GeneratorOutput<Buffer<float, 3>> *lse = nullptr;
    GeneratorOutput<Buffer<float, 4>> *probs = nullptr;

    void configure() {
        variant_ = parse_variant(variant_spec, {Op::kAttention});
        const Type stored = algorithm::storage_type(variant_.storage);
        const Type kv_stored = algorithm::storage_type(variant_.kv_storage);
        q = add_input<Buffer<>>("q", stored, 4);
        k = add_input<Buffer<>>("k", kv_stored, 4);
        v = add_input<Buffer<>>("v", kv_stored, 4);
        key_lengths = add_input<Buffer<int32_t, 1>>("key_lengths");
        scale = add_input<float>("scale");
        out = add_output<Buffer<>>("out", stored, 4);
        lse = add_output<Buffer<float, 3>>("lse");
        if (variant_.probs) probs = add_output<Buffer<float, 4>>("probs");
        modifiers_.declare(this, variant_, inputs_spec);
    }

    void generate() {
        pipeline_.emplace(
            variant_, get_target(),
            pipeline::AttentionInputs{*q, *k, *v, *key_lengths, *scale, modifiers_.values()},
            auto_schedule);
        *out = pipeline_->out();
        *lse = pipeline_->lse();
        std::optional<OutputImageParam> probs_param;
        if (probs != nullptr) {
            *probs = pipeline_->probs();
            probs_param = *probs;
        }
        pipeline_->constrain_outputs(*out, *lse, probs_param);
        pipeline_->set_estimates(pipeline::Estimates::of(variant_));
        scale->set_estimate(0.125f);
    }

    // Without a schedule of ours (an autoscheduler's turn), nothing.
    void schedule() { pipeline_->schedule(); }

  private:
    Variant variant_;
    ModifierGeneratorInputs modifiers_;
    // Made in generate(), where the inputs and the target are known.
    std::optional<pipeline::AttentionPipeline> pipeline_;
};

}  // namespace
}  // namespace attngen::generators

HALIDE_REGISTER_GENERATOR(attngen::generators::AttentionGenerator, attention)
