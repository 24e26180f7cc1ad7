// The problems that attention_bench times (issue 3): six attention shapes, one multi-head layer,
// the extra sequence lengths of the sweep plotted in RESULTS.md, shapes stored in 16 bits
// (issue 41: (b), (c), (f) in bfloat16, (b) in float16, the decode (e) with a 16-bit KV cache),
// and the shapes with score and mask modifiers (issue 40: a sliding window, packed documents,
// softcap with ALiBi, a bias tensor).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attngen/tensor.h"

namespace attngen::bench {

// The modifiers of a shape (docs/modifiers.md has their exact rules), as data: problem_data.h
// makes their tensors, and every implementation applies the same ones.
struct ShapeModifiers {
    // A sliding window of this many keys before the query's position; -1 for none. The bench
    // has no right side: its windowed shape is causal.
    int64_t window_left = -1;
    // The softcap C (Gemma 2's 50), or 0 for none.
    float softcap = 0;
    // ALiBi with the standard slopes 2^(-8 (h + 1) / H).
    bool alibi = false;
    // An additive float32 bias of these dims (each that of [B, H, Nq, Nk] or 1), random normal;
    // empty for none.
    std::vector<int64_t> bias_dims;
    // Packed documents: Nq / documents queries and Nk / documents keys each, in runs, as the
    // segment ids 0, 1, ... of q_segments [B, Nq] and kv_segments [B, Nk]; 0 for none.
    int64_t documents = 0;

    bool masks_keys() const { return window_left >= 0 || documents > 0; }
    bool modifies_scores() const { return softcap > 0 || alibi || !bias_dims.empty(); }
    bool any() const { return masks_keys() || modifies_scores(); }
    // "window_left1024", "documents8", "softcap50 alibi", "bias[1,8,2048,2048]", joined by
    // spaces; empty for none.
    std::string to_string() const;
};

struct BenchShape {
    std::string id;           // The second part of a benchmark name: "attention/<id>/...".
    std::string description;  // One line for RESULTS.md.
    int64_t batch = 1, heads = 1, kv_heads = 1;
    int64_t nq = 1, nk = 1;
    int64_t d = 64;  // d_k = d_v.
    bool causal = false;
    // The type of q, k, v and out in memory (kFloat32, kBFloat16 or kFloat16; every
    // implementation computes in float32 or in the type itself, as it chooses). kv_storage is that
    // of k and v: the same as storage, or a 16-bit type under a float32 storage (a decode step
    // against a 16-bit KV cache, with float32 q and out, as CPU inference engines keep their
    // caches).
    DType storage = DType::kFloat32;
    DType kv_storage = DType::kFloat32;
    ShapeModifiers modifiers;
    // 0 for attention alone. Otherwise the shape is a whole multi-head layer, x [B, Nq, d_model]
    // -> y [B, Nq, d_model], with heads * d = d_model and the four projections included.
    int64_t d_model = 0;
    // The sequence length this shape stands for in the sweep (self-attention, B1 H8 D64), or 0
    // when it is not a point of the sweep.
    int64_t sweep_n = 0;

    bool is_mha() const { return d_model > 0; }
    // A single query row against a KV cache: memory bound, reported as bandwidth.
    bool is_decode() const { return nq == 1; }

    // Floating-point operations of one call: 4 B H Nq Nk d for the two products (half of it
    // when causal, since a causal kernel may skip the masked half), plus 2 B N d_model (H d)
    // for each of the four projections of a layer. With a window or documents it is exactly
    // 4 d for each allowed (query, key) pair: the work a kernel that skips what the mask hides
    // must do, whatever the peers that compute every pair spend.
    double flops() const;
    // The (query, key) pairs of one (batch, head) pair that the causal mask, the window and the
    // documents allow.
    int64_t allowed_pairs() const;
    // Bytes of K and V that one call must read: 2 B H_kv Nk d times the bytes of kv_storage.
    double kv_bytes() const;
    // Whether any tensor is stored in 16 bits.
    bool sixteen_bit() const { return kv_storage != DType::kFloat32; }
    // "bf16", or "K/V bf16" for a 16-bit cache under float32 q and out; empty for float32.
    std::string storage_text() const;
    // "B1 H8 Nq512 Nk512 d64 causal", the storage_text() and the modifiers' to_string().
    std::string dims() const;
};

// Every shape, in the order of RESULTS.md.
const std::vector<BenchShape> &bench_shapes();

}  // namespace attngen::bench
