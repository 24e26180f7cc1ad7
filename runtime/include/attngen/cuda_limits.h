// Limits of the CUDA schedules that a caller can run into, shared by the runtime's dispatch and
// by the schedules' parameter checks so that the two cannot disagree. Halide-free.
#pragma once

namespace attngen {

// The largest d_k + d_v that the schedule cuda_fused takes on a GPU. A thread block keeps a key
// block's K and V rows (32 of each by default) in shared memory next to its 32 x 32 scores and
// weights: 4 * (32 * (d_k + d_v) + 2048) bytes must fit the 48 KiB a CUDA thread block gets
// without opting in to more, so d_k + d_v <= 320 (head dims up to 160). The runtime sends wider
// calls to cuda_tiled by default and refuses them when cuda_fused is named; a tuned cuda_fused
// layout must fit its shared memory for every head dims up to this.
inline constexpr int kCudaFusedMaxHeadDims = 320;

}  // namespace attngen
