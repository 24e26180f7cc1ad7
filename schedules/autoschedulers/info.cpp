// Halide's autoschedulers as schedules: baselines for the benchmarks. They have no Halide code of
// ours: attngen_add_kernel hands the generator's pipeline to Halide's plugin of the same name,
// which plans it from the variant's estimates.
#include "attngen/schedules.h"

namespace attngen::schedule_info {

namespace {

ScheduleInfo autoscheduler(const char *name, const char *summary) {
    ScheduleInfo s;
    s.name = name;
    s.summary = summary;
    s.autoscheduler = true;
    // Never the default while a schedule of ours is compiled: they ran 8-18x slower than the hand
    // schedules for attention on this project's machines (docs/design.md section 4).
    s.priority = 0;
    const std::string stages = "the build compiles autoscheduled attention and mha kernels only";
    for (Op op : {Op::kProjection, Op::kScores, Op::kSoftmax, Op::kWeightedSum}) {
        s.not_served[op] = stages;
    }
    return s;
}

}  // namespace

ScheduleInfo Adams2019() {
    ScheduleInfo s = autoscheduler("Adams2019",
                                   "Halide's Adams2019 autoscheduler (a learned "
                                   "cost model), planned for the variant's estimates");
    s.not_served[Op::kMha] =
        "Halide 14's Adams2019 cannot schedule the multi-head layer: generation stops with \"Can "
        "only unroll for loops over a constant extent\" (it unrolls the output's value features, "
        "whose count per head is w_v's extent over the KV heads)";
    return s;
}

ScheduleInfo Li2018() {
    return autoscheduler("Li2018",
                         "Halide's Li2018 gradient autoscheduler, planned for the "
                         "variant's estimates");
}

ScheduleInfo Mullapudi2016() {
    return autoscheduler("Mullapudi2016",
                         "Halide's Mullapudi2016 autoscheduler, planned for the "
                         "variant's estimates");
}

}  // namespace attngen::schedule_info
