#include "attention_formulation.h"

namespace attngen::schedules {

AttentionFormulation::AttentionFormulation(const Schedule *schedule, const Context &ctx,
                                           const Halide::Func &q, const Halide::Func &k,
                                           const Halide::Func &v, const Halide::Func &key_lengths,
                                           const algorithm::AttentionShape &shape,
                                           const Halide::Expr &scale, bool causal)
    : schedule_(schedule),
      ctx_(ctx),
      online_(schedule != nullptr && schedule->uses_online_softmax(ctx)) {
    if (online_) {
        const Schedule::OnlineLayout layout = schedule->online_layout(ctx);
        online_funcs_ = algorithm::define_online_attention(q, k, v, key_lengths, shape, scale,
                                                           causal, layout.key_block,
                                                           layout.query_group, layout.key_splits);
    } else {
        composed_ = algorithm::define_attention(q, k, v, key_lengths, shape, scale, causal);
    }
}

Halide::Func AttentionFormulation::out() const {
    return online_ ? online_funcs_.out : composed_.out;
}

Halide::Func AttentionFormulation::lse() const {
    return online_ ? online_funcs_.lse : composed_.lse;
}

Halide::Func AttentionFormulation::probs() const {
    return online_ ? online_funcs_.probs : composed_.probs;
}

void AttentionFormulation::schedule(bool with_probs) {
    if (schedule_ == nullptr) return;
    if (online_) {
        schedule_->online_attention(online_funcs_, with_probs, ctx_);
    } else {
        schedule_->attention(composed_, with_probs, ctx_);
    }
}

}  // namespace attngen::schedules
