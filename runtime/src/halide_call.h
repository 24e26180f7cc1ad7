// The bridge to generated kernels: halide_buffer_t views of TensorViews, and the per-call context
// through which a kernel's error messages become a Status.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "HalideRuntime.h"
#include "attngen/status.h"
#include "attngen/tensor.h"

namespace attngen::detail {

// A halide_buffer_t describing a TensorView (dimensions reversed: Halide lists the innermost
// dimension first). It points into itself, so it is neither copied nor moved.
class HalideView {
  public:
    explicit HalideView(const TensorView &view);
    HalideView(const HalideView &) = delete;
    HalideView &operator=(const HalideView &) = delete;

    halide_buffer_t *get() { return &buffer_; }

    // Before the call: a view of CUDA device memory is attached to the buffer as its device
    // allocation (no copy). kUnavailable in a build without CUDA kernels.
    Status attach_device(void *user_context);

    // After the call. A CUDA kernel that ran on host tensors left copies on the device: an output
    // is copied back (is_output), and the device copies are freed. A device tensor is waited for
    // and detached; its memory stays the caller's. Nothing to do after a CPU entry ran.
    Status release_device(void *user_context, bool is_output);

  private:
    halide_buffer_t buffer_{};
    bool wrapped_ = false;
    uint64_t device_pointer_ = 0;  // The view's CUDA pointer, 0 for host memory.
    halide_dimension_t dims_[kMaxRank]{};
};

// release_device for every view of a call (results copied back, inputs only freed); all are
// released even after one fails, and the first failure is returned.
Status release_devices(void *user_context, const std::vector<HalideView *> &results,
                       const std::vector<HalideView *> &inputs);

// Passed to every kernel as its user context. Halide's error handler is process-wide, so the
// runtime installs one handler that appends each message to the context of the failing call.
// Messages may arrive from several of the kernel's worker threads at once.
class CallContext {
  public:
    CallContext();
    void record_error(const char *message);

    // Status for the kernel's return code, carrying the messages it reported.
    Status finish(const char *kernel_name, int result);

  private:
    std::mutex mutex_;
    std::string messages_;
};

}  // namespace attngen::detail
