// Attention as plain loops over dense row-major arrays: the oracle that the tests, the demo and
// the tuner compare every kernel against (docs/design.md section 1). Instantiated for double (the
// reference) and float (a naive float32 implementation, whose own error against the double one
// sets the scale of the tolerance for a float32 kernel).
#pragma once

#include <cstdint>
#include <vector>

#include "attngen/variant.h"

namespace attngen::reference {

struct AttentionShape {
    int64_t batch = 1, heads = 1, kv_heads = 1;
    int64_t nq = 1, nk = 1;
    int64_t d_k = 1, d_v = 1;
};

// The values of the modifiers (attngen/modifiers.h), dense and row-major. The mask kinds read
// theirs where the MaskSpec has the kind; each score modifier applies where `score` has it.
struct ModifierValues {
    ScoreSpec score;
    double softcap = 0;
    std::vector<double> alibi_slopes;  // [H]
    // bias_shape[d] is 1 or the extent of [B, H, Nq, Nk] in dim d (broadcast).
    std::vector<double> bias;
    int64_t bias_shape[4] = {1, 1, 1, 1};
    int64_t window_left = -1, window_right = -1;   // -1: unbounded.
    std::vector<int64_t> prefix_lengths;           // [B]
    std::vector<int64_t> q_segments, kv_segments;  // [B, Nq] and [B, Nk]

    // The modified score of key j for query i of head h in batch element b.
    double modify(const AttentionShape &s, double score, int64_t b, int64_t h, int64_t i,
                  int64_t j) const;
};

// Whether query i of batch element b may see key j, literally as docs/design.md section 1 states
// each mask kind; key_lengths empty means every batch element has all nk keys. values holds the
// window, prefixes and segments of masks with those kinds.
bool allowed(const AttentionShape &s, const std::vector<int64_t> &key_lengths, const MaskSpec &mask,
             int64_t b, int64_t i, int64_t j, const ModifierValues *values = nullptr);

// q [B, H, Nq, d_k], k [B, H_kv, Nk, d_k], v [B, H_kv, Nk, d_v] -> out [B, H, Nq, d_v],
// lse [B, H, Nq] and probs [B, H, Nq, Nk]; lse and probs may be null. A row with no allowed key,
// or whose allowed scores are all -inf, gives out = 0, lse = -inf and probs = 0.
template <typename T>
void attention(const AttentionShape &s, const T *q, const T *k, const T *v,
               const std::vector<int64_t> &key_lengths, const MaskSpec &mask, T scale, T *out,
               T *lse, T *probs, const ModifierValues *values = nullptr);

// y [rows, d_out] = x [rows, d_in] w [d_in, d_out] + bias [d_out]; bias may be null.
template <typename T>
void projection(int64_t rows, int64_t d_in, int64_t d_out, const T *x, const T *w, const T *bias,
                T *y);

// Raw scores q k^T * scale without a mask: scores [B, H, Nq, Nk].
template <typename T>
void scores(const AttentionShape &s, const T *q, const T *k, T scale, T *out);

struct MhaShape {
    int64_t batch = 1, nq = 1, nk = 1;
    int64_t d_model = 1, d_mem = 1, d_out = 1;
    int64_t heads = 1, kv_heads = 1, d_k = 1, d_v = 1;
};

// x [B, Nq, d_model], memory [B, Nk, d_mem] -> y [B, Nq, d_out]; values: the modifiers of the
// attention inside the layer (its queries the rows of x, its keys those of memory).
template <typename T>
void mha(const MhaShape &s, const T *x, const T *memory, const T *w_q, const T *w_k, const T *w_v,
         const T *w_o, const T *b_q, const T *b_k, const T *b_v, const T *b_o,
         const std::vector<int64_t> &key_lengths, const MaskSpec &mask, T scale, T *y,
         const ModifierValues *values = nullptr);

}  // namespace attngen::reference
