// cuda_tiled: every stage as its own CUDA kernel. Projection, scores and weighted sum are
// register-tiled GEMMs (each thread accumulates a 4 x 4 tile of outputs in registers); the
// softmax gives each row a warp whose lanes reduce strided keys and then combine through
// shuffles. Like cpu_tiled it materializes each stage's output (the Nq x Nk scores included), so
// it is the baseline that shows what cuda_fused saves. A kernel for a target without CUDA (the CPU
// entries of a library that also holds a CUDA entry) gets cpu_tiled's schedule of the same
// algorithm.
#include "schedule.h"

#include <map>
#include <string>
#include <vector>

#include "algorithm/dims.h"

namespace attngen::schedules {

using Halide::Func;
using Halide::RVar;
using Halide::TailStrategy;
using Halide::Var;
using Halide::VarOrRVar;

namespace {

// Sequence lengths and head dims are arbitrary, so every split guards its tail; GuardWithIf also
// keeps the regions that a tile reads inside the inputs.
constexpr TailStrategy kGuard = TailStrategy::GuardWithIf;

// Lanes of a warp: the softmax reduces a row with one warp.
constexpr int kWarp = 32;

// Parameters of cuda_tiled's GPU kernels; the autotuner overrides them by name.
struct TiledParams {
    // GEMM tiles. A thread accumulates a 4 x 4 tile of outputs in registers: 16 accumulators and
    // the 8 operands of a step stay far below the 255 registers a thread may use, and each
    // operand loaded is used 4 times. 16 x 16 threads per block give 256 threads (8 warps,
    // enough to hide memory latency on every architecture since sm_80) and a 64 x 64 output
    // tile per block.
    int register_tile = 4;
    int threads_per_side = 16;
    // Rows of the softmax per thread block: 8 warps, as for the GEMMs.
    int rows_per_block = 8;

    static std::vector<std::string> names() {
        return {"register_tile", "threads_per_side", "rows_per_block"};
    }
    explicit TiledParams(const Context &ctx) {
        ctx.check_params(names());
        register_tile = ctx.param("register_tile", register_tile);
        threads_per_side = ctx.param("threads_per_side", threads_per_side);
        rows_per_block = ctx.param("rows_per_block", rows_per_block);
        const std::string why = limits_violated(register_tile, threads_per_side, rows_per_block);
        if (!why.empty()) schedule_error("cuda_tiled: " + why);
    }
    int block_tile() const { return register_tile * threads_per_side; }

