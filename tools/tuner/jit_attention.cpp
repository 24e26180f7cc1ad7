#include "jit_attention.h"

#include <stdexcept>

#include "pipeline/attention_pipeline.h"
#include "schedule.h"
#include "thread_pool.h"

namespace attngen::tuner {

using Halide::Expr;
using Halide::Float;
using Halide::Int;

std::string Candidate::describe() const {
    std::string text;
    for (const auto &[name, value] : params) {
        text += (text.empty() ? "" : ",") + name + "=" + std::to_string(value);
    }
    return params.empty() ? schedule : schedule + "{" + text + "}";
}

Variant Candidate::in(const Variant &bucket) const {
    Variant kernel = bucket;
    kernel.schedule = schedule;
    kernel.tuning = params;
    return kernel;
}

bool is_autoscheduler(const std::string &schedule) {
    for (const ScheduleInfo &s : schedules::schedule_infos()) {
        if (s.name == schedule) return s.autoscheduler;
    }
    return false;
}

namespace {

// Halide's autoschedulers are plugins; each is loaded once per process.
void load_autoscheduler(const std::string &name) {
    static std::map<std::string, bool> loaded;
    if (loaded[name]) return;
    std::string lib = name == "Adams2019" ? "libautoschedule_adams2019.so"
                      : name == "Li2018"  ? "libautoschedule_li2018.so"
                                          : "libautoschedule_mullapudi2016.so";
    Halide::load_plugin(std::string(ATTNGEN_AUTOSCHEDULER_DIR) + "/" + lib);
    loaded[name] = true;
}

// The do_par_for of the candidates: the runtime's thread pool, which the built kernels run their
// parallel loops on (runtime/src/thread_pool.h). Halide's JIT pool puts its workers to sleep
// almost at once after a loop, so a candidate timed on it would pay for waking them where the
// built kernel finds them spinning. The JIT passes its user context where the pool's contract
// has a void pointer.
int run_on_runtime_pool(Halide::JITUserContext *user_context,
                        int (*task)(Halide::JITUserContext *, int, uint8_t *), int min, int size,
                        uint8_t *closure) {
    return detail::pool_do_par_for(user_context, reinterpret_cast<halide_task_t>(task), min, size,
                                   closure);
}

}  // namespace

JitAttention::JitAttention(const Variant &kernel, const Halide::Target &target,
                           const TuneShape &estimate)
    : q_(Float(32), 4, "q"),
      k_(Float(32), 4, "k"),
      v_(Float(32), 4, "v"),
      key_lengths_(Int(32), 1, "key_lengths"),
      scale_("scale") {
    const bool autoscheduled = is_autoscheduler(kernel.schedule);
    if (!autoscheduled && schedules::find_schedule(kernel.schedule) == nullptr) {
        throw std::runtime_error("unknown schedule '" + kernel.schedule + "'");
    }
    pipeline::AttentionPipeline built(kernel, target, {q_, k_, v_, key_lengths_, scale_},
                                      autoscheduled);
    Halide::Func out = built.out(), lse = built.lse();
    built.constrain_outputs(out.output_buffer(), lse.output_buffer(), std::nullopt);
    pipeline_ = Halide::Pipeline({out, lse});
    if (autoscheduled) {
        pipeline::Estimates e;
        e.batch = static_cast<int>(estimate.batch);
        e.heads = static_cast<int>(estimate.heads);
        e.kv_heads = static_cast<int>(estimate.kv_heads);
        e.queries = static_cast<int>(estimate.nq);
        e.keys = static_cast<int>(estimate.nk);
        e.d_k = static_cast<int>(estimate.d_k);
        e.d_v = static_cast<int>(estimate.d_v);
        built.set_estimates(e);
        scale_.set_estimate(0.125f);
        load_autoscheduler(kernel.schedule);
        pipeline_.auto_schedule(kernel.schedule, target);
    } else {
        built.schedule();
    }
    pipeline_.jit_handlers().custom_do_par_for = run_on_runtime_pool;
    pipeline_.compile_jit(target);
}

int JitAttention::run(Halide::Buffer<float> q, Halide::Buffer<float> k, Halide::Buffer<float> v,
                      Halide::Buffer<int32_t> key_lengths, float scale, Halide::Buffer<float> out,
                      Halide::Buffer<float> lse) {
    q_.set(q);
    k_.set(k);
    v_.set(v);
    key_lengths_.set(key_lengths);
    scale_.set(scale);
    try {
        pipeline_.realize({out, lse});
    } catch (const Halide::RuntimeError &e) {
        last_error_ = e.what();
        return -1;
    }
    return 0;
}

}  // namespace attngen::tuner
