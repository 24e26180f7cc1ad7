// Register-tiled matrix products on the CPU, shared by the schedules that run projections and
// other GEMM-shaped stages as their own kernels.
#pragma once

#include "Halide.h"
#include "algorithm/projection.h"
#include "schedule.h"

namespace attngen::schedules {

// Tile sizes of a GEMM y(o, n) = sum_c x(c, n) w(o, c): register tiles of
// out_vectors x rows accumulators (out_vectors vectors along o), inside cache tiles of
// block_rows rows that one parallel task computes.
struct GemmParams {
    // 2 x 8 = 16 zmm accumulators: each step of the reduction loads 2 vectors of W and
    // broadcasts 8 elements of X for 16 FMAs. Measured on Zen 4 (2048 x 512 x 512) when the
    // tile was chosen: 2 x 8 ran at 1.1x OpenBLAS, 3 x 8 and 4 x 8 at 0.87x (more loads in
    // flight than the core keeps). The bench's projection benchmarks, OpenBLAS in the same
    // process, measured 2 x 8 at 0.94x (one thread) and 0.97x (two) on 2026-11-30.
    int out_vectors = 2;
    int rows = 8;
    // 64 rows per task (a multiple of rows): Nq 2048 gives 32 tasks for two cores.
    int block_rows = 64;
    // Output columns per block and input features per chunk: the chunk of W in use,
    // 256 x 256 floats = 256 KiB, stays in the 1 MiB L2, as do the block's sums (64 KiB).
    int out_block = 256;
    int chunk = 256;
};

// Schedules a projection (product and y) as a GEMM, parallel over blocks of rows.
void schedule_projection_gemm(algorithm::ProjectionFuncs &f, const Context &ctx,
                              const GemmParams &p);

}  // namespace attngen::schedules
