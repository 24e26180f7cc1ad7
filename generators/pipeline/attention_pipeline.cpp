#include "attention_pipeline.h"

#include <optional>

#include "algorithm/mask.h"
#include "user_modifiers_adapter.h"

namespace attngen::pipeline {

using Halide::Expr;

namespace {

// A variant's specialized extent, else the buffer's.
Expr param_or(int value, const Expr &runtime_value) {
    return value > 0 ? Expr(value) : runtime_value;
}

}  // namespace

std::vector<Halide::ImageParam> ModifierInputs::buffers() const {
    std::vector<Halide::ImageParam> list;
    for (const Halide::ImageParam &p :
         {prefix_lengths, q_segments, kv_segments, alibi_slopes, bias}) {
        if (p.defined()) list.push_back(p);
    }
    for (const auto &input : user_inputs) list.push_back(input.second);
    return list;
}

algorithm::KeyMask ModifierInputs::key_mask(const MaskSpec &spec, const Halide::Func &key_lengths,
                                            const Expr &nq, const Expr &nk) const {
    algorithm::MaskInputs inputs{key_lengths,    window_left, window_right,
                                 prefix_lengths, q_segments,  kv_segments};
    UserModifiers(*this, nq, nk).add_to(&inputs);
    return algorithm::define_key_mask(spec, inputs, nq, nk);
}

algorithm::ScoreModifier ModifierInputs::score_modifier(const ScoreSpec &spec, const Expr &nq,
                                                        const Expr &nk) const {
    algorithm::ScoreInputs inputs{softcap, alibi_slopes, bias};
    if (bias.defined()) {
        inputs.bias_rows = bias.dim(1).extent();
        inputs.bias_heads = bias.dim(2).extent();
        inputs.bias_batch = bias.dim(3).extent();
    }
    UserModifiers(*this, nq, nk).add_to(&inputs);
    return algorithm::define_score_modifier(spec, inputs, nq, nk);
}

void ModifierInputs::set_estimates(const Estimates &e) const {
    // ImageParam is a handle: the copies set the estimates of the inputs themselves.
    Halide::ImageParam prefix = prefix_lengths, qs = q_segments, ks = kv_segments,
                       slopes = alibi_slopes, b = bias;
    if (prefix.defined()) prefix.set_estimates({{0, e.batch}});
    if (qs.defined()) qs.set_estimates({{0, e.queries}, {0, e.batch}});
    if (ks.defined()) ks.set_estimates({{0, e.keys}, {0, e.batch}});
    if (slopes.defined()) slopes.set_estimates({{0, e.heads}});
    if (b.defined()) b.set_estimates({{0, e.keys}, {0, e.queries}, {0, e.heads}, {0, e.batch}});
}

Estimates Estimates::of(const Variant &v) {
    Estimates e;
    if (v.heads > 0) e.heads = e.kv_heads = v.heads;
    if (v.kv_heads > 0) e.kv_heads = v.kv_heads;
    if (v.max_queries > 0) e.queries = v.max_queries;
    if (v.keys_estimate > 0) e.keys = v.keys_estimate;
    if (v.d_k > 0) e.d_k = v.d_k;
    if (v.d_v > 0) e.d_v = v.d_v;
    return e;
}

AttentionPipeline::AttentionPipeline(const Variant &variant, const Halide::Target &target,
                                     const AttentionInputs &in, bool autoscheduled)
    : variant_(variant), inputs_(in) {
    std::vector<Halide::ImageParam> buffers = in.modifiers.buffers();
    for (const Halide::ImageParam &p : {in.q, in.k, in.v, in.key_lengths}) buffers.push_back(p);
    for (Halide::ImageParam p : buffers) {
        for (int d = 0; d < p.dimensions(); d++) p.dim(d).set_min(0);
    }
    if (variant.d_k > 0) {
        in.q.dim(0).set_extent(variant.d_k);
        in.k.dim(0).set_extent(variant.d_k);
    }
    if (variant.d_v > 0) in.v.dim(0).set_extent(variant.d_v);
    if (variant.heads > 0) in.q.dim(2).set_extent(variant.heads);
    if (variant.kv_heads > 0) {
        in.k.dim(2).set_extent(variant.kv_heads);
        in.v.dim(2).set_extent(variant.kv_heads);
    }

    algorithm::AttentionShape shape;
    shape.nq = in.q.dim(1).extent();
    shape.nk = in.k.dim(1).extent();
    shape.d_k = param_or(variant.d_k, in.q.dim(0).extent());
    shape.d_v = param_or(variant.d_v, in.v.dim(0).extent());
    shape.heads = param_or(variant.heads, in.q.dim(2).extent());
    shape.kv_heads = param_or(variant.kv_heads, in.k.dim(2).extent());
    shape.storage = variant.storage;
    if (!autoscheduled) {
        schedule_ = &schedules::schedule_or_error(variant.schedule);
        ctx_ = schedules::make_context(target, variant);
        online_ = schedule_->uses_online_softmax(ctx_);
    }
    const bool paired = !online_ && variant.storage == DType::kBFloat16 &&
                        variant.kv_storage == DType::kBFloat16 && schedule_ != nullptr &&
                        schedule_->pairs_bfloat16_products(ctx_);
    // Where the schedule computes whole blocks of queries past Nq (rows it never stores: the
    // paired bfloat16 kernels, and the float32 ones for masks that vary by query, of cpu_fused's
    // block path), the queries' rows are read clamped to the last one: a block cut short checked
    // every row of its register tiles, whose accumulators then spilled
    // (schedules/cpu_fused/block_path.cpp). The block's queries are staged (transposed, or
    // widened) per block, so the clamp is one scalar minimum per row.
    Halide::Func q_rows = in.q;
    if (schedule_ != nullptr && !online_ && schedule_->reads_queries_past_nq(ctx_)) {
        q_rows = Halide::Func("q_rows");
        const Halide::Var d("d"), i("i"), h("h"), b("b");
        q_rows(d, i, h, b) = in.q(d, Halide::min(i, shape.nq - 1), h, b);
    }
    // The stages compute in float32 from inputs widened where they are read (storage.h).
    const Halide::Func q = algorithm::widened(q_rows, variant.storage, "q_widened");
    const Halide::Func k = algorithm::widened(in.k, variant.kv_storage, "k_widened");
    const Halide::Func v = algorithm::widened(in.v, variant.kv_storage, "v_widened");
    const algorithm::KeyMask mask =
        in.modifiers.key_mask(variant.mask, in.key_lengths, shape.nq, shape.nk);
    const algorithm::ScoreModifier modifier =
        in.modifiers.score_modifier(variant.score, shape.nq, shape.nk);
    if (online_) {
        const schedules::Schedule::OnlineLayout layout = schedule_->online_layout(ctx_);
        online_funcs_ =
            algorithm::define_online_attention(q, k, v, mask, shape, in.scale, layout, modifier);
    } else {
        std::optional<algorithm::BFloat16Operands> bfloat16;
        if (paired) {
            bfloat16 = algorithm::BFloat16Operands{algorithm::bfloat16_of_widened(q, "q_bf16"),
                                                   algorithm::as_bfloat16(in.k, "k_bf16"),
                                                   algorithm::as_bfloat16(in.v, "v_bf16")};
        }
        composed_ = algorithm::define_attention(q, k, v, mask, shape, in.scale, modifier,
                                                bfloat16 ? &*bfloat16 : nullptr);
    }
}

Halide::Func AttentionPipeline::out() const {
    return online_ ? online_funcs_.out : composed_.out;
}

Halide::Func AttentionPipeline::lse() const {
    return online_ ? online_funcs_.lse : composed_.lse;
}

Halide::Func AttentionPipeline::probs() const {
    return online_ ? online_funcs_.probs : composed_.probs;
}

void AttentionPipeline::constrain_outputs(Halide::OutputImageParam out,
                                          Halide::OutputImageParam lse,
                                          std::optional<Halide::OutputImageParam> probs) {
    for (Halide::OutputImageParam p : {out, lse}) {
        for (int d = 0; d < p.dimensions(); d++) p.dim(d).set_min(0);
    }
    if (probs) {
        for (int d = 0; d < probs->dimensions(); d++) probs->dim(d).set_min(0);
    }
    if (variant_.d_v > 0) out.dim(0).set_extent(variant_.d_v);
    // lse's extents are out's [Nq, H, B]: stated, they let the schedule's fused loops over out
    // and lse share one bound, instead of a test of each that loop partitioning copied the
    // whole key walk for.
    for (int d = 0; d < lse.dimensions(); d++) lse.dim(d).set_extent(out.dim(d + 1).extent());
}

void AttentionPipeline::set_estimates(const Estimates &e) {
    inputs_.q.set_estimates({{0, e.d_k}, {0, e.queries}, {0, e.heads}, {0, e.batch}});
    inputs_.k.set_estimates({{0, e.d_k}, {0, e.keys}, {0, e.kv_heads}, {0, e.batch}});
    inputs_.v.set_estimates({{0, e.d_v}, {0, e.keys}, {0, e.kv_heads}, {0, e.batch}});
    inputs_.key_lengths.set_estimates({{0, e.batch}});
    inputs_.modifiers.set_estimates(e);
    out().set_estimates({{0, e.d_v}, {0, e.queries}, {0, e.heads}, {0, e.batch}});
    lse().set_estimates({{0, e.queries}, {0, e.heads}, {0, e.batch}});
    if (variant_.probs) {
        probs().set_estimates({{0, e.keys}, {0, e.queries}, {0, e.heads}, {0, e.batch}});
    }
}

void AttentionPipeline::schedule() {
    if (schedule_ == nullptr) return;
    if (online_) {
        schedule_->online_attention(online_funcs_, variant_.probs, ctx_);
    } else {
        schedule_->attention(composed_, variant_.probs, ctx_);
    }
}

}  // namespace attngen::pipeline
