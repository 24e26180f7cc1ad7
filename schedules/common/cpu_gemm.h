// Register-tiled matrix products on the CPU, shared by the schedules that run projections and
// other GEMM-shaped stages as their own kernels.
#pragma once

#include "Halide.h"
#include "algorithm/projection.h"
#include "schedule.h"

namespace attngen::schedules {

// Tile sizes of a GEMM y(o, n) = sum_c x(c, n) w(o, c): register tiles of
// out_vectors x rows accumulators (out_vectors vectors along o), inside cache tiles of
// block_rows rows that one parallel task computes. The defaults are those of targets with 32
// vector registers; for_target() gives each target its own.
struct GemmParams {
    // 4 x 6 = 24 zmm accumulators: each step of the reduction loads 4 vectors of W and
    // broadcasts 6 elements of X for 24 FMAs, and with the 4 loads and a broadcast 29 of the 32
    // registers are in use. Fewer broadcasts per FMA than the previous 2 x 8 (8 per 16): on
    // Zen 4 at 2048 x 512 x 512, measured against cblas_sgemm in one process (JIT, calls
    // interleaved, medians of paired ratios), 4 x 6 ran at 1.06x OpenBLAS on one thread where
    // 2 x 8 ran at 0.94x, and 4 x 4 at 1.05x; 4 x 6 took 5.13 ms on two threads where 2 x 8
    // took 5.85. 2 x 12 and 2 x 14 ran at 0.84x and 0.86x, and 3 x 8 and 4 x 8 at 0.87x when
    // 2 x 8 was chosen.
    int out_vectors = 4;
    int rows = 6;
    // 60 rows per task (10 register tiles of 6): 2048 rows give 35 tasks for two cores. 30 and
    // 60 measured the same on two threads and 36, 42 and 48 up to 5% slower.
    int block_rows = 60;
    // Output columns per block and input features per chunk: the chunk of W in use,
    // 256 x 256 floats = 256 KiB, stays in the 1 MiB L2, as do the block's sums (60 KiB).
    int out_block = 256;
    int chunk = 256;

    // The defaults for `target`. Targets with 16 vector registers (AVX2, SSE4.1) get 2 x 6
    // tiles, 12 accumulators with 2 loads and a broadcast beside them: 2 x 8 spilled there
    // (AVX2 on Zen 4, one thread: 61 GFLOP/s against 96 with 2 x 6; SSE4.1: 31 against 34).
    static GemmParams for_target(const Halide::Target &target);
};

// The operands of a projection that are Funcs converting 16-bit storage to float32
// (algorithm/storage.h), rather than inputs or float32 stages read as they are.
struct WidenedOperands {
    bool rows = false;     // f.x
    bool weights = false;  // f.w
};

// Schedules a projection (product and y) as a GEMM, parallel over blocks of rows. Widened
// operands are converted before the GEMM reads them, the weights once per call and the rows once
// per block of rows, into float32 buffers that the register tiles read, so that no conversion
// sits in the GEMM's inner loop.
void schedule_projection_gemm(algorithm::ProjectionFuncs &f, const Context &ctx,
                              const GemmParams &p, WidenedOperands widened = {});

}  // namespace attngen::schedules
