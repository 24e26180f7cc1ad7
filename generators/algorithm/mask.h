// Which keys a query may attend to.
//
// Both masks that attngen supports keep a prefix of the keys: key padding allows keys
// [0, key_lengths(b)), and causal attention, aligned bottom-right (DESIGN.md section 1), allows
// query i to see key j iff j <= i + (Nk - Nq). Their intersection is again a prefix, so a single
// number per (query, batch element) describes the mask: the end of the allowed prefix. Every
// reduction over keys runs over [0, key_end(i, b)), which lets Halide trim the loops (causal
// attention skips masked keys entirely) and guarantees that a masked key's data, even NaN, never
// reaches an output.
#pragma once

#include "Halide.h"

namespace attngen::algorithm {

// key_end(i, b): the allowed keys of query i in batch element b are [0, key_end(i, b)).
// key_lengths(b) is clamped to [0, nk] so that a bad length cannot make the kernel read out of
// bounds; the runtime rejects such lengths before a kernel runs.
Halide::Func define_key_end(const Halide::Func &key_lengths, const Halide::Expr &nq,
                            const Halide::Expr &nk, bool causal);

}  // namespace attngen::algorithm
