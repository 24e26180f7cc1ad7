// Python arrays seen as attngen tensors without copies: NumPy arrays through the buffer protocol
// and PyTorch tensors through DLPack. TensorView strides count elements, so any layout whose
// strides are whole elements passes through as it is; the runtime then decides whether it
// accepts it (the innermost stride must be 1).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <vector>

#include "attngen/tensor.h"

namespace attngen_py {

namespace py = pybind11;

// The library an array comes from. Outputs that a call makes come from the library of its first
// input, so that NumPy in gives NumPy out and torch in gives torch out.
enum class ArrayKind { kNumpy, kTorch };

// Whether the call writes through the view: outputs must be writeable NumPy arrays.
enum class Access { kRead, kWrite };

// A view of a Python array and the object that keeps its memory alive while a call runs: the
// array itself, or the DLPack capsule whose deleter releases the torch tensor.
struct HeldTensor {
    attngen::TensorView view;
    py::object owner;
    ArrayKind kind = ArrayKind::kNumpy;
    // The Python object the caller sees (returned for outputs the call made).
    py::object array;
};

// The view of `array`, named `name` in error messages. Raises ValueError for an element type
// other than float32, int32 and int64, more than four dimensions, strides that are not whole
// elements, memory that is not the CPU's or an `out` array that is read-only, and TypeError for
// an object that is neither a NumPy array nor a torch tensor.
HeldTensor view_of(py::handle array, const char *name, Access access = Access::kRead);

// A new float32 array in C order of library `kind`.
HeldTensor new_array(ArrayKind kind, const std::vector<int64_t> &shape);

}  // namespace attngen_py
