// Which keys a query may attend to: the one place where a mask spec (attngen/variant.h) becomes
// Halide. Both formulations of attention, the composed stages and the online softmax, read the
// allowed keys from a KeyMask and nothing else.
//
// The allowed keys of query i in batch element b are the keys of a range [begin(i, b), end(i, b))
// for which a per-key predicate allowed(j, i, b) holds, where the mask kind needs one. With
// p(i) = i + Nk - Nq (bottom-right alignment, docs/design.md section 1): key padding ends every
// range at key_lengths(b); causal attention ends query i's range after key p(i), or at the
// prefix length P(b) when that is later (prefix-LM); a sliding window bounds it to
// [p(i) - L, p(i) + R]; packed documents (segments) are the one per-key predicate. Every
// reduction over keys runs over allowed keys only, which lets Halide trim the loops (causal
// attention and windows skip masked keys entirely) and guarantees that a masked key's data, even
// NaN, never reaches an output.
//
// Masks whose range varies by query are processed in aligned groups of kCausalGroup queries.
// Each reduction over keys is written as parts with the same result: a dense part over the keys
// that every query of the group may see, whose bounds are the same for all of the group's
// queries, and bands of at most kCausalGroup keys before and after it, masked per query. That
// holds because begin and end grow by at most one key from one query to the next. A
// schedule that vectorizes across queries then runs the dense part, nearly all of the work, with
// plain loop bounds and no per-lane masks, as long as its blocks of queries divide the group.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "Halide.h"
#include "attngen/variant.h"

namespace attngen::algorithm {

// Queries per group of a mask that varies by query. 32 is a multiple of the default query block on
// every target (two AVX-512 vectors; the tuner tries only blocks that divide it), and small next
// to typical key counts, so the bands cost a few percent.
constexpr int kCausalGroup = 32;

// The allowed keys. Contract of every mask definition: begin and end do not decrease with i and
// grow by at most one per query (the online formulation bounds a group's walk by its first
// query's begin and its last query's end), dense_begin <= dense_end, every key of
// [dense_begin, dense_end) lies in [begin, end) of every query of the group, and each bound is
// clamped into [0, Nk] in its definition, so that bounds inference can bound the keys read. Where
// a window is narrower than a group, the dense part is empty and the bands hold every key.
struct KeyMask {
    MaskSpec spec;
    // end(i, b): the allowed keys end before end(i, b).
    Halide::Func end;
    // begin(i, b): they start at begin(i, b); undefined where every range starts at key 0 (no
    // mask kind bounds keys from below yet), which keeps such kernels free of the test.
    Halide::Func begin;
    // [dense_begin, dense_end): the keys of every query of i's aligned group of kCausalGroup
    // queries. Equal to begin and end where the mask does not vary by query (dense_begin is then
    // undefined with begin).
    Halide::Func dense_begin, dense_end;
    // allowed(j, i, b): the per-key test within the range; undefined where the range says it all.
    // Never computed apart (funcs() leaves it out): it is inlined into each reduction's predicate.
    Halide::Func allowed;
    // [bound_begin(i, b), bound_end(i, b)): the keys that a user's mask modifier says query i can
    // see at most, each non-decreasing in i (attngen/user_modifiers.h, KeyRule); undefined where
    // it states none. allowed already refuses the keys outside; the online formulation uses the
    // bounds to skip blocks of keys.
    Halide::Func bound_begin, bound_end;

    // Whether the range varies by query, so that reductions get bands besides the dense part.
    bool has_band() const { return spec.varies_by_query(); }
    // begin(i, b), or 0 where undefined.
    Halide::Expr begin_at(const Halide::Expr &i, const Halide::Expr &b) const;
    // Whether key j is allowed for query i: in the range and, where defined, allowed.
    Halide::Expr allows(const Halide::Expr &j, const Halide::Expr &i, const Halide::Expr &b) const;
    // The defined Funcs, for schedules that compute them once (compute_root).
    std::vector<Halide::Func> funcs() const;
    void compute_root() const;
};

// The run-time values of a mask: each defined where the spec has its kind. The runtime passes
// neutral values for the kinds a call does not use (attngen/variant.h, MaskSpec::covers).
struct MaskInputs {
    Halide::Func key_lengths;                // key_lengths(b), every mask.
    Halide::Expr window_left, window_right;  // L and R, int32 >= 0 (window).
    Halide::Func prefix_lengths;             // prefix_lengths(b) (prefix).
    Halide::Func q_segments, kv_segments;    // q_segments(i, b), kv_segments(j, b) (segments).
    // A user-written mask modifier: allowed(j, i, b) for j in [0, nk) and i in [0, nq), and
    // optionally the bounds (i, b) -> {begin, end} of the keys of query i (KeyMask::bound_begin).
    std::function<Halide::Expr(Halide::Expr, Halide::Expr, Halide::Expr)> user_allowed;
    std::function<std::pair<Halide::Expr, Halide::Expr>(Halide::Expr, Halide::Expr)> user_bounds;
};

// The mask of a spec. Lengths are clamped to [0, nk] so that a bad length cannot make the
// kernel read out of bounds; the runtime rejects such lengths before a kernel runs.
KeyMask define_key_mask(const MaskSpec &spec, const MaskInputs &inputs, const Halide::Expr &nq,
                        const Halide::Expr &nk);

// The reduction domains of a reduction over the allowed keys: the dense part, and the bands after
// and before it (undefined where the mask has no such band).
struct KeyReduction {
    Halide::RDom dense, band, lower_band;
};

// Adds the update definitions that fold value(key) into f over the allowed keys of each query:
// f(args) = combine(f(args), value(key)), one update per part (dense, then band, then lower
// band). args must contain the Vars i and b of dims(). identity is combine's neutral element: a
// key in the range that the per-key test refuses contributes it instead of its value. With
// with_dense = false only the bands are added (dense is then undefined): for a caller that has
// reduced the dense part in a form of its own (the paired P V of weighted_sum.h).
KeyReduction reduce_over_keys(
    Halide::Func f, const std::vector<Halide::Expr> &args, const KeyMask &mask,
    const Halide::Expr &nk, const std::function<Halide::Expr(Halide::Expr)> &value,
    const std::function<Halide::Expr(Halide::Expr, Halide::Expr)> &combine,
    const Halide::Expr &identity, const std::string &name, bool with_dense = true);

// reduce_over_keys for a Func of several values: f(args) = combine(f(args), value(key)).
KeyReduction reduce_tuple_over_keys(
    Halide::Func f, const std::vector<Halide::Expr> &args, const KeyMask &mask,
    const Halide::Expr &nk, const std::function<Halide::Tuple(Halide::Expr)> &value,
    const std::function<Halide::Tuple(const Halide::Tuple &, const Halide::Tuple &)> &combine,
    const Halide::Tuple &identity, const std::string &name);

}  // namespace attngen::algorithm