    static constexpr int kMaxThreads = 1024;
    // A thread's registers: its accumulators and one step's operands, below the 255 a thread may
    // use with room for addresses and loop counters.
    static constexpr int kMaxTileRegisters = 128;
    static std::string limits_violated(int register_tile, int threads_per_side,
                                       int rows_per_block) {
        if (register_tile < 1 || threads_per_side < 1 || rows_per_block < 1) {
            return "register_tile, threads_per_side and rows_per_block must be positive";
        }
        if (threads_per_side * threads_per_side > kMaxThreads) {
            return "a GEMM block would have more than 1024 threads";
        }
        if (kWarp * rows_per_block > kMaxThreads) {
            return "a softmax block would have more than 1024 threads";
        }
        if (register_tile * register_tile + 2 * register_tile > kMaxTileRegisters) {
            return "a thread's register tile would need more than " +
                   std::to_string(kMaxTileRegisters) + " registers";
        }
        return "";
    }
};

// Schedules out(x, y, rest...) = epilogue(acc(x, y, rest...)) as a register-tiled GEMM: x is the
// contiguous output dimension, y the rows; rest are fused into the third block dimension. acc,
// whose update reduces over reduction, is computed per thread in registers. x is the innermost
// dimension of each thread's tile so that its loads and stores are 4-wide vectors.
void gpu_gemm(Func out, Func acc, const Var &x, const Var &y, const std::vector<Var> &rest,
              const TiledParams &p) {
    Var xo("xo"), xi("xi"), yo("yo"), yi("yi"), tx("tx"), ty("ty"), xr("xr"), yr("yr");
    out.compute_root()
        .split(x, xo, xi, p.block_tile(), kGuard)
        .split(y, yo, yi, p.block_tile(), kGuard)
        .split(xi, tx, xr, p.register_tile, kGuard)
        .split(yi, ty, yr, p.register_tile, kGuard);
    std::vector<VarOrRVar> order = {xr, yr, tx, ty, xo, yo};
    for (const Var &r : rest) order.push_back(r);
    out.reorder(order);
    Var outer = yo;
    if (!rest.empty()) {
        Var fused = rest[0];
        for (size_t k = 1; k < rest.size(); k++) {
            Var next(fused.name() + "_" + rest[k].name());
            out.fuse(fused, rest[k], next);
            fused = next;
        }
        out.gpu_blocks(xo, yo, fused);
    } else {
        out.gpu_blocks(xo, yo);
    }
    out.gpu_threads(tx, ty).unroll(xr).unroll(yr);

    acc.compute_at(out, tx)
        .bound_storage(x, p.register_tile)
        .bound_storage(y, p.register_tile)
        .unroll(x)
        .unroll(y);
    for (int u = 0; u < acc.num_update_definitions(); u++) {
        acc.update(u).unroll(x).unroll(y);
        // The reduction loop stays outside the register tile: each step loads one column of
        // operands and updates all 16 accumulators.
        std::vector<VarOrRVar> update_order = {x, y};
        for (const auto &r : acc.update(u).get_schedule().rvars())
            update_order.push_back(RVar(r.var));
        acc.update(u).reorder(update_order);
    }
}

// A row reduction (row_max or row_sum, row(i, h, b)) by warps: the 32 lanes of a warp split the
// allowed keys of a row (lane l takes keys 32k + l, so that a warp reads 32 consecutive scores at
// a time), a block holds the warps of 8 rows, and one thread per row then combines its warp's 32
// partial results from shared memory. The band update of causal masks, at most kCausalGroup
// keys, runs in one thread per row.
void gpu_row_reduction(Func row, const Halide::RDom &dense, const TiledParams &p) {
    const auto &v = algorithm::dims();
    Var io("io"), ii("ii"), lane("lane"), hb("hb");
    row.compute_root()
        .fuse(v.h, v.b, hb)
        .split(v.i, io, ii, p.rows_per_block, kGuard)
        .gpu_blocks(io, hb)
        .gpu_threads(ii);
    RVar ko("ko"), ki("ki");
    Func partial = row.update(0).split(RVar(dense.x), ko, ki, kWarp, kGuard).rfactor(ki, lane);
    row.update(0)
        .fuse(v.h, v.b, hb)
        .split(v.i, io, ii, p.rows_per_block, kGuard)
        .gpu_blocks(io, hb)
        .gpu_threads(ii);
    // The partial results of the block's rows, in shared memory.
    partial.compute_at(row, io).gpu_threads(lane, v.i);
    partial.update(0).reorder(lane, v.i, ko).gpu_threads(lane, v.i);
    for (int u = 1; u < row.num_update_definitions(); u++) {
        row.update(u)
            .fuse(v.h, v.b, hb)
            .split(v.i, io, ii, p.rows_per_block, kGuard)
            .gpu_blocks(io, hb)
            .gpu_threads(ii);
    }
}

// An element-wise Func f(x, y, h, b) with one thread per element, 32 x 8 per block.
void gpu_pointwise(Func f, const Var &x, const Var &y, const TiledParams &p) {
    const auto &v = algorithm::dims();
    Var xo("xo"), xi("xi"), yo("yo"), yi("yi"), hb("hb");
    f.compute_root()
        .fuse(v.h, v.b, hb)
        .tile(x, y, xo, yo, xi, yi, kWarp, p.rows_per_block, kGuard)
        .gpu_blocks(xo, yo, hb)
        .gpu_threads(xi, yi);
}

// A per-row Func f(i, h, b) with one thread per row.
void gpu_rows(Func f, const TiledParams &p) {
    const auto &v = algorithm::dims();
    Var io("io"), ii("ii"), hb("hb");
    f.compute_root()
        .fuse(v.h, v.b, hb)
        .split(v.i, io, ii, kWarp * p.rows_per_block, kGuard)
        .gpu_blocks(io, hb)
        .gpu_threads(ii);
}

// The schedule of the CPU entries.
const Schedule &cpu_tiled() {
    return schedule_or_error("cpu_tiled");
}

// Every stage its own kernel on a GPU; the CPU entries take cpu_tiled's schedule of the same
// algorithm, without the GPU kernels' parameters.
class CudaTiled final : public Schedule {
  public:
    CudaTiled() : Schedule("cuda_tiled") {}

