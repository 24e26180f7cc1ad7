// The inputs of each benchmark shape: fixed-seed uniform values (a bias: normal), made once per
// process and shared by every implementation, so that all of them compute the same output.
#pragma once

#include <cstdint>
#include <vector>

#include "aligned_floats.h"
#include "shapes.h"

namespace attngen::bench {

struct ProblemData {
    // Attention shapes: q [B, H, Nq, d], k and v [B, H_kv, Nk, d], C order. A tensor stored in
    // 16 bits (shapes.h) holds its values rounded to that type, and its bits in q16, k16, v16:
    // every implementation and the reference see the same values.
    Floats q, k, v;
    std::vector<uint16_t> q16, k16, v16;
    // Multi-head layer shapes: x [B, N, d_model], w_q, w_k, w_v [d_model, H d],
    // w_o [H d, d_model]; the layer has no biases.
    Floats x, w_q, w_k, w_v, w_o;
    // The modifiers' tensors (shapes.h's ShapeModifiers), empty where the shape has none:
    // ALiBi slopes [H], the bias (its bias_dims, standard normal), and segment ids
    // q_segments [B, Nq] and kv_segments [B, Nk].
    Floats alibi_slopes, bias;
    std::vector<int32_t> q_segments, kv_segments;
};

// Every element of `bits`, of a 16-bit storage type, as float32, into `values` (resized).
void widen_all(const std::vector<uint16_t> &bits, DType storage, Floats &values);

// The inputs of `shape`, made on first use and kept for the life of the process.
const ProblemData &problem_data(const BenchShape &shape);

// Elements of the output of `shape`: [B, H, Nq, d], or [B, N, d_model] for a layer.
std::size_t output_size(const BenchShape &shape);

}  // namespace attngen::bench
