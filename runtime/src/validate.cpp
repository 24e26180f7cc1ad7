#include "validate.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

namespace attngen::detail {

namespace {

// Halide buffers address elements with 32-bit extents, strides and byte offsets unless kernels
// are compiled with large_buffers, which would slow every index computation.
constexpr int64_t kMaxBytes = std::numeric_limits<int32_t>::max();

std::string dim_label(const NamedView &v, int dim) {
    std::string s = "shape[" + std::to_string(dim) + "]";
    if (dim < static_cast<int>(v.dim_names.size()) && v.dim_names[dim][0] != '\0') {
        s += " (" + std::string(v.dim_names[dim]) + ")";
    }
    return s;
}

// Lowest and one-past-highest byte offsets that the view touches.
void byte_span(const TensorView &v, int64_t *lo, int64_t *hi) {
    int64_t min_elem = 0, max_elem = 0;
    for (int d = 0; d < v.rank; d++) {
        int64_t reach = (v.shape[d] - 1) * v.strides[d];
        if (reach > 0)
            max_elem += reach;
        else
            min_elem += reach;
    }
    int64_t size = static_cast<int64_t>(dtype_size(v.dtype));
    *lo = min_elem * size;
    *hi = (max_elem + 1) * size;
}

}  // namespace

std::string layout_string(const NamedView &v) {
    std::string s = "[";
    for (std::size_t d = 0; d < v.dim_names.size(); d++) {
        if (d > 0) s += ", ";
        s += v.dim_names[d];
    }
    return s + "]";
}

Status check_view(const NamedView &nv, std::initializer_list<DType> dtypes) {
    const TensorView &v = nv.view;
    const int rank = static_cast<int>(nv.dim_names.size());
    const std::string name = nv.name;
    if (v.rank != rank) {
        return Status::InvalidArgument(name + " has rank " + std::to_string(v.rank) +
                                       ", expected " + std::to_string(rank) + " " +
                                       layout_string(nv));
    }
    if (std::find(dtypes.begin(), dtypes.end(), v.dtype) == dtypes.end()) {
        std::string allowed;
        for (DType t : dtypes)
            allowed += (allowed.empty() ? "" : " or ") + std::string(dtype_name(t));
        return Status::InvalidArgument(name + " has dtype " + dtype_name(v.dtype) + ", expected " +
                                       allowed);
    }
    if (v.data == nullptr) return Status::InvalidArgument(name + " has a null data pointer");
    for (int d = 0; d < rank; d++) {
        if (v.shape[d] <= 0) {
            return Status::InvalidArgument(name + " " + dim_label(nv, d) + " is " +
                                           std::to_string(v.shape[d]) +
                                           "; every extent must be positive");
        }
        if (v.shape[d] > std::numeric_limits<int32_t>::max() ||
            std::llabs(v.strides[d]) > std::numeric_limits<int32_t>::max()) {
            return Status::InvalidArgument(name + " " + dim_label(nv, d) +
                                           " has an extent or stride beyond 2^31 - 1");
        }
    }
    if (v.strides[rank - 1] != 1) {
        return Status::InvalidArgument(name + " has stride " + std::to_string(v.strides[rank - 1]) +
                                       " in its last dimension (" + nv.dim_names[rank - 1] +
                                       "); it must be contiguous (stride 1)");
    }
    int64_t lo = 0, hi = 0;
    byte_span(v, &lo, &hi);
    if (hi - lo > kMaxBytes) {
        return Status::InvalidArgument(name + " spans " + std::to_string(hi - lo) +
                                       " bytes; kernels address at most 2^31 - 1 bytes per tensor");
    }
    return Status::Ok();
}

Status check_extent(const NamedView &v, int dim, int64_t expected, const char *source) {
    if (v.view.shape[dim] == expected) return Status::Ok();
    return Status::InvalidArgument(std::string(v.name) + " " + dim_label(v, dim) + " is " +
                                   std::to_string(v.view.shape[dim]) + " but " + source + " is " +
                                   std::to_string(expected));
}

Status check_output_layout(const NamedView &nv) {
    const TensorView &v = nv.view;
    // Sorted by stride magnitude, each dim with extent > 1 must step over everything the
    // smaller dims cover; otherwise two index tuples share an address.
    std::vector<int> order;
    for (int d = 0; d < v.rank; d++) {
        if (v.shape[d] > 1) order.push_back(d);
    }
    std::sort(order.begin(), order.end(),
              [&](int a, int b) { return std::llabs(v.strides[a]) < std::llabs(v.strides[b]); });
    int64_t covered = 1;
    for (int d : order) {
        if (std::llabs(v.strides[d]) < covered) {
            return Status::InvalidArgument(std::string(nv.name) + " " + dim_label(nv, d) +
                                           " has stride " + std::to_string(v.strides[d]) +
                                           ", which makes output elements overlap");
        }
        covered = std::llabs(v.strides[d]) * v.shape[d];
    }
    return Status::Ok();
}

Status check_disjoint(const NamedView &out, const NamedView &other) {
    int64_t lo_a, hi_a, lo_b, hi_b;
    byte_span(out.view, &lo_a, &hi_a);
    byte_span(other.view, &lo_b, &hi_b);
    auto base_a = reinterpret_cast<intptr_t>(out.view.data);
    auto base_b = reinterpret_cast<intptr_t>(other.view.data);
    bool overlap = base_a + lo_a < base_b + hi_b && base_b + lo_b < base_a + hi_a;
    if (!overlap) return Status::Ok();
    return Status::InvalidArgument(std::string(out.name) + " overlaps " + other.name +
                                   " in memory; outputs must not alias other tensors");
}

Status read_int32_values(const NamedView &nv, int64_t rows, int64_t cols, int64_t lo, int64_t hi,
                         const std::string &range, std::vector<int32_t> *out) {
    const TensorView &v = nv.view;
    out->resize(rows * cols);
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t c = 0; c < cols; c++) {
            const int64_t offset = r * v.strides[0] + (v.rank == 2 ? c * v.strides[1] : 0);
            const int64_t value = v.dtype == DType::kInt32
                                      ? static_cast<const int32_t *>(v.data)[offset]
                                      : static_cast<const int64_t *>(v.data)[offset];
            if (value < lo || value > hi) {
                std::string index = std::to_string(r);
                if (v.rank == 2) index += ", " + std::to_string(c);
                return Status::InvalidArgument(std::string(nv.name) + "[" + index + "] is " +
                                               std::to_string(value) + ", outside " + range);
            }
            (*out)[r * cols + c] = static_cast<int32_t>(value);
        }
    }
    return Status::Ok();
}

Status read_key_lengths(const NamedView &nv, int64_t batch, int64_t nk, std::vector<int32_t> *out) {
    Status s = check_view(nv, {DType::kInt32, DType::kInt64});
    if (!s.ok()) return s;
    s = check_extent(nv, 0, batch, "the batch size B of q");
    if (!s.ok()) return s;
    return read_int32_values(nv, batch, 1, 0, nk, "[0, Nk = " + std::to_string(nk) + "]", out);
}

void copy_contiguous(const TensorView &v, std::vector<float> *out) {
    const auto *data = static_cast<const float *>(v.data);
    const int64_t rows = v.rank == 2 ? v.shape[0] : 1;
    const int64_t cols = v.shape[v.rank - 1];
    const int64_t row_stride = v.rank == 2 ? v.strides[0] : 0;
    out->resize(rows * cols);
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t c = 0; c < cols; c++) (*out)[r * cols + c] = data[r * row_stride + c];
    }
}

}  // namespace attngen::detail
