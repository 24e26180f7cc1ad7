// attngen mha: a multi-head attention layer on .npy files.
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

struct MhaOptions {
    std::string x, memory, wq, wk, wv, wo, bq, bk, bv, bo, key_lengths, out, schedule, dtype;
    int64_t heads = 0, kv_heads = 0;
    bool causal = false;
    std::optional<float> scale;
    ModifierOptions modifiers;
};

void run_mha(const MhaOptions &o) {
    // The layer's storage type (of X, M, the weights and the output): --dtype's, else X's file's
    // (float32 or float16). The biases are float32 or of that type.
    std::optional<DType> given;
    if (!o.dtype.empty()) given = storage_by_name(o.dtype, "--dtype");
    npy::Array x = load_stored(o.x, 3, "X [B, Nq, d_model]", given, "--dtype " + o.dtype);
    const DType storage = x.dtype;
    const std::string why = given ? "--dtype " + o.dtype : "the dtype of X";
    auto load = [&](const std::string &path, int rank, const char *role) {
        return load_stored(path, rank, role, storage, why);
    };
    auto load_bias = [&](const std::string &path, const char *role) {
        // A float32 bias is taken as it is; another must have the layer's type.
        npy::Array a;
        std::string error;
        if (npy::read(path, &a, &error) && a.dtype == DType::kFloat32) {
            return load_f32(path, 1, role);
        }
        return load_stored(path, 1, role, storage, why + ", or float32");
    };
    std::optional<npy::Array> memory;
    if (!o.memory.empty()) memory = load(o.memory, 3, "M [B, Nk, d_mem]");
    npy::Array wq = load(o.wq, 2, "W_Q [d_model, H*d_k]");
    npy::Array wk = load(o.wk, 2, "W_K [d_mem, H_kv*d_k]");
    npy::Array wv = load(o.wv, 2, "W_V [d_mem, H_kv*d_v]");
    npy::Array wo = load(o.wo, 2, "W_O [H*d_v, d_out]");
    std::optional<npy::Array> bq, bk, bv, bo;
    if (!o.bq.empty()) bq = load_bias(o.bq, "b_Q [H*d_k]");
    if (!o.bk.empty()) bk = load_bias(o.bk, "b_K [H_kv*d_k]");
    if (!o.bv.empty()) bv = load_bias(o.bv, "b_V [H_kv*d_v]");
    if (!o.bo.empty()) bo = load_bias(o.bo, "b_O [d_out]");
    std::optional<npy::Array> lengths;
    if (!o.key_lengths.empty()) lengths = load_lengths(o.key_lengths);
    LoadedModifiers modifiers(o.modifiers);

    MhaWeights weights;
    weights.w_q = wq.view();
    weights.w_k = wk.view();
    weights.w_v = wv.view();
    weights.w_o = wo.view();
    if (bq) weights.b_q = bq->view();
    if (bk) weights.b_k = bk->view();
    if (bv) weights.b_v = bv->view();
    if (bo) weights.b_o = bo->view();
    MhaConfig config;
    config.heads = o.heads;
    config.kv_heads = o.kv_heads;
    config.causal = o.causal;
    config.scale = o.scale;
    config.schedule = o.schedule;
    MultiHeadAttention layer;
    check(MultiHeadAttention::create(weights, config, &layer));

    const int64_t batch = x.shape[0], nq = x.shape[1], d_out = layer.d_out();
    npy::Array y = npy::Array::zeros(storage, {batch, nq, d_out});
    MhaForwardOptions options;
    if (memory) options.memory = memory->view();
    if (lengths) options.key_lengths = lengths->view();
    options.modifiers = modifiers.modifiers();
    check(layer.forward(x.view(), y.view(), options));

    Outputs outputs;
    outputs.add(o.out, y);
    outputs.commit();
    std::printf("mha: wrote %s [%lld, %lld, %lld]\n", o.out.c_str(), static_cast<long long>(batch),
                static_cast<long long>(nq), static_cast<long long>(d_out));
}

}  // namespace

void add_mha_command(CLI::App &app) {
    auto o = std::make_shared<MhaOptions>();
    auto *cmd = app.add_subcommand(
        "mha", "Multi-head attention layer: Y = concat_h(attention(X W_Q, M W_K, M W_V)) W_O");
    cmd->add_option("--x", o->x,
                    "Queries' input [B, Nq, d_model] (float32, float16, or see --dtype)")
        ->required();
    cmd->add_option("--memory", o->memory,
                    "Keys' and values' input [B, Nk, d_mem], of X's dtype (default: X)");
    cmd->add_option("--wq", o->wq, "W_Q [d_model, H*d_k], of X's dtype")->required();
    cmd->add_option("--wk", o->wk, "W_K [d_mem, H_kv*d_k], of X's dtype")->required();
    cmd->add_option("--wv", o->wv, "W_V [d_mem, H_kv*d_v], of X's dtype")->required();
    cmd->add_option("--wo", o->wo, "W_O [H*d_v, d_out], of X's dtype")->required();
    cmd->add_option("--bq", o->bq, "b_Q [H*d_k], float32 or X's dtype");
    cmd->add_option("--bk", o->bk, "b_K [H_kv*d_k], float32 or X's dtype");
    cmd->add_option("--bv", o->bv, "b_V [H_kv*d_v], float32 or X's dtype");
    cmd->add_option("--bo", o->bo, "b_O [d_out], float32 or X's dtype");
    cmd->add_option("--dtype", o->dtype,
                    "Storage type of X, M, the weights and the output: f32, f16, or bf16 (files "
                    "of uint16 bit patterns; default: X's file's type)");
    cmd->add_option("--heads", o->heads, "Query heads H")->required()->check(CLI::PositiveNumber);
    cmd->add_option("--kv-heads", o->kv_heads, "Key/value heads H_KV (default: H)")
        ->check(CLI::PositiveNumber);
    cmd->add_flag("--causal", o->causal, "Causal mask aligned bottom-right");
    cmd->add_option("--scale", o->scale, "Score scale (default 1/sqrt(d_k))");
    cmd->add_option("--key-lengths", o->key_lengths,
                    "Valid keys per batch element, int32/int64 [B]");
    cmd->add_option("--out", o->out, "Output file [B, Nq, d_out], of X's dtype")->required();
    cmd->add_option("--schedule", o->schedule, "Schedule name (default: fastest compiled)");
    // Of the attention inside the layer: X's rows are its queries, M's its keys.
    add_modifier_options(cmd, &o->modifiers);
    cmd->callback([o] { run_mha(*o); });
}

}  // namespace attngen::cli
