// Checks that every view is usable by a generated kernel before any kernel runs, so that a bad
// call becomes a status that names the tensor and the problem.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "attngen/status.h"
#include "attngen/tensor.h"

// Returns the status of expr from the enclosing function unless it is ok.
#define ATTNGEN_RETURN_IF_ERROR(expr)       \
    do {                                    \
        ::attngen::Status status_ = (expr); \
        if (!status_.ok()) return status_;  \
    } while (0)

namespace attngen::detail {

// A view with its name and the names of its dims, for messages: {"q", q, {"B", "H", "Nq", "d_k"}}.
struct NamedView {
    const char *name;
    const TensorView &view;
    std::vector<const char *> dim_names;
};

// Rank, dtype, non-null data, positive extents, a contiguous innermost dim, and extents and
// strides that a Halide buffer can address (32-bit).
Status check_view(const NamedView &v, std::initializer_list<DType> dtypes);

// v.view.shape[dim] == expected; otherwise a message naming both tensors.
Status check_extent(const NamedView &v, int dim, int64_t expected, const char *source);

// Outputs must not overlap themselves (a zero or short stride would make elements share
// memory) and must not overlap any input.
Status check_output_layout(const NamedView &out);
Status check_disjoint(const NamedView &out, const NamedView &other);

// Copies an int32 or int64 view [rows, cols] (rank 1: [rows], cols 1), already checked by
// check_view, into int32 values, each checked to lie in [lo, hi]; `range` describes that range in
// the error ("[0, Nk = 29]"), which names the element: "key_lengths[1] is 30, outside ...".
Status read_int32_values(const NamedView &v, int64_t rows, int64_t cols, int64_t lo, int64_t hi,
                         const std::string &range, std::vector<int32_t> *out);

// Reads key lengths (int32 or int64, [B]) into int32 values, each checked to be in [0, nk].
Status read_key_lengths(const NamedView &v, int64_t batch, int64_t nk, std::vector<int32_t> *out);

// Copies a float32 view of rank 1 or 2 into contiguous storage.
void copy_contiguous(const TensorView &v, std::vector<float> *out);

// "[B, H, Nq, d_k]".
std::string layout_string(const NamedView &v);

}  // namespace attngen::detail
