#include "cpu_fused.h"

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
    // Value features per register tile of P V: block_q x value_tile accumulators (16 zmm).
    int value_tile = 8;
    // Keys per parallel task in the decode path, so that several threads share one query.
    int decode_key_chunk = 1024;

    static std::vector<std::string> names() {
        return {"query_vectors", "key_tile", "value_tile", "decode_key_chunk"};
    }
    FusedParams() = default;
    explicit FusedParams(const Context &ctx) {
        ctx.check_params(names());
        query_vectors = ctx.param("query_vectors", query_vectors);
        key_tile = ctx.param("key_tile", key_tile);
        value_tile = ctx.param("value_tile", value_tile);
        decode_key_chunk = ctx.param("decode_key_chunk", decode_key_chunk);
    }
};

// The block path: attention for blocks of block_q query rows, vectorized across the queries of
// a block. Everything a block needs (its scores, weights and row statistics) is computed inside
// the loop over blocks; no Nq x Nk buffer exists.
void schedule_blocks(algorithm::AttentionFuncs &f, bool with_probs, const Context &ctx,
                     const FusedParams &p) {
    const auto &v = algorithm::dims();
    const int bq = p.query_vectors * ctx.vector_width();
    Var io("io"), ii("ii"), eo("eo"), ei("ei"), jo("jo"), ji("ji");

    // Blocks of queries; blocks, heads and batch elements are all parallel loops, so that two
    // threads find work whether a call has many heads, many batch elements or one long
    // sequence. When Nq and d_v divide the block and tile sizes
    // (the common case), a specialization drops every tail check from the inner loops.
    Func out = f.out;
    auto block_loops = [&](Stage s, TailStrategy tail) {
        s.split(v.i, io, ii, bq, tail)
            .split(v.e, eo, ei, p.value_tile, tail)
            .reorder(ii, ei, eo, io, v.h, v.b)
            .vectorize(ii)
            .unroll(ei)
            .parallel(io)
            .parallel(v.h)
            .parallel(v.b);
    };
    block_loops(out.specialize(f.shape.nq % bq == 0 && f.shape.d_v % p.value_tile == 0),
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
    qt.compute_at(out, io).reorder_storage(qi, qd).reorder(qi, qd).vectorize(qi, ctx.vector_width(),
                                                                             kGuard);

    // The block's scores, query index fastest, computed in register tiles of
    // block_q x key_tile. With at least one tile of keys the last tile shifts inwards and
    // recomputes a few scores rather than guarding every key of every tile.
    Func dot = f.scores.dot;
    Func dot_block = dot.in();
    dot_block.compute_at(out, io).reorder_storage(v.i, v.j);
    dot_block.specialize(f.shape.nk >= p.key_tile)
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
    dot.update()
        .reorder(v.i, v.j, f.scores.d)
        .vectorize(v.i, bq, kGuard)
        .unroll(v.j, p.key_tile, kGuard);

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

    // P V in register tiles of block_q x value_tile, one per output tile.
    Func acc = f.weighted_sum.acc;
    acc.compute_at(out, eo)
        .reorder_storage(v.i, v.e)
        .bound_storage(v.i, bq)
        .bound_storage(v.e, p.value_tile)
        .vectorize(v.i, bq, kGuard)
        .unroll(v.e);
    acc.update(0).reorder(v.e, f.weighted_sum.keys, v.i).vectorize(v.i, bq, kGuard).unroll(v.e);

    // The causal band: at most kCausalGroup keys per block, masked per query.
    if (f.causal) {
        sm.row_max.update(1).reorder(v.i, sm.max_band).vectorize(v.i, bq, kGuard);
        sm.row_sum.update(1).reorder(v.i, sm.sum_band).vectorize(v.i, bq, kGuard);
        acc.update(1).reorder(v.i, v.e, f.weighted_sum.band).vectorize(v.i, bq, kGuard).unroll(v.e);
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
    // sums per key (lanes); four keys at a time give four independent FMA chains.
    Func dot = f.scores.dot;
    dot.compute_root().vectorize(v.j, vec, kGuard);
    Halide::RVar d_outer("d_outer"), d_lane("d_lane");
    Func lanes = dot.update().split(f.scores.d, d_outer, d_lane, vec, kGuard).rfactor(d_lane, u);
    dot.update()
        .split(v.j, jo, ji, p.decode_key_chunk, kGuard)
        .split(ji, jt, jl, 4, kGuard)
        .reorder(d_lane, jl, jt, v.i, jo, v.h, v.b)
        .parallel(jo)
        .parallel(v.h)
        .parallel(v.b)
        .atomic()
        .vectorize(d_lane)
        .unroll(jl);
    lanes.compute_at(dot, jt).reorder_storage(u, v.j).bound_storage(v.j, 4).vectorize(u).unroll(
        v.j, 4, kGuard);
    lanes.update().reorder(u, v.j, d_outer).vectorize(u).unroll(v.j, 4, kGuard);

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

// Up to this many queries the decode path wins: the block path would fill at most a quarter of
// the lanes of one block.
constexpr int kDecodeQueries = 8;

bool uses_decode_path(const Context &ctx) {
    return ctx.max_queries > 0 && ctx.max_queries <= kDecodeQueries;
}

}  // namespace

SearchSpace CpuFused::attention_search_space(const Context &ctx) const {
    const FusedParams d;
    SearchSpace space;
    if (uses_decode_path(ctx)) {
        space.params = {
            {"decode_key_chunk", {256, 512, 1024, 2048, 4096, 8192}, d.decode_key_chunk}};
        return space;
    }
    space.params = {{"query_vectors", {1, 2, 3, 4}, d.query_vectors},
                    {"key_tile", {2, 3, 4, 5, 6, 7, 8, 10, 12}, d.key_tile},
                    {"value_tile", {4, 6, 8, 10, 12, 16}, d.value_tile}};
    space.constraint = [](const std::map<std::string, int> &p, const Context &c) -> std::string {
        const int regs = vector_registers(c.target);
        const int qv = p.at("query_vectors");
        // A register tile needs its accumulators, the query (or weight) vectors of one step and
        // a broadcast register.
        if (qv * p.at("key_tile") + qv + 1 > regs) return "Q K^T tile exceeds the registers";
        if (qv * p.at("value_tile") + qv + 1 > regs) return "P V tile exceeds the registers";
        if (c.causal && algorithm::kCausalGroup % (qv * c.vector_width()) != 0) {
            return "a block must divide the causal group of " +
                   std::to_string(algorithm::kCausalGroup) + " queries";
        }
        return "";
    };
    return space;
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
    if (uses_decode_path(ctx)) {
        schedule_decode(f, with_probs, ctx, p);
    } else {
        schedule_blocks(f, with_probs, ctx, p);
    }
}

void CpuFused::mha(algorithm::MhaFuncs &f, const Context &ctx) const {
    // The projections are GEMMs on whole sequences (cpu_tiled's); the attention between them is
    // fused per block of queries. The head outputs are concatenated into the rows that the
    // output projection reads.
    const auto &v = algorithm::dims();
    const FusedParams p(ctx);
    const GemmParams gemm;
    for (auto *proj : {&f.q_proj, &f.k_proj, &f.v_proj, &f.out_proj}) {
        Func(proj->y).compute_root();
        schedule_projection_gemm(*proj, ctx, gemm);
    }
    Func(f.attention.out).compute_root();
    schedule_blocks(f.attention, false, ctx, p);
    Func(f.concat).compute_root().parallel(v.b).vectorize(v.o, ctx.vector_width(), kGuard);
}

}  // namespace attngen::schedules
