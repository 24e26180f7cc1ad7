// Named schedules for the attention algorithms.
//
// The algorithm of every stage lives in generators/algorithm and never changes between
// schedules; a Schedule only decides loop order, tiling, vectorization, parallelism and what is
// fused or materialized. Generators look schedules up by name (the generator parameter
// "schedule"), so adding a schedule means adding a class and one line in registry.cpp.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "Halide.h"
#include "algorithm/attention.h"
#include "algorithm/mha.h"
#include "algorithm/online_attention.h"
#include "algorithm/projection.h"
#include "algorithm/scores.h"
#include "algorithm/softmax.h"
#include "algorithm/weighted_sum.h"

namespace attngen::schedules {

// What a schedule may depend on besides the Funcs: the target, the shape bucket the kernel
// serves, and tuned values of the schedule's parameters.
struct Context {
    Halide::Target target;

    // Calls with at most this many queries (Nq) are served by this kernel; 0 means any. A
    // small value (a decode step) lets a schedule organize the work around the keys.
    int max_queries = 0;

    // Whether the kernel applies a causal mask (its search space may differ).
    bool causal = false;

    // The value head dim d_v when the kernel is specialized to one; 0 when it is read from the
    // buffers at run time. A schedule may choose tile shapes that divide it.
    int d_v = 0;

    // Parameter values that override a schedule's defaults, by name (see each schedule's
    // params). Unknown names are an error, so that a typo in a tuning file cannot pass
    // silently.
    std::map<std::string, int> params;

    // Lanes of one float32 SIMD register on the target (4 for SSE/NEON, 8 for AVX2, 16 for
    // AVX-512).
    int vector_width() const { return target.natural_vector_size<float>(); }

    // params[name] if set, else fallback.
    int param(const std::string &name, int fallback) const;

    // Fails (Halide user error) if params holds a name outside known.
    void check_params(const std::vector<std::string> &known) const;
};

// Parses "name=value,name:value" (the generator parameter "tuning") into a map; an empty
// string gives an empty map. Malformed text is a Halide user error naming it.
std::map<std::string, int> parse_params(const std::string &text);

// The inverse of parse_params, names in order: "key_tile=6,query_vectors=2".
std::string format_params(const std::map<std::string, int> &params);

// Whether tuned values measured for `tuning_target` (a Halide target string; empty: any target)
// apply to a kernel compiled for `target`. A tuning's register tiles and blocks were searched on
// one target, but a library compiled for several targets runs its generator once per target with
// the same parameters, so the other targets must take the schedule's defaults. The features that
// say how a kernel is linked (no_runtime, user_context, jit) are ignored; a string that is not a
// Halide target is a Halide user error.
bool tuning_applies(const Halide::Target &target, const std::string &tuning_target);

// What the autotuner may vary in a schedule: each parameter with the values worth trying, and a
// constraint that rejects combinations the schedule cannot use well (more accumulators than the
// target has registers, blocks that break the causal grouping, ...).
struct TunableParam {
    std::string name;
    std::vector<int> values;  // Increasing; includes the schedule's default.
    int fallback = 0;         // The schedule's default value.
};

struct SearchSpace {
    std::vector<TunableParam> params;
    // Empty when the combination is valid for this context, else the reason it is not.
    std::function<std::string(const std::map<std::string, int> &, const Context &)> constraint;

    // Resets the parameters that the other values make irrelevant to their defaults (for
    // example the block sizes when a choice selects a path without blocks), so that the tuner
    // never measures two spellings of one kernel. Null when every parameter always matters.
    std::function<void(std::map<std::string, int> &)> irrelevant_to_defaults;

    // Values, over the defaults, that a search should measure before it samples: one per path
    // that a parameter selects, with that path's own defaults. Random sampling draws a path and
    // its tiles together, so a path can lose on badly drawn tiles alone; these give each path a
    // fair first measurement to climb from.
    std::vector<std::map<std::string, int>> starting_points;

    // The defaults of every parameter.
    std::map<std::string, int> defaults() const;
    // The defaults with `values` written over them (a starting point, a tuned subset).
    std::map<std::string, int> with_defaults(const std::map<std::string, int> &values) const;
    // values with the irrelevant parameters reset (see irrelevant_to_defaults).
    std::map<std::string, int> canonical(std::map<std::string, int> values) const;
    // Fills parameters missing from `values` with their defaults and checks the constraint.
    std::string check(const std::map<std::string, int> &values, const Context &ctx) const;
};

// Reports a mistake in a generator's parameters the way Halide reports its own (a Halide user
// error: the generator prints the message and fails).
[[noreturn]] void schedule_error(const std::string &message);

// Vector registers of the target's SIMD unit: 32 for AVX-512 and NEON, 16 for AVX2 and SSE.
int vector_registers(const Halide::Target &target);

class Schedule {
  public:
    virtual ~Schedule() = default;
    virtual const char *name() const = 0;

    // The stage pipelines, each compiled as its own generator.
    virtual void projection(algorithm::ProjectionFuncs &f, const Context &ctx) const = 0;
    virtual void scores(algorithm::ScoresFuncs &f, algorithm::KeyMask mask,
                        const Context &ctx) const = 0;
    virtual void softmax(algorithm::SoftmaxFuncs &f, algorithm::KeyMask mask,
                         const Context &ctx) const = 0;
    virtual void weighted_sum(algorithm::WeightedSumFuncs &f, algorithm::KeyMask mask,
                              const Context &ctx) const = 0;

    // The composed pipelines. with_probs says whether the probabilities are an output.
    virtual void attention(algorithm::AttentionFuncs &f, bool with_probs,
                           const Context &ctx) const = 0;
    virtual void mha(algorithm::MhaFuncs &f, const Context &ctx) const = 0;

    // Schedules of the online-softmax formulation of attention (algorithm/online_attention.h):
    // a schedule that wants it says so, and the attention generator then builds that
    // formulation and calls online_attention instead of attention.
    virtual bool uses_online_softmax(const Context &ctx) const {
        (void)ctx;
        return false;
    }
    virtual void online_attention(algorithm::OnlineAttentionFuncs &f, bool with_probs,
                                  const Context &ctx) const;
    // How the online formulation is blocked for this context (see online_attention.h).
    struct OnlineLayout {
        int key_block = 64;    // Keys per block.
        int query_group = 32;  // Queries that walk the key blocks together.
        int key_splits = 1;    // Runs of key blocks merged separately (decode steps).
    };
    virtual OnlineLayout online_layout(const Context &ctx) const {
        (void)ctx;
        return {};
    }

    // The parameters of the composed attention that the autotuner may vary for this context
    // (its target and shape bucket); empty for a schedule without parameters.
    virtual SearchSpace attention_search_space(const Context &ctx) const {
        (void)ctx;
        return {};
    }

    // The parameter values the composed attention is scheduled with for this context: the
    // tuned ones (ctx.params) where given, the target's defaults elsewhere, after tuned tiles
    // that do not fit the target were replaced; empty for a schedule without parameters.
    virtual std::map<std::string, int> attention_params(const Context &ctx) const {
        (void)ctx;
        return {};
    }
};

// The schedule with this name, or nullptr.
const Schedule *find_schedule(const std::string &name);

// Every registered schedule name, for messages and listings.
std::vector<std::string> schedule_names();

// find_schedule, or a Halide user_error naming the known schedules.
const Schedule &schedule_or_error(const std::string &name);

}  // namespace attngen::schedules
