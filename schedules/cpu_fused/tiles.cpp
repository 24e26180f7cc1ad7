// The register tiles that the block path and the key-block path share.
#include "algorithm/dims.h"
#include "paths.h"

namespace attngen::schedules::cpu_fused {

using Halide::Func;
using Halide::Stage;
using Halide::TailStrategy;
using Halide::Var;

// The P V register tile of value_rows queries by value_vectors vectors of value features of acc
// (the weighted values, features first), vectorized across the features: per key, value_vectors
// vector loads of its value row and value_rows broadcasts of weights. The caller places acc and
// bounds its query rows.
void schedule_feature_tile(Func acc, const Var &rows, const std::vector<Halide::RDom> &keys,
                           int tiled_domains, const FusedParams &p, int vec,
                           const std::vector<Halide::Expr> &specializations) {
    const Var e = acc.args()[0];
    Var eu("eu"), el("el");
    acc.bound_storage(e, p.value_vectors * vec)
        .split(e, eu, el, vec, kGuard)
        .reorder(el, eu, rows)
        .vectorize(el)
        .unroll(eu)
        .unroll(rows);
    // The first tiled_domains domains in the register tile; the others (bands of a few keys at
    // the edges of a range) as plain vector loops: unrolled, their copies of the per-query tests
    // made the lowering of a kernel with every modifier several times slower for a small share of
    // its multiply-adds.
    int stage = 0;
    for (std::size_t k = 0; k < keys.size(); k++) {
        const Halide::RDom &r = keys[k];
        if (!r.defined()) continue;
        auto schedule = [&](Stage update) {
            update.split(e, eu, el, vec, kGuard)
                .reorder(el, eu, rows, Halide::RVar(r))
                .vectorize(el);
            if (static_cast<int>(k) < tiled_domains) update.unroll(eu).unroll(rows);
        };
        for (const Halide::Expr &condition : specializations) {
            schedule(acc.update(stage).specialize(condition));
        }
        schedule(acc.update(stage));
        stage++;
    }
}

namespace {

// Whether the scores are modified by more than a few operations per score (the softcap's tanh: a
// rational function, eight multiply-adds and a division; a user's modifier: anything).
bool costly_modifier(const algorithm::ScoresFuncs &scores, const Variant &variant) {
    return scores.modified && (variant.score.softcap || !variant.score_mod.empty());
}

}  // namespace

Func score_tile_block(const algorithm::ScoresFuncs &scores, const Variant &variant) {
    if (scores.modified && !costly_modifier(scores, variant)) return Func(scores.scores).in();
    return Func(scores.dot).in();
}

void stage_modified_scores(const algorithm::ScoresFuncs &scores, const Variant &variant,
                           const Halide::LoopLevel &at, int bq, bool whole_rows) {
    if (!costly_modifier(scores, variant)) return;
    const auto &v = algorithm::dims();
    Func block = Func(scores.scores).in();
    block.compute_at(at).reorder_storage(v.i, v.j).reorder(v.i, v.j);
    if (whole_rows) {
        block.bound_extent(v.i, bq).vectorize(v.i, bq);
    } else {
        block.vectorize(v.i, bq, kGuard);
    }
}

void stage_score_bias(const algorithm::ScoresFuncs &scores, const Halide::LoopLevel &at, int vec) {
    if (!scores.bias.defined()) return;
    const auto &v = algorithm::dims();
    // The block's bias rows, transposed (query index fastest) in square tiles of vec queries by
    // vec keys: each tile is read as vec dense vectors along its bias rows into a tile of its own
    // (rows, keys fastest), which the block's copy then reads a vector of queries at a time. Those
    // reads have a constant stride within a tile of constant size, which Halide turns into
    // register permutes (vpermt2ps on AVX-512, as in Halide's own block transpose test): vectorized
    // in both dims with the keys inner instead, the transposition was a store of each of the
    // tile's vec^2 floats (vextractps), 26% of the time of the kernel with a bias (B1 H8 N2048 d64,
    // AVX-512, Intel Xeon; perf). Rounded up, which the clamped indices of score_bias allow: a
    // tail guarded per lane was a scalar copy of every tile (a third more code). The clamp of the
    // key is marked likely, so that the loop over tiles runs without it up to the last one.
    //
    // The tiles of one vector of queries are copied along all the block's keys before the next
    // vector's: the block then reads vec bias rows side by side, sequentially, where the loop over
    // keys outside the one over queries read vec keys of each of the block's rows in turn (2 vec
    // rows with the default two vectors of queries). B1 H8 N2048 d64 with a [1, H, N, N] bias,
    // AVX-512, two threads, AMD Zen 5, time over the kernel without a bias: 1.30-1.31x ->
    // 1.21-1.24x on a quiet machine, and 1.38-1.52x -> 1.20-1.22x while a build ran beside it at
    // nice 19 (caches and memory shared); N1024 1.35x -> 1.30x, N4096 1.31x -> 1.24x. Tiles of vec
    // queries by 2 vec keys (1.32-1.35x) and the block's rows staged in their own layout before the
    // transposition (1.39-1.53x, beside the build) were slower.
    Var jo("jo"), io("io"), ji("ji"), ii("ii");
    Func rows = scores.bias;
    Func transposed = rows.in();
    transposed.compute_at(at)
        .reorder_storage(v.i, v.j)
        .tile(v.i, v.j, io, jo, ii, ji, vec, vec, TailStrategy::RoundUp)
        .reorder(ii, ji, jo, io)
        .vectorize(ii)
        .unroll(ji);
    rows.compute_at(transposed, jo).vectorize(v.j, vec).unroll(v.i);
}

// The scores of a block of bq queries (dot_block, a wrapper of dot computed per block) in register
// tiles of bq x key_tile, query index fastest. With at least one tile of keys the last
// tile shifts inwards and recomputes a few scores rather than guarding every key of every tile.
// The shift is specialized on nk >= key_tile, which keeps a shifted tile at or above key 0: the
// key-block path reads keys unclamped on that promise (online_attention.cpp, k_keys).
void schedule_score_tiles(const algorithm::ScoresFuncs &scores, Func dot_block,
                          const Halide::Expr &nk, int bq, const FusedParams &p) {
    const auto &v = algorithm::dims();
    Var jo("jo"), ji("ji");
    dot_block.specialize(nk >= p.key_tile)
        .split(v.j, jo, ji, p.key_tile, TailStrategy::ShiftInwards)
        .reorder(v.i, ji, jo)
        .vectorize(v.i, bq, kGuard)
        .unroll(ji);
    dot_block.split(v.j, jo, ji, p.key_tile, kGuard)
        .reorder(v.i, ji, jo)
        .vectorize(v.i, bq, kGuard)
        .unroll(ji);
    Func dot = scores.dot;
    dot.compute_at(dot_block, jo)
        .reorder_storage(v.i, v.j)
        .bound_storage(v.i, bq)
        .bound_storage(v.j, p.key_tile)
        .vectorize(v.i, bq, kGuard)
        .unroll(v.j, p.key_tile, kGuard);
    if (!scores.q_pairs.defined()) {
        dot.update()
            .reorder(v.i, v.j, scores.d)
            .vectorize(v.i, bq, kGuard)
            .unroll(v.j, p.key_tile, kGuard);
        return;
    }
    // The pair inside the queries: per key, one product of bq query pairs with the key's pair,
    // read as one 32-bit value and broadcast (vdpbf16ps with a broadcast memory operand).
    const Halide::RDom &pairs = scores.pairs;
    dot.update(0)
        .reorder(pairs.x, v.i, v.j, pairs.y)
        .atomic()
        .vectorize(pairs.x)
        .vectorize(v.i, bq, kGuard)
        .unroll(v.j, p.key_tile, kGuard);
    dot.update(1)
        .reorder(v.i, v.j, scores.odd_feature)
        .vectorize(v.i, bq, kGuard)
        .unroll(v.j, p.key_tile, kGuard);
}

}  // namespace attngen::schedules::cpu_fused
