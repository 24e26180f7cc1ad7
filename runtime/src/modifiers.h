// The modifiers of one call (attngen/modifiers.h): validated against the call's extents before
// any kernel runs, turned into the mask and score kinds that the dispatch looks for, and passed
// to the chosen kernel by name, with neutral values for the kinds the kernel has and the call
// does not use (MaskSpec::covers, ScoreSpec::covers).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "attngen/modifiers.h"
#include "attngen/status.h"
#include "attngen/variant.h"
#include "halide_call.h"
#include "kernel_call.h"
#include "validate.h"

namespace attngen::detail {

// The extents of the call that the modifiers refer to.
struct ModifierExtents {
    int64_t batch = 0, heads = 0, nq = 0, nk = 0;
    // Where the call took each extent from, as the messages name it: the attention's tensors by
    // default; the multi-head layer's differ (x, memory and the layer's head count).
    struct Sources {
        const char *batch = "the batch size B of q", *heads = "the head count H of q",
                   *nq = "Nq of q", *nk = "Nk of k";
    } sources;
};

class CallModifiers {
  public:
    // Validates every modifier (values included), copies what kernels read as int32 or
    // contiguous rows, and sets the kinds of the call. The views must outlive the object.
    Status prepare(const Modifiers &modifiers, bool causal, const ModifierExtents &extents);

    MaskSpec mask() const { return mask_; }
    ScoreSpec score() const { return score_; }

    // The caller's input views that a kernel reads in place, for the check that no output
    // overlaps them.
    const std::vector<NamedView> &inputs() const { return inputs_; }

    // Passes the kernel's modifier inputs, by the names of pipeline::ModifierInputs.
    Status bind(const Variant &kernel, KernelCall *call);
    // The buffers that bind passed, for the moves to and from a CUDA device.
    void add_views(std::vector<HalideView *> *views);

  private:
    // A HalideView that lives as long as this object (HalideView cannot move).
    halide_buffer_t *keep(const TensorView &view);

    Modifiers modifiers_;
    ModifierExtents extents_;
    MaskSpec mask_;
    ScoreSpec score_;
    std::vector<NamedView> inputs_;
    // int32 copies of the integer inputs and neutral values, and a bias expanded along Nk.
    std::vector<int32_t> prefix_lengths_, q_segments_, kv_segments_, zeros_int_;
    std::vector<float> bias_rows_, zeros_float_;
    TensorView bias_view_;
    std::deque<HalideView> views_;
};

}  // namespace attngen::detail
