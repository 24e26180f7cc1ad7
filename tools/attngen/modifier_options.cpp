#include "modifier_options.h"

#include "io.h"

namespace attngen::cli {

void add_modifier_options(CLI::App *cmd, ModifierOptions *o) {
    cmd->add_option("--softcap", o->softcap, "Cap scores at +-C: s = C tanh(s / C), C > 0");
    cmd->add_option("--alibi", o->alibi, "ALiBi slopes, float32 [H]: s -= m[h] |p(i) - j|");
    cmd->add_option("--bias", o->bias,
                    "Additive score bias, float32 4-D broadcastable to [B, H, Nq, Nk]");
    cmd->add_option("--window-left", o->window_left,
                    "Sliding window: keys at most L before the query's position (L >= 0)");
    cmd->add_option("--window-right", o->window_right,
                    "Sliding window: keys at most R after the query's position (R >= 0)");
    cmd->add_option("--prefix-lengths", o->prefix_lengths,
                    "Prefix-LM with --causal: keys before P[b] seen by all, int32/int64 [B]");
    cmd->add_option("--q-segments", o->q_segments,
                    "Document ids of the queries, int32/int64 [B, Nq] (with --kv-segments)");
    cmd->add_option("--kv-segments", o->kv_segments,
                    "Document ids of the keys, int32/int64 [B, Nk] (with --q-segments)");
}

LoadedModifiers::LoadedModifiers(const ModifierOptions &o) : options_(o) {
    if (!o.alibi.empty()) alibi_ = load_f32(o.alibi, 1, "ALiBi slopes [H]");
    if (!o.bias.empty()) bias_ = load_f32(o.bias, 4, "bias [B, H, Nq, Nk]");
    if (!o.prefix_lengths.empty()) {
        prefix_lengths_ = load_integers(o.prefix_lengths, 1, "prefix lengths", "[B]");
    }
    if (!o.q_segments.empty()) {
        q_segments_ = load_integers(o.q_segments, 2, "query segments", "[B, Nq]");
    }
    if (!o.kv_segments.empty()) {
        kv_segments_ = load_integers(o.kv_segments, 2, "key segments", "[B, Nk]");
    }
}

Modifiers LoadedModifiers::modifiers() {
    Modifiers m;
    m.softcap = options_.softcap;
    m.window_left = options_.window_left;
    m.window_right = options_.window_right;
    if (alibi_) m.alibi_slopes = alibi_->view();
    if (bias_) m.bias = bias_->view();
    if (prefix_lengths_) m.prefix_lengths = prefix_lengths_->view();
    if (q_segments_) m.q_segments = q_segments_->view();
    if (kv_segments_) m.kv_segments = kv_segments_->view();
    return m;
}

}  // namespace attngen::cli
