// cuda_tiled: the facts of the schedule as data (schedule.cpp has its Halide code).
#include "attngen/schedules.h"

namespace attngen::schedule_info {

ScheduleInfo cuda_tiled() {
    ScheduleInfo s;
    s.name = "cuda_tiled";
    s.summary =
        "every stage its own CUDA kernel (register-tiled GEMMs, a warp per softmax "
        "row); the scores are materialized; CPU entries run cpu_tiled";
    s.cuda = true;
    // Second to cuda_fused on a GPU, and the one that serves the multi-head layer, the stages and
    // head dims too wide for cuda_fused's shared memory.
    s.priority = 10;
    return s;
}

}  // namespace attngen::schedule_info
