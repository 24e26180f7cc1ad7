// cuda_fused: the facts of the schedule as data (schedule.cpp has its Halide code).
#include "attngen/cuda_limits.h"
#include "attngen/schedules.h"

namespace attngen::schedule_info {

ScheduleInfo cuda_fused() {
    ScheduleInfo s;
    s.name = "cuda_fused";
    s.summary =
        "attention as one CUDA kernel per group of 32 queries (online softmax over "
        "blocks of 32 keys in shared memory); CPU entries run cpu_fused's key blocks";
    s.cuda = true;
    // The default on a GPU: no Nq x Nk buffer, and causal groups stop at their last block.
    s.priority = 20;
    s.not_served[Op::kMha] =
        "it fuses the attention alone; the layer's projections are GEMMs, which cuda_tiled "
        "schedules with the rest of the layer (name cuda_tiled)";
    const std::string stage =
        "a stage alone has nothing to fuse with; cuda_tiled schedules the stages (name it)";
    for (Op op : {Op::kProjection, Op::kScores, Op::kSoftmax, Op::kWeightedSum}) {
        s.not_served[op] = stage;
    }
    // A thread block keeps a key block's K and V rows in 48 KiB of shared memory.
    s.max_head_dims_on_gpu = kCudaFusedMaxHeadDims;
    return s;
}

}  // namespace attngen::schedule_info
