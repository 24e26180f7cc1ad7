// The problems that attention_bench times (issue 3): six attention shapes, one multi-head layer
// and the extra sequence lengths of the sweep plotted in RESULTS.md. All float32.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attngen::bench {

struct BenchShape {
    std::string id;           // The second part of a benchmark name: "attention/<id>/...".
    std::string description;  // One line for RESULTS.md.
    int64_t batch = 1, heads = 1, kv_heads = 1;
    int64_t nq = 1, nk = 1;
    int64_t d = 64;  // d_k = d_v.
    bool causal = false;
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
    // for each of the four projections of a layer.
    double flops() const;
    // Bytes of K and V that one call must read: 2 B H_kv Nk d * 4.
    double kv_bytes() const;
    // "B1 H8 Nq512 Nk512 d64 causal".
    std::string dims() const;
};

// Every shape, in the order of RESULTS.md.
const std::vector<BenchShape> &bench_shapes();

}  // namespace attngen::bench
