// The multi-head attention layer: x [B, Nq, d_model], memory [B, Nk, d_mem],
// w_q [d_model, H*d_k], w_k [d_mem, H_kv*d_k], w_v [d_mem, H_kv*d_v], w_o [H*d_v, d_out] and their
// biases, key_lengths [B] -> y [B, Nq, d_out]. Self-attention passes x as memory.
//
// The head counts cannot be read from the buffers (only H*d_k can), so they are scalar inputs;
// the head dims follow from them. Each modifier of the variant adds the inputs that the attention
// generator's has (modifier_inputs.h), with x's rows as the queries, memory's as the keys and
// num_heads as H.
#include <optional>

#include "Halide.h"
#include "algorithm/mask.h"
#include "algorithm/mha.h"
#include "algorithm/storage.h"
#include "modifier_inputs.h"
#include "support.h"

namespace attngen::generators {
namespace {

using namespace Halide;

class MhaGenerator : public VariantGenerator<MhaGenerator> {
  public:
    // x, memory, the weights and y are of the variant's storage type (algorithm/storage.h), so
    // they are declared in configure(); the biases stay float32 (the runtime converts them once,
    // when it creates the layer).
    GeneratorInput<Buffer<>> *x = nullptr, *memory = nullptr;
    GeneratorInput<Buffer<>> *w_q = nullptr, *w_k = nullptr, *w_v = nullptr, *w_o = nullptr;
    Input<Buffer<float, 1>> b_q{"b_q"};
    Input<Buffer<float, 1>> b_k{"b_k"};
    Input<Buffer<float, 1>> b_v{"b_v"};
    Input<Buffer<float, 1>> b_o{"b_o"};
    Input<Buffer<int32_t, 1>> key_lengths{"key_lengths"};
    Input<int32_t> num_heads{"num_heads"};
    Input<int32_t> num_kv_heads{"num_kv_heads"};
    Input<float> scale{"scale"};

    GeneratorOutput<Buffer<>> *y = nullptr;

    void configure() {
        read_variant({Op::kMha});
        const Type stored = algorithm::storage_type(variant_.storage);
        x = add_input<Buffer<>>("x", stored, 3);
        memory = add_input<Buffer<>>("memory", stored, 3);
        w_q = add_input<Buffer<>>("w_q", stored, 2);
        w_k = add_input<Buffer<>>("w_k", stored, 2);
        w_v = add_input<Buffer<>>("w_v", stored, 2);
        w_o = add_input<Buffer<>>("w_o", stored, 2);
        y = add_output<Buffer<>>("y", stored, 3);
        modifiers_.declare(this, variant_);
    }

    void generate() {
        algorithm::MhaShape shape;
        algorithm::AttentionShape &a = shape.attention;
        a.heads = param_or(variant_.heads, num_heads);
        a.kv_heads = param_or(variant_.kv_heads, num_kv_heads);
        a.d_k = param_or(variant_.d_k, w_q->dim(0).extent() / a.heads);
        a.d_v = param_or(variant_.d_v, w_v->dim(0).extent() / a.kv_heads);
        a.nq = x->dim(1).extent();
        a.nk = memory->dim(1).extent();
        shape.storage = variant_.storage;
        shape.d_model = x->dim(0).extent();
        shape.d_mem = memory->dim(0).extent();
        // Every stage computes in float32 from inputs widened where they are read.
        const DType st = variant_.storage;
        auto widened = [&](GeneratorInput<Buffer<>> *in, const char *name) {
            return algorithm::widened(*in, st, name);
        };
        algorithm::MhaWeights weights{widened(w_q, "w_q_widened"),
                                      widened(w_k, "w_k_widened"),
                                      widened(w_v, "w_v_widened"),
                                      widened(w_o, "w_o_widened"),
                                      b_q,
                                      b_k,
                                      b_v,
                                      b_o};
        const pipeline::ModifierInputs modifiers = modifiers_.values();
        const algorithm::KeyMask mask = modifiers.key_mask(variant_.mask, key_lengths, a.nq, a.nk);
        // A schedule that runs attention as the online softmax (cpu_fused with key blocks) runs
        // the layer's attention the same way.
        std::optional<algorithm::OnlineBlocking> online;
        if (schedule_ != nullptr && schedule_->uses_online_softmax(ctx_)) {
            online = schedule_->online_layout(ctx_);
        }
        const bool clamp_query_rows =
            schedule_ != nullptr && !online && schedule_->reads_queries_past_nq(ctx_);
        funcs_ = algorithm::define_mha(widened(x, "x_widened"), widened(memory, "memory_widened"),
                                       weights, mask, shape, scale,
                                       modifiers.score_modifier(variant_.score, a.nq, a.nk),
                                       online ? &*online : nullptr, clamp_query_rows);
        *y = funcs_.y;
        constrain_buffers(modifiers);

        x->set_estimates({{0, 512}, {0, 1024}, {0, 1}});
        memory->set_estimates({{0, 512}, {0, 1024}, {0, 1}});
        for (auto *w : {w_q, w_k, w_v, w_o}) w->set_estimates({{0, 512}, {0, 512}});
        for (auto *bias : {&b_q, &b_k, &b_v, &b_o}) bias->set_estimates({{0, 512}});
        key_lengths.set_estimates({{0, 1}});
        num_heads.set_estimate(8);
        num_kv_heads.set_estimate(8);
        scale.set_estimate(0.125f);
        modifiers.set_estimates(pipeline::Estimates::of(variant_));
        y->set_estimates({{0, 512}, {0, 1024}, {0, 1}});
    }

    void schedule() {
        if (schedule_ != nullptr) schedule_->mha(funcs_, ctx_);
    }

  private:
    void constrain_buffers(const pipeline::ModifierInputs &modifiers) {
        for (Halide::ImageParam p : modifiers.buffers()) require_zero_mins(p);
        require_zero_mins(*x);
        require_zero_mins(*memory);
        for (auto *w : {w_q, w_k, w_v, w_o}) require_zero_mins(*w);
        for (auto *bias : {&b_q, &b_k, &b_v, &b_o}) require_zero_mins(*bias);
        require_zero_mins(key_lengths);
        require_zero_mins(*y);
        const int h = variant_.heads, h_kv = variant_.kv_heads, dk = variant_.d_k,
                  dv = variant_.d_v;
        if (h > 0 && dk > 0) w_q->dim(0).set_extent(h * dk);
        if (h_kv > 0 && dk > 0) w_k->dim(0).set_extent(h_kv * dk);
        if (h_kv > 0 && dv > 0) w_v->dim(0).set_extent(h_kv * dv);
        if (h > 0 && dv > 0) w_o->dim(1).set_extent(h * dv);
    }

    ModifierGeneratorInputs modifiers_;
    algorithm::MhaFuncs funcs_;
};

}  // namespace
}  // namespace attngen::generators

HALIDE_REGISTER_GENERATOR(attngen::generators::MhaGenerator, mha)
