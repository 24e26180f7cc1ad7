// The kernels and schedules of this build, as the dispatch and list_kernels() see them. The build
// generates their tables (cmake/AttngenVariantTable.cmake from kernels/variants.txt and the
// tuning databases, schedules/CMakeLists.txt from each schedule's info.cpp).
#pragma once

#include <string>
#include <vector>

#include "attngen/kernel.h"
#include "attngen/schedules.h"

namespace attngen::detail {

// Generated: the compiled attention and mha kernels, in build order, and the known schedules.
std::vector<Kernel> compiled_kernels();
std::vector<ScheduleInfo> schedule_infos();

// The build's CPU targets (ATTNGEN_TARGETS, ','-joined, most capable first): those of every
// kernel but the CUDA ones and the tuned ones, which have one target each.
extern const char *const kBuildTargets;

// compiled_kernels() with selected_target and serves_calls filled in for this process (decided
// once, after the ATTNGEN_MAX_CPU_ISA limit has been read).
const std::vector<Kernel> &registry();

// schedule_infos(): ours before Halide's autoschedulers, CPU before CUDA, then highest priority
// first.
const std::vector<ScheduleInfo> &schedules();

// The schedule of this name, or nullptr.
const ScheduleInfo *find_schedule_info(const std::string &name);

}  // namespace attngen::detail
