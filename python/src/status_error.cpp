#include "status_error.h"

#include <pybind11/pybind11.h>

namespace attngen_py {

void raise_if_error(const attngen::Status &status) {
    namespace py = pybind11;
    using attngen::StatusCode;
    switch (status.code()) {
        case StatusCode::kOk:
            return;
        case StatusCode::kInvalidArgument:
        case StatusCode::kNotFound:
            throw py::value_error(status.message());
        case StatusCode::kOutOfMemory:
            PyErr_SetString(PyExc_MemoryError, status.to_string().c_str());
            throw py::error_already_set();
        case StatusCode::kKernelError:
        case StatusCode::kUnavailable:
            break;
    }
    throw std::runtime_error(status.to_string());
}

}  // namespace attngen_py
