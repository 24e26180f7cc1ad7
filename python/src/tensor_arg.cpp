#include "tensor_arg.h"

#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>

#include <string>

namespace attngen_py {
namespace {

using attngen::DType;

[[noreturn]] void fail(const char *name, const std::string &problem) {
    throw py::value_error(std::string(name) + ": " + problem);
}

// torch's objects, looked up once torch is imported. A tensor can only exist after that, so an
// object seen while torch is not in sys.modules is not a torch tensor, and the module never
// imports torch itself. Never freed: the objects must outlive every call, and Python objects
// cannot be released after the interpreter has shut down.
// What the module takes, for its dtype errors.
const char *const kTypes =
    "attngen takes float32, bfloat16 or float16 tensors and int32 or int64 key lengths";

struct TorchApi {
    py::object tensor_type, empty, float32, int32, int64, bfloat16, float16;
};

const TorchApi *torch_api() {
    static const TorchApi *api = nullptr;
    if (api == nullptr) {
        py::dict modules = py::module_::import("sys").attr("modules");
        if (!modules.contains("torch")) return nullptr;
        py::module_ torch = py::module_::import("torch");
        api = new TorchApi{torch.attr("Tensor"), torch.attr("empty"), torch.attr("float32"),
                           torch.attr("int32"),  torch.attr("int64"), torch.attr("bfloat16"),
                           torch.attr("float16")};
    }
    return api;
}

// A torch tensor read through its attributes (data_ptr, shape, stride: 0.5 us for a tensor
// here), not through DLPack: torch 1.13's to_dlpack makes a strided view of the tensor through
// its dispatcher on every call, which cost 2 to 3 us a tensor, a quarter of the budget of a
// whole call (docs/python.md, "Speed").
HeldTensor from_torch(const TorchApi &torch, py::handle t, const char *name) {
    if (!py::cast<bool>(t.attr("is_cpu"))) {
        fail(name, "the tensor is on " + std::string(py::str(t.attr("device"))) +
                       "; attngen's Python module takes CPU tensors");
    }
    // As torch's own Tensor.__dlpack__ does: a result computed outside autograd would silently
    // lose the gradient's path.
    if (py::cast<bool>(t.attr("requires_grad"))) {
        fail(name,
             "the tensor requires grad, and attngen computes no gradients; pass "
             "tensor.detach()");
    }
    // A negative view (torch._neg_view) holds the values negated: its memory is not its values.
    if (py::cast<bool>(t.attr("is_neg")())) fail(name, "a negative view; call resolve_neg()");
    HeldTensor held;
    const py::object dtype = t.attr("dtype");
    if (dtype.is(torch.float32)) {
        held.view.dtype = DType::kFloat32;
    } else if (dtype.is(torch.int32)) {
        held.view.dtype = DType::kInt32;
    } else if (dtype.is(torch.int64)) {
        held.view.dtype = DType::kInt64;
    } else if (dtype.is(torch.bfloat16)) {
        held.view.dtype = DType::kBFloat16;
    } else if (dtype.is(torch.float16)) {
        held.view.dtype = DType::kFloat16;
    } else {
        fail(name, "dtype " + std::string(py::str(dtype)) + "; " + kTypes);
    }
    const py::tuple shape = t.attr("shape");
    const py::tuple strides = t.attr("stride")();
    if (shape.size() > attngen::kMaxRank) {
        fail(name, std::to_string(shape.size()) + " dimensions; attngen takes at most " +
                       std::to_string(attngen::kMaxRank));
    }
    held.view.rank = static_cast<int>(shape.size());
    for (int i = 0; i < held.view.rank; ++i) {
        held.view.shape[i] = shape[i].cast<int64_t>();
        held.view.strides[i] = strides[i].cast<int64_t>();
    }
    // data_ptr() is the address of the first element, storage offset included.
    held.view.data = reinterpret_cast<void *>(t.attr("data_ptr")().cast<uintptr_t>());
    held.owner = py::reinterpret_borrow<py::object>(t);
    held.array = held.owner;
    held.kind = ArrayKind::kTorch;
    return held;
}

HeldTensor from_numpy(const py::array &a, const char *name, Access access) {
    HeldTensor held;
    if (a.dtype().equal(py::dtype::of<float>())) {
        held.view.dtype = DType::kFloat32;
    } else if (a.dtype().equal(py::dtype::of<int32_t>())) {
        held.view.dtype = DType::kInt32;
    } else if (a.dtype().equal(py::dtype::of<int64_t>())) {
        held.view.dtype = DType::kInt64;
    } else if (a.dtype().equal(py::dtype("float16"))) {
        held.view.dtype = DType::kFloat16;
    } else {
        fail(name, "dtype " + std::string(py::str(a.dtype())) + "; " + kTypes);
    }
    if (a.ndim() > attngen::kMaxRank) {
        fail(name, std::to_string(a.ndim()) + " dimensions; attngen takes at most " +
                       std::to_string(attngen::kMaxRank));
    }
    if (access == Access::kWrite && !a.writeable()) fail(name, "the array is read-only");
    const auto itemsize = static_cast<int64_t>(a.itemsize());
    held.view.rank = static_cast<int>(a.ndim());
    for (int i = 0; i < held.view.rank; ++i) {
        held.view.shape[i] = a.shape(i);
        if (a.strides(i) % itemsize != 0) {
            fail(name, "stride of dimension " + std::to_string(i) + " is " +
                           std::to_string(a.strides(i)) + " bytes, not a whole number of elements");
        }
        held.view.strides[i] = a.strides(i) / itemsize;
    }
    held.view.data = const_cast<void *>(a.data());
    held.owner = a;
    held.array = a;
    held.kind = ArrayKind::kNumpy;
    return held;
}

HeldTensor from_dlpack(py::object capsule, py::handle array, const char *name) {
    auto *managed = static_cast<DLManagedTensor *>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
    if (managed == nullptr) throw py::error_already_set();
    const DLTensor &t = managed->dl_tensor;
    if (t.device.device_type != kDLCPU) {
        fail(name, "the tensor is not in CPU memory (DLPack device type " +
                       std::to_string(t.device.device_type) +
                       "); attngen's Python module takes CPU tensors");
    }
    HeldTensor held;
    const DLDataType d = t.dtype;
    if (d.lanes == 1 && d.code == kDLFloat && d.bits == 32) {
        held.view.dtype = DType::kFloat32;
    } else if (d.lanes == 1 && d.code == kDLInt && (d.bits == 32 || d.bits == 64)) {
        held.view.dtype = d.bits == 32 ? DType::kInt32 : DType::kInt64;
    } else if (d.lanes == 1 && d.code == kDLFloat && d.bits == 16) {
        held.view.dtype = DType::kFloat16;
    } else if (d.lanes == 1 && d.code == kDLBfloat && d.bits == 16) {
        held.view.dtype = DType::kBFloat16;
    } else {
        fail(name, "DLPack dtype code " + std::to_string(d.code) + ", " + std::to_string(d.bits) +
                       " bits, " + std::to_string(d.lanes) + " lanes; " + kTypes);
    }
    if (t.ndim > attngen::kMaxRank) {
        fail(name, std::to_string(t.ndim) + " dimensions; attngen takes at most " +
                       std::to_string(attngen::kMaxRank));
    }
    held.view.rank = t.ndim;
    // DLPack leaves strides out for a compact row-major tensor.
    int64_t stride = 1;
    for (int i = t.ndim - 1; i >= 0; --i) {
        held.view.shape[i] = t.shape[i];
        held.view.strides[i] = t.strides != nullptr ? t.strides[i] : stride;
        stride *= t.shape[i];
    }
    held.view.data = static_cast<char *>(t.data) + t.byte_offset;
    // The capsule keeps the tensor alive; its destructor (the producer's) calls the deleter,
    // since the capsule is never renamed to "used_dltensor".
    held.owner = std::move(capsule);
    held.array = py::reinterpret_borrow<py::object>(array);
    held.kind = ArrayKind::kNumpy;
    return held;
}

}  // namespace

HeldTensor view_of(py::handle array, const char *name, Access access) {
    if (py::isinstance<py::array>(array)) {
        return from_numpy(py::reinterpret_borrow<py::array>(array), name, access);
    }
    const TorchApi *torch = torch_api();
    if (torch != nullptr && py::isinstance(array, torch->tensor_type)) {
        return from_torch(*torch, array, name);
    }
    // Any other array library that exports DLPack (its outputs are then NumPy arrays).
    if (py::hasattr(array, "__dlpack__")) {
        return from_dlpack(array.attr("__dlpack__")(), array, name);
    }
    throw py::type_error(
        std::string(name) +
        ": expected a NumPy array, a torch tensor or an object with __dlpack__, got " +
        std::string(py::str(py::type::handle_of(array).attr("__name__"))));
}

HeldTensor new_array(ArrayKind kind, const std::vector<int64_t> &shape, DType dtype) {
    if (kind == ArrayKind::kTorch) {
        const TorchApi *torch = torch_api();
        py::tuple dims(shape.size());
        for (size_t i = 0; i < shape.size(); ++i) dims[i] = py::int_(shape[i]);
        const py::object &type = dtype == DType::kBFloat16  ? torch->bfloat16
                                 : dtype == DType::kFloat16 ? torch->float16
                                                            : torch->float32;
        py::object tensor = torch->empty(dims, py::arg("dtype") = type);
        return view_of(tensor, "output", Access::kWrite);
    }
    // NumPy has no bfloat16: such inputs come through DLPack from another library, whose outputs
    // would have to be NumPy arrays.
    if (dtype == DType::kBFloat16) {
        fail("output",
             "NumPy has no bfloat16 to return it in; pass torch tensors, or an `out` tensor");
    }
    const py::dtype type = dtype == DType::kFloat16 ? py::dtype("float16") : py::dtype("float32");
    py::array a(type, std::vector<py::ssize_t>(shape.begin(), shape.end()));
    return from_numpy(a, "output", Access::kWrite);
}

}  // namespace attngen_py
