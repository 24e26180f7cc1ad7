#include "cpu_gemm.h"

#include "algorithm/dims.h"

namespace attngen::schedules {

using Halide::Func;
using Halide::TailStrategy;
using Halide::Var;

GemmParams GemmParams::for_target(const Halide::Target &target) {
    GemmParams p;
    if (vector_registers(target) < 32) p.out_vectors = 2;
    return p;
}

void schedule_projection_gemm(algorithm::ProjectionFuncs &f, const Context &ctx,
                              const GemmParams &p, WidenedOperands widened) {
    const auto &v = algorithm::dims();
    const int vec = ctx.vector_width();
    const int tile_o = p.out_vectors * vec;
    const auto G = TailStrategy::GuardWithIf;
    Var no("no"), ni("ni"), ob("ob"), oi("oi"), nr("nr"), nt("nt"), ot("ot");

    // Rows in blocks of block_rows and outputs in blocks of out_block: one parallel task per
    // row block sweeps the output blocks. Batch elements are independent tasks too.
    Func y = f.y;
    y.split(v.n, no, ni, p.block_rows, G)
        .split(v.o, ob, oi, p.out_block, G)
        .reorder(oi, ni, ob, no, v.b)
        .vectorize(oi, vec, G)
        .parallel(no)
        .parallel(v.b);

    // The sums of one (row block, output block), accumulated over chunks of the input features
    // so that the chunk of W in use (chunk x out_block floats) stays in L2, each chunk in
    // register tiles of rows x tile_o that stay in registers through the chunk. The rows of the
    // sums are stored out_block floats apart whatever the block's width. With a row stride
    // known only at run time the tile's rows may overlap as far as LLVM can tell, and the
    // generated loop loaded and stored every accumulator on every step: so it was for the
    // projections that feed attention in mha, whose bounds come from their consumers. The
    // layer (g) (B1 N2048 d_model 512 H8, cpu_fused, two threads) took 94 ms that way and 74 ms
    // with the fixed stride.
    Func product = f.product;
    Halide::RVar co("co"), ci("ci");
    product.compute_at(y, ob).bound_storage(v.o, p.out_block).vectorize(v.o, vec, G);
    product.update()
        .split(f.c, co, ci, p.chunk, G)
        .split(v.n, nt, nr, p.rows, G)
        .split(v.o, ot, oi, tile_o, G)
        .reorder(oi, nr, ci, ot, nt, co)
        .vectorize(oi, tile_o)
        .unroll(nr);

    // Converted where the tiles read them, 16-bit operands cost a conversion per vector of W and
    // per broadcast of x on every step of the reduction (float16's are integer arithmetic,
    // storage.cpp), which made the float16 layer (g) 1.2x the float32 layer's time and its
    // kernels several times as long to generate. Converted first, they cost one pass over W per
    // call and one over the rows; a block's rows (block_rows x d_in floats, 120 KiB for d_in 512)
    // stay in L2 for the output blocks that read them. Each conversion is a wrapper of its own
    // projection: the k and v projections read the same rows.
    if (widened.weights) {
        Func w = Func(f.w).in(product);
        const std::vector<Var> args = w.args();
        w.compute_root().parallel(args[1]).vectorize(args[0], vec, G);
    }
    if (widened.rows) {
        Func rows = Func(f.x).in(product);
        const std::vector<Var> args = rows.args();
        rows.compute_at(y, no).vectorize(args[0], vec, G);
    }
}

}  // namespace attngen::schedules
