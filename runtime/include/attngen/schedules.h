// The schedules this build knows, as data: what each does, which ops it compiles (and why not the
// others), and how the dispatch ranks it. Each schedule states this in its own folder
// (schedules/<name>/info.cpp), next to its Halide code.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "attngen/variant.h"

namespace attngen {

struct ScheduleInfo {
    std::string name;
    std::string summary;  // One line: what it fuses, tiles or materializes.
    // Its kernels run on a CUDA device (and their CPU entries where none is found).
    bool cuda = false;
    // One of Halide's autoschedulers: a baseline for the benchmarks, planned for the shape of
    // its estimates (a smaller call fails), which the test suite leaves out.
    bool autoscheduler = false;
    // Among the compiled schedules for the call's device, an empty schedule name picks the one
    // of highest priority that serves the call: the fastest.
    int priority = 0;
    // The ops it does not compile, each with the reason (by design, not a missing kernel).
    std::map<Op, std::string> not_served;
    // On a GPU it takes calls with d_k + d_v up to this (0: any), and the dispatch leaves wider
    // ones to the next schedule.
    int max_head_dims_on_gpu = 0;
};

// Every schedule this build knows: attngen's own before Halide's autoschedulers, CPU before CUDA,
// then highest priority first.
std::vector<ScheduleInfo> list_schedules();

}  // namespace attngen
