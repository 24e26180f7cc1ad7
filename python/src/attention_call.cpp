#include "attention_call.h"

#include <string>

#include "status_error.h"

namespace attngen_py {
namespace {

using attngen::AttentionArgs;
using attngen::Modifiers;
using attngen::TensorView;

// How one keyword argument fills its field of AttentionArgs. `name` is the keyword, for errors;
// a value of None never reaches a setter (the field keeps its default).
using Setter = void (*)(AttentionArgs &args, const char *name, py::handle value,
                        PreparedCall &call);

bool as_bool(const char *name, py::handle value) {
    if (!PyBool_Check(value.ptr())) throw py::type_error(std::string(name) + ": expected a bool");
    return value.ptr() == Py_True;
}

template <bool AttentionArgs::*Field>
void set_flag(AttentionArgs &args, const char *name, py::handle value, PreparedCall &) {
    args.*Field = as_bool(name, value);
}

float as_float(const char *name, py::handle value) {
    const double number = PyFloat_AsDouble(value.ptr());
    if (number == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        throw py::type_error(std::string(name) + ": expected a number");
    }
    return static_cast<float>(number);
}

TensorView as_tensor(const char *name, py::handle value, std::deque<HeldTensor> &tensors) {
    tensors.push_back(view_of(value, name));
    return tensors.back().view;
}

template <std::optional<float> AttentionArgs::*Field>
void set_number(AttentionArgs &args, const char *name, py::handle value, PreparedCall &) {
    args.*Field = as_float(name, value);
}

template <std::optional<TensorView> AttentionArgs::*Field>
void set_tensor(AttentionArgs &args, const char *name, py::handle value, PreparedCall &call) {
    args.*Field = as_tensor(name, value, call.tensors);
}

// The same for the fields of Modifiers (attngen/modifiers.h), which attention() and the layer's
// forward() share.
using ModifierSetter = void (*)(Modifiers &modifiers, const char *name, py::handle value,
                                std::deque<HeldTensor> &tensors);

template <std::optional<float> Modifiers::*Field>
void set_modifier_number(Modifiers &m, const char *name, py::handle value,
                         std::deque<HeldTensor> &) {
    m.*Field = as_float(name, value);
}

template <std::optional<TensorView> Modifiers::*Field>
void set_modifier_tensor(Modifiers &m, const char *name, py::handle value,
                         std::deque<HeldTensor> &tensors) {
    m.*Field = as_tensor(name, value, tensors);
}

// An integer (a window side); a negative one reaches the runtime, which names it.
template <std::optional<int64_t> Modifiers::*Field>
void set_modifier_integer(Modifiers &m, const char *name, py::handle value,
                          std::deque<HeldTensor> &) {
    if (PyBool_Check(value.ptr()) || !PyLong_Check(value.ptr())) {
        throw py::type_error(std::string(name) + ": expected an int");
    }
    const long long number = PyLong_AsLongLong(value.ptr());
    if (number == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        throw py::value_error(std::string(name) + ": the value does not fit in 64 bits");
    }
    m.*Field = number;
}

template <std::string AttentionArgs::*Field>
void set_text(AttentionArgs &args, const char *name, py::handle value, PreparedCall &) {
    if (!py::isinstance<py::str>(value))
        throw py::type_error(std::string(name) + ": expected a str");
    args.*Field = value.cast<std::string>();
}

struct Keyword {
    const char *name;
    Setter set;
};

// Every keyword of attngen.attention that fills a field of AttentionArgs (out, return_lse and
// return_probs make outputs and are read by prepare_attention itself). To take another field
// of AttentionArgs from Python, add its row here and its line to the table in docs/python.md: a
// float field takes set_number, a tensor set_tensor, a bool set_flag; a modifier the
// set_modifier_ setter of its type.
constexpr Keyword kAttentionKeywords[] = {
    {"causal", set_flag<&AttentionArgs::causal>},
    {"scale", set_number<&AttentionArgs::scale>},
    {"key_lengths", set_tensor<&AttentionArgs::key_lengths>},
    {"schedule", set_text<&AttentionArgs::schedule>},
};

struct ModifierKeyword {
    const char *name;
    ModifierSetter set;
};

// The modifier keywords of attngen.attention and MultiHeadAttention.forward.
constexpr ModifierKeyword kModifierKeywords[] = {
    {"softcap", set_modifier_number<&Modifiers::softcap>},
    {"alibi_slopes", set_modifier_tensor<&Modifiers::alibi_slopes>},
    {"bias", set_modifier_tensor<&Modifiers::bias>},
    {"window_left", set_modifier_integer<&Modifiers::window_left>},
    {"window_right", set_modifier_integer<&Modifiers::window_right>},
    {"prefix_lengths", set_modifier_tensor<&Modifiers::prefix_lengths>},
    {"q_segments", set_modifier_tensor<&Modifiers::q_segments>},
    {"kv_segments", set_modifier_tensor<&Modifiers::kv_segments>},
};

// The outputs' shapes come from q, k and v, so their ranks are checked here, before the runtime
// sees the call; everything else is the runtime's to validate.
void require_rank4(const HeldTensor &t, const char *name, const char *layout) {
    if (t.view.rank != 4) {
        throw py::value_error(std::string(name) + ": expected 4 dimensions " + layout + ", got " +
                              t.view.describe());
    }
}

}  // namespace

bool set_modifier_keyword(attngen::Modifiers &modifiers, const std::string &name, py::handle value,
                          std::deque<HeldTensor> &tensors) {
    for (const ModifierKeyword &keyword : kModifierKeywords) {
        if (name == keyword.name) {
            keyword.set(modifiers, keyword.name, value, tensors);
            return true;
        }
    }
    return false;
}

PreparedCall prepare_attention(py::handle q, py::handle k, py::handle v,
                               const py::kwargs &keywords) {
    PreparedCall call;
    call.tensors.push_back(view_of(q, "q"));
    call.tensors.push_back(view_of(k, "k"));
    call.tensors.push_back(view_of(v, "v"));
    const HeldTensor &hq = call.tensors[0], &hk = call.tensors[1], &hv = call.tensors[2];
    require_rank4(hq, "q", "[B, H, Nq, d_k]");
    require_rank4(hk, "k", "[B, H_kv, Nk, d_k]");
    require_rank4(hv, "v", "[B, H_kv, Nk, d_v]");
    call.args.q = hq.view;
    call.args.k = hk.view;
    call.args.v = hv.view;

    py::handle out;
    for (auto item : keywords) {
        const std::string key = py::str(item.first);
        py::handle value = item.second;
        if (key == "out") {
            out = value;
            continue;
        }
        if (value.is_none()) continue;
        if (key == "return_lse") {
            call.return_lse = as_bool("return_lse", value);
        } else if (key == "return_probs") {
            call.return_probs = as_bool("return_probs", value);
        } else {
            const Keyword *found = nullptr;
            for (const Keyword &keyword : kAttentionKeywords) {
                if (key == keyword.name) found = &keyword;
            }
            if (found != nullptr) {
                found->set(call.args, found->name, value, call);
            } else if (!set_modifier_keyword(call.args.modifiers, key, value, call.tensors)) {
                throw py::type_error("attention() got an unexpected keyword argument '" + key +
                                     "'");
            }
        }
    }

    const auto &qs = hq.view.shape;
    const int64_t nk = hk.view.shape[2], d_v = hv.view.shape[3];
    call.out = out && !out.is_none()
                   ? view_of(out, "out", Access::kWrite)
                   : new_array(hq.kind, {qs[0], qs[1], qs[2], d_v}, hq.view.dtype);
    call.args.out = call.out.view;
    if (call.return_lse) {
        call.lse = new_array(hq.kind, {qs[0], qs[1], qs[2]});
        call.args.lse = call.lse.view;
    }
    if (call.return_probs) {
        call.probs = new_array(hq.kind, {qs[0], qs[1], qs[2], nk});
        call.args.probs = call.probs.view;
    }
    return call;
}

void PreparedCall::run() const {
    attngen::Status status;
    {
        py::gil_scoped_release release;
        status = attngen::attention(args);
    }
    raise_if_error(status);
}

py::object PreparedCall::result() const {
    if (!return_lse && !return_probs) return out.array;
    py::list parts;
    parts.append(out.array);
    if (return_lse) parts.append(lse.array);
    if (return_probs) parts.append(probs.array);
    return py::tuple(parts);
}

}  // namespace attngen_py
