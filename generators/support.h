// Helpers shared by the generator files: the variant a generator compiles, and buffer
// constraints.
#pragma once

#include <initializer_list>
#include <string>

#include "Halide.h"
#include "attngen/variant.h"
#include "schedule.h"

namespace attngen::generators {

// The variant of the generator parameter "variant" (a spec, attngen/variant.h), which must be of
// one of these ops and name a schedule that serves it; anything else is a Halide user error
// naming the problem, so that the build stops with it.
inline Variant parse_variant(const std::string &spec, std::initializer_list<Op> ops) {
    Variant variant;
    const Status parsed = Variant::parse(spec, &variant);
    if (!parsed.ok()) schedules::schedule_error(parsed.message());
    std::string names;
    bool known = false;
    for (Op op : ops) {
        known |= variant.op == op;
        names += (names.empty() ? "" : ", ") + std::string(op_name(op));
    }
    if (!known) {
        schedules::schedule_error("variant '" + spec + "' is of op " + op_name(variant.op) +
                                  ", but this generator compiles " + names);
    }
    if (variant.low_precision() && variant.op != Op::kAttention && variant.op != Op::kMha) {
        schedules::schedule_error("variant '" + spec +
                                  "' stores 16-bit types, but only attention and mha kernels do "
                                  "so far");
    }
    schedules::check_schedule_serves(variant.schedule, variant.op);
    return variant;
}

// The runtime always passes buffers whose every dimension starts at 0. Telling Halide so removes
// the min offsets from every index computation, and a buffer that breaks the promise is
// rejected with an error instead of being read wrongly.
template <typename Buffer>
void require_zero_mins(Buffer &buffer) {
    for (int d = 0; d < buffer.dimensions(); d++) {
        buffer.dim(d).set_min(0);
    }
}

// require_zero_mins and the extents that Halide's autoschedulers plan for, of one input or
// output buffer.
template <typename Buffer>
void zero_mins_and_estimates(Buffer &buffer, const Halide::Region &estimates) {
    require_zero_mins(buffer);
    buffer.set_estimates(estimates);
}

// A variant's specialized extent, else the value read from the buffers at run time.
inline Halide::Expr param_or(int param, const Halide::Expr &runtime_value) {
    return param > 0 ? Halide::Expr(param) : runtime_value;
}

// The schedule to apply: the variant's, or none when an autoscheduler was requested.
inline const schedules::Schedule *schedule_for(const Variant &variant, bool auto_schedule) {
    return auto_schedule ? nullptr : &schedules::schedule_or_error(variant.schedule);
}

// The part that every generator of one stage or of the multi-head layer shares: the generator
// parameter "variant", read in configure(), and what schedule() needs.
template <typename T>
class VariantGenerator : public Halide::Generator<T> {
  public:
    Halide::GeneratorParam<std::string> variant_spec{"variant", ""};

  protected:
    // Reads the variant (of one of these ops) and the schedule it names.
    void read_variant(std::initializer_list<Op> ops) {
        variant_ = parse_variant(variant_spec, ops);
        ctx_ = schedules::make_context(this->get_target(), variant_);
        schedule_ = schedule_for(variant_, this->auto_schedule);
    }

    Variant variant_;
    schedules::Context ctx_;
    // Null when one of Halide's autoschedulers schedules the pipeline.
    const schedules::Schedule *schedule_ = nullptr;
};

}  // namespace attngen::generators
