#include <cstdio>
#include <cstdlib>

#include "algorithm/dims.h"
#include "paths.h"

namespace attngen::schedules::cpu_fused {

using Halide::Func;
using Halide::Stage;
using Halide::TailStrategy;
using Halide::Var;

// The probabilities of the key-block path: recomputed scores, one row of keys per vector loop.
namespace {

void schedule_online_probs(algorithm::OnlineAttentionFuncs &f, const Context &ctx) {
    const auto &v = algorithm::dims();
    const int vec = ctx.vector_width();
    Func probs = f.probs;
    probs.compute_root().parallel(v.b).parallel(v.h).vectorize(v.j, vec, kGuard);
    Func(f.probs_scores.dot).compute_at(probs, v.i).vectorize(v.j, vec, kGuard);
    Func(f.probs_scores.dot).update().reorder(v.j, f.probs_scores.d).vectorize(v.j, vec, kGuard);
}

// Which blocks each group walks, where the mask has a per-key test: computed once per call for
// every group and batch element before the walk (not per head), in parallel over the groups.
// Each block in a group's range is tested across the fold's lanes, a vector of keys at a time.
void schedule_live_blocks(algorithm::OnlineAttentionFuncs &f) {
    if (!f.block_live.defined()) return;
    const std::vector<Var> live = f.block_live.args();  // t, g, b
    const Var t = live[0], g = live[1];
    f.block_live.compute_root().parallel(g);
    f.block_live.update().parallel(g);
    const Var lane = f.key_live.args()[0];
    f.key_live.compute_at(f.block_live, t).vectorize(lane);
    f.key_live.update().reorder(lane, f.key_live_fold.x, f.key_live_fold.y).vectorize(lane);
}

}  // namespace

// The key-block path: the online softmax of algorithm/online_attention.h. A group of block_q
// queries walks the keys key_block at a time, each block's scores, weights and weighted values
// computed in the register tiles of the block path (vectorized across the group's queries) and
// merged into the group's running maximum, sum and output. With key splits each split walks its
// own run of blocks as a separate task, and a last merge adds the splits.
void schedule_online(algorithm::OnlineAttentionFuncs &f, bool with_probs, const Context &ctx,
                     const FusedParams &params) {
    const auto &v = algorithm::dims();
    const int vec = ctx.vector_width();
    const int bq = f.query_group;
    // The tiles of P V hold value_rows queries of a group. cpu_fused's own groups are whole
    // vectors, which FusedParams checks value_rows against; cuda_fused's CPU entry brings its GPU
    // kernel's groups (online_layout), down to max_queries queries in a decode kernel, and there
    // the tiles take the largest number of rows up to value_rows that divides the group.
    FusedParams p = params;
    while (bq % p.value_rows != 0) p.value_rows--;
    Func walk = f.key_splits > 1 ? f.split_state : f.running_grouped;
    const std::vector<Var> args = walk.args();
    const Var e = args[0], ii = args[1];
    Var go("go"), gi("gi"), eo("eo"), ei("ei");

    // One parallel task per group of queries (and head and batch element), as in the block
    // path: the group's running state (3 x d_v x block_q floats) is computed inside the task and
    // stays in cache, instead of a state for every query written, updated and read back across
    // the whole call (at B16 H8 N128 that traffic cost more than the arithmetic).
    Func out = f.out;
    out.split(v.i, go, gi, bq, kGuard)
        .reorder(v.e, gi, go, v.h, v.b)
        .vectorize(v.e, vec, kGuard)
        .parallel(go)
        .parallel(v.h)
        .parallel(v.b);
    Func lse = f.lse;
    lse.split(v.i, go, gi, bq, kGuard)
        .reorder(gi, go, v.h, v.b)
        .vectorize(gi, vec, kGuard)
        .parallel(go)
        .parallel(v.h)
        .parallel(v.b);
    lse.compute_with(out, go);

    // The merge in the tiles of P V (below): value_rows queries by value_vectors vectors of
    // value features, the running state stored with the features fastest as out is.
    walk.compute_at(out, go).vectorize(e, vec, kGuard);
    // The tiles of the merge round d_v up to whole tiles, which gives the block's weighted values
    // (computed per tile, below) a constant extent: their accumulators then stay in registers
    // (with a test for the tail of d_v on each vector, they went to memory on every
    // multiply-add). Past d_v the algorithm reads other value features (the layout's
    // value_tile), and the weighted values specialize on whole tiles, where it needs no clamp,
    // and on whole vectors, where the clamp moves whole vectors.
    // Until 2026-12 a specialization of the whole walk chose between this and a guarded copy:
    // the key-block kernels took twice the code generation time for it.
    const int tile_e = p.value_vectors * vec;
    if (f.value_tile != tile_e) {
        std::fprintf(stderr,
                     "cpu_fused: the key-block walk was defined with tiles of %d value "
                     "features, its schedule has %d\n",
                     f.value_tile, tile_e);
        std::abort();
    }
    Var io("io"), ir("ir"), eu("eu"), el("el");
    Stage merge = walk.update();
    merge.split(ii, io, ir, p.value_rows)
        .split(e, eo, ei, tile_e, TailStrategy::RoundUp)
        .split(ei, eu, el, vec)
        .reorder(el, eu, ir, eo, io, Halide::RVar(f.blocks))
        .vectorize(el)
        .unroll(eu)
        .unroll(ir);
    if (f.key_splits > 1) {
        // The splits of one group are parallel tasks inside its task: a call with fewer groups
        // than threads (a few queries against a long cache) still keeps every thread busy.
        merge.parallel(args[2]);
    }
    // The range of blocks each group walks, a table of one entry per group and batch element
    // computed before the walk: read from memory, the walk's bounds are values that loop
    // partitioning cannot solve for the group, so it no longer splits the loop over groups
    // into ranges (each with its own copy of the walk) where the range formula simplifies.
    // With both changes and lse's extents stated (AttentionPipeline::constrain_outputs), the
    // key-block kernel with every modifier took 14 s to generate for AVX-512 instead of 92.
    f.group_end.compute_root();
    if (f.group_begin.defined()) f.group_begin.compute_root();
    if (f.key_splits > 1) {
        Func running = f.running_grouped;
        const std::vector<Var> rargs = running.args();
        running.compute_at(out, go).vectorize(rargs[0], vec, kGuard);
        running.update()
            .reorder(rargs[0], rargs[1], Halide::RVar(f.splits))
            .vectorize(rargs[0], vec, kGuard);
    }

    // Query rows past Nq read the last query (online_attention.h), so the block's stages may
    // always compute the whole group: bound_extent(i, block_q) makes their row count a constant,
    // which keeps the register tiles in registers and makes a group of 17 queries cost what one
    // of 32 does instead of falling back to scalar code.
    //
    // The group's queries, transposed (query index fastest) for vector loads across queries:
    // once per group, before its walk, not once per key block (the same queries in every block;
    // a transposition of gathered lanes, 3% of the time of the causal window L = 1024 in perf
    // when computed per block of 512 keys). Paired with the per-block copy (kernels compiled
    // ahead of time for AVX-512, called in turns, 20 rounds, three runs, B1 H8 N16384 d64):
    // causal window 0.963-0.988 of its time, packed documents (blocks of 256) 0.959-0.967.
    const Halide::RVar blocks(f.blocks);
    Func qt = f.scores.q.in(f.scores.dot);
    Var qd = qt.args()[0], qi = qt.args()[1];
    qt.compute_at(out, go)
        .bound_extent(qi, bq)
        .reorder_storage(qi, qd)
        .reorder(qi, qd)
        .vectorize(qi, bq);

    // The block's scores in register tiles of block_q x key_tile, as in the block path.
    Func dot_block = score_tile_block(f.scores, ctx.variant);
    dot_block.compute_at(walk, blocks).bound_extent(v.i, bq).reorder_storage(v.i, v.j);
    stage_modified_scores(f.scores, ctx.variant, Halide::LoopLevel(walk, blocks), bq,
                          /*whole_rows=*/true);
    schedule_score_tiles(f.scores, dot_block, f.shape.nk, bq, p);

    // The block's maximum, weights and sum, vectorized across the group's queries. The maximum
    // and sum are stored query-fastest too: stored block-fastest (their first argument), every
    // access was a gather or scatter (B1 H8 Nq17 Nk30000 d64: 19 to 15 ms for the maximum; causal
    // window L = 1024, B1 H8 N16384 d64: a quarter of the time went to the sum's).
    //
    // Each holds one block (bound_extent(t, 1)): where the walk's predicate reads a block's flags
    // from block_live, bounds inference could not tell that only the walked block is needed, and
    // in one copy of the walk made by loop partitioning (for packed documents, the copy that ran)
    // their extent over blocks was a run-time value, which kept P V's register tile in memory.
    const Var t = f.block_max.args()[0], bi = f.block_max.args()[1];
    f.block_range.compute_at(walk, blocks);
    f.block_max.compute_at(walk, blocks)
        .bound_extent(t, 1)
        .bound_extent(bi, bq)
        .reorder_storage(bi, t)
        .vectorize(bi, bq);
    f.block_max.update(0).reorder(f.block_keys_max, bi).vectorize(bi, bq);
    f.block_max.update(1).vectorize(bi, bq);
    f.block_weights.compute_at(walk, blocks)
        .bound_extent(bi, bq)
        .reorder_storage(bi, v.j)
        .reorder(bi, v.j)
        .vectorize(bi, bq);
    f.block_sum.compute_at(walk, blocks)
        .bound_extent(t, 1)
        .bound_extent(bi, bq)
        .reorder_storage(bi, t)
        .vectorize(bi, bq);
    f.block_sum.update().reorder(f.block_keys_sum, bi).vectorize(bi, bq);

    // The block's weighted values in register tiles of value_rows x value_vectors vectors, one
    // per tile of the merge. The keys of the group's common range run without a test of the
    // range (with one of a per-key test in blocks that it does not allow whole, the second
    // domain); the bands, at most block_q keys each per block, test each query.
    const Var acc_rows = f.block_acc.args()[2];
    f.block_common.compute_at(walk, blocks);
    f.block_acc.compute_at(walk, eo).bound_extent(t, 1).bound_extent(acc_rows, p.value_rows);
    // The algorithm's own conditions for the value features' clamps (a kernel specialized to one
    // d_v needs no run-time test: the clamp is there or not).
    const std::vector<Halide::Expr> no_cases;
    schedule_feature_tile(
        f.block_acc, acc_rows,
        {f.block_keys_acc, f.block_keys_acc_tested, f.block_acc_band, f.block_acc_lower_band},
        /*tiled_domains=*/2, p, vec, ctx.variant.d_v > 0 ? no_cases : f.feature_cases);

    schedule_live_blocks(f);
    if (with_probs) schedule_online_probs(f, ctx);
}

}  // namespace attngen::schedules::cpu_fused
