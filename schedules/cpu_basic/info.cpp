// cpu_basic: the facts of the schedule as data (schedule.cpp has its Halide code).
#include "attngen/schedules.h"

namespace attngen::schedule_info {

ScheduleInfo cpu_basic() {
    ScheduleInfo s;
    s.name = "cpu_basic";
    s.summary =
        "every stage materialized as in reference, each loop vectorized along its "
        "contiguous dimension and parallel over heads and batch elements";
    // Above reference only: it materializes the Nq x Nk scores, as cpu_tiled does without its
    // register tiles.
    s.priority = 20;
    return s;
}

}  // namespace attngen::schedule_info
