#include "halide_call.h"

#include <algorithm>

#include "allocator.h"
#include "thread_pool.h"

#ifdef ATTNGEN_HAVE_CUDA
#include "HalideRuntimeCuda.h"
#endif

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
        // The kernels take bfloat16 as the 16-bit patterns they widen with a shift
        // (generators/algorithm/storage.h): Halide 14's LLVM cannot compile bf16 for CUDA.
        case DType::kBFloat16:
            return halide_type_t(halide_type_uint, 16);
        case DType::kFloat16:
            return halide_type_t(halide_type_float, 16);
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

// Every kernel call runs this before it starts; it replaces the handler for every Halide
// pipeline in the process.
void install_thread_pool_once() {
    static const bool installed = [] {
        halide_set_custom_do_par_for(&pool_do_par_for);
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
    // A device view's pointer is attached by attach_device; the buffer has no host memory.
    buffer_.host = view.device == Device::kCpu ? static_cast<uint8_t *>(view.data) : nullptr;
    device_pointer_ = view.device == Device::kCuda ? reinterpret_cast<uint64_t>(view.data) : 0;
    buffer_.type = halide_type_of(view.dtype);
    buffer_.dimensions = rank;
    buffer_.dim = dims_;
}

Status HalideView::attach_device(void *user_context) {
    if (device_pointer_ == 0) return Status::Ok();
#ifdef ATTNGEN_HAVE_CUDA
    int result = halide_cuda_wrap_device_ptr(user_context, &buffer_, device_pointer_);
    if (result != halide_error_code_success) {
        return Status(
            StatusCode::kKernelError,
            "could not attach a CUDA device pointer (Halide error " + std::to_string(result) + ")");
    }
    wrapped_ = true;
    return Status::Ok();
#else
    (void)user_context;
    return Status::Unavailable(
        "a tensor is in CUDA device memory, but this build has no CUDA kernels "
        "(configure with -DATTNGEN_CUDA=ON)");
#endif
}

Status HalideView::release_device(void *user_context, bool is_output) {
    if (buffer_.device == 0) return Status::Ok();
    int result = halide_error_code_success;
#ifdef ATTNGEN_HAVE_CUDA
    if (wrapped_) {
        // The caller owns the memory; it must be complete before the call returns.
        result = halide_device_sync(user_context, &buffer_);
        int detached = halide_cuda_detach_device_ptr(user_context, &buffer_);
        if (result == halide_error_code_success) result = detached;
        wrapped_ = false;
    } else
#endif
    {
        if (is_output) result = halide_copy_to_host(user_context, &buffer_);
        int freed = halide_device_free(user_context, &buffer_);
        if (result == halide_error_code_success) result = freed;
    }
    if (result != halide_error_code_success) {
        return Status(StatusCode::kKernelError,
                      "moving a result off the CUDA device failed (Halide error " +
                          std::to_string(result) + ")");
    }
    return Status::Ok();
}

Status release_devices(void *user_context, const std::vector<HalideView *> &results,
                       const std::vector<HalideView *> &inputs) {
    Status first = Status::Ok();
    for (const auto *views : {&results, &inputs}) {
        for (HalideView *view : *views) {
            Status s = view->release_device(user_context, views == &results);
            if (first.ok()) first = s;
        }
    }
    return first;
}

CallContext::CallContext() {
    install_error_handler_once();
    install_thread_pool_once();
    // Besides installing it, this call is what links the allocator into a program: its start-up
    // initializer lives in allocator.o, which a static library leaves out of any program that
    // references nothing in it.
    install_allocator();
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
