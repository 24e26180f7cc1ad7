// Python arrays seen as attngen tensors without copies: NumPy arrays through the buffer
// protocol, PyTorch tensors through their data pointer, shape and strides, and the arrays of any
// other library that exports DLPack through DLPack. TensorView strides count elements, so any
// layout whose strides are whole elements passes through as it is; the runtime then decides whether
// it accepts it (the innermost stride must be 1).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <vector>

#include "attngen/tensor.h"

namespace attngen_py {

namespace py = pybind11;

// The library of the outputs that a call makes, from its first input: NumPy in gives NumPy out,
// torch in gives torch out; other DLPack producers get NumPy arrays.
enum class ArrayKind { kNumpy, kTorch };

// Whether the call writes through the view: outputs must be writeable NumPy arrays.
enum class Access { kRead, kWrite };

// A view of a Python array and the object that keeps its memory alive while a call runs: the
// array itself, or the DLPack capsule whose deleter releases the producer's tensor.
struct HeldTensor {
    attngen::TensorView view;
    py::object owner;
    ArrayKind kind = ArrayKind::kNumpy;
    // The Python object the caller sees (returned for outputs the call made).
    py::object array;
};

// The view of `array`, named `name` in error messages. Raises ValueError for an element type
// other than float32, bfloat16 (torch, DLPack), float16, int32 and int64, more than four
// dimensions, strides that are not whole elements, memory that is not the CPU's, a torch tensor
// that requires grad or an `out` array that is read-only, and TypeError for an object that is none
// of the above.
HeldTensor view_of(py::handle array, const char *name, Access access = Access::kRead);

// A new array in C order of library `kind`, float32 unless dtype says otherwise (a NumPy array
// cannot be bfloat16: a ValueError).
HeldTensor new_array(ArrayKind kind, const std::vector<int64_t> &shape,
                     attngen::DType dtype = attngen::DType::kFloat32);

}  // namespace attngen_py
