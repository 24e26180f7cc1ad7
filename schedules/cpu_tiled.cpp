#include "cpu_tiled.h"

#include "algorithm/dims.h"
#include "cpu_gemm.h"

namespace attngen::schedules {

using Halide::Func;
using Halide::LoopLevel;
using Halide::TailStrategy;
using Halide::Var;

namespace {

constexpr TailStrategy kGuard = TailStrategy::GuardWithIf;

// Parameters of cpu_tiled with the values measured best on a 2-core Zen 4 (AVX-512); the
// autotuner overrides them by name.
struct TiledParams {
    GemmParams gemm;
    // Register tile of Q K^T and of P V: rows query rows x lane_vectors vectors (of keys for
    // Q K^T, of value features for P V). 8 x 2 = 16 zmm accumulators.
    int rows = 8;
    int lane_vectors = 2;

    static std::vector<std::string> names() {
        return {"out_vectors", "gemm_rows", "block_rows",  "out_block",
                "chunk",       "rows",      "lane_vectors"};
    }
    TiledParams() = default;
    explicit TiledParams(const Context &ctx) : gemm(GemmParams::for_target(ctx.target)) {
        ctx.check_params(names());
        gemm.out_vectors = ctx.param("out_vectors", gemm.out_vectors);
        gemm.rows = ctx.param("gemm_rows", gemm.rows);
        gemm.block_rows = ctx.param("block_rows", gemm.block_rows);
        gemm.out_block = ctx.param("out_block", gemm.out_block);
        gemm.chunk = ctx.param("chunk", gemm.chunk);
        rows = ctx.param("rows", rows);
        lane_vectors = ctx.param("lane_vectors", lane_vectors);
    }
};

// Scores in register tiles of rows queries x lane keys, keys vectorized. scores is computed at
// `at` (root for the stage kernel, per head in the composed attention); its loops over query
// rows are parallel when `parallel_rows` (the stage kernel, where nothing else is parallel).
void schedule_scores(algorithm::ScoresFuncs &f, const algorithm::KeyMask &mask, const Context &ctx,
                     const TiledParams &p, bool is_root) {
    const auto &v = algorithm::dims();
    const int lanes = p.lane_vectors * ctx.vector_width();
    Var io("io"), ii("ii"), jo("jo"), ji("ji");
    Func scores = f.scores;
    scores.split(v.i, io, ii, p.rows, kGuard)
        .split(v.j, jo, ji, lanes, kGuard)
        .reorder(ji, ii, jo, io, v.h, v.b)
        .vectorize(ji)
        .unroll(ii);
    if (is_root) scores.parallel(v.h).parallel(v.b);
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
    Func(mask.end).compute_root();
}

// Row statistics of a softmax, one query row at a time with the reductions over keys
// vectorized (each vector of keys reduced across its lanes).
void schedule_row_statistics(algorithm::SoftmaxFuncs &f, const algorithm::KeyMask &mask,
                             const Context &ctx, Func consumer, Var row) {
    const auto &v = algorithm::dims();
    const int vec = ctx.vector_width();
    f.row_max.compute_at(consumer, row);
    f.row_max.update(0).atomic().vectorize(f.max_keys, vec, kGuard);
    f.weights.compute_at(consumer, row).vectorize(v.j, vec, kGuard);
    f.row_sum.compute_at(consumer, row);
    f.row_sum.update(0).atomic().vectorize(f.sum_keys, vec, kGuard);
    if (mask.causal) {
        f.row_max.update(1).atomic().vectorize(f.max_band, vec, kGuard);
        f.row_sum.update(1).atomic().vectorize(f.sum_band, vec, kGuard);
    }
}

// P V in register tiles of rows queries x lane value features, value features vectorized.
void schedule_weighted_sum(algorithm::WeightedSumFuncs &f, const algorithm::KeyMask &mask,
                           const Context &ctx, const TiledParams &p, bool is_root) {
    const auto &v = algorithm::dims();
    const int lanes = p.lane_vectors * ctx.vector_width();
    Var io("io"), ii("ii"), eo("eo"), ei("ei");
    Func out = f.out;
    out.split(v.i, io, ii, p.rows, kGuard)
        .split(v.e, eo, ei, lanes, kGuard)
        .reorder(ei, ii, eo, io, v.h, v.b)
        .vectorize(ei)
        .unroll(ii);
    if (is_root) out.parallel(v.h).parallel(v.b);
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
    if (mask.causal) {
        acc.update(1)
            .reorder(v.e, v.i, f.band)
            .vectorize(v.e, lanes, kGuard)
            .unroll(v.i, p.rows, kGuard);
    }
    Func(mask.end).compute_root();
}

}  // namespace

void CpuTiled::projection(algorithm::ProjectionFuncs &f, const Context &ctx) const {
    schedule_projection_gemm(f, ctx, TiledParams(ctx).gemm);
}

void CpuTiled::scores(algorithm::ScoresFuncs &f, algorithm::KeyMask mask,
                      const Context &ctx) const {
    schedule_scores(f, mask, ctx, TiledParams(ctx), true);
}

void CpuTiled::softmax(algorithm::SoftmaxFuncs &f, algorithm::KeyMask mask,
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
    schedule_row_statistics(f, mask, ctx, probs, v.i);
    Func(mask.end).compute_root();
}

void CpuTiled::weighted_sum(algorithm::WeightedSumFuncs &f, algorithm::KeyMask mask,
                            const Context &ctx) const {
    schedule_weighted_sum(f, mask, ctx, TiledParams(ctx), true);
}

void CpuTiled::attention(algorithm::AttentionFuncs &f, bool with_probs, const Context &ctx) const {
    const auto &v = algorithm::dims();
    const TiledParams p(ctx);
    // One head at a time, each stage over the whole head: scores, then the row statistics and
    // weights, then P V. Heads and batch elements are the parallel tasks.
    schedule_weighted_sum(f.weighted_sum, f.mask, ctx, p, true);
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
    schedule_scores(f.scores, f.mask, ctx, p, false);
    auto &sm = f.softmax;
    const int vec = ctx.vector_width();
    sm.row_max.compute_at(out, v.h);
    sm.row_max.update(0).atomic().vectorize(sm.max_keys, vec, kGuard);
    sm.weights.compute_at(out, v.h).vectorize(v.j, vec, kGuard);
    sm.row_sum.compute_at(out, v.h);
    sm.row_sum.update(0).atomic().vectorize(sm.sum_keys, vec, kGuard);
    if (f.causal) {
        sm.row_max.update(1).atomic().vectorize(sm.max_band, vec, kGuard);
        sm.row_sum.update(1).atomic().vectorize(sm.sum_band, vec, kGuard);
    }
}

SearchSpace CpuTiled::attention_search_space(const Context &) const {
    // The composed attention reads rows and lane_vectors (the GEMM parameters concern the
    // projections of mha).
    const TiledParams d;
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

}  // namespace attngen::schedules
