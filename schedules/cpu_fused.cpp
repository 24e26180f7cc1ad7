#include "cpu_fused.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "algorithm/dims.h"
#include "cpu_gemm.h"
#include "cpu_tiled.h"

namespace attngen::schedules {

using Halide::Func;
using Halide::Stage;
using Halide::TailStrategy;
using Halide::Var;

namespace {

constexpr TailStrategy kGuard = TailStrategy::GuardWithIf;

// Parameters of cpu_fused, with the values measured best on a 2-core Zen 4 (AVX-512) for
// B1 H8 N2048 D64. The autotuner overrides them by name.
struct FusedParams {
    // Query rows per block, in vectors: the scores, weights and statistics of one block live in
    // a block_q x Nk scratch. 2 AVX-512 vectors = 32 rows: 32 x 4096 floats (512 KiB) for
    // scores and as much for weights stay within the 1 MiB L2 for Nk up to 4096, and the block
    // divides kCausalGroup so that causal blocks see uniform dense bounds.
    int query_vectors = 2;
    // Keys per register tile of Q K^T: block_q x key_tile accumulators. 2 x 6 = 12 zmm
    // accumulators plus 2 query vectors and a broadcast fit the 32 registers with room for
    // the loads in flight; 8 spilled at block_q = 64 and ran 15% slower at block_q = 32.
    int key_tile = 6;
    // How the block path tiles P V. 1: value_rows queries by value_vectors vectors of value
    // features, vectorized across the features (the key-block path's tile, below): each key's
    // value row is read as whole vectors and each weight is one broadcast, and output rows are
    // stored as whole vectors. 0: block_q queries by value_tile features, vectorized across the
    // queries, the only tile for causal kernels (its key loop sits inside the vectorized query
    // loop, where the causal bounds trim it) and the default where whole feature tiles do not
    // divide a specialized d_v; 1 is the default for the other non-causal kernels. AVX-512, 2
    // threads: B1 H8 N2048 d64 43.7 ms with 1 and 44.7 ms with 0 (4 x 4 tiles; in another run
    // 4 x 4 took 43.4 ms, 8 x 2 43.7 and 2 x 4 50.2), B1 H16 N4096 d64 348 and 352 ms, B1 H8
    // N1024 d128 21.4 and 22.2 ms; but d80 13.9 and 13.7 ms, and with d_v read at run time (80)
    // 17.6 and 13.7 ms: a partial tile of features costs more than it saves.
    int features_tile = 0;
    // Value features per register tile of P V with features_tile = 0: block_q x value_tile
    // accumulators, 16 of 32 zmm registers. Targets with 16 vector registers get 4: 2 x 8
    // accumulators spilled there (AVX2, B1 H8 N1024 d64: 22.8 ms with 8, 12.5 with 4; causal
    // 17.9 and 14.0 ms). The constructor sets the default for the target.
    int value_tile = 8;
    // Whether the kernel takes the decode path (schedule_decode): the work organized around the
    // keys, which are split into chunks that threads share. Kernels for at most kDecodeQueries
    // queries always take it; kernels for a bounded number of queries above that may (the
    // autotuner decides), and kernels for any number of queries never do.
    int split_keys = 0;
    // Keys per parallel task in the decode path, so that several threads share one query. At
    // B1 H32 Nk4096 d128 on two threads, 2048 keys (a task of the scores pass streams 1 MiB of
    // keys, one of the P V pass 1 MiB of values) took 3.20 ms against 3.40 with 1024, 3.28
    // with 1536 and 3.26 with 4096 (medians of 10 interleaved rounds, each started when a plain
    // read ran above 46 GB/s; a second run of 6 rounds: 3.17 against 3.35 ms). While the host's
    // memory is busy they all stream at its pace. Longer runs per task probably restart the
    // hardware prefetchers less often; two tasks per head at Nk 4096 still leave work for every
    // thread.
    int decode_key_chunk = 2048;
    // Keys whose dot products with a query are summed together in the decode path: each key's
    // row makes one vector of lanes, and the lanes of this many keys are added one by one at
    // the end. Four took 2-3% longer than two (B1 H32 d128 on two threads, Nk 4096 and 3000).
    int decode_key_unroll = 2;

