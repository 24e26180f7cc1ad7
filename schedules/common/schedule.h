// Named schedules for the attention algorithms.
//
// The algorithm of every stage lives in generators/algorithm and never changes between
// schedules; a Schedule only decides loop order, tiling, vectorization, parallelism and what is
// fused or materialized. Each schedule is a folder of schedules/ that registers itself with the
// build (attngen_add_schedule in its CMakeLists.txt): its facts as data in info.cpp (what it
// serves, its dispatch priority; Halide-free, as the runtime reads them) and its Halide code, a
// Schedule registered under the same name. Generators look schedules up by the name in the
// kernel's variant.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "Halide.h"
#include "algorithm/attention.h"
#include "algorithm/mha.h"
#include "algorithm/online_attention.h"
#include "algorithm/projection.h"
#include "algorithm/scores.h"
#include "algorithm/softmax.h"
#include "algorithm/weighted_sum.h"
#include "attngen/schedules.h"
#include "attngen/variant.h"

namespace attngen::schedules {

// What a schedule may depend on besides the Funcs: the target and the kernel's variant (its
// mask, head dims, query and key bounds), with the variant's tuned parameters where they apply.
struct Context {
    Halide::Target target;

    // The kernel's variant. variant.max_queries > 0 (a decode step) lets a schedule organize the
    // work around the keys; variant.d_v > 0 lets it choose tiles that divide the head dim.
    Variant variant;

    // Parameter values that override a schedule's defaults, by name (see each schedule's
    // params): variant.tuning, unless the variant was tuned for another target than this one
    // (tuning_applies). Unknown names are an error, so that a typo in a tuning file cannot pass
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

// The context of a kernel of this variant compiled for this target.
Context make_context(const Halide::Target &target, const Variant &variant);

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
    // name: the schedule's folder and the name its info.cpp gives it.
    explicit Schedule(std::string name) : name_(std::move(name)) {}
    virtual ~Schedule() = default;

    const std::string &name() const { return name_; }
    // The facts of schedules/<name>/info.cpp.
    ScheduleInfo info() const;

    // The stage pipelines, each compiled as its own generator. A schedule that does not serve an
    // op leaves its method alone: the default fails with the reason from its info.
    virtual void projection(algorithm::ProjectionFuncs &f, const Context &ctx) const;
    virtual void scores(algorithm::ScoresFuncs &f, const algorithm::KeyMask &mask,
                        const Context &ctx) const;
    virtual void softmax(algorithm::SoftmaxFuncs &f, const algorithm::KeyMask &mask,
                         const Context &ctx) const;
    virtual void weighted_sum(algorithm::WeightedSumFuncs &f, const algorithm::KeyMask &mask,
                              const Context &ctx) const;

    // The composed pipelines. with_probs says whether the probabilities are an output.
    virtual void attention(algorithm::AttentionFuncs &f, bool with_probs, const Context &ctx) const;
    virtual void mha(algorithm::MhaFuncs &f, const Context &ctx) const;

    // Schedules of the online-softmax formulation of attention (algorithm/online_attention.h):
    // a schedule that wants it says so, and the attention pipeline is then built in that
    // formulation and scheduled by online_attention instead of attention.
    virtual bool uses_online_softmax(const Context &ctx) const {
        (void)ctx;
        return false;
    }
    virtual void online_attention(algorithm::OnlineAttentionFuncs &f, bool with_probs,
                                  const Context &ctx) const;
    // How the online formulation is blocked for this context (see online_attention.h).
    using OnlineLayout = algorithm::OnlineBlocking;
    virtual OnlineLayout online_layout(const Context &ctx) const {
        (void)ctx;
        return {};
    }

    // Whether the composed attention takes the paired form of its dot products, Q K^T and P V
    // (algorithm/scores.h and weighted_sum.h: bfloat16 products two at a time, which this
    // context's target runs as one instruction); asked only of contexts whose q, k and v are
    // bfloat16.
    virtual bool pairs_bfloat16_products(const Context &ctx) const {
        (void)ctx;
        return false;
    }

    // Whether the schedule computes rows of queries past Nq (whole blocks of them, never
    // stored), for which the composed attention must read its queries clamped to the last row.
    virtual bool reads_queries_past_nq(const Context &ctx) const {
        (void)ctx;
        return false;
    }

    // The parameters of the composed attention that the autotuner may vary for this context
    // (its target and variant); empty for a schedule without parameters.
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

  protected:
    // Fails with the reason this schedule's info gives for not serving the op.
    [[noreturn]] void not_served(Op op) const;

  private:
    std::string name_;
};

// Whether a kernel for this context runs on a GPU (the target has a GPU feature).
bool targets_gpu(const Context &ctx);

// The same target and variant without parameters: the context of the schedule a CUDA schedule's
// CPU entry delegates to (the parameters belong to its GPU kernels) and of its defaults.
Context without_params(const Context &ctx);

// The schedule with this name, or nullptr (also for an autoscheduler, which has no Schedule).
const Schedule *find_schedule(const std::string &name);

// Every registered schedule name (autoschedulers included), for messages and listings.
std::vector<std::string> schedule_names();

// The info of every registered schedule (schedules/<name>/info.cpp).
std::vector<ScheduleInfo> schedule_infos();

// find_schedule, or a Halide user_error naming the known schedules.
const Schedule &schedule_or_error(const std::string &name);

// Fails (Halide user error) unless the schedule of this name serves the op: an unknown name, or
// an op it does not serve, with the reason from its info.
void check_schedule_serves(const std::string &name, Op op);

}  // namespace attngen::schedules
