#include "attngen_schedules.h"

#include "attngen/attngen.h"

namespace attngen::bench {

namespace {

// A tensor of `shape` given as float32 values and, where it is stored in 16 bits, as their bits.
// The runtime takes views of non-const data; the inputs are only read.
TensorView input_view(const Floats &values, const std::vector<uint16_t> &bits, DType storage,
                      std::initializer_list<int64_t> shape) {
    if (storage == DType::kFloat32) return TensorView::f32(values.data(), shape);
    return TensorView::contiguous(const_cast<uint16_t *>(bits.data()), storage, shape);
}

// The shape's modifiers as the runtime takes them, on the tensors of `p`.
Modifiers modifiers_of(const BenchShape &s, const ProblemData &p) {
    const ShapeModifiers &m = s.modifiers;
    Modifiers modifiers;
    if (m.window_left >= 0) modifiers.window_left = m.window_left;
    if (m.softcap > 0) modifiers.softcap = m.softcap;
    if (m.alibi) modifiers.alibi_slopes = TensorView::f32(p.alibi_slopes.data(), {s.heads});
    if (!m.bias_dims.empty()) {
        const std::vector<int64_t> &dims = m.bias_dims;
        modifiers.bias = TensorView::f32(p.bias.data(), {dims[0], dims[1], dims[2], dims[3]});
    }
    if (m.documents > 0) {
        modifiers.q_segments = TensorView::i32(p.q_segments.data(), {s.batch, s.nq});
        modifiers.kv_segments = TensorView::i32(p.kv_segments.data(), {s.batch, s.nk});
    }
    return modifiers;
}

class ScheduledAttention : public Computation {
  public:
    ScheduledAttention(const BenchShape &s, const ProblemData &p, const std::string &schedule)
        : storage_(s.storage), out_(output_size(s)) {
        args_.q = input_view(p.q, p.q16, s.storage, {s.batch, s.heads, s.nq, s.d});
        args_.k = input_view(p.k, p.k16, s.kv_storage, {s.batch, s.kv_heads, s.nk, s.d});
        args_.v = input_view(p.v, p.v16, s.kv_storage, {s.batch, s.kv_heads, s.nk, s.d});
        if (s.storage == DType::kFloat32) {
            args_.out = TensorView::f32(out_.data(), {s.batch, s.heads, s.nq, s.d});
        } else {
            out16_.resize(output_size(s));
            args_.out =
                TensorView::contiguous(out16_.data(), s.storage, {s.batch, s.heads, s.nq, s.d});
        }
        args_.causal = s.causal;
        args_.modifiers = modifiers_of(s, p);
        args_.schedule = schedule;
    }

    std::string run() override {
        Status status = attention(args_, &info_);
        return status.ok() ? "" : status.to_string();
    }
    const float *output() const override {
        if (storage_ != DType::kFloat32) widen_all(out16_, storage_, out_);
        return out_.data();
    }
    std::string label() const override { return info_.kernel; }

  private:
    DType storage_;
    // A 16-bit output is written to out16_ and widened into out_ for the reference check.
    mutable Floats out_;
    std::vector<uint16_t> out16_;
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

// Whether the build has a kernel of `schedule` that can compute `shape`, its modifiers included
// (a kernel with more modifiers than the shape's serves it with neutral values for the others).
bool has_kernel(const std::string &schedule, const BenchShape &shape) {
    const ShapeModifiers &m = shape.modifiers;
    MaskSpec mask;
    mask.causal = shape.causal;
    mask.window = m.window_left >= 0;
    mask.segments = m.documents > 0;
    ScoreSpec score;
    score.softcap = m.softcap > 0;
    score.alibi = m.alibi;
    score.bias = !m.bias_dims.empty();
    for (const Kernel &k : list_kernels()) {
        auto fits = [](int specialized, int64_t value) {
            return specialized == 0 || specialized == value;
        };
        const Variant &v = k.variant;
        if (k.serves_calls && v.schedule == schedule &&
            v.op == (shape.is_mha() ? Op::kMha : Op::kAttention) && v.storage == shape.storage &&
            v.kv_storage == shape.kv_storage && v.mask.covers(mask) && v.score.covers(score) &&
            v.score_mod.empty() && v.mask_mod.empty() && !v.probs && fits(v.heads, shape.heads) &&
            fits(v.kv_heads, shape.kv_heads) && fits(v.d_k, shape.d) && fits(v.d_v, shape.d))
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
