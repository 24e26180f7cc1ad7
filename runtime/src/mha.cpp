#include "attngen/mha.h"

#include <cmath>
#include <cstring>

#include "dispatch.h"
#include "halide_call.h"
#include "kernel_call.h"
#include "modifiers.h"
#include "stored_values.h"
#include "validate.h"

namespace attngen {

using detail::NamedView;

namespace {

Status check_divides(const char *what, int64_t total, int64_t parts, const char *parts_name) {
    if (total % parts == 0) return Status::Ok();
    return Status::InvalidArgument(std::string(what) + " = " + std::to_string(total) +
                                   " is not a multiple of " + parts_name + " = " +
                                   std::to_string(parts));
}

// The kernel that serves a layer's calls with this mask and these score modifiers (the given
// one if any, else the dispatch's), or the status saying why none can.
Status choose_kernel(DType storage, int64_t heads, int64_t kv_heads, int64_t d_k, int64_t d_v,
                     const MaskSpec &mask, const ScoreSpec &score, const std::string &schedule,
                     const Kernel *given, const Kernel **kernel) {
    detail::KernelRequest request;
    request.op = Op::kMha;
    request.storage = request.kv_storage = storage;
    request.mask = mask;
    request.score = score;
    request.heads = heads;
    request.kv_heads = kv_heads;
    request.d_k = d_k;
    request.d_v = d_v;
    if (given != nullptr) {
        *kernel = given;
        return detail::check_given_kernel(*given, request);
    }
    return detail::find_kernel(request, schedule, kernel);
}

// A bias as float32, from a float32 tensor or one of the layer's storage type.
Status copy_bias(const char *name, const std::optional<TensorView> &bias, int64_t size,
                 const char *source, DType storage, std::vector<float> *out) {
    if (!bias) {
        out->assign(size, 0.0f);
        return Status::Ok();
    }
    const NamedView v{name, *bias, {source}};
    ATTNGEN_RETURN_IF_ERROR(storage == DType::kFloat32
                                ? detail::check_view(v, {DType::kFloat32})
                                : detail::check_view(v, {DType::kFloat32, storage}));
    ATTNGEN_RETURN_IF_ERROR(detail::check_extent(v, 0, size, source));
    if (bias->dtype == DType::kFloat32) {
        detail::copy_contiguous(*bias, out);
        return Status::Ok();
    }
    out->resize(size);
    const auto *bits = static_cast<const uint16_t *>(bias->data);
    for (int64_t i = 0; i < size; i++) {
        (*out)[i] = detail::stored_to_float(bias->dtype, bits[i * bias->strides[0]]);
    }
    return Status::Ok();
}

// A weight matrix [rows, cols] copied densely, its elements as they are (4 or 2 bytes each).
void copy_weights(const TensorView &w, std::vector<unsigned char> *out) {
    const std::size_t element = w.dtype == DType::kFloat32 ? 4 : 2;
    const int64_t rows = w.shape[0], cols = w.shape[1];
    out->resize(rows * cols * element);
    const auto *data = static_cast<const unsigned char *>(w.data);
    for (int64_t r = 0; r < rows; r++) {
        std::memcpy(out->data() + r * cols * element, data + r * w.strides[0] * element,
                    cols * element);
    }
}

}  // namespace

Status MultiHeadAttention::create(const MhaWeights &weights, const MhaConfig &config,
                                  MultiHeadAttention *layer) {
    if (layer == nullptr) return Status::InvalidArgument("create() needs a layer to initialize");
    const int64_t heads = config.heads;
    const int64_t kv_heads = config.kv_heads == 0 ? config.heads : config.kv_heads;
    if (heads <= 0 || kv_heads <= 0) {
        return Status::InvalidArgument("heads (" + std::to_string(heads) + ") and kv_heads (" +
                                       std::to_string(kv_heads) + ") must be positive");
    }
    ATTNGEN_RETURN_IF_ERROR(check_divides("heads", heads, kv_heads, "kv_heads"));

    const NamedView w_q{"w_q", weights.w_q, {"d_model", "H*d_k"}};
    const NamedView w_k{"w_k", weights.w_k, {"d_mem", "H_kv*d_k"}};
    const NamedView w_v{"w_v", weights.w_v, {"d_mem", "H_kv*d_v"}};
    const NamedView w_o{"w_o", weights.w_o, {"H*d_v", "d_out"}};
    // The weights' type is the layer's storage type: x, memory and y must have it too.
    for (const NamedView *w : {&w_q, &w_k, &w_v, &w_o}) {
        ATTNGEN_RETURN_IF_ERROR(
            detail::check_view(*w, {DType::kFloat32, DType::kBFloat16, DType::kFloat16}));
        if (w->view.dtype != weights.w_q.dtype) {
            return Status::InvalidArgument(
                std::string(w->name) + " has dtype " + dtype_name(w->view.dtype) + " but w_q has " +
                dtype_name(weights.w_q.dtype) + "; the four weights share one storage type");
        }
    }
    const DType storage = weights.w_q.dtype;
    ATTNGEN_RETURN_IF_ERROR(
        check_divides("w_q columns (H*d_k)", weights.w_q.shape[1], heads, "heads"));
    ATTNGEN_RETURN_IF_ERROR(
        check_divides("w_v columns (H_kv*d_v)", weights.w_v.shape[1], kv_heads, "kv_heads"));
    const int64_t d_k = weights.w_q.shape[1] / heads;
    const int64_t d_v = weights.w_v.shape[1] / kv_heads;
    const int64_t d_mem = weights.w_k.shape[0];
    ATTNGEN_RETURN_IF_ERROR(detail::check_extent(w_k, 1, kv_heads * d_k, "H_kv * d_k"));
    ATTNGEN_RETURN_IF_ERROR(detail::check_extent(w_v, 0, d_mem, "d_mem (rows of w_k)"));
    ATTNGEN_RETURN_IF_ERROR(detail::check_extent(w_o, 0, heads * d_v, "H * d_v"));

    MultiHeadAttention m;
    m.storage_ = storage;
    m.heads_ = heads;
    m.kv_heads_ = kv_heads;
    m.d_model_ = weights.w_q.shape[0];
    m.d_mem_ = d_mem;
    m.d_k_ = d_k;
    m.d_v_ = d_v;
    m.d_out_ = weights.w_o.shape[1];
    m.causal_ = config.causal;
    m.scale_ = config.scale ? *config.scale : 1.0f / std::sqrt(static_cast<float>(d_k));
    if (!std::isfinite(m.scale_)) {
        return Status::InvalidArgument("scale is " + std::to_string(m.scale_) +
                                       "; it must be a finite number");
    }
    m.schedule_ = config.schedule;
    ATTNGEN_RETURN_IF_ERROR(copy_bias("b_q", weights.b_q, heads * d_k, "H*d_k", storage, &m.b_q_));
    ATTNGEN_RETURN_IF_ERROR(
        copy_bias("b_k", weights.b_k, kv_heads * d_k, "H_kv*d_k", storage, &m.b_k_));
    ATTNGEN_RETURN_IF_ERROR(
        copy_bias("b_v", weights.b_v, kv_heads * d_v, "H_kv*d_v", storage, &m.b_v_));
    ATTNGEN_RETURN_IF_ERROR(copy_bias("b_o", weights.b_o, m.d_out_, "d_out", storage, &m.b_o_));

    // Fail now rather than at the first forward() if no kernel can serve this layer.
    m.kernel_ = config.kernel;
    const Kernel *kernel = nullptr;
    ATTNGEN_RETURN_IF_ERROR(choose_kernel(storage, heads, kv_heads, d_k, d_v, MaskSpec{m.causal_},
                                          ScoreSpec{}, m.schedule_, m.kernel_, &kernel));

    copy_weights(weights.w_q, &m.w_q_);
    copy_weights(weights.w_k, &m.w_k_);
    copy_weights(weights.w_v, &m.w_v_);
    copy_weights(weights.w_o, &m.w_o_);
    *layer = std::move(m);
    return Status::Ok();
}

Status MultiHeadAttention::forward(const TensorView &x, const TensorView &y,
                                   const std::optional<TensorView> &key_lengths) const {
    MhaForwardOptions options;
    options.key_lengths = key_lengths;
    return forward(x, y, options);
}

Status MultiHeadAttention::forward(const TensorView &x, const TensorView &memory,
                                   const TensorView &y,
                                   const std::optional<TensorView> &key_lengths) const {
    MhaForwardOptions options;
    options.memory = memory;
    options.key_lengths = key_lengths;
    return forward(x, y, options);
}

Status MultiHeadAttention::forward(const TensorView &x, const TensorView &y,
                                   const MhaForwardOptions &options) const {
    if (heads_ == 0) return Status::InvalidArgument("the layer was not created");
    if (!options.memory && d_mem_ != d_model_) {
        return Status::InvalidArgument(
            "self-attention needs d_mem = d_model, but the layer has "
            "d_mem = " +
            std::to_string(d_mem_) + " and d_model = " + std::to_string(d_model_) +
            "; pass a memory");
    }
    const TensorView &memory = options.memory ? *options.memory : x;
    const std::optional<TensorView> &key_lengths = options.key_lengths;
    const NamedView xv{"x", x, {"B", "Nq", "d_model"}};
    const NamedView mv{"memory", memory, {"B", "Nk", "d_mem"}};
    const NamedView yv{"y", y, {"B", "Nq", "d_out"}};
    for (const NamedView *t : {&xv, &mv, &yv}) {
        ATTNGEN_RETURN_IF_ERROR(detail::check_view(*t, {storage_}));
        if (t->view.device != Device::kCpu) {
            return Status::InvalidArgument(
                std::string(t->name) +
                " is in CUDA device memory; the multi-head layer takes host tensors "
                "(attngen::attention accepts device tensors)");
        }
    }
    const int64_t batch = x.shape[0], nq = x.shape[1], nk = memory.shape[1];
    ATTNGEN_RETURN_IF_ERROR(detail::check_extent(xv, 2, d_model_, "d_model of the layer"));
    ATTNGEN_RETURN_IF_ERROR(detail::check_extent(mv, 0, batch, "B of x"));
    ATTNGEN_RETURN_IF_ERROR(detail::check_extent(mv, 2, d_mem_, "d_mem of the layer"));
    ATTNGEN_RETURN_IF_ERROR(detail::check_extent(yv, 0, batch, "B of x"));
    ATTNGEN_RETURN_IF_ERROR(detail::check_extent(yv, 1, nq, "Nq of x"));
    ATTNGEN_RETURN_IF_ERROR(detail::check_extent(yv, 2, d_out_, "d_out of the layer"));
    std::vector<int32_t> lengths(batch, static_cast<int32_t>(nk));
    std::optional<NamedView> lv;
    if (key_lengths) {
        lv.emplace(NamedView{"key_lengths", *key_lengths, {"B"}});
        ATTNGEN_RETURN_IF_ERROR(detail::read_key_lengths(*lv, batch, nk, &lengths));
        ATTNGEN_RETURN_IF_ERROR(detail::check_disjoint(yv, *lv));
    }
    // The modifiers refer to the attention inside the layer: x's rows are its queries, memory's
    // its keys, and the layer's query heads its heads.
    detail::CallModifiers modifiers;
    detail::ModifierExtents extents{batch, heads_, nq, nk};
    extents.sources = {"the batch size B of x", "the head count H of the layer", "Nq of x",
                       "Nk of memory"};
    ATTNGEN_RETURN_IF_ERROR(modifiers.prepare(options.modifiers, causal_, extents));
    ATTNGEN_RETURN_IF_ERROR(detail::check_output_layout(yv));
    ATTNGEN_RETURN_IF_ERROR(detail::check_disjoint(yv, xv));
    ATTNGEN_RETURN_IF_ERROR(detail::check_disjoint(yv, mv));
    for (const NamedView &input : modifiers.inputs()) {
        ATTNGEN_RETURN_IF_ERROR(detail::check_disjoint(yv, input));
    }

    const Kernel *kernel = nullptr;
    ATTNGEN_RETURN_IF_ERROR(choose_kernel(storage_, heads_, kv_heads_, d_k_, d_v_, modifiers.mask(),
                                          modifiers.score(), schedule_, kernel_, &kernel));

    auto view2 = [&](const std::vector<unsigned char> &w, int64_t rows, int64_t cols) {
        return TensorView::contiguous(const_cast<unsigned char *>(w.data()), storage_,
                                      {rows, cols});
    };
    auto view1 = [](const std::vector<float> &b) {
        return TensorView::f32(b.data(), {static_cast<int64_t>(b.size())});
    };
    detail::HalideView hx(x), hm(memory), hy(y);
    detail::HalideView hwq(view2(w_q_, d_model_, heads_ * d_k_)),
        hwk(view2(w_k_, d_mem_, kv_heads_ * d_k_)), hwv(view2(w_v_, d_mem_, kv_heads_ * d_v_)),
        hwo(view2(w_o_, heads_ * d_v_, d_out_));
    detail::HalideView hbq(view1(b_q_)), hbk(view1(b_k_)), hbv(view1(b_v_)), hbo(view1(b_o_));
    detail::HalideView hl(TensorView::i32(lengths.data(), {batch}));
    detail::KernelCall call(*kernel);
    const std::pair<const char *, detail::HalideView *> buffers[] = {
        {"x", &hx},    {"memory", &hm}, {"w_q", &hwq},        {"w_k", &hwk},
        {"w_v", &hwv}, {"w_o", &hwo},   {"b_q", &hbq},        {"b_k", &hbk},
        {"b_v", &hbv}, {"b_o", &hbo},   {"key_lengths", &hl}, {"y", &hy}};
    for (const auto &[name, view] : buffers)
        ATTNGEN_RETURN_IF_ERROR(call.buffer(name, view->get()));
    ATTNGEN_RETURN_IF_ERROR(call.scalar("num_heads", static_cast<int32_t>(heads_)));
    ATTNGEN_RETURN_IF_ERROR(call.scalar("num_kv_heads", static_cast<int32_t>(kv_heads_)));
    ATTNGEN_RETURN_IF_ERROR(call.scalar("scale", scale_));
    ATTNGEN_RETURN_IF_ERROR(modifiers.bind(kernel->variant, &call));
    detail::CallContext context;
    int result = 0;
    Status ran = call.run(&context, &result);
    // A cuda_tiled kernel's CUDA entry (schedule named, device present) leaves device copies:
    // the output comes back to host memory and every copy is freed, also after a failure.
    std::vector<detail::HalideView *> inputs{&hx,  &hm,  &hwq, &hwk, &hwv, &hwo,
                                             &hbq, &hbk, &hbv, &hbo, &hl};
    modifiers.add_views(&inputs);
    Status moved = detail::release_devices(&context, {&hy}, inputs);
    ATTNGEN_RETURN_IF_ERROR(ran);
    Status status = context.finish(kernel->name.c_str(), result);
    return status.ok() ? moved : status;
}

}  // namespace attngen
