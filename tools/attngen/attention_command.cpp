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
    std::string q, k, v, out, key_lengths, lse, probs, schedule, dtype, kv_dtype;
    bool causal = false;
    std::optional<float> scale;
    ModifierOptions modifiers;
};

void run_attention(const AttentionOptions &o) {
    // The storage type of q and out: --dtype's, else q's file's (float32 or float16); that of k
    // and v: --kv-dtype's, else q's.
    std::optional<DType> given;
    if (!o.dtype.empty()) given = storage_by_name(o.dtype, "--dtype");
    npy::Array q = load_stored(o.q, 4, "Q [B, H, Nq, d_k]", given, "--dtype " + o.dtype);
    const DType storage = q.dtype;
    DType kv_storage = storage;
    std::string why = given ? "--dtype " + o.dtype : "the dtype of Q";
    if (!o.kv_dtype.empty()) {
        kv_storage = storage_by_name(o.kv_dtype, "--kv-dtype");
        why = "--kv-dtype " + o.kv_dtype;
    }
    npy::Array k = load_stored(o.k, 4, "K [B, H_kv, Nk, d_k]", kv_storage, why);
    npy::Array v = load_stored(o.v, 4, "V [B, H_kv, Nk, d_v]", kv_storage, why);
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
    // The output in Q's storage type; lse and probs are float32 whatever it is.
    npy::Array out = npy::Array::zeros(storage, out_shape);
    std::vector<float> lse, probs;

    AttentionArgs args;
    args.q = q.view();
    args.k = k.view();
    args.v = v.view();
    args.out = out.view();
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
    outputs.add(o.out, out);
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
    cmd->add_option("--q", o->q, "Queries [B, H, Nq, d_k] (float32, float16, or see --dtype)")
        ->required();
    cmd->add_option("--k", o->k, "Keys [B, H_kv, Nk, d_k], of Q's dtype or --kv-dtype")->required();
    cmd->add_option("--v", o->v, "Values [B, H_kv, Nk, d_v], of K's dtype")->required();
    cmd->add_option("--out", o->out, "Output file [B, H, Nq, d_v], of Q's dtype")->required();
    cmd->add_option("--dtype", o->dtype,
                    "Storage type of Q and the output, and of K and V unless --kv-dtype: f32, f16, "
                    "or bf16 (uint16 .npy files holding bfloat16 bit patterns); default: Q's "
                    "file's, float32 or float16");
    cmd->add_option("--kv-dtype", o->kv_dtype,
                    "Storage type of K and V when it differs from Q's (a 16-bit KV cache with "
                    "float32 queries): f32, f16 or bf16; default: Q's");
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