    void projection(algorithm::ProjectionFuncs &f, const Context &ctx) const override {
        if (!targets_gpu(ctx)) return cpu_tiled().projection(f, without_params(ctx));
        const auto &v = algorithm::dims();
        gpu_gemm(f.y, f.product, v.o, v.n, {v.b}, TiledParams(ctx));
    }

    void scores(algorithm::ScoresFuncs &f, const algorithm::KeyMask &mask,
                const Context &ctx) const override {
        if (!targets_gpu(ctx)) return cpu_tiled().scores(f, mask, without_params(ctx));
        const auto &v = algorithm::dims();
        gpu_gemm(f.scores, f.dot, v.j, v.i, {v.h, v.b}, TiledParams(ctx));
    }

    void softmax(algorithm::SoftmaxFuncs &f, const algorithm::KeyMask &mask,
                 const Context &ctx) const override {
        if (!targets_gpu(ctx)) return cpu_tiled().softmax(f, mask, without_params(ctx));
        const auto &v = algorithm::dims();
        const TiledParams p(ctx);
        gpu_row_reduction(f.row_max, f.max_keys, p);
        gpu_pointwise(f.weights, v.j, v.i, p);
        gpu_row_reduction(f.row_sum, f.sum_keys, p);
        gpu_pointwise(f.probs, v.j, v.i, p);
        gpu_rows(f.lse, p);
    }

    void weighted_sum(algorithm::WeightedSumFuncs &f, const algorithm::KeyMask &mask,
                      const Context &ctx) const override {
        if (!targets_gpu(ctx)) return cpu_tiled().weighted_sum(f, mask, without_params(ctx));
        const auto &v = algorithm::dims();
        gpu_gemm(f.out, f.acc, v.e, v.i, {v.h, v.b}, TiledParams(ctx));
    }

    void attention(algorithm::AttentionFuncs &f, bool with_probs,
                   const Context &ctx) const override {
        if (!targets_gpu(ctx)) return cpu_tiled().attention(f, with_probs, without_params(ctx));
        // Each stage is its own kernel over all heads; the scores and the weights are materialized
        // in device memory between them.
        scores(f.scores, f.mask, ctx);
        softmax(f.softmax, f.mask, ctx);
        weighted_sum(f.weighted_sum, f.mask, ctx);
    }

    SearchSpace attention_search_space(const Context &ctx) const override {
        SearchSpace space;
        if (!targets_gpu(ctx)) return space;
        const TiledParams d(without_params(ctx));
        space.params = {{"register_tile", {2, 4, 6, 8}, d.register_tile},
                        {"threads_per_side", {8, 16, 32}, d.threads_per_side},
                        {"rows_per_block", {4, 8, 16, 32}, d.rows_per_block}};
        space.constraint = [](const std::map<std::string, int> &p, const Context &) {
            return TiledParams::limits_violated(p.at("register_tile"), p.at("threads_per_side"),
                                                p.at("rows_per_block"));
        };
        return space;
    }

    void mha(algorithm::MhaFuncs &f, const Context &ctx) const override {
        if (!targets_gpu(ctx)) return cpu_tiled().mha(f, without_params(ctx));
        const auto &v = algorithm::dims();
        for (auto *proj : {&f.q_proj, &f.k_proj, &f.v_proj, &f.out_proj}) projection(*proj, ctx);
        attention(f.attention, false, ctx);
        const TiledParams p(ctx);
        Var oo("oo"), oi("oi"), no("no"), ni("ni");
        Func(f.concat)
            .compute_root()
            .tile(v.o, v.n, oo, no, oi, ni, kWarp, p.rows_per_block, kGuard)
            .gpu_blocks(oo, no, v.b)
            .gpu_threads(oi, ni);
    }
};

}  // namespace

const Schedule &registered_cuda_tiled() {
    static const CudaTiled schedule;
    return schedule;
}

}  // namespace attngen::schedules
