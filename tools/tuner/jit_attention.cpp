#include "jit_attention.h"

#include <stdexcept>

#include "algorithm/storage.h"
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
    : kernel_(kernel),
      q_(buffer_type(kernel.storage), 4, "q"),
      k_(buffer_type(kernel.kv_storage), 4, "k"),
      v_(buffer_type(kernel.kv_storage), 4, "v"),
      key_lengths_(Int(32), 1, "key_lengths"),
      scale_("scale") {
    const bool autoscheduled = is_autoscheduler(kernel.schedule);
    if (!autoscheduled && schedules::find_schedule(kernel.schedule) == nullptr) {
        throw std::runtime_error("unknown schedule '" + kernel.schedule + "'");
    }
    pipeline::ModifierInputs modifiers;
    if (kernel.mask.window) {
        modifiers.window_left = window_left_;
        modifiers.window_right = window_right_;
    }
    if (kernel.mask.prefix) {
        prefix_lengths_ = Halide::ImageParam(Int(32), 1, "prefix_lengths");
        modifiers.prefix_lengths = prefix_lengths_;
    }
    if (kernel.mask.segments) {
        q_segments_ = Halide::ImageParam(Int(32), 2, "q_segments");
        kv_segments_ = Halide::ImageParam(Int(32), 2, "kv_segments");
        modifiers.q_segments = q_segments_;
        modifiers.kv_segments = kv_segments_;
    }
    if (kernel.score.softcap) modifiers.softcap = softcap_;
    if (kernel.score.alibi) {
        alibi_slopes_ = Halide::ImageParam(Float(32), 1, "alibi_slopes");
        modifiers.alibi_slopes = alibi_slopes_;
    }
    if (kernel.score.bias) {
        bias_ = Halide::ImageParam(Float(32), 4, "bias");
        modifiers.bias = bias_;
    }
    pipeline::AttentionPipeline built(kernel, target, {q_, k_, v_, key_lengths_, scale_, modifiers},
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

Halide::Type JitAttention::buffer_type(DType storage) {
    return algorithm::storage_type(storage);
}

int JitAttention::run(Halide::Buffer<> q, Halide::Buffer<> k, Halide::Buffer<> v,
                      Halide::Buffer<int32_t> key_lengths, float scale, Halide::Buffer<> out,
                      Halide::Buffer<float> lse, const TuneShape &shape) {
    q_.set(q);
    k_.set(k);
    v_.set(v);
    key_lengths_.set(key_lengths);
    scale_.set(scale);
    set_modifiers(q.dim(3).extent(), q.dim(2).extent(), q.dim(1).extent(), k.dim(1).extent(),
                  shape);
    try {
        pipeline_.realize({out, lse});
    } catch (const Halide::RuntimeError &e) {
        last_error_ = e.what();
        return -1;
    }
    return 0;
}

void JitAttention::set_modifiers(int batch, int heads, int nq, int nk, const TuneShape &shape) {
    int_inputs_.clear();
    float_inputs_.clear();
    auto bind_int = [&](Halide::ImageParam &param, std::vector<int> extents, auto value) {
        Halide::Buffer<int32_t> b(extents);
        b.for_each_element([&](const int *pos) { b(pos) = value(pos); });
        param.set(b);
        int_inputs_.push_back(b);
    };
    auto bind_float = [&](Halide::ImageParam &param, std::vector<int> extents, auto value) {
        Halide::Buffer<float> b(extents);
        b.for_each_element([&](const int *pos) { b(pos) = value(pos); });
        param.set(b);
        float_inputs_.push_back(b);
    };
    if (kernel_.mask.window) {
        // An omitted side is unbounded: no key lies farther from a query than nq + nk.
        const int unbounded = nq + nk;
        window_left_.set(shape.window_left >= 0 ? int(shape.window_left) : unbounded);
        window_right_.set(shape.window_right >= 0 ? int(shape.window_right) : unbounded);
    }
    if (kernel_.mask.prefix) {
        bind_int(prefix_lengths_, {batch}, [&](const int *) { return int(shape.prefix); });
    }
    if (kernel_.mask.segments) {
        // The shape's documents (one segment for a shape without them).
        bind_int(q_segments_, {nq, batch},
                 [&](const int *pos) { return int(shape.query_document(pos[0])); });
        bind_int(kv_segments_, {nk, batch},
                 [&](const int *pos) { return int(shape.key_document(pos[0])); });
    }
    if (kernel_.score.softcap) softcap_.set(float(shape.softcap));  // 0: off.
    if (kernel_.score.alibi) {
        bind_float(alibi_slopes_, {heads}, [&](const int *pos) {
            return shape.alibi ? float(TuneShape::alibi_slope(pos[0], heads)) : 0.0f;
        });
    }
    if (kernel_.score.bias) {
        // The shape's bias is [1, H, Nq, Nk]; the neutral one a row of zeros, broadcast.
        std::vector<int> extents =
            shape.bias ? std::vector<int>{nk, nq, heads, 1} : std::vector<int>{nk, 1, 1, 1};
        bind_float(bias_, extents, [](const int *) { return 0.0f; });
    }
}

}  // namespace attngen::tuner
