#include "halide_call.h"

#include <algorithm>

#include "allocator.h"

namespace attngen::detail {

namespace {

halide_type_t halide_type_of(DType dtype) {
    switch (dtype) {
        case DType::kFloat32:
            return halide_type_t(halide_type_float, 32);
        case DType::kInt32:
            return halide_type_t(halide_type_int, 32);
        case DType::kInt64:
            return halide_type_t(halide_type_int, 64);
    }
    return halide_type_t(halide_type_float, 32);
}

// Replaces Halide's default handler, which prints and aborts the process.
void error_handler(void *user_context, const char *message) {
    if (user_context != nullptr) static_cast<CallContext *>(user_context)->record_error(message);
}

void install_error_handler_once() {
    static const bool installed = [] {
        halide_set_error_handler(&error_handler);
        return true;
    }();
    (void)installed;
}

}  // namespace

HalideView::HalideView(const TensorView &view) {
    const int rank = std::min(view.rank, kMaxRank);
    for (int d = 0; d < rank; d++) {
        // Validation has already checked that extents and strides fit in 32 bits.
        dims_[d].min = 0;
        dims_[d].extent = static_cast<int32_t>(view.shape[rank - 1 - d]);
        dims_[d].stride = static_cast<int32_t>(view.strides[rank - 1 - d]);
        dims_[d].flags = 0;
    }
    buffer_.host = static_cast<uint8_t *>(view.data);
    buffer_.type = halide_type_of(view.dtype);
    buffer_.dimensions = rank;
    buffer_.dim = dims_;
}

CallContext::CallContext() {
    install_error_handler_once();
}

void CallContext::record_error(const char *message) {
    std::string text = message != nullptr ? message : "";
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    std::lock_guard<std::mutex> lock(mutex_);
    if (!messages_.empty()) messages_ += "; ";
    messages_ += text;
}

Status CallContext::finish(const char *kernel_name, int result) {
    if (result == halide_error_code_success) return Status::Ok();
    std::lock_guard<std::mutex> lock(mutex_);
    std::string message = std::string("kernel ") + kernel_name + " failed (Halide error " +
                          std::to_string(result) + ")";
    if (!messages_.empty()) message += ": " + messages_;
    StatusCode code = result == halide_error_code_out_of_memory ? StatusCode::kOutOfMemory
                                                                : StatusCode::kKernelError;
    return Status(code, message);
}

}  // namespace attngen::detail
