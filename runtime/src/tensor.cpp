#include "attngen/tensor.h"

#include <algorithm>

namespace attngen {

const char *dtype_name(DType dtype) {
    switch (dtype) {
        case DType::kFloat32:
            return "float32";
        case DType::kInt32:
            return "int32";
        case DType::kInt64:
            return "int64";
        case DType::kBFloat16:
            return "bfloat16";
        case DType::kFloat16:
            return "float16";
    }
    return "unknown";
}

std::size_t dtype_size(DType dtype) {
    switch (dtype) {
        case DType::kFloat32:
            return 4;
        case DType::kInt32:
            return 4;
        case DType::kInt64:
            return 8;
        case DType::kBFloat16:
        case DType::kFloat16:
            return 2;
    }
    return 0;
}

TensorView TensorView::contiguous(void *data, DType dtype, std::initializer_list<int64_t> shape) {
    TensorView v;
    v.data = data;
    v.dtype = dtype;
    // A rank above kMaxRank is kept as such (with the first dims only) so that validation
    // reports it instead of silently truncating.
    v.rank = static_cast<int>(shape.size());
    int d = 0;
    for (int64_t extent : shape) {
        if (d < kMaxRank) v.shape[d] = extent;
        d++;
    }
    int64_t stride = 1;
    for (int k = std::min(v.rank, kMaxRank) - 1; k >= 0; k--) {
        v.strides[k] = stride;
        stride *= v.shape[k];
    }
    return v;
}

TensorView TensorView::with_strides(std::initializer_list<int64_t> new_strides) const {
    TensorView v = *this;
    int d = 0;
    for (int64_t s : new_strides) {
        if (d < kMaxRank) v.strides[d] = s;
        d++;
    }
    return v;
}

int64_t TensorView::num_elements() const {
    int64_t n = 1;
    for (int d = 0; d < std::min(rank, kMaxRank); d++) n *= shape[d];
    return n;
}

std::string TensorView::describe() const {
    std::string s = dtype_name(dtype);
    s += "[";
    for (int d = 0; d < std::min(rank, kMaxRank); d++) {
        if (d > 0) s += ", ";
        s += std::to_string(shape[d]);
    }
    return s + "]";
}

}  // namespace attngen
