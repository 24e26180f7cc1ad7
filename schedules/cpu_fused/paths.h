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

// Whether the block path computes whole blocks of queries, the last block's rows past Nq too
// (never stored; the attention pipeline reads the queries clamped to the last row for them), so
// that every stage of a block has a fixed extent: a block cut short checked every row of the
// register tiles, whose accumulators then went to the stack. Where the products are paired
// (bfloat16 on AVX512-BF16), and in float32 for masks that vary by query, whose blocks are not
// shifted inwards (block_path.cpp has the measurements). Not where anything is read by query
// beside the queries (a bias, a user's modifier, query segments), whose rows past Nq do not
// exist. The multi-head layer reads its projected queries clamped too (algorithm/mha.h).
bool computes_whole_query_blocks(const Context &ctx, const FusedParams &p, bool paired);
void schedule_decode(algorithm::AttentionFuncs &f, bool with_probs, const Context &ctx,
                     const FusedParams &p);
void schedule_online(algorithm::OnlineAttentionFuncs &f, bool with_probs, const Context &ctx,
                     const FusedParams &params);

// The P V register tile of value_rows queries by value_vectors vectors of value features of acc
// (the weighted values, features first, its queries along `rows`), vectorized across the
// features: one update of acc per reduction domain in `keys`, in order (an undefined one has
// none), the first tiled_domains in the register tile and the others (bands of a few keys) as
// plain vector loops. The caller places acc and bounds its query rows. Each update is
// specialized on each of the conditions in `specializations`, in order (those under which acc's
// value features take a simpler clamp: algorithm/online_attention.h, value_tile).
void schedule_feature_tile(Halide::Func acc, const Halide::Var &rows,
                           const std::vector<Halide::RDom> &keys, int tiled_domains,
                           const FusedParams &p, int vec,
                           const std::vector<Halide::Expr> &specializations);

// Where the scores are modified, a block stores them, so that the modifier runs once per score
// rather than once for the row's maximum and again for its weight. A modifier that costs a few
// operations per score (ALiBi, a bias) is applied in the register tiles of the dot products
// (score_tile_block wraps the modified scores); one that costs more (a softcap's tanh, a user's
// modifier) gets a vector loop of its own over the block's stored dot products
// (stage_modified_scores), since unrolled in the tiles its code was copied for every key of a
// tile, and the kernel with every modifier took 1.75x as long to compile (148 s instead of 85
// for one AVX-512 target). The bias costs less in the tiles: B1 H8 N2048 d64 took 1.28x the
// time of the call without it there, 1.54x with the loop of its own.
Halide::Func score_tile_block(const algorithm::ScoresFuncs &scores, const Variant &variant);
// The vector loop of its own, stored query-fastest at `at` for bq queries (whole_rows: always bq
// of them, as in the key-block path, where rows past Nq read the last).
void stage_modified_scores(const algorithm::ScoresFuncs &scores, const Variant &variant,
                           const Halide::LoopLevel &at, int bq, bool whole_rows);

// Where the block's scores add a bias, its rows for the block, stored query-fastest at `at` as
// the scores are: read in the score tiles instead, each vector of queries was a gather across
// bias rows (a bias on B1 H8 N2048 d64 took 1.74x the time of the call without one, 1.28x
// staged). The block path stages it; the key-block path, whose kernels carry a bias among every
// other modifier, reads it in place: there the staging's transposes in each of the walk's
// specializations made the kernel with every modifier take 103 s instead of 85 to compile for
// one AVX-512 target, for a kind of call (a dense bias with a window or documents) that is rare.
void stage_score_bias(const algorithm::ScoresFuncs &scores, const Halide::LoopLevel &at, int vec);

// The scores of a block of bq queries (dot_block, a wrapper of dot computed per block) in
// register tiles of bq x key_tile, query index fastest.
// With the paired form of the dot products (scores.q_pairs defined), each accumulator takes the
// products of a pair of features in one step, the pair vectorized inside the queries.
void schedule_score_tiles(const algorithm::ScoresFuncs &scores, Halide::Func dot_block,
                          const Halide::Expr &nk, int bq, const FusedParams &p);

// The parameters that the autotuner may vary for this context, with their values and limits.
SearchSpace search_space(const Context &ctx);

}  // namespace attngen::schedules::cpu_fused