    // Keys per block of the key-block path (schedule_online), or 0 for the block path. A group of
    // block_q queries walks the keys a block at a time with an online softmax, so its scratch is
    // block_q x key_block whatever Nk is; the block path's block_q x Nk scratch leaves the L2
    // beyond a few thousand keys (at Nk = 30000 it ran at half the FLOP rate of Nk = 3000; the
    // key-block path takes B1 H8 Nq17 Nk30000 d64 from 35 to 12 ms). The default is the block
    // path: the online merge costs exponentials per output value and block, and at Nk = 1024
    // the key-block path ran 3% slower (B1 H8 N1024 d80: 15.5 against 15.0 ms).
    int key_block = 0;
    // Runs of key blocks merged separately, then together (flash-decoding), in the key-block
    // path: more parallel tasks when a call has fewer query groups than threads.
    int key_splits = 1;
    // The P V register tile of the key-block path, and of the block path with features_tile = 1:
    // value_rows queries by value_vectors vectors of value features, vectorized across the
    // features. Each key's value row is then read as whole vectors once per value_rows queries,
    // and each weight is one broadcast; vectorized across queries (the block path's other tile)
    // the value rows were read a few features at a time, once per value_tile features, from a
    // key block that had left the L1: B1 H8 Nq17 Nk30000 d64 ran 15.0 ms that way and 12.3 ms
    // this way. 4 x 4 AVX-512 vectors (16 accumulators, 4 value vectors and a broadcast) ran 15%
    // faster than 4 x 2, 2 x 4 or 8 x 2; targets with 16 vector registers get 4 x 2 (the
    // constructor sets it). value_rows must divide the group of block_q queries.
    int value_rows = 4;
    int value_vectors = 4;
    // Keys per chunk of the block path's P V with feature tiles, for calls whose values of one
    // head exceed kChunkedValueFloats; 0 never splits. Each tile of value_rows queries reads every
    // value row of the head; unsplit, the tiles of a block read all Nk rows one tile after the
    // other, and once a head's values no longer fit the L2 beside the block's scratch each tile
    // streamed them from the L3 again (profile of B1 H16 N4096 d64: P V took 51% of the time,
    // Q K^T 35%, for the same multiply-adds). Split, the block's tiles take turns over one chunk
    // of rows at a time while it stays in cache, and each tile's accumulators go to the block's
    // d_v x block_q scratch between chunks. Zen 5, 2 threads, JIT: B1 H16 N4096 d64 226 -> 195
    // ms with 256 keys (128, 512 and 1024 within 2% of it, 64 3% slower), B1 H8 N3072 d64 58.5
    // -> 53.4, N4096 d128 208 -> 194, N2048 d128 50.6 -> 48.4.
    int value_key_chunk = 256;
    // Values of one head (Nk x d_v floats) above which P V splits its keys into chunks: half of a
    // 1 MiB L2 (2048 keys at d64). At that size splitting gained nothing (B1 H8 N2048 d64 23.6
    // against 23.7 ms) and cost 2.5% at B1 H8 N1024 d128 (12.4 against 12.7 ms).
    static constexpr int kChunkedValueFloats = 2048 * 64;

    // Up to this many queries the decode path wins: the block path would fill at most a quarter
    // of the lanes of one block.
    static constexpr int kDecodeQueries = 8;
    // Whether P V uses the value_rows x value_vectors tile: the key-block path always does, the
    // block path with features_tile. The one rule for parsed parameters and for the search's
    // (possibly partial) points alike.
    static bool feature_tiles(int key_block, int features_tile) {
        return key_block > 0 || features_tile != 0;
    }
    bool feature_tiles() const { return feature_tiles(key_block, features_tile); }
    static int default_split_keys(const Context &ctx) {
        return ctx.max_queries > 0 && ctx.max_queries <= kDecodeQueries ? 1 : 0;
    }

    // The register tiles' defaults for the target: the member defaults, with the narrower P V
    // tiles of targets with 16 vector registers.
    static FusedParams target_defaults(const Context &ctx) {
        FusedParams d;
        if (vector_registers(ctx.target) < 32) {
            d.value_tile = 4;
            d.value_vectors = 2;
        }
        return d;
    }

    // Tuned parameters were searched on one target, where the search admits only register
    // tiles that fit (the constraint of attention_search_space). The build compiles them for
    // that target alone (tuning_target), but a tuning given by hand can reach others: on a
    // target with fewer vector registers (AVX2 and SSE4.1 have 16 of AVX-512's 32) or narrower
    // vectors, a tile that no longer fits, or P V rows that no longer divide the query group,
    // take this target's defaults, which were measured on such targets. On the tuned target,
    // and for untuned kernels, nothing changes.
    void fit_tiles_to_target(const Context &ctx, const FusedParams &d) {
        if (split_keys != 0) return;  // The decode path has no register tiles.
        const int regs = vector_registers(ctx.target);
        // A tile of `vectors` vector operands by `broadcasts` broadcast ones: its accumulators,
        // the operands of one step and the broadcast register.
        auto fits = [&](int vectors, int broadcasts) {
            return vectors >= 1 && broadcasts >= 1 && vectors * broadcasts + vectors + 1 <= regs;
        };
        auto query_tiles_fit = [&] {
            return fits(query_vectors, key_tile) &&
                   (feature_tiles() || fits(query_vectors, value_tile));
        };
        if (query_vectors < 1 || key_tile < 1 || value_tile < 1 || query_tiles_fit()) {
            // Fits, or not a tile at all (the checks below name the error).
        } else {
            if (!fits(query_vectors, key_tile)) key_tile = d.key_tile;
            if (!feature_tiles() && !fits(query_vectors, value_tile)) value_tile = d.value_tile;
            if (!query_tiles_fit()) {
                query_vectors = d.query_vectors;
                key_tile = d.key_tile;
                value_tile = d.value_tile;
            }
        }
        if (!feature_tiles() || value_rows < 1 || value_vectors < 1) return;
        if (!fits(value_vectors, value_rows)) value_vectors = d.value_vectors;
        if (!fits(value_vectors, value_rows) ||
            (query_vectors * ctx.vector_width()) % value_rows != 0) {
            value_rows = d.value_rows;
            value_vectors = d.value_vectors;
        }
    }

