#include "jit_attention.h"

#include <stdexcept>

#include "algorithm/attention.h"
#include "attention_formulation.h"
#include "schedule.h"
#include "thread_pool.h"

namespace attngen::tuner {

using Halide::Expr;
using Halide::Float;
using Halide::Int;

std::string Candidate::describe() const {
    return params.empty() ? schedule : schedule + "{" + schedules::format_params(params) + "}";
}

bool is_autoscheduler(const std::string &schedule) {
    return schedule == "Adams2019" || schedule == "Li2018" || schedule == "Mullapudi2016";
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

JitAttention::JitAttention(const Bucket &bucket, const Candidate &candidate,
                           const Halide::Target &target, const TuneShape &estimate)
    : q_(Float(32), 4, "q"),
      k_(Float(32), 4, "k"),
      v_(Float(32), 4, "v"),
      key_lengths_(Int(32), 1, "key_lengths"),
      scale_("scale") {
    // The buffer contract of the attention generator: zero mins, and the head dims of the
    // bucket as fixed extents.
    for (auto *p : {&q_, &k_, &v_}) {
        for (int d = 0; d < 4; d++) p->dim(d).set_min(0);
    }
    key_lengths_.dim(0).set_min(0);
    if (bucket.d_k > 0) {
        q_.dim(0).set_extent(bucket.d_k);
        k_.dim(0).set_extent(bucket.d_k);
    }
    if (bucket.d_v > 0) v_.dim(0).set_extent(bucket.d_v);

    algorithm::AttentionShape shape;
    shape.nq = q_.dim(1).extent();
    shape.nk = k_.dim(1).extent();
    shape.d_k = bucket.d_k > 0 ? Expr(bucket.d_k) : q_.dim(0).extent();
    shape.d_v = bucket.d_v > 0 ? Expr(bucket.d_v) : v_.dim(0).extent();
    shape.heads = q_.dim(2).extent();
    shape.kv_heads = k_.dim(2).extent();
    // Our schedules get the formulation they ask for, as in the attention generator; the
    // autoschedulers get the composed one.
    const schedules::Schedule *schedule = nullptr;
    schedules::Context ctx;
    if (!is_autoscheduler(candidate.schedule)) {
        schedule = schedules::find_schedule(candidate.schedule);
        if (schedule == nullptr) {
            throw std::runtime_error("unknown schedule '" + candidate.schedule + "'");
        }
        ctx.target = target;
        ctx.max_queries = bucket.max_queries;
        ctx.causal = bucket.causal;
        ctx.d_v = bucket.d_v;
        ctx.params = candidate.params;
    }
    schedules::AttentionFormulation formulation(schedule, ctx, q_, k_, v_, key_lengths_, shape,
                                                scale_, bucket.causal);
    Halide::Func out = formulation.out(), lse = formulation.lse();
    for (int d = 0; d < 4; d++) out.output_buffer().dim(d).set_min(0);
    for (int d = 0; d < 3; d++) lse.output_buffer().dim(d).set_min(0);
    if (bucket.d_v > 0) out.output_buffer().dim(0).set_extent(bucket.d_v);
    pipeline_ = Halide::Pipeline({out, lse});

    if (schedule == nullptr) {
        const int dk = static_cast<int>(estimate.d_k), dv = static_cast<int>(estimate.d_v);
        const int nq = static_cast<int>(estimate.nq), nk = static_cast<int>(estimate.nk);
        const int h = static_cast<int>(estimate.heads), hkv = static_cast<int>(estimate.kv_heads);
        const int b = static_cast<int>(estimate.batch);
        q_.set_estimates({{0, dk}, {0, nq}, {0, h}, {0, b}});
        k_.set_estimates({{0, dk}, {0, nk}, {0, hkv}, {0, b}});
        v_.set_estimates({{0, dv}, {0, nk}, {0, hkv}, {0, b}});
        key_lengths_.set_estimates({{0, b}});
        scale_.set_estimate(0.125f);
        out.set_estimates({{0, dv}, {0, nq}, {0, h}, {0, b}});
        lse.set_estimates({{0, nq}, {0, h}, {0, b}});
        load_autoscheduler(candidate.schedule);
        pipeline_.auto_schedule(candidate.schedule, target);
    } else {
        formulation.schedule(false);
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
