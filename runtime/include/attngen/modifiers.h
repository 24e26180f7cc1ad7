// Score and mask modifiers of an attention call (docs/design.md section 1 has the exact rules).
//
// With p(i) = i + Nk - Nq, the position of query i among the keys, each allowed key's score is
//   s = scale * dot(q_i, k_j); softcap C: s = C tanh(s / C); ALiBi: s += -m[h] |p(i) - j|;
//   bias: s += bias[b, h, i, j]
// and key j is allowed for query i of batch element b iff every rule that applies holds:
//   j < key_lengths[b]; causal: j <= p(i), or j < prefix_lengths[b] where given;
//   window: p(i) - L <= j <= p(i) + R; segments: q_segments[b, i] == kv_segments[b, j].
// A row with no allowed key, or whose allowed keys all got -inf, gives out = 0 and lse = -inf.
//
// Each modifier a call uses must be compiled into a kernel (kernels/variants.txt, or
// attngen_add_kernel's MASK and SCORE); a kernel compiled with more modifiers than a call uses
// serves it with neutral values for the others (an unbounded window, prefixes of 0, one
// segment, no softcap, zero slopes and bias), though a kernel with exactly the call's is faster.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "attngen/tensor.h"

namespace attngen {

struct Modifiers {
    // Softcapping (Gemma 2): a finite C > 0.
    std::optional<float> softcap;
    // ALiBi (MPT, BLOOM): float32 [H], one slope per query head.
    std::optional<TensorView> alibi_slopes;
    // An additive bias (T5's relative positions, a dense mask of 0 and -inf): float32, rank 4,
    // each dim equal to that of [B, H, Nq, Nk] or 1 (broadcast); -inf allowed. A bias that is
    // broadcast along Nk is expanded along it into scratch memory, as kernels read it by rows.
    std::optional<TensorView> bias;
    // A sliding window (Mistral, Gemma): keys at most L before and R after the query's position;
    // each side >= 0, and a side left out is unbounded. A window with neither side is none.
    std::optional<int64_t> window_left, window_right;
    // Prefix-LM (PaliGemma, T5): with causal attention only, every query of batch element b also
    // sees the keys before prefix_lengths[b]. int32 or int64 [B], each in [0, Nk].
    std::optional<TensorView> prefix_lengths;
    // Packed documents: a query sees only the keys of its own segment. int32 or int64 [B, Nq] and
    // [B, Nk], given together, each id within int32. Segments that do not decrease along the
    // sequence let the fused schedules skip the blocks of other documents.
    std::optional<TensorView> q_segments, kv_segments;
    // The extra inputs of a kernel with user-written modifiers (attngen_add_kernel's INPUTS
    // name:type:rank; docs/modifiers.md), by name, in host memory: float32 or int32 tensors of
    // the declared type and rank, indexed by the modifier in the order of their dims. Only a
    // call that names such a kernel (attngen::attention(args, kernel)) may pass them.
    std::map<std::string, TensorView> inputs;

    // Whether any modifier is set.
    bool any() const {
        return softcap || alibi_slopes || bias || window_left || window_right || prefix_lengths ||
               q_segments || kv_segments;
    }
};

}  // namespace attngen
