#include "attngen_schedules.h"

#include "attngen/attngen.h"

namespace attngen::bench {

namespace {

class ScheduledAttention : public Computation {
  public:
    ScheduledAttention(const BenchShape &s, const ProblemData &p, const std::string &schedule)
        : out_(output_size(s)) {
        args_.q = TensorView::f32(p.q.data(), {s.batch, s.heads, s.nq, s.d});
        args_.k = TensorView::f32(p.k.data(), {s.batch, s.kv_heads, s.nk, s.d});
        args_.v = TensorView::f32(p.v.data(), {s.batch, s.kv_heads, s.nk, s.d});
        args_.out = TensorView::f32(out_.data(), {s.batch, s.heads, s.nq, s.d});
        args_.causal = s.causal;
        args_.schedule = schedule;
    }

    std::string run() override {
        Status status = attention(args_, &info_);
        return status.ok() ? "" : status.to_string();
    }
    const float *output() const override { return out_.data(); }
    std::string label() const override { return info_.kernel; }

  private:
    Floats out_;
    AttentionArgs args_;
    CallInfo info_;
};

class ScheduledLayer : public Computation {
  public:
    ScheduledLayer(const BenchShape &s, const ProblemData &p, const std::string &schedule)
        : out_(output_size(s)) {
        const int64_t width = s.heads * s.d;
        MhaWeights weights;
        weights.w_q = TensorView::f32(p.w_q.data(), {s.d_model, width});
        weights.w_k = TensorView::f32(p.w_k.data(), {s.d_model, width});
        weights.w_v = TensorView::f32(p.w_v.data(), {s.d_model, width});
        weights.w_o = TensorView::f32(p.w_o.data(), {width, s.d_model});
        MhaConfig config;
        config.heads = s.heads;
        config.kv_heads = s.kv_heads;
        config.causal = s.causal;
        config.schedule = schedule;
        create_status_ = MultiHeadAttention::create(weights, config, &layer_);
        x_ = TensorView::f32(p.x.data(), {s.batch, s.nq, s.d_model});
        y_ = TensorView::f32(out_.data(), {s.batch, s.nq, s.d_model});
    }

    std::string run() override {
        if (!create_status_.ok()) return create_status_.to_string();
        Status status = layer_.forward(x_, y_);
        return status.ok() ? "" : status.to_string();
    }
    const float *output() const override { return out_.data(); }

  private:
    Floats out_;
    MultiHeadAttention layer_;
    Status create_status_;
    TensorView x_, y_;
};

// Whether the build has a kernel of `schedule` that can compute `shape`.
bool has_kernel(const std::string &schedule, const BenchShape &shape) {
    for (const Kernel &k : list_kernels()) {
        auto fits = [](int specialized, int64_t value) {
            return specialized == 0 || specialized == value;
        };
        const Variant &v = k.variant;
        if (k.serves_calls && v.schedule == schedule &&
            v.op == (shape.is_mha() ? Op::kMha : Op::kAttention) && v.mask.causal == shape.causal &&
            !v.probs && fits(v.heads, shape.heads) && fits(v.kv_heads, shape.kv_heads) &&
            fits(v.d_k, shape.d) && fits(v.d_v, shape.d))
            return true;
    }
    return false;
}

// Whether the schedule's kernels are CUDA kernels. Their CPU entries exist so that a library runs
// on a machine without a GPU, not for speed (cuda_tiled's CPU entry takes seconds per call on
// (c)); bench/gpu/cuda_bench.cpp measures them on a GPU.
bool is_cuda_schedule(const std::string &schedule) {
    for (const Kernel &k : list_kernels()) {
        if (k.variant.schedule == schedule && k.cuda()) return true;
    }
    return false;
}

}  // namespace

std::vector<Implementation> attngen_implementations() {
    std::vector<Implementation> implementations;
    for (const std::string &schedule : available_schedules()) {
        if (is_cuda_schedule(schedule)) continue;
        Implementation impl;
        impl.name = schedule;
        impl.runtimes = kHalideThreads;
        impl.supports = [schedule](const BenchShape &s) { return has_kernel(schedule, s); };
        impl.set_threads = [](int threads) { set_num_threads(threads); };
        impl.prepare = [schedule](const BenchShape &s, const ProblemData &p,
                                  int) -> std::unique_ptr<Computation> {
            if (s.is_mha()) return std::make_unique<ScheduledLayer>(s, p, schedule);
            return std::make_unique<ScheduledAttention>(s, p, schedule);
        };
        implementations.push_back(std::move(impl));
    }
    return implementations;
}

}  // namespace attngen::bench
