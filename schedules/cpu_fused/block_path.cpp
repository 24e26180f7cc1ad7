#include "algorithm/dims.h"
#include "paths.h"

namespace attngen::schedules::cpu_fused {

using Halide::Func;
using Halide::Stage;
using Halide::TailStrategy;
using Halide::Var;

bool computes_whole_query_blocks(const Context &ctx, const FusedParams &p, bool paired) {
    const Variant &v = ctx.variant;
    if ((v.op != Op::kAttention && v.op != Op::kMha) || p.split_keys != 0 || p.key_block != 0) {
        return false;
    }
    if (v.score.bias || v.user_modified() || v.mask.segments) return false;
    return paired || v.mask.varies_by_query();
}

// The block path: attention for blocks of block_q query rows. Everything a block needs (its
// scores, weights and row statistics, vectorized across the block's queries) is computed inside
// the loop over blocks; no Nq x Nk buffer exists. P V runs in register tiles of one of two
// shapes (FusedParams::features_tile), one per tile of the output.
void schedule_blocks(algorithm::AttentionFuncs &f, bool with_probs, const Context &ctx,
                     const FusedParams &p) {
    const auto &v = algorithm::dims();
    const int vec = ctx.vector_width();
    const int bq = p.query_vectors * vec;
    const bool feature_tiles = p.features_tile != 0;
    // Value features per output tile.
    const int tile_e = feature_tiles ? p.value_vectors * vec : p.value_tile;
    Var io("io"), ii("ii"), eo("eo"), ei("ei"), iq("iq"), ir("ir"), eu("eu"), el("el");

    // Blocks of queries; blocks, heads and batch elements are all parallel loops, so that two
    // threads find work whether a call has many heads, many batch elements or one long
    // sequence. When Nq and d_v divide the block and tile sizes (the common case), a
    // specialization drops every tail check from the inner loops.
    Func out = f.out;
    auto block_loops = [&](Stage s, TailStrategy tail, TailStrategy feature_tail) {
        s.split(v.i, io, ii, bq, tail).split(v.e, eo, ei, tile_e, feature_tail);
        if (feature_tiles) {
            // Tiles of value_rows queries by tile_e features, stored as whole vectors of a row.
            s.split(ii, iq, ir, p.value_rows, tail)
                .split(ei, eu, el, vec, feature_tail)
                .reorder(el, eu, ir, eo, iq, io, v.h, v.b)
                .vectorize(el)
                .unroll(eu)
                .unroll(ir);
        } else {
            s.reorder(ii, ei, eo, io, v.h, v.b).vectorize(ii).unroll(ei);
        }
        s.parallel(io).parallel(v.h).parallel(v.b);
    };
    // Whole blocks of queries (computes_whole_query_blocks): the accumulators' extent is fixed,
    // and with it that of every stage of the block. A block cut short checked every unrolled row
    // of the register tiles, whose accumulators then went to the stack. Paired: with Nq below one
    // block (no shift above), B1 H8 Nq31 Nk77 d64 took 2.0x the float32 kernel's time with the
    // d64 kernel and 0.37x computing the whole block; causal N2047, which keeps its blocks
    // checked, 1.08x and 0.84-0.91x (Zen 5, 2 threads, kernels called in turns). Float32 with a
    // mask that varies by query (its blocks are never shifted): the generic causal kernel took
    // 22.8 ms at B1 H8 N2047 d64 against 13.2 at N2048 (the same at N2040 and N2033), and 13.4
    // with whole blocks and the d_v specialization below (each alone: 0.91x and 0.68x of the old
    // time); Nq300 Nk1000 d128 6.31 -> 3.35 ms, d80 4.02 -> 2.15 (Zen 5, 2 threads, in turns).
    const bool paired = f.weighted_sum.pairs.defined();
    const bool whole_blocks = computes_whole_query_blocks(ctx, p, paired);
    block_loops(out.specialize(f.shape.nq % bq == 0 && f.shape.d_v % tile_e == 0),
                TailStrategy::RoundUp, TailStrategy::RoundUp);
    const bool bands = f.softmax.max_band.defined();
    if (f.weighted_sum.pairs.defined() && !bands) {
        // With P V paired and no bands, where there is at least one whole block, the last block
        // shifts inwards and computes again a few rows of the block before it, so that every
        // block is whole: B1 H8 Nq255 Nk1024 d64 took 0.45-0.51x the float32 kernel's time with
        // the d64 kernel (1.27x with checked blocks) and 0.54-0.60x with the generic one (Zen 5,
        // 2 threads). With bands (causal) the same shift made LLVM gather 16-bit elements
        // with vmovw, an AVX512-FP16 instruction (SIGILL on Zen 5, which has AVX512-BF16 but not
        // FP16); those kernels compute whole blocks instead (below). A condition known to hold
        // (d_v % tile_e == 0 where d_v is fixed) made Halide 14 drop the fused lse loop's
        // definition (lse came out wrong), so it is only asked where d_v is read at run time.
        // Each specialization is another copy of the pipeline to compile, which is why the
        // float32 kernels without bands go without one: their checked blocks cost little (the
        // generic kernel took 1.04x its N2048 time at N2047, B1 H8 d64).
        Halide::Expr whole = f.shape.nq >= bq;
        if (ctx.variant.d_v <= 0) whole = whole && f.shape.d_v % tile_e == 0;
        block_loops(out.specialize(whole), TailStrategy::ShiftInwards, TailStrategy::RoundUp);
    } else if ((f.weighted_sum.pairs.defined() || whole_blocks) && ctx.variant.d_v <= 0) {
        // With whole blocks (paired with bands, or float32 with bands) and d_v read at run
        // time, a call whose d_v the tiles do not divide checks each feature of the unrolled
        // tiles; this specialization drops the checks where it does (12 -> 19 s to generate the
        // generic causal bfloat16 kernel, 5.5 -> 8.3 s the float32 one for AVX-512).
        block_loops(out.specialize(f.shape.d_v % tile_e == 0), kGuard, TailStrategy::RoundUp);
    }
    block_loops(out, kGuard, kGuard);
    // The log-sum-exp (and the probabilities) of a block come from the same row statistics,
    // so they are computed in the same loop over blocks.
    Func lse = f.lse;
    lse.split(v.i, io, ii, bq, kGuard)
        .reorder(ii, io, v.h, v.b)
        .vectorize(ii)
        .parallel(io)
        .parallel(v.h)
        .parallel(v.b);
    lse.compute_with(out, io);
    if (with_probs) {
        Func probs = f.probs;
        probs.split(v.i, io, ii, bq, kGuard)
            .reorder(ii, v.j, io, v.h, v.b)
            .vectorize(ii)
            .parallel(io)
            .parallel(v.h)
            .parallel(v.b);
        probs.compute_with(out, io);
    }

    // 16-bit storage: the head's keys and values widened to float32 once per head, before its
    // blocks, so that the tiles read float32 as a float32 kernel's do. Each block reads every key
    // and value of its head, and widened where the tiles read them (a broadcast key per query
    // vector in Q K^T), a bfloat16 key cost a scalar shift and a float16 one a dozen integer
    // operations per multiply-add pair.
    if (ctx.variant.kv_storage != DType::kFloat32) {
        for (Func stored : {f.k, f.v}) {
            const Var inner = stored.args()[0];
            stored.compute_at(out, v.h).vectorize(inner, vec, kGuard);
        }
    }

    // 16-bit storage: the block's queries widened to float32 in their own layout (vector loads
    // along the features) before the transpositions below read them. Transposed straight from
    // the input, they were gathers of 16-bit elements, which LLVM builds with vmovw in the
    // avx512_sapphirerapids entries: an AVX512-FP16 instruction, which AMD's Zen 4 and Zen 5
    // lack although they have the AVX512-BF16 those entries are for (SIGILL on Zen 5).
    if (ctx.variant.storage != DType::kFloat32) {
        f.q.compute_at(out, io).vectorize(f.q.args()[0], vec, kGuard);
    }

    // The block's queries transposed (query index fastest) for vector loads across queries.
    Func qt = f.scores.q.in(f.scores.dot);
    Var qd = qt.args()[0], qi = qt.args()[1];
    qt.compute_at(out, io).reorder_storage(qi, qd).reorder(qi, qd).vectorize(qi, vec, kGuard);
    if (f.scores.q_pairs.defined()) {
        // In the paired form, the block's queries as pairs of features, a query's pair next to
        // the next query's: a vector of query pairs per pair of features.
        Func q_pairs = f.scores.q_pairs;
        const Var r = q_pairs.args()[0], pi = q_pairs.args()[1];
        q_pairs.compute_at(out, io).bound(r, 0, 2).vectorize(r).vectorize(pi, vec, kGuard);
    }

    // The block's scores, query index fastest, computed in register tiles of
    // block_q x key_tile. With at least one tile of keys the last tile shifts inwards and
    // recomputes a few scores rather than guarding every key of every tile.
    Func dot_block = score_tile_block(f.scores, ctx.variant);
    dot_block.compute_at(out, io).reorder_storage(v.i, v.j);
    stage_modified_scores(f.scores, ctx.variant, Halide::LoopLevel(out, io), bq,
                          /*whole_rows=*/false);
    stage_score_bias(f.scores, Halide::LoopLevel(out, io), vec);
    schedule_score_tiles(f.scores, dot_block, f.shape.nk, bq, p);

    // Row statistics, vectorized across the block's queries. The key loops sit inside the
    // vectorized query loop so that their bounds, the same for every query of a causal group,
    // trim the loops instead of masking each lane.
    auto &sm = f.softmax;
    sm.row_max.compute_at(out, io).vectorize(v.i, bq, kGuard);
    sm.row_max.update(0).reorder(sm.max_keys, v.i).vectorize(v.i, bq, kGuard);
    sm.weights.compute_at(out, io).reorder_storage(v.i, v.j).reorder(v.i, v.j).vectorize(v.i, bq,
                                                                                         kGuard);
    sm.row_sum.compute_at(out, io).vectorize(v.i, bq, kGuard);
    sm.row_sum.update(0).reorder(sm.sum_keys, v.i).vectorize(v.i, bq, kGuard);
    // The bands of masks that vary by query: at most kCausalGroup keys per block after the
    // dense part (causal, windows, prefixes) and before it (windows), masked per query.
    for (const auto &[stage, max_band, sum_band] :
         {std::tuple{1, sm.max_band, sm.sum_band},
          std::tuple{2, sm.max_lower_band, sm.sum_lower_band}}) {
        if (!max_band.defined()) continue;
        sm.row_max.update(stage).reorder(v.i, max_band).vectorize(v.i, bq, kGuard);
        sm.row_sum.update(stage).reorder(v.i, sum_band).vectorize(v.i, bq, kGuard);
    }

    // With P V tiled across queries (the generic kernels), the accumulators' fixed extent did not
    // reach the scores and row statistics: Halide left their extent an expression that it did
    // not reduce to one block, so the scores' register tiles checked each row and spilled (in
    // the .stmt, a scalar loop over the rows of each tile). Fixed too, as time of the float32
    // kernel (B1 H8, Zen 5, 2 threads, kernels called in turns in one process, before -> after):
    // Nq31 Nk77 d64 1.86 -> 0.35, Nq31 Nk1024 d80 2.13 -> 0.27, Nq255 Nk1024 d64 0.53 -> 0.46,
    // N2048 d64 0.62 both; causal N2047 d64 0.64 -> 0.42, causal Nq300 Nk1000 d128 0.60 -> 0.38.
    // The feature-tiled kernels (d64) keep theirs free: fixed there too, their shifted last block
    // (Nq255 Nk1024) took 1.33x the float32 kernel's time instead of 0.41x.
    if (whole_blocks && !feature_tiles) {
        for (Func fn : {dot_block, sm.row_max, sm.weights, sm.row_sum}) fn.bound_extent(v.i, bq);
    }

    // P V, one register tile per output tile.
    const algorithm::WeightedSumFuncs &ws = f.weighted_sum;
    Func acc = ws.acc;
    auto block_rows = [&](Func fn) {
        if (whole_blocks) {
            fn.bound_extent(v.i, bq);
        } else {
            fn.bound_storage(v.i, bq);
        }
    };
    if (paired) {
        // In the paired form, the block's weights rounded to bfloat16 and the head's values, each
        // with the two keys of a pair adjacent: a vector of (key pair, query) weights per pair of
        // keys, and of (key pair, feature) values. The tiles below read one of the two as
        // vectors and the other as 32-bit broadcasts, as the paired scores do.
        Func p_pairs = ws.p_pairs;
        const Var pr = p_pairs.args()[0], pi = p_pairs.args()[1];
        p_pairs.compute_at(out, io).bound(pr, 0, 2).vectorize(pr).vectorize(pi, vec, kGuard);
        // The values' pairs are written as two vectors of features, one per key, which Halide
        // interleaves into one store: vectorized across the pair too, each vector was 16 gathers
        // of two 16-bit values a key row apart (vmovw, AVX512-FP16, as for the queries above).
        Func v_pairs = ws.v_pairs;
        const Var vr = v_pairs.args()[0], ve = v_pairs.args()[1];
        Var veo("veo"), vei("vei");
        v_pairs.compute_at(out, v.h)
            .bound(vr, 0, 2)
            .split(ve, veo, vei, vec, kGuard)
            .reorder(vei, vr, veo)
            .vectorize(vei)
            .unroll(vr);
    }
    if (feature_tiles) {
        // The block's accumulators live at the block (d_v x block_q floats), so that P V can take
        // its keys in chunks outside the tiles; within a chunk a tile's accumulators stay in
        // registers. Calls whose values fit the cache run the keys in one piece.
        acc.compute_at(out, io).reorder_storage(v.e, v.i).vectorize(v.e, vec, kGuard);
        block_rows(acc);
        Var et("et"), ef("ef");
        // The loop over keys, or over pairs of keys with the pair innermost in the vectors of
        // values (vdpbf16ps with each pair of weights broadcast).
        const Halide::RVar keys = paired ? Halide::RVar(ws.pairs.y) : Halide::RVar(ws.keys);
        const int chunk = paired ? p.value_key_chunk / 2 : p.value_key_chunk;
        auto pv_tiles = [&](Stage s) -> Stage {
            s.split(v.i, iq, ir, p.value_rows, kGuard)
                .split(v.e, et, ef, tile_e, kGuard)
                .split(ef, eu, el, vec, kGuard);
            if (paired) s.atomic().vectorize(ws.pairs.x);
            return s.vectorize(el).unroll(eu).unroll(ir);
        };
        auto inner = [&](std::vector<Halide::VarOrRVar> loops) {
            if (paired) loops.insert(loops.begin(), Halide::RVar(ws.pairs.x));
            return loops;
        };
        if (chunk > 0) {
            Halide::RVar kc("kc"), ki("ki");
            pv_tiles(acc.update(0).specialize(f.shape.nk * f.shape.d_v >
                                              FusedParams::kChunkedValueFloats))
                .split(keys, kc, ki, chunk, kGuard)
                .reorder(inner({el, eu, ir, ki, et, iq, kc}));
        }
        pv_tiles(acc.update(0)).reorder(inner({el, eu, ir, keys, et, iq}));
        if (paired) acc.update(1).vectorize(v.e, vec, kGuard);
    } else {
        // Per key: query_vectors vector loads of weights, value_tile broadcasts of values; in the
        // paired form the same per pair of keys, of weight pairs and value pairs.
        block_rows(acc);
        acc.compute_at(out, eo)
            .reorder_storage(v.i, v.e)
            .bound_storage(v.e, p.value_tile)
            .vectorize(v.i, bq, kGuard)
            .unroll(v.e);
        if (paired) {
            acc.update(0)
                .reorder(ws.pairs.x, v.i, v.e, ws.pairs.y)
                .atomic()
                .vectorize(ws.pairs.x)
                .vectorize(v.i, bq, kGuard)
                .unroll(v.e);
            acc.update(1).reorder(v.i, v.e, ws.edge).vectorize(v.i, bq, kGuard).unroll(v.e);
        } else {
            acc.update(0).reorder(v.e, ws.keys, v.i).vectorize(v.i, bq, kGuard).unroll(v.e);
        }
        for (const auto &[stage, band] :
             {std::pair{ws.band_stage(), ws.band}, std::pair{ws.band_stage() + 1, ws.lower_band}}) {
            if (band.defined()) {
                acc.update(stage).reorder(v.i, v.e, band).vectorize(v.i, bq, kGuard).unroll(v.e);
            }
        }
    }
}

}  // namespace attngen::schedules::cpu_fused
