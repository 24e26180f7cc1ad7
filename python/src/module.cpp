// attngen._attngen: the compiled part of the Python package attngen (docs/python.md). The
// package's __init__.py re-exports what users call; names with a leading underscore serve the
// package's own Python code and the benchmark.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <string>

#include "attention_call.h"
#include "attngen/kernels.h"
#include "attngen/schedules.h"
#include "mha_layer.h"

namespace attngen_py {
namespace {

py::object attention(py::handle q, py::handle k, py::handle v, const py::kwargs &keywords) {
    const PreparedCall call = prepare_attention(q, k, v, keywords);
    call.run();
    return call.result();
}

// Seconds per call of attngen::attention alone, over `calls` calls of one prepared call with
// the GIL released: what bench/python_sdpa.py compares the Python call with. Nothing of Python
// runs between the calls, as in a C++ program's loop.
double time_attention_calls(py::handle q, py::handle k, py::handle v, int calls,
                            const py::kwargs &keywords) {
    if (calls < 1) throw py::value_error("calls: must be at least 1");
    const PreparedCall call = prepare_attention(q, k, v, keywords);
    call.run();  // Checks the call once; the loop below then needs no error handling.
    std::chrono::steady_clock::duration elapsed{};
    {
        py::gil_scoped_release release;
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; ++i) (void)attngen::attention(call.args);
        elapsed = std::chrono::steady_clock::now() - start;
    }
    return std::chrono::duration<double>(elapsed).count() / calls;
}

py::dict kernel_dict(const attngen::Kernel &kernel) {
    const attngen::Variant &v = kernel.variant;
    py::dict d;
    d["name"] = kernel.name;
    d["variant"] = v.to_string();
    d["op"] = attngen::op_name(v.op);
    d["storage"] = attngen::dtype_name(v.storage);
    d["kv_storage"] = attngen::dtype_name(v.kv_storage);
    d["mask"] = v.mask.to_string();
    d["score"] = v.score.to_string();
    d["probs"] = v.probs;
    d["heads"] = v.heads;
    d["kv_heads"] = v.kv_heads;
    d["d_k"] = v.d_k;
    d["d_v"] = v.d_v;
    d["max_queries"] = v.max_queries;
    d["min_keys"] = v.min_keys;
    d["schedule"] = v.schedule;
    d["tuning"] = v.tuning;
    d["targets"] = kernel.targets;
    d["selected_target"] = kernel.selected_target;
    d["serves_calls"] = kernel.serves_calls;
    d["cuda"] = kernel.cuda();
    return d;
}

py::dict schedule_dict(const attngen::ScheduleInfo &info) {
    py::dict d;
    d["name"] = info.name;
    d["summary"] = info.summary;
    d["cuda"] = info.cuda;
    d["autoscheduler"] = info.autoscheduler;
    d["priority"] = info.priority;
    py::dict not_served;
    for (const auto &[op, reason] : info.not_served) not_served[attngen::op_name(op)] = reason;
    d["not_served"] = not_served;
    return d;
}

}  // namespace
}  // namespace attngen_py

PYBIND11_MODULE(_attngen, m) {
    using namespace attngen_py;
    m.doc() = "attngen's compiled kernels and runtime; use the package attngen.";
    m.def("attention", &attention, py::arg("q"), py::arg("k"), py::arg("v"),
          "attention(q, k, v, *, causal=False, scale=None, key_lengths=None, return_lse=False, "
          "return_probs=False, schedule=None, out=None)\n\n"
          "softmax(q k^T * scale + mask) v for q [B, H, Nq, d_k], k [B, H_kv, Nk, d_k], v [B, "
          "H_kv, Nk, d_v] (NumPy arrays or CPU torch tensors, used in place; float32, float16 or "
          "bfloat16, k and v of one type) -> out [B, H, Nq, d_v] of q's library and type; see "
          "docs/python.md.");
    m.def("_time_attention_calls", &time_attention_calls, py::arg("q"), py::arg("k"), py::arg("v"),
          py::arg("calls"),
          "Seconds per call of the C++ call alone, over `calls` calls (for the benchmark).");
    m.def("list_kernels", [] {
        py::list kernels;
        for (const attngen::Kernel &k : attngen::list_kernels()) kernels.append(kernel_dict(k));
        return kernels;
    });
    m.def("list_schedules", [] {
        py::list schedules;
        for (const auto &info : attngen::list_schedules()) schedules.append(schedule_dict(info));
        return schedules;
    });
    m.def(
        "available_schedules",
        [](const std::string &op) {
            return op.empty() ? attngen::available_schedules() : attngen::available_schedules(op);
        },
        py::arg("op") = "");
    m.def("set_num_threads", &attngen::set_num_threads, py::arg("threads"));
    m.def("set_spin_wait_microseconds", &attngen::set_spin_wait_microseconds,
          py::arg("microseconds"));
    m.def("_cuda_status", [] {
        const attngen::Status status = attngen::cuda_status();
        return py::make_tuple(status.ok(), status.ok() ? std::string() : status.to_string());
    });
    bind_mha_layer(m);
}
