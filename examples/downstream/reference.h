// Attention by its definition, in double precision: the oracle of the example.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

struct Shape {
    int64_t batch, heads, kv_heads, nq, nk, d_k, d_v;
};

// Which keys a query sees and what is added to their scores: allowed(b, i, j) (empty: every
// key) and bias(b, h, i, j) (empty: nothing).
struct Rules {
    std::function<bool(int64_t b, int64_t i, int64_t j)> allowed;
    std::function<double(int64_t b, int64_t h, int64_t i, int64_t j)> bias;
};

// q [B, H, Nq, d_k], k [B, H_kv, Nk, d_k], v [B, H_kv, Nk, d_v] (C order) -> out [B, H, Nq, d_v]
// and lse [B, H, Nq]. Query head h reads key/value head h / (H / H_kv). A row with no allowed
// key gives zeros and an lse of -infinity.
void reference_attention(const Shape &s, const std::vector<float> &q, const std::vector<float> &k,
                         const std::vector<float> &v, const Rules &rules, std::vector<double> *out,
                         std::vector<double> *lse);

// The rules of attngen's own masks: causal lets query i see key j iff j <= i + Nk - Nq;
// key_lengths (empty: none) masks keys at and after key_lengths[b].
Rules causal_rules(const Shape &s, bool causal, const std::vector<int32_t> &key_lengths);
