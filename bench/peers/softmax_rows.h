// The softmax of the composed peers that have none of their own (OpenBLAS).
#pragma once

#include <cstdint>

namespace attngen::bench {

// Replaces each row of scores [rows, cols] (row stride cols) by its softmax, after masking the
// keys that a causal mask aligned bottom-right hides from the row (key j is hidden from query
// row i when j > i + key_offset). Numerically stable: the row maximum is subtracted before exp.
void masked_softmax_rows(float *scores, int64_t rows, int64_t cols, bool causal,
                         int64_t key_offset);

// Gemma 2's softcap of n scores in place: s = cap * tanh(s / cap).
void softcap_scores(float *scores, int64_t n, float cap);

// Replaces each row of scores [rows, cols] (row stride cols) by the softmax of the row plus the
// same row of mask [rows, cols] (peers/additive_mask.h: -inf hides a key). A row whose keys are
// all hidden becomes zeros, the attngen convention.
void additive_softmax_rows(float *scores, const float *mask, int64_t rows, int64_t cols);

}  // namespace attngen::bench
