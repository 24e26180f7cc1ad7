// cpu_tiled: every stage as its own register-tiled, vectorized, parallel kernel, materializing
// its whole output before the next stage starts (per head for the composed attention). It is
// the fast way to run stages separately, the schedule of the stage kernels, and the baseline that
// shows what fusion saves.
#include "schedule.h"

#include "algorithm/dims.h"
#include "cpu_gemm.h"

namespace attngen::schedules {

using Halide::Func;
using Halide::LoopLevel;
using Halide::TailStrategy;
using Halide::Var;

namespace {

class CpuTiled final : public Schedule {
  public:
    CpuTiled() : Schedule("cpu_tiled") {}
    void projection(algorithm::ProjectionFuncs &f, const Context &ctx) const override;
    void scores(algorithm::ScoresFuncs &f, const algorithm::KeyMask &mask,
                const Context &ctx) const override;
    void softmax(algorithm::SoftmaxFuncs &f, const algorithm::KeyMask &mask,
                 const Context &ctx) const override;
    void weighted_sum(algorithm::WeightedSumFuncs &f, const algorithm::KeyMask &mask,
                      const Context &ctx) const override;
    void attention(algorithm::AttentionFuncs &f, bool with_probs,
                   const Context &ctx) const override;
    void mha(algorithm::MhaFuncs &f, const Context &ctx) const override;
    SearchSpace attention_search_space(const Context &ctx) const override;
    std::map<std::string, int> attention_params(const Context &ctx) const override;
};

constexpr TailStrategy kGuard = TailStrategy::GuardWithIf;

// Parameters of cpu_tiled with the values measured best on a 2-core Zen 4 (AVX-512); the
// autotuner overrides them by name.
struct TiledParams {
    GemmParams gemm;
    // Register tile of Q K^T and of P V: rows query rows x lane_vectors vectors (of keys for
    // Q K^T, of value features for P V): 4 x 4 = 16 accumulators, 4 x 2 = 8 with 16 registers.
    // Each step loads lane_vectors vectors and broadcasts one element per row, so wide tiles of
    // few rows load less per FMA. Composed attention on a 2-core Zen 4, AOT kernels, medians of 3
    // repetitions: AVX-512 4 x 4 took 52.8 ms on B1 H8 N2048 d64 and 3.11 ms on B1 H8 Nq256
    // Nk1024 d64, where 5 x 4 took 53.2 and 3.27, 6 x 4 57.2 and 3.17, 3 x 4 54.7 and 3.23, 4 x 2
    // 69.4 and 4.16, and the previous 8 x 2 68.2 and 4.01 ms. Targets with 16 vector registers
    // get 4 x 2 (the constructor sets it): at Nq256 Nk1024 with AVX2 (JIT, calls interleaved)
    // 4 x 2 took 5.6 ms, 6 x 2 6.2, 4 x 4 6.5 and 8 x 2 8.1; with SSE4.1 4 x 2 10.7 and 8 x 2
    // 11.2 ms.
    int rows = 4;
    int lane_vectors = 4;

