#include "kernel_call.h"

#include <cstring>
#include <string>

namespace attngen::detail {

namespace {

// The name Halide gives the user context argument of a kernel compiled with user_context.
constexpr const char *kUserContext = "__user_context";

std::string type_name(halide_type_t type) {
    const char *kind = type.code == halide_type_float  ? "float"
                       : type.code == halide_type_int  ? "int"
                       : type.code == halide_type_uint ? "uint"
                                                       : "handle";
    return kind + std::to_string(type.bits);
}

}  // namespace

KernelCall::KernelCall(const Kernel &kernel) : kernel_(kernel) {
    if (kernel.metadata != nullptr) metadata_ = kernel.metadata();
    const int count = metadata_ != nullptr ? metadata_->num_arguments : 0;
    argv_.assign(count, nullptr);
    // Scalars are passed by address; reserving keeps their addresses stable.
    scalars_.resize(count);
}

const halide_filter_argument_t *KernelCall::find(const char *name, int32_t kind) {
    if (metadata_ == nullptr) return nullptr;
    const std::size_t length = std::strlen(name);
    for (int a = 0; a < metadata_->num_arguments; a++) {
        const halide_filter_argument_t &arg = metadata_->arguments[a];
        if (arg.kind != kind || std::strncmp(arg.name, name, length) != 0) continue;
        // An output takes the name of the Func that computes it, which Halide may have made
        // unique with a suffix ("out$8"); the algorithms name their outputs after the generators'.
        const char end = arg.name[length];
        if (end == '\0' || (end == '$' && kind == halide_argument_kind_output_buffer)) return &arg;
    }
    return nullptr;
}

Status KernelCall::buffer(const char *name, halide_buffer_t *buffer) {
    const halide_filter_argument_t *arg = find(name, halide_argument_kind_input_buffer);
    if (arg == nullptr) arg = find(name, halide_argument_kind_output_buffer);
    if (arg == nullptr) {
        return Status::InvalidArgument("kernel " + kernel_.name + " takes no buffer named '" +
                                       name + "'");
    }
    // Every buffer the runtime passes has the type and rank that its name promises; this holds
    // the extra inputs of user-written modifiers, which come from the caller, to the kernel's.
    const halide_type_t want = arg->type, got = buffer->type;
    if (got.code != want.code || got.bits != want.bits || buffer->dimensions != arg->dimensions) {
        return Status::InvalidArgument("kernel " + kernel_.name + " takes '" + name + "' as " +
                                       type_name(want) + " of rank " +
                                       std::to_string(arg->dimensions) + ", got " + type_name(got) +
                                       " of rank " + std::to_string(buffer->dimensions));
    }
    argv_[arg - metadata_->arguments] = buffer;
    return Status::Ok();
}

Status KernelCall::extra_input(const std::string &name, halide_buffer_t *buffer) {
    for (const int32_t kind : {halide_argument_kind_input_buffer, halide_argument_kind_input_scalar,
                               halide_argument_kind_output_buffer}) {
        const halide_filter_argument_t *arg = find(name.c_str(), kind);
        if (arg != nullptr && argv_[arg - metadata_->arguments] != nullptr) {
            return Status::InvalidArgument("input '" + name + "' takes the name of one of kernel " +
                                           kernel_.name + "'s own arguments");
        }
    }
    return this->buffer(name.c_str(), buffer);
}

Status KernelCall::scalar(const char *name, float value) {
    const halide_filter_argument_t *arg = find(name, halide_argument_kind_input_scalar);
    if (arg == nullptr || arg->type.code != halide_type_float || arg->type.bits != 32) {
        return Status::InvalidArgument("kernel " + kernel_.name +
                                       " takes no float32 scalar named '" + name + "'");
    }
    const std::ptrdiff_t index = arg - metadata_->arguments;
    scalars_[index].u.f32 = value;
    argv_[index] = &scalars_[index];
    return Status::Ok();
}

Status KernelCall::scalar(const char *name, int32_t value) {
    const halide_filter_argument_t *arg = find(name, halide_argument_kind_input_scalar);
    if (arg == nullptr || arg->type.code != halide_type_int || arg->type.bits != 32) {
        return Status::InvalidArgument("kernel " + kernel_.name + " takes no int32 scalar named '" +
                                       name + "'");
    }
    const std::ptrdiff_t index = arg - metadata_->arguments;
    scalars_[index].u.i32 = value;
    argv_[index] = &scalars_[index];
    return Status::Ok();
}

Status KernelCall::run(void *user_context, int *result) {
    if (metadata_ == nullptr || kernel_.argv == nullptr) {
        return Status::InvalidArgument("kernel " + kernel_.name + " has no entry point");
    }
    user_context_ = user_context;
    for (int a = 0; a < metadata_->num_arguments; a++) {
        const halide_filter_argument_t &arg = metadata_->arguments[a];
        if (std::strcmp(arg.name, kUserContext) == 0) {
            argv_[a] = &user_context_;
        } else if (argv_[a] == nullptr) {
            return Status::InvalidArgument(
                "kernel " + kernel_.name + " needs its " +
                (arg.kind == halide_argument_kind_input_scalar ? "scalar" : "buffer") +
                " argument '" + arg.name + "', which the call lacks");
        }
    }
    *result = kernel_.argv(argv_.data());
    return Status::Ok();
}

}  // namespace attngen::detail
