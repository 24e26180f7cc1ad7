// Which keys a query may attend to.
//
// Both masks that attngen supports keep a prefix of the keys: key padding allows keys
// [0, key_lengths(b)), and causal attention, aligned bottom-right (DESIGN.md section 1), allows
// query i to see key j iff j <= i + (Nk - Nq). Their intersection is again a prefix, so a single
// number per (query, batch element) describes the mask: the end of the allowed prefix. Every
// reduction over keys runs over allowed keys only, which lets Halide trim the loops (causal
// attention skips masked keys entirely) and guarantees that a masked key's data, even NaN, never
// reaches an output.
//
// Causal masks are processed in aligned groups of kCausalGroup queries. Each reduction over keys
// is written as two parts with the same result: a dense part over the keys that every query of
// the group may see, whose bound is the same for all of the group's queries, and a band of at
// most kCausalGroup keys after it, masked per query. A schedule that vectorizes across queries
// then runs the dense part, nearly all of the work, with plain loop bounds and no per-lane
// masks, as long as its blocks of queries divide the group.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "Halide.h"

namespace attngen::algorithm {

// Queries per causal group. 32 is a multiple of the default query block on every target (two
// AVX-512 vectors; the tuner tries only causal blocks that divide it), and small next to typical
// key counts, so the band costs a few percent.
constexpr int kCausalGroup = 32;

struct KeyMask {
    // end(i, b): the allowed keys of query i in batch element b are [0, end(i, b)).
    Halide::Func end;
    // dense_end(i, b) <= end(i, b): keys [0, dense_end(i, b)) are allowed for every query of the
    // aligned group of kCausalGroup queries that contains i. Equal to end without causality.
    Halide::Func dense_end;
    bool causal = false;
};

// key_lengths(b) is clamped to [0, nk] so that a bad length cannot make the kernel read out of
// bounds; the runtime rejects such lengths before a kernel runs.
KeyMask define_key_mask(const Halide::Func &key_lengths, const Halide::Expr &nq,
                        const Halide::Expr &nk, bool causal);

// Adds the update definitions that fold value(key) into f over the allowed keys of each query:
// f(args) = combine(f(args), value(key)). args must contain the Vars i and b of dims().
// Returns the two reduction domains (dense, band); band is undefined without causality.
std::pair<Halide::RDom, Halide::RDom> reduce_over_keys(
    Halide::Func f, const std::vector<Halide::Expr> &args, const KeyMask &mask,
    const Halide::Expr &nk, const std::function<Halide::Expr(Halide::Expr)> &value,
    const std::function<Halide::Expr(Halide::Expr, Halide::Expr)> &combine,
    const std::string &name);

// reduce_over_keys for a Func of several values: f(args) = combine(f(args), value(key)).
std::pair<Halide::RDom, Halide::RDom> reduce_tuple_over_keys(
    Halide::Func f, const std::vector<Halide::Expr> &args, const KeyMask &mask,
    const Halide::Expr &nk, const std::function<Halide::Tuple(Halide::Expr)> &value,
    const std::function<Halide::Tuple(const Halide::Tuple &, const Halide::Tuple &)> &combine,
    const std::string &name);

}  // namespace attngen::algorithm
