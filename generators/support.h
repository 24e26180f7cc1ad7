// Helpers shared by the generator files: buffer constraints and the hand-off to a schedule.
#pragma once

#include <string>

#include "Halide.h"
#include "schedule.h"

namespace attngen::generators {

// The runtime always passes buffers whose every dimension starts at 0. Telling Halide so removes
// the min offsets from every index computation, and a buffer that breaks the promise is
// rejected with an error instead of being read wrongly.
template <typename Buffer>
void require_zero_mins(Buffer &buffer) {
    for (int d = 0; d < buffer.dimensions(); d++) {
        buffer.dim(d).set_min(0);
    }
}

// A generator parameter left at 0 means "any value, read from the buffers at run time"; a
// positive value specializes the kernel to that value.
inline Halide::Expr param_or(int param, const Halide::Expr &runtime_value) {
    return param > 0 ? Halide::Expr(param) : runtime_value;
}

// The context a schedule sees: the target, the shape bucket (max_queries, 0 = any; d_v, 0 = read
// at run time) and the tuned parameter values ("name=value,..."), which apply only when the
// kernel is compiled for tuning_target, if one is given (schedules::tuning_applies).
inline schedules::Context make_context(const Halide::Target &target, int max_queries,
                                       const std::string &tuning, bool causal = false, int d_v = 0,
                                       const std::string &tuning_target = "") {
    schedules::Context ctx;
    ctx.target = target;
    ctx.max_queries = max_queries;
    ctx.causal = causal;
    ctx.d_v = d_v;
    // Parsed on every target, so that a malformed tuning fails the build wherever it applies.
    ctx.params = schedules::parse_params(tuning);
    if (!schedules::tuning_applies(target, tuning_target)) ctx.params.clear();
    return ctx;
}

// The schedule to apply: the named one, or none when an autoscheduler was requested.
inline const schedules::Schedule *schedule_for(const std::string &name, bool auto_schedule) {
    return auto_schedule ? nullptr : &schedules::schedule_or_error(name);
}

}  // namespace attngen::generators
