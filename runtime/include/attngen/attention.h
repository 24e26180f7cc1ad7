// Scaled dot-product attention on tensors (docs/design.md section 1).
//
//   q [B, H, Nq, d_k], k [B, H_kv, Nk, d_k], v [B, H_kv, Nk, d_v] -> out [B, H, Nq, d_v]
//
// Query head h reads key/value head h / (H / H_kv): H_kv = H is multi-head attention, H_kv < H
// grouped-query attention. Scores are q k^T * scale (default 1 / sqrt(d_k)); causal attention is
// aligned bottom-right (query i sees key j iff j <= i + Nk - Nq), so a decode step against a KV
// cache is the same call with Nq < Nk. key_lengths[b] masks the keys at and after that position
// in batch element b; modifiers.h adds windows, prefixes, segments, softcap, ALiBi and biases. A
// query row with no allowed key gets out = 0, lse = -inf and probs = 0.
#pragma once

#include <optional>
#include <string>

#include "attngen/kernel.h"
#include "attngen/modifiers.h"
#include "attngen/status.h"
#include "attngen/tensor.h"

namespace attngen {

// Which kernels run a call. Tensors in CUDA device memory (TensorView::device) always need a
// CUDA kernel; host tensors go to a CUDA kernel (copied in and out) when the placement asks.
enum class Placement {
    kCpu,        // CPU kernels; every tensor in host memory.
    kCuda,       // CUDA kernels; kUnavailable when no CUDA device is usable.
    kCudaOrCpu,  // CUDA kernels when a device is usable, else CPU kernels (host tensors only).
};

struct AttentionArgs {
    // Inputs and output [B, H, Nq, d_v]: float32, or 16-bit (docs/api.md, "Storage types").
    TensorView q, k, v;
    TensorView out;

    std::optional<TensorView> key_lengths;  // int32 or int64 [B] in host memory, each in [0, Nk].
    std::optional<TensorView> lse;          // float32 output [B, H, Nq], log-sum-exp per row.
    std::optional<TensorView> probs;        // float32 output [B, H, Nq, Nk], the softmax weights.

    bool causal = false;
    // Sliding windows, softcap, ALiBi, bias tensors, prefixes and segments (modifiers.h).
    Modifiers modifiers;
    std::optional<float> scale;  // Defaults to 1 / sqrt(d_k).
    std::string schedule;        // A schedule name; empty picks the fastest one compiled.
    Placement placement = Placement::kCpu;
};

// What a call did, for logs and benchmarks.
struct CallInfo {
    std::string kernel;  // Name of the compiled kernel that ran.
};

// Validates every shape, stride, dtype and value, then runs the best matching compiled kernel.
// Nothing is written when validation fails. Safe to call from many threads at once.
Status attention(const AttentionArgs &args, CallInfo *info = nullptr);

// The same with a kernel compiled elsewhere (attngen_add_kernel in another project) instead of
// this library's dispatch. A kernel that does not fit the call (another mask or head dim, no
// probabilities output when probs is requested, ...) is an kInvalidArgument status; the
// schedule field of args is ignored.
Status attention(const AttentionArgs &args, const Kernel &kernel, CallInfo *info = nullptr);

}  // namespace attngen