    static std::vector<std::string> names() {
        return {"out_vectors", "gemm_rows", "block_rows",  "out_block",
                "chunk",       "rows",      "lane_vectors"};
    }
    explicit TiledParams(const Context &ctx) : gemm(GemmParams::for_target(ctx.target)) {
        ctx.check_params(names());
        gemm.out_vectors = ctx.param("out_vectors", gemm.out_vectors);
        gemm.rows = ctx.param("gemm_rows", gemm.rows);
        gemm.block_rows = ctx.param("block_rows", gemm.block_rows);
        gemm.out_block = ctx.param("out_block", gemm.out_block);
        gemm.chunk = ctx.param("chunk", gemm.chunk);
        const int default_rows = rows;
        const int default_lane_vectors = vector_registers(ctx.target) >= 32 ? lane_vectors : 2;
        rows = ctx.param("rows", rows);
        lane_vectors = ctx.param("lane_vectors", default_lane_vectors);
        // Tuned parameters were searched on one target, where only tiles that fit were
        // admitted, but a tuning given by hand can reach others; on a target with fewer vector
        // registers (16 on AVX2 and SSE4.1, 32 on AVX-512) a tile that does not fit takes this
        // target's defaults, which were measured on it.
        const int registers = vector_registers(ctx.target);
        if (rows >= 1 && lane_vectors >= 1 && rows * lane_vectors + lane_vectors + 1 > registers) {
            lane_vectors = default_lane_vectors;
            if (rows * lane_vectors + lane_vectors + 1 > registers) rows = default_rows;
        }
    }
};

// Key bounds that depend on the query row (causal, windows, prefixes) are computed once per
// call. Otherwise a row's allowed keys depend on its batch element only: inlined, that bound is
// visibly the same for every row of a register tile, so P V tests it once per key, not once per
// row and key.
void schedule_key_end(const algorithm::KeyMask &mask) {
    if (mask.has_band()) mask.compute_root();
}

// Splits f (scores or P V's output, indexed (lane dim, i, h, b)) into register tiles of rows
// query rows x lanes values of `lane`, vectorized, with the rows unrolled; lane_outer is the loop
// over tiles of lanes, where the caller computes the tile's sums. nq and lane_extent are the
// extents of the two tiled dimensions. With at least one whole tile in each, the last tile shifts
// inwards and recomputes a few values, so that the sums always span a whole tile: their loops
// then carry no guards and the sums stay in registers across the reduction. Guarded, the
// generated loops stored every row's sums on every step of the reduction.
void schedule_register_tiles(Func f, Var lane, Var lane_outer, const Halide::Expr &nq,
                             const Halide::Expr &lane_extent, int rows, int lanes, bool is_root) {
    const auto &v = algorithm::dims();
    Var io("io"), ii("ii"), lane_inner(lane.name() + "i");
    auto tile_loops = [&](Halide::Stage s, TailStrategy tail) {
        s.split(v.i, io, ii, rows, tail)
            .split(lane, lane_outer, lane_inner, lanes, tail)
            .reorder(lane_inner, ii, lane_outer, io, v.h, v.b)
            .vectorize(lane_inner)
            .unroll(ii);
        if (is_root) s.parallel(v.h).parallel(v.b);
    };
    tile_loops(f.specialize(nq >= rows && lane_extent >= lanes), TailStrategy::ShiftInwards);
    tile_loops(f, kGuard);
}

// Scores in register tiles of rows queries x lane keys, keys vectorized; nq and nk are the
// extents of the scores' query and key dimensions. The scores are the root of the stage kernel,
// whose heads and batch elements are parallel (is_root), and are computed per head in the
// composed attention.
void schedule_scores(algorithm::ScoresFuncs &f, const algorithm::KeyMask &mask, const Context &ctx,
                     const TiledParams &p, bool is_root, const Halide::Expr &nq,
                     const Halide::Expr &nk) {
    const auto &v = algorithm::dims();
    const int lanes = p.lane_vectors * ctx.vector_width();
    Var jo("jo");
    Func scores = f.scores;
    schedule_register_tiles(scores, v.j, jo, nq, nk, p.rows, lanes, is_root);
    // Keys transposed once per head (key index fastest) for vector loads across keys.
    Func kt = f.k.in(f.dot);
    kt.compute_at(scores, v.h)
        .reorder_storage(v.j, v.d)
        .reorder(v.j, v.d)
        .vectorize(v.j, ctx.vector_width(), kGuard);
    Func dot = f.dot;
    dot.compute_at(scores, jo)
        .bound_storage(v.j, lanes)
        .bound_storage(v.i, p.rows)
        .vectorize(v.j, lanes, kGuard)
        .unroll(v.i, p.rows, kGuard);
    dot.update().reorder(v.j, v.i, f.d).vectorize(v.j, lanes, kGuard).unroll(v.i, p.rows, kGuard);
    schedule_key_end(mask);
}

// One reduction over a row's keys (row_max or row_sum, dense part) in lanes vector lanes. rfactor
// keeps partial results per lane (key modulo lanes), so the loop over the row's keys loads whole
// vectors of scores, and one vector reduction per row combines the lanes at the end. Vectorizing
// the key loop directly (atomic) compiled to a scalar loop per vector of keys, whose max and sum
// chains took a fifth of the composed attention's time. The mask's predicate (RDom::where) stays
// in the loop, so the partial results are a masked store to memory that the next step loads
// again; lanes of several vectors give as many independent chains: with 8 x 2 tiles, one vector
// took 90 ms on B1 H8 N2048 d64 and 4.9 ms on B1 H8 Nq256 Nk1024 d64, four 80.5 and 4.2 ms, eight
// 81.1 and 4.3 ms (the scalar loops: 102 and 5.7 ms).
void schedule_lane_reduction(Func f, const Halide::RDom &keys, int lanes) {
    const auto &v = algorithm::dims();
    Halide::RVar ko(keys.x.name() + "_o"), ki(keys.x.name() + "_lane");
    Var lane("lane");
    Func partial = f.update(0).split(keys.x, ko, ki, lanes, kGuard).rfactor(ki, lane);
    partial.compute_at(f, v.i).vectorize(lane);
    partial.update().vectorize(lane);
    f.update(0).atomic().vectorize(ki);
}

// Row statistics of a softmax, one query row at a time with the reductions over keys in four
// vectors of lanes. The causal band, at most kCausalGroup keys per row, stays a scalar loop.
void schedule_row_statistics(algorithm::SoftmaxFuncs &f, const Context &ctx, Func consumer,
                             Var row) {
    const auto &v = algorithm::dims();
    const int vec = ctx.vector_width();
    f.row_max.compute_at(consumer, row);
    schedule_lane_reduction(f.row_max, f.max_keys, 4 * vec);
    f.weights.compute_at(consumer, row).vectorize(v.j, vec, kGuard);
    f.row_sum.compute_at(consumer, row);
    schedule_lane_reduction(f.row_sum, f.sum_keys, 4 * vec);
}

// P V in register tiles of rows queries x lane value features, value features vectorized.
// nq and d_v are the extents of the output's query and feature dimensions.
void schedule_weighted_sum(algorithm::WeightedSumFuncs &f, const algorithm::KeyMask &mask,
                           const Context &ctx, const TiledParams &p, bool is_root,
                           const Halide::Expr &nq, const Halide::Expr &d_v) {
    const auto &v = algorithm::dims();
    const int lanes = p.lane_vectors * ctx.vector_width();
    Var eo("eo");
    Func out = f.out;
    schedule_register_tiles(out, v.e, eo, nq, d_v, p.rows, lanes, is_root);
    Func acc = f.acc;
    acc.compute_at(out, eo)
        .bound_storage(v.e, lanes)
        .bound_storage(v.i, p.rows)
        .vectorize(v.e, lanes, kGuard)
        .unroll(v.i, p.rows, kGuard);
    acc.update(0)
        .reorder(v.e, v.i, f.keys)
        .vectorize(v.e, lanes, kGuard)
        .unroll(v.i, p.rows, kGuard);
    for (const auto &[stage, band] : {std::pair{1, f.band}, std::pair{2, f.lower_band}}) {
        if (band.defined()) {
            acc.update(stage)
                .reorder(v.e, v.i, band)
                .vectorize(v.e, lanes, kGuard)
                .unroll(v.i, p.rows, kGuard);
        }
    }
    schedule_key_end(mask);
}

void CpuTiled::projection(algorithm::ProjectionFuncs &f, const Context &ctx) const {
    schedule_projection_gemm(f, ctx, TiledParams(ctx).gemm);
}

void CpuTiled::scores(algorithm::ScoresFuncs &f, const algorithm::KeyMask &mask,
                      const Context &ctx) const {
    schedule_scores(f, mask, ctx, TiledParams(ctx), true, f.scores.output_buffer().dim(1).extent(),
                    f.scores.output_buffer().dim(0).extent());
}

void CpuTiled::softmax(algorithm::SoftmaxFuncs &f, const algorithm::KeyMask &mask,
                       const Context &ctx) const {
    const auto &v = algorithm::dims();
    const int vec = ctx.vector_width();
    const TiledParams validated(ctx);  // Rejects unknown parameter names.
    (void)validated;
    Func probs = f.probs;
    probs.reorder(v.j, v.i, v.h, v.b).parallel(v.h).parallel(v.b).vectorize(v.j, vec, kGuard);
    Func lse = f.lse;
    lse.parallel(v.h).parallel(v.b);
    lse.compute_with(probs, v.i);
    schedule_row_statistics(f, ctx, probs, v.i);
    schedule_key_end(mask);
}

void CpuTiled::weighted_sum(algorithm::WeightedSumFuncs &f, const algorithm::KeyMask &mask,
                            const Context &ctx) const {
    schedule_weighted_sum(f, mask, ctx, TiledParams(ctx), true,
                          f.out.output_buffer().dim(1).extent(),
                          f.out.output_buffer().dim(0).extent());
}

void CpuTiled::attention(algorithm::AttentionFuncs &f, bool with_probs, const Context &ctx) const {
    const auto &v = algorithm::dims();
    const TiledParams p(ctx);
    // One head at a time, each stage over the whole head: scores, then the row statistics and
    // weights, then P V. Heads and batch elements are the parallel tasks.
    schedule_weighted_sum(f.weighted_sum, f.mask, ctx, p, true, f.shape.nq, f.shape.d_v);
    Func out = f.out;
    Func lse = f.lse;
    lse.parallel(v.h).parallel(v.b);
    lse.compute_with(out, v.h);
    if (with_probs) {
        Func probs = f.probs;
        probs.reorder(v.j, v.i, v.h, v.b)
            .parallel(v.h)
            .parallel(v.b)
            .vectorize(v.j, ctx.vector_width(), kGuard);
        probs.compute_with(out, v.h);
    }
    Func(f.scores.scores).compute_at(out, v.h);
    schedule_scores(f.scores, f.mask, ctx, p, false, f.shape.nq, f.shape.nk);
    schedule_row_statistics(f.softmax, ctx, out, v.h);
}

SearchSpace CpuTiled::attention_search_space(const Context &ctx) const {
    // The composed attention reads rows and lane_vectors (the GEMM parameters concern the
    // projections of mha). The defaults are the target's.
    Context untuned = ctx;
    untuned.params.clear();
    const TiledParams d(untuned);
    SearchSpace space;
    space.params = {{"rows", {2, 4, 6, 8, 10, 12}, d.rows},
                    {"lane_vectors", {1, 2, 3, 4}, d.lane_vectors}};
    space.constraint = [](const std::map<std::string, int> &p, const Context &c) -> std::string {
        if (p.at("rows") * p.at("lane_vectors") + p.at("lane_vectors") + 1 >
            vector_registers(c.target)) {
            return "register tile exceeds the registers";
        }
        return "";
    };
    return space;
}

std::map<std::string, int> CpuTiled::attention_params(const Context &ctx) const {
    const TiledParams p(ctx);
    return {{"rows", p.rows}, {"lane_vectors", p.lane_vectors}};
}

void CpuTiled::mha(algorithm::MhaFuncs &f, const Context &ctx) const {
    const auto &v = algorithm::dims();
    const TiledParams p(ctx);
    for (auto *proj : {&f.q_proj, &f.k_proj, &f.v_proj, &f.out_proj}) {
        Func(proj->y).compute_root();
        schedule_projection_gemm(*proj, ctx, p.gemm);
    }
    attention(f.attention, false, ctx);
    Func(f.attention.out).compute_root();
    Var nb("nb");
    Func(f.concat).compute_root().parallel(v.b).vectorize(v.o, ctx.vector_width(), kGuard);
}

}  // namespace

const Schedule &registered_cpu_tiled() {
    static const CpuTiled schedule;
    return schedule;
}

}  // namespace attngen::schedules
