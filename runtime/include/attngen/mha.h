// A multi-head attention layer that owns its weights (docs/design.md section 1):
//
//   Q = x W_Q + b_Q, K = memory W_K + b_K, V = memory W_V + b_V,
//   O_h = attention(Q_h, K_{h / (H / H_kv)}, V_{h / (H / H_kv)}), y = [O_0 .. O_{H-1}] W_O + b_O
//
// Weights use the X·W convention (input dim first): W_Q [d_model, H*d_k], W_K [d_mem, H_kv*d_k],
// W_V [d_mem, H_kv*d_v], W_O [H*d_v, d_out]. Head h uses columns h*d_k .. (h+1)*d_k of x W_Q.
// forward(x) is self-attention (memory = x); forward(x, memory) is cross-attention. Score and
// mask modifiers (attngen/modifiers.h) apply to the attention inside the layer, with the rows of
// x as its queries (Nq), those of memory as its keys (Nk) and H the layer's query heads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attngen/kernel.h"
#include "attngen/modifiers.h"
#include "attngen/status.h"
#include "attngen/tensor.h"

namespace attngen {

// The weights' type is the layer's storage type: float32, bfloat16 or float16 (docs/api.md,
// "Storage types"), one for all four; x, memory and y then have it too. The layer computes in
// float32 from them and rounds y once.
struct MhaWeights {
    TensorView w_q, w_k, w_v, w_o;  // Copied by create().
    // float32 or the weights' type; absent biases are zero.
    std::optional<TensorView> b_q, b_k, b_v, b_o;
};

struct MhaConfig {
    int64_t heads = 1;
    int64_t kv_heads = 0;  // 0 means heads (no grouping).
    bool causal = false;
    std::optional<float> scale;  // Defaults to 1 / sqrt(d_k).
    std::string schedule;        // A schedule name; empty picks the fastest one compiled.
    // A kernel compiled elsewhere (attngen_add_kernel in another project) to run instead of
    // this library's dispatch; schedule is then ignored. It must outlive the layer.
    const Kernel *kernel = nullptr;
};

// What a forward() call takes besides x and y.
struct MhaForwardOptions {
    // [B, Nk, d_mem] for cross-attention; absent: self-attention (memory = x, d_mem = d_model).
    std::optional<TensorView> memory;
    // int32 or int64 [B]: the keys of memory that each batch element has.
    std::optional<TensorView> key_lengths;
    // Validated as attngen::attention validates them: a bias broadcastable to [B, H, Nq, Nk],
    // slopes [H], segments [B, Nq] and [B, Nk], prefix lengths only for a causal layer.
    Modifiers modifiers;
};

class MultiHeadAttention {
  public:
    // Validates the weights against the config and copies them. d_k, d_v, d_model, d_mem and
    // d_out follow from the weight shapes.
    static Status create(const MhaWeights &weights, const MhaConfig &config,
                         MultiHeadAttention *layer);

    // Self-attention: x [B, Nq, d_model] -> y [B, Nq, d_out]. Requires d_mem = d_model.
    Status forward(const TensorView &x, const TensorView &y,
                   const std::optional<TensorView> &key_lengths = std::nullopt) const;
    // Cross-attention: x [B, Nq, d_model], memory [B, Nk, d_mem] -> y [B, Nq, d_out].
    Status forward(const TensorView &x, const TensorView &memory, const TensorView &y,
                   const std::optional<TensorView> &key_lengths = std::nullopt) const;
    // Either of them, with modifiers: x [B, Nq, d_model] -> y [B, Nq, d_out].
    Status forward(const TensorView &x, const TensorView &y,
                   const MhaForwardOptions &options) const;

    int64_t heads() const { return heads_; }
    int64_t kv_heads() const { return kv_heads_; }
    int64_t d_model() const { return d_model_; }
    int64_t d_mem() const { return d_mem_; }
    int64_t d_k() const { return d_k_; }
    int64_t d_v() const { return d_v_; }
    int64_t d_out() const { return d_out_; }
    // The type of the weights, x, memory and y.
    DType storage() const { return storage_; }

  private:
    DType storage_ = DType::kFloat32;
    int64_t heads_ = 0, kv_heads_ = 0;
    int64_t d_model_ = 0, d_mem_ = 0, d_k_ = 0, d_v_ = 0, d_out_ = 0;
    bool causal_ = false;
    float scale_ = 1.0f;
    std::string schedule_;
    const Kernel *kernel_ = nullptr;
    // Contiguous copies in the shapes documented above: the weights' elements as they were
    // given (of storage_), the biases as float32.
    std::vector<unsigned char> w_q_, w_k_, w_v_, w_o_;
    std::vector<float> b_q_, b_k_, b_v_, b_o_;
};

}  // namespace attngen
