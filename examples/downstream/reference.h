// Attention by its definition, in double precision: the oracle of the example.
#pragma once

#include <cstdint>
#include <vector>

struct Shape {
    int64_t batch, heads, kv_heads, nq, nk, d_k, d_v;
};

// q [B, H, Nq, d_k], k [B, H_kv, Nk, d_k], v [B, H_kv, Nk, d_v] (C order) -> out [B, H, Nq, d_v]
// and lse [B, H, Nq]. Query head h reads key/value head h / (H / H_kv); a causal mask lets query
// i see key j iff j <= i + Nk - Nq; key_lengths (empty: none) masks keys at and after
// key_lengths[b]. A row with no allowed key gives zeros and an lse of -infinity.
void reference_attention(const Shape &s, const std::vector<float> &q, const std::vector<float> &k,
                         const std::vector<float> &v, bool causal,
                         const std::vector<int32_t> &key_lengths, std::vector<double> *out,
                         std::vector<double> *lse);
