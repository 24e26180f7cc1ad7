// The benchmarks "projection/<implementation>/threads:<n>": one projection of the layer shape
// (g), y [1, 2048, 512] = x [1, 2048, 512] w_q [512, 512] with the bench's own x and w_q, by the
// projection stage kernel of every schedule that compiled one (with a zero bias, as the layer has
// none) and by OpenBLAS's cblas_sgemm in the same process. It is the evidence for the cpu_tiled
// schedule's claim that its projection GEMMs run within about 10% of OpenBLAS sgemm; RESULTS.md
// reports the ratio.
#pragma once

namespace attngen::bench {

void register_projection_benchmarks(int threads);

}  // namespace attngen::bench
