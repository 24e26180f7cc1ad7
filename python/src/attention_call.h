// attngen.attention(q, k, v, **keywords): one call of attngen::attention from Python.
#pragma once

#include <pybind11/pybind11.h>

#include <deque>
#include <string>

#include "attngen/attention.h"
#include "tensor_arg.h"

namespace attngen_py {

// A call whose arguments are checked and whose outputs exist, ready to run (many times, for the
// benchmark's timing of the C++ call alone).
struct PreparedCall {
    attngen::AttentionArgs args;
    // The inputs, which keep their memory alive while the call runs. A deque, so that adding a
    // keyword's tensor leaves the references to q, k and v valid.
    std::deque<HeldTensor> tensors;
    HeldTensor out;
    bool return_lse = false, return_probs = false;
    HeldTensor lse, probs;

    // Runs the call with the GIL released and raises the runtime's error, if any.
    void run() const;
    // out, or the tuple (out, lse), (out, probs) or (out, lse, probs).
    py::object result() const;
};

// Reads q, k, v and the keywords (see kAttentionKeywords in attention_call.cpp and
// docs/python.md) and makes the outputs that the caller did not pass, in the library of q.
PreparedCall prepare_attention(py::handle q, py::handle k, py::handle v,
                               const py::kwargs &keywords);

// Sets the modifier of keyword `name` (softcap, alibi_slopes, bias, window_left, window_right,
// prefix_lengths, q_segments, kv_segments) from a value that is not None, keeping its tensor
// alive in `tensors`; false if `name` is no modifier keyword.
bool set_modifier_keyword(attngen::Modifiers &modifiers, const std::string &name, py::handle value,
                          std::deque<HeldTensor> &tensors);

}  // namespace attngen_py
