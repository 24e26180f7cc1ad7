// The C API (attngen/attngen_c.h): converts the C structs into the C++ API's types and calls it.
// No C++ exception may cross into C code, so every entry point catches them and reports them
// as a status.
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>

#include "attngen/attngen.h"
#include "attngen/attngen_c.h"

namespace {

using attngen::Status;
using attngen::TensorView;

// The C enums mirror the C++ ones value for value, so that a status converts by a cast.
static_assert(ATTNGEN_OK == static_cast<int>(attngen::StatusCode::kOk) &&
                  ATTNGEN_INVALID_ARGUMENT ==
                      static_cast<int>(attngen::StatusCode::kInvalidArgument) &&
                  ATTNGEN_NOT_FOUND == static_cast<int>(attngen::StatusCode::kNotFound) &&
                  ATTNGEN_KERNEL_ERROR == static_cast<int>(attngen::StatusCode::kKernelError) &&
                  ATTNGEN_OUT_OF_MEMORY == static_cast<int>(attngen::StatusCode::kOutOfMemory) &&
                  ATTNGEN_UNAVAILABLE == static_cast<int>(attngen::StatusCode::kUnavailable),
              "attngen_status and attngen::StatusCode differ");
static_assert(ATTNGEN_MAX_RANK == attngen::kMaxRank, "ATTNGEN_MAX_RANK and kMaxRank differ");

// The message of this thread's last failed call, for attngen_last_error().
thread_local std::string last_error;

attngen_status report(const Status &status) {
    last_error = status.ok() ? std::string() : status.message();
    return static_cast<attngen_status>(status.code());
}

// The C view as a TensorView; a rank or dtype outside the enums is refused here, since the C
// struct cannot enforce them.
Status to_view(const char *name, const attngen_tensor &t, TensorView *view) {
    if (t.rank < 1 || t.rank > attngen::kMaxRank) {
        return Status::InvalidArgument(std::string(name) + " has rank " + std::to_string(t.rank) +
                                       ", outside 1 .. " + std::to_string(attngen::kMaxRank));
    }
    // A C caller may store any int in the enum field; in C++ loading a value outside the
    // enumerators is undefined, so the field is read as the int it is.
    static_assert(sizeof(attngen_dtype) == sizeof(int), "attngen_dtype is stored as an int");
    int dtype;
    std::memcpy(&dtype, &t.dtype, sizeof dtype);
    switch (dtype) {
        case ATTNGEN_FLOAT32:
            view->dtype = attngen::DType::kFloat32;
            break;
        case ATTNGEN_INT32:
            view->dtype = attngen::DType::kInt32;
            break;
        case ATTNGEN_INT64:
            view->dtype = attngen::DType::kInt64;
            break;
        case ATTNGEN_BFLOAT16:
            view->dtype = attngen::DType::kBFloat16;
            break;
        case ATTNGEN_FLOAT16:
            view->dtype = attngen::DType::kFloat16;
            break;
        default:
            return Status::InvalidArgument(std::string(name) + " has dtype " +
                                           std::to_string(dtype) +
                                           ", which is not an attngen_dtype");
    }
    view->data = t.data;
    view->rank = t.rank;
    for (int d = 0; d < t.rank; d++) {
        view->shape[d] = t.shape[d];
        view->strides[d] = t.strides[d];
    }
    return Status::Ok();
}

// The same for an optional tensor (NULL: absent).
Status to_optional_view(const char *name, const attngen_tensor *t,
                        std::optional<TensorView> *view) {
    view->reset();
    if (t == nullptr) return Status::Ok();
    TensorView v;
    Status s = to_view(name, *t, &v);
    if (s.ok()) *view = v;
    return s;
}

// The modifiers of a call (NULL: none).
Status to_modifiers(const attngen_modifiers *m, attngen::Modifiers *mods) {
    if (m == nullptr) return Status::Ok();
    if (m->has_softcap) mods->softcap = m->softcap;
    if (m->has_window_left) mods->window_left = m->window_left;
    if (m->has_window_right) mods->window_right = m->window_right;
    const std::pair<const char *, std::pair<const attngen_tensor *, std::optional<TensorView> *>>
        tensors[] = {{"alibi_slopes", {m->alibi_slopes, &mods->alibi_slopes}},
                     {"bias", {m->bias, &mods->bias}},
                     {"prefix_lengths", {m->prefix_lengths, &mods->prefix_lengths}},
                     {"q_segments", {m->q_segments, &mods->q_segments}},
                     {"kv_segments", {m->kv_segments, &mods->kv_segments}}};
    for (const auto &[name, pair] : tensors) {
        const Status converted = to_optional_view(name, pair.first, pair.second);
        if (!converted.ok()) return converted;
    }
    return Status::Ok();
}

#define ATTNGEN_C_RETURN_IF_ERROR(expr)            \
    do {                                           \
        const Status status_ = (expr);             \
        if (!status_.ok()) return report(status_); \
    } while (0)

// Runs body, turning the exceptions that the C++ library can throw into a status.
template <typename Body>
attngen_status guarded(Body body) {
    try {
        return body();
    } catch (const std::bad_alloc &) {
        return report(Status(attngen::StatusCode::kOutOfMemory, "out of memory"));
    } catch (const std::exception &e) {
        return report(Status(attngen::StatusCode::kKernelError, e.what()));
    }
}

}  // namespace

struct attngen_mha {
    attngen::MultiHeadAttention layer;
};

