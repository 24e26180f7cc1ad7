// reference: the facts of the schedule as data (schedule.cpp has its Halide code).
#include "attngen/schedules.h"

namespace attngen::schedule_info {

ScheduleInfo reference() {
    ScheduleInfo s;
    s.name = "reference";
    s.summary =
        "every stage computed over its whole domain before the next (compute_root), in "
        "plain serial loops: the slowest schedule and the simplest to trust";
    // Last of the CPU schedules: an empty schedule name takes it only where nothing else is
    // compiled.
    s.priority = 10;
    return s;
}

}  // namespace attngen::schedule_info
