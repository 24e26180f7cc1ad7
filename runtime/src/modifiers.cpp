#include "modifiers.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

namespace attngen::detail {

namespace {

Status invalid(const std::string &message) {
    return Status::InvalidArgument(message);
}

}  // namespace

Status CallModifiers::prepare(const Modifiers &m, bool causal, const ModifierExtents &e) {
    modifiers_ = m;
    extents_ = e;
    mask_ = MaskSpec{};
    score_ = ScoreSpec{};
    mask_.causal = causal;
    inputs_.clear();
    const Modifiers &own = modifiers_;

    if (m.softcap) {
        if (!std::isfinite(*m.softcap) || *m.softcap <= 0.0f) {
            return invalid("softcap is " + std::to_string(*m.softcap) +
                           "; it must be a finite number > 0");
        }
        score_.softcap = true;
    }
    if (m.alibi_slopes) {
        NamedView slopes{"alibi_slopes", *own.alibi_slopes, {"H"}};
        ATTNGEN_RETURN_IF_ERROR(check_view(slopes, {DType::kFloat32}));
        ATTNGEN_RETURN_IF_ERROR(check_extent(slopes, 0, e.heads, e.sources.heads));
        if (m.alibi_slopes->device != Device::kCpu) {
            return invalid("alibi_slopes is in device memory; pass it in host memory");
        }
        const auto *data = static_cast<const float *>(m.alibi_slopes->data);
        for (int64_t h = 0; h < e.heads; h++) {
            if (!std::isfinite(data[h * m.alibi_slopes->strides[0]])) {
                return invalid("alibi_slopes[" + std::to_string(h) + "] is not a finite number");
            }
        }
        inputs_.push_back(slopes);
        score_.alibi = true;
    }
    if (m.bias) {
        NamedView bias{"bias", *own.bias, {"B", "H", "Nq", "Nk"}};
        const TensorView &b = *own.bias;
        if (b.rank != 4) {
            return invalid("bias has rank " + std::to_string(b.rank) +
                           ", expected 4 (each dim that of [B, H, Nq, Nk] or 1)");
        }
        ATTNGEN_RETURN_IF_ERROR(check_view(bias, {DType::kFloat32}));
        if (b.device != Device::kCpu)
            return invalid("bias is in device memory; pass it in host memory");
        const int64_t full[4] = {e.batch, e.heads, e.nq, e.nk};
        const char *names[4] = {"B", "H", "Nq", "Nk"};
        for (int d = 0; d < 4; d++) {
            if (b.shape[d] != 1 && b.shape[d] != full[d]) {
                return invalid("bias shape[" + std::to_string(d) + "] is " +
                               std::to_string(b.shape[d]) + ", which does not broadcast to " +
                               names[d] + " = " + std::to_string(full[d]) +
                               " (it must be 1 or equal)");
            }
        }
        inputs_.push_back(bias);
        // The kernel's view: the bias as given, whose dims of extent 1 the kernels read at 0
        // (score_modifiers.h). Kernels read rows of keys with stride 1, so a bias broadcast along
        // Nk is expanded.
        bias_view_ = b;
        if (b.shape[3] == 1 && e.nk > 1) {
            const int64_t rows = b.shape[0] * b.shape[1] * b.shape[2];
            bias_rows_.resize(rows * e.nk);
            const auto *data = static_cast<const float *>(b.data);
            int64_t r = 0;
            for (int64_t i0 = 0; i0 < b.shape[0]; i0++) {
                for (int64_t i1 = 0; i1 < b.shape[1]; i1++) {
                    for (int64_t i2 = 0; i2 < b.shape[2]; i2++, r++) {
                        const float value =
                            data[i0 * b.strides[0] + i1 * b.strides[1] + i2 * b.strides[2]];
                        std::fill(bias_rows_.begin() + r * e.nk,
                                  bias_rows_.begin() + (r + 1) * e.nk, value);
                    }
                }
            }
            bias_view_ = TensorView::contiguous(bias_rows_.data(), DType::kFloat32,
                                                {b.shape[0], b.shape[1], b.shape[2], e.nk});
        }
        score_.bias = true;
    }
    for (const auto &[side, name] :
         {std::pair{m.window_left, "window_left"}, std::pair{m.window_right, "window_right"}}) {
        if (side && *side < 0) {
            return invalid(std::string(name) + " is " + std::to_string(*side) +
                           "; a window side must be >= 0 (leave it out for no bound)");
        }
    }
    mask_.window = m.window_left.has_value() || m.window_right.has_value();
    if (m.prefix_lengths) {
        if (!causal) {
            return invalid("prefix_lengths widen the causal mask; they need causal attention");
        }
        NamedView prefix{"prefix_lengths", *own.prefix_lengths, {"B"}};
        ATTNGEN_RETURN_IF_ERROR(check_view(prefix, {DType::kInt32, DType::kInt64}));
        ATTNGEN_RETURN_IF_ERROR(check_extent(prefix, 0, e.batch, e.sources.batch));
        if (m.prefix_lengths->device != Device::kCpu) {
            return invalid("prefix_lengths is in device memory; pass it in host memory");
        }
        ATTNGEN_RETURN_IF_ERROR(read_int32_values(prefix, e.batch, 1, 0, e.nk,
                                                  "[0, Nk = " + std::to_string(e.nk) + "]",
                                                  &prefix_lengths_));
        mask_.prefix = true;
    }
    if (m.q_segments.has_value() != m.kv_segments.has_value()) {
        return invalid(std::string(m.q_segments ? "q_segments" : "kv_segments") +
                       " is given without " + (m.q_segments ? "kv_segments" : "q_segments") +
                       "; segments need both");
    }
    if (m.q_segments) {
        NamedView qs{"q_segments", *own.q_segments, {"B", "Nq"}};
        NamedView ks{"kv_segments", *own.kv_segments, {"B", "Nk"}};
        const int64_t lo = std::numeric_limits<int32_t>::min(),
                      hi = std::numeric_limits<int32_t>::max();
        for (const auto &[view, count, source, out] :
             {std::tuple{&qs, e.nq, e.sources.nq, &q_segments_},
              std::tuple{&ks, e.nk, e.sources.nk, &kv_segments_}}) {
            ATTNGEN_RETURN_IF_ERROR(check_view(*view, {DType::kInt32, DType::kInt64}));
            ATTNGEN_RETURN_IF_ERROR(check_extent(*view, 0, e.batch, e.sources.batch));
            ATTNGEN_RETURN_IF_ERROR(check_extent(*view, 1, count, source));
            if (view->view.device != Device::kCpu) {
                return invalid(std::string(view->name) +
                               " is in device memory; pass it in host memory");
            }
            ATTNGEN_RETURN_IF_ERROR(
                read_int32_values(*view, e.batch, count, lo, hi, "the range of int32", out));
        }
        mask_.segments = true;
    }
    for (const auto &[name, view] : own.inputs) {
        // Extra inputs have rank 1 to 4 (attngen_add_kernel's INPUTS); their dims have no names.
        static const char *const kDims[] = {"", "", "", ""};
        if (view.rank < 1 || view.rank > 4) {
            return invalid("input '" + name + "' has rank " + std::to_string(view.rank) +
                           "; extra inputs have rank 1 to 4");
        }
        NamedView input{name.c_str(), view, {kDims, kDims + view.rank}};
        ATTNGEN_RETURN_IF_ERROR(check_view(input, {DType::kFloat32, DType::kInt32}));
        if (view.device != Device::kCpu) {
            return invalid("input '" + name + "' is in device memory; pass it in host memory");
        }
        inputs_.push_back(input);
    }
    return Status::Ok();
}

void CallModifiers::add_views(std::vector<HalideView *> *views) {
    for (HalideView &view : views_) views->push_back(&view);
}

halide_buffer_t *CallModifiers::keep(const TensorView &view) {
    return views_.emplace_back(view).get();
}

Status CallModifiers::bind(const Variant &kernel, KernelCall *call) {
    const ModifierExtents &e = extents_;
    const int64_t nq = e.nq, nk = e.nk, batch = e.batch;
    zeros_int_.assign(std::max(batch, std::max(nq, nk) * batch), 0);
    zeros_float_.assign(std::max(e.heads, nk), 0.0f);
    if (kernel.mask.window) {
        // Unbounded: far enough that no key falls outside, and within int32 (Nq + Nk < 2^31).
        const int64_t unbounded = nq + nk;
        const int64_t left = modifiers_.window_left.value_or(unbounded);
        const int64_t right = modifiers_.window_right.value_or(unbounded);
        ATTNGEN_RETURN_IF_ERROR(
            call->scalar("window_left", static_cast<int32_t>(std::min(left, unbounded))));
        ATTNGEN_RETURN_IF_ERROR(
            call->scalar("window_right", static_cast<int32_t>(std::min(right, unbounded))));
    }
    if (kernel.mask.prefix) {
        const int32_t *data = mask_.prefix ? prefix_lengths_.data() : zeros_int_.data();
        ATTNGEN_RETURN_IF_ERROR(
            call->buffer("prefix_lengths", keep(TensorView::i32(data, {batch}))));
    }
    if (kernel.mask.segments) {
        const int32_t *qs = mask_.segments ? q_segments_.data() : zeros_int_.data();
        const int32_t *ks = mask_.segments ? kv_segments_.data() : zeros_int_.data();
        ATTNGEN_RETURN_IF_ERROR(call->buffer("q_segments", keep(TensorView::i32(qs, {batch, nq}))));
        ATTNGEN_RETURN_IF_ERROR(
            call->buffer("kv_segments", keep(TensorView::i32(ks, {batch, nk}))));
    }
    if (kernel.score.softcap) {
        // 0 turns the kernel's cap off (validation refuses it as a call's value).
        ATTNGEN_RETURN_IF_ERROR(call->scalar("softcap", modifiers_.softcap.value_or(0.0f)));
    }
    if (kernel.score.alibi) {
        const TensorView slopes = score_.alibi ? *modifiers_.alibi_slopes
                                               : TensorView::f32(zeros_float_.data(), {e.heads});
        ATTNGEN_RETURN_IF_ERROR(call->buffer("alibi_slopes", keep(slopes)));
    }
    if (kernel.score.bias) {
        TensorView bias = bias_view_;
        if (!score_.bias) bias = TensorView::f32(zeros_float_.data(), {1, 1, 1, nk});
        ATTNGEN_RETURN_IF_ERROR(call->buffer("bias", keep(bias)));
    }
    // A missing extra input is the kernel call's to report (KernelCall::run names it).
    for (const auto &[name, view] : modifiers_.inputs) {
        if (!kernel.user_modified()) {
            return invalid("input '" + name +
                           "' is for a kernel with user-written modifiers, "
                           "which the call must name (attngen::attention(args, kernel)); the "
                           "chosen kernel has none");
        }
        ATTNGEN_RETURN_IF_ERROR(call->extra_input(name, keep(view)));
    }
    return Status::Ok();
}

}  // namespace attngen::detail
