// A non-owning view of a dense tensor: data pointer, element type, shape and strides.
//
// Shapes are listed outermost first, as in PyTorch and numpy: an attention query is
// [B, H, Nq, d_k]. Strides count elements, not bytes. The innermost dimension must be contiguous
// (stride 1); every other stride is free, so [B, N, H, D] storage is passed as a [B, H, N, D]
// view with permuted strides. attngen never writes through a view that a call takes as input.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace attngen {

// kBFloat16 and kFloat16 are storage types of q, k, v and out (docs/design.md, "Storage
// types"): bfloat16 (float32's 8 exponent bits, 7 fraction bits) and IEEE binary16. The kernels
// widen them to float32 and accumulate in float32.
enum class DType { kFloat32, kInt32, kInt64, kBFloat16, kFloat16 };

// Where a tensor's data lives: host memory, or the memory of the current CUDA device (data is
// then a CUdeviceptr cast to void *, used in place by CUDA kernels without copies).
enum class Device { kCpu, kCuda };

// "float32", "int32", "int64", "bfloat16", "float16".
const char *dtype_name(DType dtype);
std::size_t dtype_size(DType dtype);

constexpr int kMaxRank = 4;

struct TensorView {
    void *data = nullptr;
    DType dtype = DType::kFloat32;
    int rank = 0;
    std::array<int64_t, kMaxRank> shape{};
    std::array<int64_t, kMaxRank> strides{};
    Device device = Device::kCpu;

    // A C-order (row-major, contiguous) view.
    static TensorView contiguous(void *data, DType dtype, std::initializer_list<int64_t> shape);
    static TensorView f32(float *data, std::initializer_list<int64_t> shape) {
        return contiguous(data, DType::kFloat32, shape);
    }
    static TensorView f32(const float *data, std::initializer_list<int64_t> shape) {
        return contiguous(const_cast<float *>(data), DType::kFloat32, shape);
    }
    static TensorView i32(const int32_t *data, std::initializer_list<int64_t> shape) {
        return contiguous(const_cast<int32_t *>(data), DType::kInt32, shape);
    }
    static TensorView i64(const int64_t *data, std::initializer_list<int64_t> shape) {
        return contiguous(const_cast<int64_t *>(data), DType::kInt64, shape);
    }

    // The same view with explicit strides (in elements), outermost first.
    TensorView with_strides(std::initializer_list<int64_t> new_strides) const;

    // The same view of CUDA device memory: data is a device pointer.
    TensorView on_cuda() const {
        TensorView v = *this;
        v.device = Device::kCuda;
        return v;
    }
    // Number of elements (the product of the shape).
    int64_t num_elements() const;

    // "float32[2, 8, 64, 64]".
    std::string describe() const;
};

}  // namespace attngen
