// attngen attention: scaled dot-product attention on .npy files.
#include <cstdio>
#include <memory>
#include <optional>

#include "attngen/attngen.h"
#include "cli_error.h"
#include "commands.h"
#include "io.h"
#include "modifier_options.h"

namespace attngen::cli {

namespace {

struct AttentionOptions {
    std::string q, k, v, out, key_lengths, lse, probs, schedule;
    bool causal = false;
    std::optional<float> scale;
    ModifierOptions modifiers;
};

void run_attention(const AttentionOptions &o) {
    npy::Array q = load_f32(o.q, 4, "Q [B, H, Nq, d_k]");
    npy::Array k = load_f32(o.k, 4, "K [B, H_kv, Nk, d_k]");
    npy::Array v = load_f32(o.v, 4, "V [B, H_kv, Nk, d_v]");
    std::optional<npy::Array> lengths;
    if (!o.key_lengths.empty()) lengths = load_lengths(o.key_lengths);
    LoadedModifiers modifiers(o.modifiers);

    const int64_t batch = q.shape[0], heads = q.shape[1], nq = q.shape[2];
    const int64_t nk = k.shape[2], d_v = v.shape[3];
    const std::vector<int64_t> out_shape{batch, heads, nq, d_v};
    const std::vector<int64_t> lse_shape{batch, heads, nq};
    const std::vector<int64_t> probs_shape{batch, heads, nq, nk};
    auto count = [](const std::vector<int64_t> &s) {
        int64_t n = 1;
        for (int64_t e : s) n *= e > 0 ? e : 0;
        return n;
    };
    std::vector<float> out(count(out_shape)), lse, probs;

    AttentionArgs args;
    args.q = q.view();
    args.k = k.view();
    args.v = v.view();
    args.out = TensorView::f32(out.data(), {batch, heads, nq, d_v});
    if (lengths) args.key_lengths = lengths->view();
    if (!o.lse.empty()) {
        lse.resize(count(lse_shape));
        args.lse = TensorView::f32(lse.data(), {batch, heads, nq});
    }
    if (!o.probs.empty()) {
        probs.resize(count(probs_shape));
        args.probs = TensorView::f32(probs.data(), {batch, heads, nq, nk});
    }
    args.causal = o.causal;
    args.modifiers = modifiers.modifiers();
    args.scale = o.scale;
    args.schedule = o.schedule;
    CallInfo info;
    check(attention(args, &info));

    Outputs outputs;
    outputs.add(o.out, out_shape, out);
    if (!o.lse.empty()) outputs.add(o.lse, lse_shape, lse);
    if (!o.probs.empty()) outputs.add(o.probs, probs_shape, probs);
    outputs.commit();
    std::printf("attention: wrote %s [%lld, %lld, %lld, %lld] with kernel %s\n", o.out.c_str(),
                static_cast<long long>(batch), static_cast<long long>(heads),
                static_cast<long long>(nq), static_cast<long long>(d_v), info.kernel.c_str());
}

}  // namespace

void add_attention_command(CLI::App &app) {
    auto o = std::make_shared<AttentionOptions>();
    auto *cmd = app.add_subcommand(
        "attention", "Scaled dot-product attention: O = softmax(Q K^T * scale + mask) V");
    cmd->add_option("--q", o->q, "Queries, float32 [B, H, Nq, d_k]")->required();
    cmd->add_option("--k", o->k, "Keys, float32 [B, H_kv, Nk, d_k]")->required();
    cmd->add_option("--v", o->v, "Values, float32 [B, H_kv, Nk, d_v]")->required();
    cmd->add_option("--out", o->out, "Output file, float32 [B, H, Nq, d_v]")->required();
    cmd->add_flag("--causal", o->causal, "Causal mask aligned bottom-right (j <= i + Nk - Nq)");
    cmd->add_option("--scale", o->scale, "Score scale (default 1/sqrt(d_k))");
    cmd->add_option("--key-lengths", o->key_lengths,
                    "Valid keys per batch element, int32/int64 [B]");
    cmd->add_option("--lse", o->lse, "Also write the log-sum-exp per row, float32 [B, H, Nq]");
    cmd->add_option("--probs", o->probs, "Also write the probabilities, float32 [B, H, Nq, Nk]");
    cmd->add_option("--schedule", o->schedule, "Schedule name (default: fastest compiled)");
    add_modifier_options(cmd, &o->modifiers);
    cmd->callback([o] { run_attention(*o); });
}

}  // namespace attngen::cli
