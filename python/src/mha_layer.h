// attngen._MultiheadAttention: the runtime's multi-head layer over Python arrays. The public
// class attngen.MultiheadAttention (python/attngen/mha.py) wraps it with PyTorch's conventions.
#pragma once

#include <pybind11/pybind11.h>

namespace attngen_py {

void bind_mha_layer(pybind11::module_ &m);

}  // namespace attngen_py