    FusedParams() = default;

    // Every parameter, by the name a tuning sets it with: the one list for the names the
    // constructor accepts and the values attention_params reports.
    using Field = std::pair<std::string, int FusedParams::*>;
    static const std::vector<Field> &fields() {
        static const std::vector<Field> list = {
            {"query_vectors", &FusedParams::query_vectors},
            {"key_tile", &FusedParams::key_tile},
            {"features_tile", &FusedParams::features_tile},
            {"value_tile", &FusedParams::value_tile},
            {"split_keys", &FusedParams::split_keys},
            {"decode_key_chunk", &FusedParams::decode_key_chunk},
            {"decode_key_unroll", &FusedParams::decode_key_unroll},
            {"key_block", &FusedParams::key_block},
            {"key_splits", &FusedParams::key_splits},
            {"value_rows", &FusedParams::value_rows},
            {"value_vectors", &FusedParams::value_vectors},
            {"value_key_chunk", &FusedParams::value_key_chunk}};
        return list;
    }
    static std::vector<std::string> names() {
        std::vector<std::string> list;
        for (const Field &f : fields()) list.push_back(f.first);
        return list;
    }
    explicit FusedParams(const Context &ctx) {
        ctx.check_params(names());
        const FusedParams defaults = FusedParams::target_defaults(ctx);
        query_vectors = ctx.param("query_vectors", query_vectors);
        key_tile = ctx.param("key_tile", key_tile);
        value_tile = ctx.param("value_tile", defaults.value_tile);
        split_keys = ctx.param("split_keys", default_split_keys(ctx));
        decode_key_chunk = ctx.param("decode_key_chunk", decode_key_chunk);
        decode_key_unroll = ctx.param("decode_key_unroll", decode_key_unroll);
        key_block = ctx.param("key_block", key_block);
        key_splits = ctx.param("key_splits", key_splits);
        value_rows = ctx.param("value_rows", value_rows);
        value_vectors = ctx.param("value_vectors", defaults.value_vectors);
        value_key_chunk = ctx.param("value_key_chunk", value_key_chunk);
        const bool tiles_divide_dv =
            ctx.d_v > 0 && ctx.d_v % (value_vectors * ctx.vector_width()) == 0;
        features_tile = ctx.param("features_tile", !ctx.causal && tiles_divide_dv ? 1 : 0);
        fit_tiles_to_target(ctx, defaults);
        if (feature_tiles() && (value_rows < 1 || value_vectors < 1 ||
                                (query_vectors * ctx.vector_width()) % value_rows != 0)) {
            schedule_error(
                "cpu_fused: value_rows must divide the query_vectors x vector width queries of "
                "a group, and value_vectors must be positive");
        }
        if (value_key_chunk < 0) {
            schedule_error("cpu_fused: value_key_chunk must be 0 (no chunks) or positive");
        }
        if (features_tile != 0 && ctx.causal) {
            schedule_error(
                "cpu_fused: features_tile=1 serves non-causal kernels only; causal kernels tile "
                "P V across queries (features_tile=0)");
        }
        if (key_block > 0 && split_keys != 0) {
            schedule_error("cpu_fused: key_block and split_keys=1 select different paths");
        }
        // Causal kernels keep the block path, which splits each block's keys into a dense part
        // and a band; the key-block path would mask every lane of a block by its own bound.
        if (key_block > 0 && ctx.causal) {
            schedule_error(
                "cpu_fused: the key-block path (key_block > 0) serves non-causal "
                "kernels only");
        }
        // One key at a time failed the correctness check at run time (a Halide error that we
        // have not traced); two or more pass.
        if (decode_key_unroll < 2) {
            schedule_error("cpu_fused: decode_key_unroll must be at least 2");
        }
        if (split_keys != 0 && ctx.max_queries <= 0) {
            schedule_error(
                "cpu_fused: split_keys=1 needs a kernel for a bounded number of "
                "queries (max_queries > 0)");
        }
    }
};

// Whether parameters (as in a tuning database, possibly partial: a missing name is 0) select the
// value_rows x value_vectors P V tile.
bool uses_feature_tiles(const std::map<std::string, int> &p) {
    auto value = [&](const char *name) { return p.count(name) != 0 ? p.at(name) : 0; };
    return FusedParams::feature_tiles(value("key_block"), value("features_tile"));
}

// The P V register tile of value_rows queries by value_vectors vectors of value features of acc
// (the weighted values, features first), vectorized across the features: per key, value_vectors
// vector loads of its value row and value_rows broadcasts of weights. The caller places acc and
// bounds its query rows.
void schedule_feature_tile(Func acc, const Halide::RVar &keys, const FusedParams &p, int vec) {
    const auto &v = algorithm::dims();
    const Var e = acc.args()[0];
    Var eu("eu"), el("el");
    acc.bound_storage(e, p.value_vectors * vec)
        .split(e, eu, el, vec, kGuard)
        .reorder(el, eu, v.i)
        .vectorize(el)
        .unroll(eu)
        .unroll(v.i);
    acc.update()
        .split(e, eu, el, vec, kGuard)
        .reorder(el, eu, v.i, keys)
        .vectorize(el)
        .unroll(eu)
        .unroll(v.i);
}

// The scores of a block of bq queries (dot_block, a wrapper of dot computed per block) in register
// tiles of bq x key_tile, query index fastest. With at least one tile of keys the last tile
// shifts inwards and recomputes a few scores rather than guarding every key of every tile.
void schedule_score_tiles(Func dot, Func dot_block, const Halide::RDom &d, const Halide::Expr &nk,
                          int bq, const FusedParams &p) {
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
    dot.compute_at(dot_block, jo)
        .reorder_storage(v.i, v.j)
        .bound_storage(v.i, bq)
        .bound_storage(v.j, p.key_tile)
        .vectorize(v.i, bq, kGuard)
        .unroll(v.j, p.key_tile, kGuard);
    dot.update().reorder(v.i, v.j, d).vectorize(v.i, bq, kGuard).unroll(v.j, p.key_tile, kGuard);
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
    auto block_loops = [&](Stage s, TailStrategy tail) {
        s.split(v.i, io, ii, bq, tail).split(v.e, eo, ei, tile_e, tail);
        if (feature_tiles) {
            // Tiles of value_rows queries by tile_e features, stored as whole vectors of a row.
            s.split(ii, iq, ir, p.value_rows, tail)
                .split(ei, eu, el, vec, tail)
                .reorder(el, eu, ir, eo, iq, io, v.h, v.b)
                .vectorize(el)
                .unroll(eu)
                .unroll(ir);
        } else {
            s.reorder(ii, ei, eo, io, v.h, v.b).vectorize(ii).unroll(ei);
        }
        s.parallel(io).parallel(v.h).parallel(v.b);
    };
    block_loops(out.specialize(f.shape.nq % bq == 0 && f.shape.d_v % tile_e == 0),
                TailStrategy::RoundUp);
    block_loops(out, kGuard);
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

    // The block's queries transposed (query index fastest) for vector loads across queries.
    Func qt = f.scores.q.in(f.scores.dot);
    Var qd = qt.args()[0], qi = qt.args()[1];
    qt.compute_at(out, io).reorder_storage(qi, qd).reorder(qi, qd).vectorize(qi, vec, kGuard);

    // The block's scores, query index fastest, computed in register tiles of
    // block_q x key_tile. With at least one tile of keys the last tile shifts inwards and
    // recomputes a few scores rather than guarding every key of every tile.
    Func dot = f.scores.dot;
    Func dot_block = dot.in();
    dot_block.compute_at(out, io).reorder_storage(v.i, v.j);
    schedule_score_tiles(dot, dot_block, f.scores.d, f.shape.nk, bq, p);

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
    // The causal band: at most kCausalGroup keys per block, masked per query.
    if (f.causal) {
        sm.row_max.update(1).reorder(v.i, sm.max_band).vectorize(v.i, bq, kGuard);
        sm.row_sum.update(1).reorder(v.i, sm.sum_band).vectorize(v.i, bq, kGuard);
    }

    // P V, one register tile per output tile.
    Func acc = f.weighted_sum.acc;
    if (feature_tiles) {
        // The block's accumulators live at the block (d_v x block_q floats), so that P V can take
        // its keys in chunks outside the tiles; within a chunk a tile's accumulators stay in
        // registers. Calls whose values fit the cache run the keys in one piece.
        acc.compute_at(out, io).reorder_storage(v.e, v.i).bound_storage(v.i, bq).vectorize(v.e, vec,
                                                                                           kGuard);
        Var et("et"), ef("ef");
        const Halide::RVar keys = f.weighted_sum.keys;
        auto pv_tiles = [&](Stage s) -> Stage {
            return s.split(v.i, iq, ir, p.value_rows, kGuard)
                .split(v.e, et, ef, tile_e, kGuard)
                .split(ef, eu, el, vec, kGuard)
                .vectorize(el)
                .unroll(eu)
                .unroll(ir);
        };
        if (p.value_key_chunk > 0) {
            Halide::RVar kc("kc"), ki("ki");
            pv_tiles(acc.update(0).specialize(f.shape.nk * f.shape.d_v >
                                              FusedParams::kChunkedValueFloats))
                .split(keys, kc, ki, p.value_key_chunk, kGuard)
                .reorder(el, eu, ir, ki, et, iq, kc);
        }
        pv_tiles(acc.update(0)).reorder(el, eu, ir, keys, et, iq);
    } else {
        // Per key: query_vectors vector loads of weights, value_tile broadcasts of values.
        acc.compute_at(out, eo)
            .reorder_storage(v.i, v.e)
            .bound_storage(v.i, bq)
            .bound_storage(v.e, p.value_tile)
            .vectorize(v.i, bq, kGuard)
            .unroll(v.e);
        acc.update(0).reorder(v.e, f.weighted_sum.keys, v.i).vectorize(v.i, bq, kGuard).unroll(v.e);
        if (f.causal) {
            acc.update(1)
                .reorder(v.i, v.e, f.weighted_sum.band)
                .vectorize(v.i, bq, kGuard)
                .unroll(v.e);
        }
    }
}

// The decode path, for one to a few queries against many keys. Vectorizing across queries would
// leave most lanes empty, so the work is organized around the keys, in three passes over all
// heads, each one parallel loop: the scores of every head in chunks of keys (vectorized along
// the head dimension, the lanes of each key added across at the end); the row statistics; and
// the weighted sum in chunks of keys whose partial sums are added at the end. All chunks of a
// row share its maximum, so the partial sums add without rescaling. One parallel loop per pass,
// rather than one per head, keeps both threads streaming keys and values without a barrier per
// head, and splitting keys into chunks lets several threads share one head.
void schedule_decode(algorithm::AttentionFuncs &f, bool with_probs, const Context &ctx,
                     const FusedParams &p) {
    const auto &v = algorithm::dims();
    const int vec = ctx.vector_width();
    Var u("u"), c("c"), jo("jo"), ji("ji"), jt("jt"), jl("jl");

    Func out = f.out;
    out.reorder(v.e, v.i, v.h, v.b).parallel(v.b).parallel(v.h).vectorize(v.e, vec, kGuard);
    Func lse = f.lse;
    lse.parallel(v.b).parallel(v.h);
    lse.compute_with(out, v.h);
    if (with_probs) {
        Func probs = f.probs;
        probs.reorder(v.j, v.i, v.h, v.b).parallel(v.b).parallel(v.h).vectorize(v.j, vec, kGuard);
        probs.compute_with(out, v.h);
    }

    // Scores of every head, in parallel chunks of keys. rfactor keeps one vector of partial
    // sums per key (lanes), whose lanes are added at the end, decode_key_unroll keys at a time.
    Func dot = f.scores.dot;
    dot.compute_root().parallel(v.h).vectorize(v.j, vec, kGuard);
    Halide::RVar d_outer("d_outer"), d_lane("d_lane");
    Func lanes = dot.update().split(f.scores.d, d_outer, d_lane, vec, kGuard).rfactor(d_lane, u);
    dot.update()
        .split(v.j, jo, ji, p.decode_key_chunk, kGuard)
        .split(ji, jt, jl, p.decode_key_unroll, kGuard)
        .reorder(d_lane, jl, jt, v.i, jo, v.h, v.b)
        .parallel(jo)
        .parallel(v.h)
        .parallel(v.b)
        .unroll(d_lane)
        .unroll(jl);
    lanes.compute_at(dot, jt)
        .reorder_storage(u, v.j)
        .bound_storage(v.j, p.decode_key_unroll)
        .vectorize(u)
        .unroll(v.j, p.decode_key_unroll, kGuard);
    // Each key's row is read whole, in a loop over the keys, before the next key's, so the loads
    // walk memory in order. With the keys unrolled, LLVM interleaved their rows (one vector of
    // each key in turn, rows 512 bytes apart at d128); a C++ model of that loop streamed at
    // half the rate of the same loop in order (AVX-512, one thread: 9.5 against 17.3 GB/s; a
    // plain read 18.5), and unrolled in order, the guarded copy of the loop that serves a
    // partial last chunk of keys reversed each pair's rows. In this kernel the order gains less:
    // B1 H32 d128 decode on two threads took 4.04 instead of 4.12 ms at Nk 4096, 2.77 instead
    // of 2.85 at Nk 3000 and 0.57 instead of 0.59 at Nk 1000 (medians of 160 to 650 calls
    // alternating with the previous order, three runs, 2-4% each). With K and V still in the L3
    // from the previous call (Nk 512) it took 12% longer (0.19 against 0.17 ms): the lanes now
    // round-trip through the stack. In a model's decode step each layer's K and V come from
    // memory, as at Nk 4096 here.
    lanes.update().reorder(u, d_outer, v.j).vectorize(u);

    // Row statistics and weights: Nk values per row, a small fraction of the keys' bytes.
    auto &sm = f.softmax;
    sm.row_max.compute_root().parallel(v.h);
    sm.row_max.update(0).parallel(v.h);
    sm.weights.compute_root().parallel(v.h).vectorize(v.j, vec, kGuard);
    sm.row_sum.compute_root().parallel(v.h);
    sm.row_sum.update(0).parallel(v.h);
    if (f.causal) {
        // The causal band (at most kCausalGroup keys per row) in the same layout.
        sm.row_max.update(1).parallel(v.h);
        sm.row_sum.update(1).parallel(v.h);
    }

    // The weighted sum of every head in parallel chunks of keys, then each row's chunks added.
    // Eight vectors of value features (a whole row at d_v = 128 with AVX-512) stay in
    // registers through a chunk, so each value row streams from memory once.
    Func acc = f.weighted_sum.acc;
    acc.compute_at(out, v.h).vectorize(v.e, vec, kGuard);
    Halide::RVar key_chunk("key_chunk"), key_in_chunk("key_in_chunk");
    Func chunks =
        acc.update(0)
            .split(f.weighted_sum.keys, key_chunk, key_in_chunk, p.decode_key_chunk, kGuard)
            .rfactor(key_chunk, c);
    Var et("et"), el("el"), eu("eu");
    chunks.compute_root().reorder(v.e, v.i, c, v.h, v.b).vectorize(v.e, vec, kGuard);
    chunks.update()
        .split(v.e, et, el, 8 * vec, kGuard)
        .split(el, eu, el, vec, kGuard)
        .reorder(el, eu, key_in_chunk, et, v.i, c, v.h, v.b)
        .parallel(c)
        .parallel(v.h)
        .parallel(v.b)
        .vectorize(el)
        .unroll(eu);
    acc.update(0).vectorize(v.e, vec, kGuard);
    if (f.causal) acc.update(1).vectorize(v.e, vec, kGuard);
}

// The probabilities of the key-block path: recomputed scores, one row of keys per vector loop.
void schedule_online_probs(algorithm::OnlineAttentionFuncs &f, const Context &ctx) {
    const auto &v = algorithm::dims();
    const int vec = ctx.vector_width();
    Func probs = f.probs;
    probs.compute_root().parallel(v.b).parallel(v.h).vectorize(v.j, vec, kGuard);
    Func(f.probs_scores.dot).compute_at(probs, v.i).vectorize(v.j, vec, kGuard);
    Func(f.probs_scores.dot).update().reorder(v.j, f.probs_scores.d).vectorize(v.j, vec, kGuard);
}

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
    Halide::Stage update = walk.update();
    Var io("io"), ir("ir"), eu("eu"), el("el");
    update.split(ii, io, ir, p.value_rows)
        .split(e, eo, ei, p.value_vectors * vec, kGuard)
        .split(ei, eu, el, vec)
        .reorder(el, eu, ir, eo, io, Halide::RVar(f.blocks))
        .vectorize(el)
        .unroll(eu)
        .unroll(ir);
    if (f.key_splits > 1) {
        // The splits of one group are parallel tasks inside its task: a call with fewer groups
        // than threads (a few queries against a long cache) still keeps every thread busy.
        update.parallel(args[2]);
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
    // A key block's queries, transposed (query index fastest) for vector loads across queries.
    const Halide::RVar blocks(f.blocks);
    Func qt = f.scores.q.in(f.scores.dot);
    Var qd = qt.args()[0], qi = qt.args()[1];
    qt.compute_at(walk, blocks)
        .bound_extent(qi, bq)
        .reorder_storage(qi, qd)
        .reorder(qi, qd)
        .vectorize(qi, bq);

    // The block's scores in register tiles of block_q x key_tile, as in the block path.
    Func dot = f.scores.dot;
    Func dot_block = dot.in();
    dot_block.compute_at(walk, blocks).bound_extent(v.i, bq).reorder_storage(v.i, v.j);
    schedule_score_tiles(dot, dot_block, f.scores.d, f.shape.nk, bq, p);

    // The block's maximum, weights and sum, vectorized across the group's queries. The maximum is
    // stored query-fastest too: stored block-fastest (its first argument), every access was a
    // gather or scatter (B1 H8 Nq17 Nk30000 d64: 19 to 15 ms).
    const Var t = f.block_max.args()[0];
    f.block_max.compute_at(walk, blocks)
        .bound_extent(v.i, bq)
        .reorder_storage(v.i, t)
        .vectorize(v.i, bq);
    f.block_max.update().reorder(v.i, f.block_keys_max).vectorize(v.i, bq);
    f.block_weights.compute_at(walk, blocks)
        .bound_extent(v.i, bq)
        .reorder_storage(v.i, v.j)
        .reorder(v.i, v.j)
        .vectorize(v.i, bq);
    f.block_sum.compute_at(walk, blocks).bound_extent(v.i, bq).vectorize(v.i, bq);
    f.block_sum.update().reorder(v.i, f.block_keys_sum).vectorize(v.i, bq);

    // The block's weighted values in register tiles of value_rows x value_vectors vectors, one
    // per tile of the merge.
    f.block_acc.compute_at(walk, eo).bound_extent(v.i, p.value_rows);
    schedule_feature_tile(f.block_acc, f.block_keys_acc, p, vec);

    if (with_probs) schedule_online_probs(f, ctx);
}

}  // namespace

SearchSpace CpuFused::attention_search_space(const Context &ctx) const {
    Context untuned = ctx;
    untuned.params.clear();
    const FusedParams d(untuned);
    const std::vector<TunableParam> decode = {
        {"decode_key_chunk", {256, 512, 1024, 2048, 4096}, d.decode_key_chunk},
        {"decode_key_unroll", {2, 4}, d.decode_key_unroll}};
    const std::vector<TunableParam> tiles = {
        {"query_vectors", {1, 2, 3, 4}, d.query_vectors},
        {"key_tile", {2, 3, 4, 5, 6, 7, 8, 10, 12}, d.key_tile},
        {"value_tile", {4, 6, 8, 10, 12, 16}, d.value_tile}};
    // Key blocks from 256 keys: below that the online merge (two exponentials per output value
    // and block) costs more than a tenth of the block's multiply-adds at head dim 64.
    const TunableParam key_block{"key_block", {0, 256, 512, 1024, 2048}, d.key_block};
    const TunableParam key_splits{"key_splits", {1, 2, 4, 8}, d.key_splits};
    const std::vector<TunableParam> value_tiles = {
        {"value_rows", {2, 4, 8}, d.value_rows},
        {"value_vectors", {1, 2, 3, 4, 5, 6}, d.value_vectors}};
    const TunableParam features_tile{"features_tile", {0, 1}, d.features_tile};
    const TunableParam value_key_chunk{
        "value_key_chunk", {0, 128, 256, 512, 1024}, d.value_key_chunk};
    const TunableParam split_keys{"split_keys", {0, 1}, 0};
    SearchSpace space;
    if (d.split_keys != 0) {
        // A decode kernel: the block path would leave most lanes empty.
        space.params = decode;
        return space;
    }
    space.params = tiles;
    if (!ctx.causal) {
        space.params.push_back(features_tile);
        space.params.push_back(key_block);
        space.params.push_back(key_splits);
        space.params.insert(space.params.end(), value_tiles.begin(), value_tiles.end());
        space.params.push_back(value_key_chunk);
        // The block path with the P V tile that the default does not use.
        space.starting_points.push_back({{"features_tile", 1 - d.features_tile}});
        // The key-block path with its default tiles, at a block that fits the L2 with its scores
        // and weights (2048 keys: 2 x 256 KiB at block_q = 32) and at a quarter of it.
        space.starting_points.push_back({{"key_block", 2048}});
        space.starting_points.push_back({{"key_block", 512}});
    }
    if (ctx.max_queries > 0) {
        space.params.push_back(split_keys);
        space.params.insert(space.params.end(), decode.begin(), decode.end());
        space.starting_points.push_back({{"split_keys", 1}});
    }
    // Each path reads only its own parameters; the others are reset to their defaults.
    space.irrelevant_to_defaults = [=](std::map<std::string, int> &p) {
        auto reset = [&](const TunableParam &param) {
            if (p.count(param.name) != 0) p[param.name] = param.fallback;
        };
        const bool decode_path = p.count("split_keys") != 0 && p.at("split_keys") != 0;
        if (decode_path) {
            for (const auto &param : tiles) reset(param);
            reset(key_block);
        } else {
            for (const auto &param : decode) reset(param);
        }
        const bool key_block_path =
            !decode_path && p.count("key_block") != 0 && p.at("key_block") != 0;
        if (decode_path || key_block_path) reset(features_tile);
        if (!key_block_path) reset(key_splits);
        // Only the block path's feature tiles split P V's keys into chunks.
        if (decode_path || key_block_path || !uses_feature_tiles(p)) reset(value_key_chunk);
        if (!decode_path && uses_feature_tiles(p)) {
            reset(tiles[2]);  // value_tile: these paths tile P V by value_rows.
        } else {
            for (const auto &param : value_tiles) reset(param);
        }
    };
    space.constraint = [](const std::map<std::string, int> &p, const Context &c) -> std::string {
        if (p.count("split_keys") != 0 && p.at("split_keys") != 0) return "";
        const int regs = vector_registers(c.target);
        const int qv = p.at("query_vectors");
        // A register tile needs its accumulators, the query (or weight) vectors of one step and
        // a broadcast register.
        if (qv * p.at("key_tile") + qv + 1 > regs) return "Q K^T tile exceeds the registers";
        if (qv * p.at("value_tile") + qv + 1 > regs) return "P V tile exceeds the registers";
        if (uses_feature_tiles(p)) {
            const int rows = p.at("value_rows"), vv = p.at("value_vectors");
            if (rows * vv + vv + 1 > regs)
                return "value_rows x value_vectors P V tile exceeds the registers";
            if ((qv * c.vector_width()) % rows != 0) {
                return "value_rows must divide the group of queries";
            }
        }
        if (c.causal && algorithm::kCausalGroup % (qv * c.vector_width()) != 0) {
            return "a block must divide the causal group of " +
                   std::to_string(algorithm::kCausalGroup) + " queries";
        }
        return "";
    };
    return space;
}

std::map<std::string, int> CpuFused::attention_params(const Context &ctx) const {
    const FusedParams p(ctx);
    std::map<std::string, int> values;
    for (const auto &[name, field] : FusedParams::fields()) values[name] = p.*field;
    return values;
}

// A stage alone has nothing to fuse with: the stage kernels use cpu_tiled's schedules.
void CpuFused::projection(algorithm::ProjectionFuncs &f, const Context &ctx) const {
    CpuTiled().projection(f, ctx);
}
void CpuFused::scores(algorithm::ScoresFuncs &f, algorithm::KeyMask mask,
                      const Context &ctx) const {
    CpuTiled().scores(f, mask, ctx);
}
void CpuFused::softmax(algorithm::SoftmaxFuncs &f, algorithm::KeyMask mask,
                       const Context &ctx) const {
    CpuTiled().softmax(f, mask, ctx);
}
void CpuFused::weighted_sum(algorithm::WeightedSumFuncs &f, algorithm::KeyMask mask,
                            const Context &ctx) const {
    CpuTiled().weighted_sum(f, mask, ctx);
}

void CpuFused::attention(algorithm::AttentionFuncs &f, bool with_probs, const Context &ctx) const {
    const FusedParams p(ctx);
    if (p.split_keys != 0) {
        schedule_decode(f, with_probs, ctx, p);
    } else {
        schedule_blocks(f, with_probs, ctx, p);
    }
}

bool CpuFused::uses_online_softmax(const Context &ctx) const {
    return FusedParams(ctx).key_block > 0;
}

Schedule::OnlineLayout CpuFused::online_layout(const Context &ctx) const {
    const FusedParams p(ctx);
    OnlineLayout layout;
    layout.key_block = p.key_block;
    layout.query_group = p.query_vectors * ctx.vector_width();
    layout.key_splits = p.key_splits;
    return layout;
}

void CpuFused::online_attention(algorithm::OnlineAttentionFuncs &f, bool with_probs,
                                const Context &ctx) const {
    schedule_online(f, with_probs, ctx, FusedParams(ctx));
}

void CpuFused::mha(algorithm::MhaFuncs &f, const Context &ctx) const {
    // The projections are GEMMs on whole sequences (cpu_tiled's); the attention between them is
    // fused per block of queries. The head outputs are concatenated into the rows that the
    // output projection reads.
    const auto &v = algorithm::dims();
    const FusedParams p(ctx);
    const GemmParams gemm = GemmParams::for_target(ctx.target);
    for (auto *proj : {&f.q_proj, &f.k_proj, &f.v_proj, &f.out_proj}) {
        Func(proj->y).compute_root();
        schedule_projection_gemm(*proj, ctx, gemm);
    }
    Func(f.attention.out).compute_root();
    schedule_blocks(f.attention, false, ctx, p);
    Func(f.concat).compute_root().parallel(v.b).vectorize(v.o, ctx.vector_width(), kGuard);
}

}  // namespace attngen::schedules
