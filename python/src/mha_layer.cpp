#include "mha_layer.h"

#include <pybind11/stl.h>

#include <deque>
#include <optional>
#include <string>

#include "attention_call.h"
#include "attngen/mha.h"
#include "status_error.h"
#include "tensor_arg.h"

namespace attngen_py {
namespace {

std::optional<attngen::TensorView> optional_view(py::handle array, const char *name) {
    if (array.is_none()) return std::nullopt;
    return view_of(array, name).view;
}

// The layer owns copies of its weights (MultiHeadAttention::create copies them), so the arrays
// passed to the constructor need not outlive it.
class MhaLayer {
  public:
    MhaLayer(py::handle w_q, py::handle w_k, py::handle w_v, py::handle w_o, py::handle b_q,
             py::handle b_k, py::handle b_v, py::handle b_o, int64_t heads, int64_t kv_heads,
             bool causal, std::optional<float> scale, std::string schedule) {
        attngen::MhaWeights weights;
        weights.w_q = view_of(w_q, "w_q").view;
        weights.w_k = view_of(w_k, "w_k").view;
        weights.w_v = view_of(w_v, "w_v").view;
        weights.w_o = view_of(w_o, "w_o").view;
        weights.b_q = optional_view(b_q, "b_q");
        weights.b_k = optional_view(b_k, "b_k");
        weights.b_v = optional_view(b_v, "b_v");
        weights.b_o = optional_view(b_o, "b_o");
        attngen::MhaConfig config;
        config.heads = heads;
        config.kv_heads = kv_heads;
        config.causal = causal;
        config.scale = scale;
        config.schedule = std::move(schedule);
        raise_if_error(attngen::MultiHeadAttention::create(weights, config, &layer_));
    }

    // x [B, Nq, d_model], memory [B, Nk, d_mem] or None (self-attention) -> y [B, Nq, d_out],
    // a new array of x's library and of the layer's storage type unless `out` is given.
    // The keywords are the modifiers of attngen.attention, for the attention inside the layer.
    py::object forward(py::handle x, py::handle memory, py::handle key_lengths, py::handle out,
                       const py::kwargs &keywords) const {
        const HeldTensor hx = view_of(x, "x");
        if (hx.view.rank != 3) {
            throw py::value_error("x: expected 3 dimensions [B, Nq, d_model], got " +
                                  hx.view.describe());
        }
        std::optional<HeldTensor> hm;
        if (!memory.is_none()) hm = view_of(memory, "memory");
        std::optional<HeldTensor> lengths;
        if (!key_lengths.is_none()) lengths = view_of(key_lengths, "key_lengths");
        const HeldTensor hy =
            out.is_none() ? new_array(hx.kind, {hx.view.shape[0], hx.view.shape[1], layer_.d_out()},
                                      layer_.storage())
                          : view_of(out, "out", Access::kWrite);
        attngen::MhaForwardOptions options;
        if (hm) options.memory = hm->view;
        if (lengths) options.key_lengths = lengths->view;
        std::deque<HeldTensor> modifier_tensors;
        for (auto item : keywords) {
            const std::string key = py::str(item.first);
            if (item.second.is_none()) continue;
            if (!set_modifier_keyword(options.modifiers, key, item.second, modifier_tensors)) {
                throw py::type_error("forward() got an unexpected keyword argument '" + key + "'");
            }
        }
        attngen::Status status;
        {
            py::gil_scoped_release release;
            status = layer_.forward(hx.view, hy.view, options);
        }
        raise_if_error(status);
        return hy.array;
    }

    const attngen::MultiHeadAttention &layer() const { return layer_; }

  private:
    attngen::MultiHeadAttention layer_;
};

}  // namespace

void bind_mha_layer(py::module_ &m) {
    using py::arg;
    py::class_<MhaLayer>(m, "_MultiheadAttention",
                         "The runtime's multi-head layer (attngen/mha.h), weights input-dim "
                         "first: w_q [d_model, H*d_k], w_k [d_mem, H_kv*d_k], w_v [d_mem, "
                         "H_kv*d_v], w_o [H*d_v, d_out]. Copies the weights.")
        .def(py::init<py::handle, py::handle, py::handle, py::handle, py::handle, py::handle,
                      py::handle, py::handle, int64_t, int64_t, bool, std::optional<float>,
                      std::string>(),
             arg("w_q"), arg("w_k"), arg("w_v"), arg("w_o"), py::kw_only(), arg("b_q") = py::none(),
             arg("b_k") = py::none(), arg("b_v") = py::none(), arg("b_o") = py::none(),
             arg("heads") = 1, arg("kv_heads") = 0, arg("causal") = false,
             arg("scale") = py::none(), arg("schedule") = "")
        .def("forward", &MhaLayer::forward, arg("x"), arg("memory") = py::none(),
             arg("key_lengths") = py::none(), arg("out") = py::none(),
             "x [B, Nq, d_model], memory [B, Nk, d_mem] or None (self-attention) -> y [B, Nq, "
             "d_out]; the keywords softcap, alibi_slopes, bias, window_left, window_right, "
             "prefix_lengths, q_segments and kv_segments modify the attention inside the layer")
        .def_property_readonly("heads", [](const MhaLayer &l) { return l.layer().heads(); })
        .def_property_readonly("kv_heads", [](const MhaLayer &l) { return l.layer().kv_heads(); })
        .def_property_readonly("d_model", [](const MhaLayer &l) { return l.layer().d_model(); })
        .def_property_readonly("d_mem", [](const MhaLayer &l) { return l.layer().d_mem(); })
        .def_property_readonly("d_k", [](const MhaLayer &l) { return l.layer().d_k(); })
        .def_property_readonly("d_v", [](const MhaLayer &l) { return l.layer().d_v(); })
        .def_property_readonly("d_out", [](const MhaLayer &l) { return l.layer().d_out(); });
}

}  // namespace attngen_py
