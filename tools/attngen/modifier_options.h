// The modifier flags of `attngen attention` (attngen/modifiers.h): --softcap, --alibi, --bias,
// --window-left, --window-right, --prefix-lengths, --q-segments and --kv-segments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "attngen/modifiers.h"
#include "npy.h"

namespace attngen::cli {

struct ModifierOptions {
    std::optional<float> softcap;
    std::optional<int64_t> window_left, window_right;
    std::string alibi, bias, prefix_lengths, q_segments, kv_segments;
};

void add_modifier_options(CLI::App *command, ModifierOptions *options);

// The files of the options, loaded and checked for dtype and rank (the runtime checks shapes
// and values); modifiers() views them.
class LoadedModifiers {
  public:
    explicit LoadedModifiers(const ModifierOptions &options);
    Modifiers modifiers();

  private:
    ModifierOptions options_;
    std::optional<npy::Array> alibi_, bias_, prefix_lengths_, q_segments_, kv_segments_;
};

}  // namespace attngen::cli
