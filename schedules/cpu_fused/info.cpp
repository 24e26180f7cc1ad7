// cpu_fused: the facts of the schedule as data (schedule.cpp has its Halide code).
#include "attngen/schedules.h"

namespace attngen::schedule_info {

ScheduleInfo cpu_fused() {
    ScheduleInfo s;
    s.name = "cpu_fused";
    s.summary =
        "scores, softmax and P V per block of queries (no Nq x Nk buffer); decode and "
        "key-block paths for few queries and long sequences";
    // The fastest CPU schedule on every shape the benchmark times (bench/RESULTS.md): the
    // default.
    s.priority = 40;
    const std::string stage =
        "a stage alone has nothing to fuse with; cpu_tiled schedules the stages (name it)";
    for (Op op : {Op::kProjection, Op::kScores, Op::kSoftmax, Op::kWeightedSum}) {
        s.not_served[op] = stage;
    }
    return s;
}

}  // namespace attngen::schedule_info
