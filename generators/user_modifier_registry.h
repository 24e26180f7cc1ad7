// The user-written modifiers that a project's plugin registered in this generator process
// (attngen/user_modifiers.h), by the names that variants give them (score_mod, mask_mod), and
// the extra inputs that a kernel declares for them.
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "attngen/user_modifiers.h"

namespace attngen::generators {

// The registered modifier of this name; a generator error naming it when none is.
ScoreModifierFunction registered_score_modifier(const std::string &name);
MaskModifierFunction registered_mask_modifier(const std::string &name);

// An extra input of a kernel: the generator parameter "inputs" lists them as
// name:type:rank joined by '+', e.g. "t5_table:f32:2+strides:i32:1".
struct ExtraInput {
    std::string name;
    Halide::Type type;
    int rank = 0;
};
std::vector<ExtraInput> parse_extra_inputs(const std::string &spec);

}  // namespace attngen::generators
