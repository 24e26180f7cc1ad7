// The paths of cpu_fused and the register tiles they share. schedule.cpp picks a path from the
// parameters (params.h): the block path (block_path.cpp), the decode path for a few queries
// against many keys (decode_path.cpp) and the key-block path, an online softmax over blocks of
// keys for long sequences (key_block_path.cpp).
#pragma once

#include "Halide.h"
#include "params.h"
#include "schedule.h"

namespace attngen::schedules::cpu_fused {

// Sequence lengths and head dims are arbitrary, so every split guards its tail unless a
// specialization has made it whole.
constexpr Halide::TailStrategy kGuard = Halide::TailStrategy::GuardWithIf;

void schedule_blocks(algorithm::AttentionFuncs &f, bool with_probs, const Context &ctx,
                     const FusedParams &p);
void schedule_decode(algorithm::AttentionFuncs &f, bool with_probs, const Context &ctx,
                     const FusedParams &p);
void schedule_online(algorithm::OnlineAttentionFuncs &f, bool with_probs, const Context &ctx,
                     const FusedParams &params);

// The P V register tile of value_rows queries by value_vectors vectors of value features of acc
// (the weighted values, features first, its queries along `rows`), vectorized across the
// features: one update of acc per reduction domain in `keys`, in order (an undefined one has
// none), the first in the register tile and the others (bands of a few keys) as plain vector
// loops. The caller places acc and bounds its query rows.
void schedule_feature_tile(Halide::Func acc, const Halide::Var &rows,
                           const std::vector<Halide::RDom> &keys, const FusedParams &p, int vec);

// The wrapper that holds a block's scores, for the caller to place: of the dot products, whose
// scale is cheap to apply again where they are read, or of the modified scores, so that a
// modifier (a softcap's tanh, a bias read across rows) runs once per score in the register tile
// rather than once for the row's maximum and again for its weight.
Halide::Func score_block(const algorithm::ScoresFuncs &scores);

// Where the block's scores add a bias (score_block of modified scores), its rows for the block,
// stored query-fastest at `at` as the scores are: read in the score tiles instead, each vector
// of queries was a gather across bias rows (and a bias on B1 H8 N2048 d64 cost 1.7x the time of
// the call without one).
void stage_score_bias(const algorithm::ScoresFuncs &scores, const Halide::LoopLevel &at, int vec);

// The scores of a block of bq queries (dot_block, score_block's wrapper computed per block) in
// register tiles of bq x key_tile, query index fastest.
void schedule_score_tiles(Halide::Func dot, Halide::Func dot_block, const Halide::RDom &d,
                          const Halide::Expr &nk, int bq, const FusedParams &p);

// The parameters that the autotuner may vary for this context, with their values and limits.
SearchSpace search_space(const Context &ctx);

}  // namespace attngen::schedules::cpu_fused
