// Attention with an online softmax over blocks of keys (the FlashAttention recurrence): the same
// result as define_attention (attention.h), computed so that no row of scores is ever needed
// whole. Fused GPU kernels need this: a block of queries keeps a running maximum, sum and output
// while it walks the keys block by block, each block's scores living only in fast memory.
//
// For query i and key block t (keys [tT, tT + T) of the allowed prefix):
//   bm_t = ceil(max_j s_j),  bl_t = sum_j e^(s_j - bm_t),  bacc_t = sum_j e^(s_j - bm_t) v_j
// relative to the block's own maximum rounded up to a whole number (in base 2, as the code
// computes: the factors of the merge are then exact powers of two), then merged in key order:
//   m' = max(m, bm_t),  l' = l e^(m - m') + bl_t e^(bm_t - m'),
//   acc' = acc e^(m - m') + bacc_t e^(bm_t - m')
// and out = acc / l, lse = m + log l (see online_attention.cpp for the grouping of queries
// that lets causal attention skip whole blocks). Blocks past the end of a query's allowed keys are
// not visited; a row with no allowed key gives out = 0 and lse = -inf as in attention.h.
#pragma once

#include <cstdint>
#include <vector>

#include "Halide.h"
#include "attention.h"
#include "mask.h"
#include "scores.h"

namespace attngen::algorithm {

// The flags of OnlineAttentionFuncs::block_live.
constexpr uint8_t kLive = 1, kWhole = 2;

struct OnlineAttentionFuncs {
    Halide::Func q, k, v;                 // The inputs; k and v indexed by key/value head.
    Halide::Func k_for_head, v_for_head;  // k and v indexed by query head.
    KeyMask mask;                         // The allowed keys (mask.h).
    ScoresFuncs scores;
    int key_block = 0;  // T, keys per block.
    // Of query g * G + ii over the keys of block t in group g's range (block_range):
    // block_max(t, ii, g, h, b) = bm_t: the maximum (its first update), then rounded up (its
    // second, which a schedule computes with the first).
    Halide::Func block_max;
    Halide::Func block_weights;  // block_weights(j, ii, g, h, b) = e^(s_j - bm_{j / T}).
    Halide::Func block_sum;      // block_sum(t, ii, g, h, b) = bl_t.
    // block_range(t, g, b) = Tuple(first, count): the keys [first, first + count) of block t
    // between group_begin and group_end, the only ones with scores.
    Halide::Func block_range;
    // block_acc(e, t, ii, g, h, b) = bacc_t of query g * G + ii: over the keys of block t that
    // every query of group g sees (block_keys_acc, bounds that depend on the group alone), then
    // the query's own keys after and before them (block_acc_band and block_acc_lower_band, at
    // most G each, undefined where the mask does not vary by query or has no begin).
    // Where block_live is defined, the range is block_keys_acc's in the blocks whose keys the
    // per-key test allows whole and block_keys_acc_tested's (tested per key) in the others.
    Halide::Func block_acc;
    Halide::RDom block_acc_band, block_acc_lower_band, block_keys_acc_tested;
    // block_common(t, g, b) = Tuple(first, count[, tested count]): block_keys_acc's keys (and
    // block_keys_acc_tested's), t T + first onwards.
    Halide::Func block_common;
    int query_group = 0;  // G, queries that walk the key blocks together.
    int key_splits = 1;   // S, runs of key blocks merged separately, then together.
    int value_tile = 0;   // Value features a schedule computes at once (0: any number).
    // With value_tile: the conditions on d_v under which the value features take a simpler clamp
    // (whole tiles, then whole vectors where the vector is not the tile), for a schedule to
    // specialize the weighted values on, in order.
    std::vector<Halide::Expr> feature_cases;
    // group_begin(g, b), group_end(g, b): the allowed keys of group g lie between its first
    // query's begin and its last query's end (mask.h: neither decreases with the query).
    Halide::Func group_begin, group_end;
    // For a mask with a per-key test (segments, a user's mask) when the schedule asked to skip
    // empty blocks (undefined otherwise): block_live(t, g, b), flags (uint8): kLive where key
    // block t is in group g's range and holds an allowed key of one of its queries, which the walk
    // tests before it computes a block, and kWhole where the per-key test allows all its keys
    // below nk for every query of the group; from key_live(lane, t, g, b), the same for the keys
    // of the block at one lane of a fold of 16.
    Halide::Func key_live, block_live;
    Halide::RDom key_live_fold;  // key_live's update: folds of a block's keys x group's queries.
    // running_grouped(e, ii, g, h, b) = Tuple(m, l, acc) of query g * G + ii, merged over the
    // blocks t; running(e, i, h, b) is the same indexed by query.
    Halide::Func running_grouped, running;
    // With S > 1: split_state(e, ii, c, g, h, b), the merge of split c's blocks, and
    // running_grouped merges the splits over the RDom splits.
    Halide::Func split_state;
    Halide::RDom splits;
    Halide::RDom block_keys_max, block_keys_sum, block_keys_acc;  // Keys of a block.
    Halide::RDom blocks;       // The merge over t (over one split's blocks when S > 1).
    ScoresFuncs probs_scores;  // The scores again, for probs only.
    Halide::Func out;          // out(e, i, h, b).
    Halide::Func lse;          // lse(i, h, b).
    Halide::Func probs;        // probs(j, i, h, b) = e^(s_j - lse), 0 where masked.
    AttentionShape shape;
};

// How the online formulation is blocked: a schedule's choices, fixed when the kernel is
// generated (Schedule::online_layout).
struct OnlineBlocking {
    int key_block = 64;    // Keys per block.
    int query_group = 32;  // Queries per group (a divisor or multiple of the schedule's tiles).
    // S > 1 splits each group's walk over the keys into S runs that a schedule can compute in
    // parallel (decode steps).
    int key_splits = 1;
    // Test each block for an allowed key first, where the mask has a per-key test
    // (OnlineAttentionFuncs::block_live, which the schedule must then compute).
    bool skip_empty_blocks = false;
    // value_tile > 0: the schedule computes the value features in whole tiles of value_tile, past
    // d_v where d_v is not a multiple of it (those features read others and are never output), in
    // vectors of value_vector.
    int value_tile = 0;
    int value_vector = 0;
};

OnlineAttentionFuncs define_online_attention(const Halide::Func &q, const Halide::Func &k,
                                             const Halide::Func &v, const KeyMask &mask,
                                             const AttentionShape &shape, const Halide::Expr &scale,
                                             const OnlineBlocking &blocking,
                                             const ScoreModifier &modifier = {});

}  // namespace attngen::algorithm
