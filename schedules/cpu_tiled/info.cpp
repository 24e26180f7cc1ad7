// cpu_tiled: the facts of the schedule as data (schedule.cpp has its Halide code).
#include "attngen/schedules.h"

namespace attngen::schedule_info {

ScheduleInfo cpu_tiled() {
    ScheduleInfo s;
    s.name = "cpu_tiled";
    s.summary =
        "every stage its own register-tiled, vectorized, parallel kernel; the scores are "
        "materialized per head";
    // Second to cpu_fused: near the GEMM rate in each stage, but it writes and reads the whole
    // score matrix of a head (B1 H8 N2048 d64 on Zen 4: about 3x cpu_fused's time).
    s.priority = 30;
    return s;
}

}  // namespace attngen::schedule_info