extern "C" {

attngen_tensor attngen_tensor_contiguous(void *data, attngen_dtype dtype, int rank,
                                         const int64_t *shape) {
    attngen_tensor t{};
    t.data = data;
    t.dtype = dtype;
    t.rank = rank;
    if (rank < 1 || rank > ATTNGEN_MAX_RANK || shape == nullptr) return t;
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; d--) {
        t.shape[d] = shape[d];
        t.strides[d] = stride;
        stride *= shape[d];
    }
    return t;
}

const char *attngen_last_error(void) {
    return last_error.c_str();
}

attngen_status attngen_attention(const attngen_attention_args *args) {
    return guarded([&] {
        if (args == nullptr) return report(Status::InvalidArgument("args is NULL"));
        attngen::AttentionArgs a;
        ATTNGEN_C_RETURN_IF_ERROR(to_view("q", args->q, &a.q));
        ATTNGEN_C_RETURN_IF_ERROR(to_view("k", args->k, &a.k));
        ATTNGEN_C_RETURN_IF_ERROR(to_view("v", args->v, &a.v));
        ATTNGEN_C_RETURN_IF_ERROR(to_view("out", args->out, &a.out));
        ATTNGEN_C_RETURN_IF_ERROR(
            to_optional_view("key_lengths", args->key_lengths, &a.key_lengths));
        ATTNGEN_C_RETURN_IF_ERROR(to_optional_view("lse", args->lse, &a.lse));
        ATTNGEN_C_RETURN_IF_ERROR(to_optional_view("probs", args->probs, &a.probs));
        a.causal = args->causal != 0;
        if (args->has_scale) a.scale = args->scale;
        if (args->schedule != nullptr) a.schedule = args->schedule;
        ATTNGEN_C_RETURN_IF_ERROR(to_modifiers(args->modifiers, &a.modifiers));
        return report(attngen::attention(a));
    });
}

attngen_status attngen_mha_create(const attngen_mha_weights *weights,
                                  const attngen_mha_config *config, attngen_mha **layer) {
    return guarded([&] {
        if (weights == nullptr || config == nullptr || layer == nullptr) {
            return report(Status::InvalidArgument("weights, config and layer must not be NULL"));
        }
        *layer = nullptr;
        attngen::MhaWeights w;
        ATTNGEN_C_RETURN_IF_ERROR(to_view("w_q", weights->w_q, &w.w_q));
        ATTNGEN_C_RETURN_IF_ERROR(to_view("w_k", weights->w_k, &w.w_k));
        ATTNGEN_C_RETURN_IF_ERROR(to_view("w_v", weights->w_v, &w.w_v));
        ATTNGEN_C_RETURN_IF_ERROR(to_view("w_o", weights->w_o, &w.w_o));
        ATTNGEN_C_RETURN_IF_ERROR(to_optional_view("b_q", weights->b_q, &w.b_q));
        ATTNGEN_C_RETURN_IF_ERROR(to_optional_view("b_k", weights->b_k, &w.b_k));
        ATTNGEN_C_RETURN_IF_ERROR(to_optional_view("b_v", weights->b_v, &w.b_v));
        ATTNGEN_C_RETURN_IF_ERROR(to_optional_view("b_o", weights->b_o, &w.b_o));
        attngen::MhaConfig c;
        c.heads = config->heads;
        c.kv_heads = config->kv_heads;
        c.causal = config->causal != 0;
        if (config->has_scale) c.scale = config->scale;
        if (config->schedule != nullptr) c.schedule = config->schedule;
        auto made = std::make_unique<attngen_mha>();
        ATTNGEN_C_RETURN_IF_ERROR(attngen::MultiHeadAttention::create(w, c, &made->layer));
        *layer = made.release();
        return report(Status::Ok());
    });
}

attngen_status attngen_mha_forward(const attngen_mha *layer, const attngen_tensor *x,
                                   const attngen_tensor *memory, const attngen_tensor *y,
                                   const attngen_tensor *key_lengths) {
    return attngen_mha_forward_modified(layer, x, memory, y, key_lengths, nullptr);
}

attngen_status attngen_mha_forward_modified(const attngen_mha *layer, const attngen_tensor *x,
                                            const attngen_tensor *memory, const attngen_tensor *y,
                                            const attngen_tensor *key_lengths,
                                            const attngen_modifiers *modifiers) {
    return guarded([&] {
        if (layer == nullptr || x == nullptr || y == nullptr) {
            return report(Status::InvalidArgument("layer, x and y must not be NULL"));
        }
        TensorView xv, yv;
        ATTNGEN_C_RETURN_IF_ERROR(to_view("x", *x, &xv));
        ATTNGEN_C_RETURN_IF_ERROR(to_view("y", *y, &yv));
        attngen::MhaForwardOptions options;
        ATTNGEN_C_RETURN_IF_ERROR(
            to_optional_view("key_lengths", key_lengths, &options.key_lengths));
        ATTNGEN_C_RETURN_IF_ERROR(to_optional_view("memory", memory, &options.memory));
        ATTNGEN_C_RETURN_IF_ERROR(to_modifiers(modifiers, &options.modifiers));
        return report(layer->layer.forward(xv, yv, options));
    });
}

void attngen_mha_destroy(attngen_mha *layer) {
    delete layer;
}

int attngen_set_num_threads(int threads) {
    return attngen::set_num_threads(threads);
}

int attngen_set_spin_wait_microseconds(int microseconds) {
    return attngen::set_spin_wait_microseconds(microseconds);
}

}  // extern "C"
