// User-written modifiers: how a project's own C++ functions become part of attngen's kernels
// (docs/modifiers.md, "Writing a modifier"). A modifier is a function over Halide expressions
// that attngen_add_kernel compiles into every schedule and target of a kernel ahead of time:
//
//   attngen_add_kernel(NAME t5 OP attention SCORE_MOD t5_bias.cpp:t5_bias
//                      INPUTS t5_table:f32:2)
//
//   Halide::Expr t5_bias(const attngen::ScoreArgs &a) {
//       const Halide::Expr bucket = ...;  // of a.p - a.j
//       return a.score + a.input("t5_table")(a.h, bucket);
//   }
//
// A score modifier returns the modified score of key j for query i; a mask modifier returns a
// KeyRule: whether key j is allowed for query i and, optionally, the range of keys each query
// can see at most, which lets the fused schedules skip whole blocks of keys. Both apply after the
// built-in modifiers of the kernel's variant (attngen/modifiers.h). This header is for the build
// only (the generator loads the project's modifiers); programs that call kernels include
// attngen/attngen.h, which does not need Halide.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "Halide.h"

namespace attngen {

// An extra input tensor of a kernel (attngen_add_kernel's INPUTS name:type:rank), indexed in the
// order of the dims as the caller passes them: a table of shape [H, buckets] is read as
// table(h, bucket). Indices must stay within the tensor (clamp them); a call whose tensor is
// smaller than what the kernel reads fails with an error naming the input.
class ModifierInput {
  public:
    ModifierInput() = default;
    ModifierInput(Halide::Func func, std::vector<Halide::Expr> extents)
        : func_(std::move(func)), extents_(std::move(extents)) {}

    template <typename... Index>
    Halide::Expr operator()(const Index &...index) const {
        std::vector<Halide::Expr> args{Halide::Expr(index)...};
        if (args.size() != extents_.size()) {
            throw std::invalid_argument("modifier input " + func_.name() + " has " +
                                        std::to_string(extents_.size()) + " dims, indexed with " +
                                        std::to_string(args.size()));
        }
        // Halide lists the innermost dimension first.
        return func_(std::vector<Halide::Expr>(args.rbegin(), args.rend()));
    }
    // The extent of dim d, in the caller's order.
    Halide::Expr dim(int d) const { return extents_.at(d); }
    int dimensions() const { return static_cast<int>(extents_.size()); }

  private:
    Halide::Func func_;
    std::vector<Halide::Expr> extents_;
};

// Where a modifier is evaluated. All int32.
struct ModifierArgs {
    Halide::Expr b;       // The batch element.
    Halide::Expr h;       // The query head (score modifiers only: masks hold for every head).
    Halide::Expr i, j;    // The query and the key.
    Halide::Expr p;       // The position of query i among the keys: i + Nk - Nq.
    Halide::Expr nq, nk;  // The query and key counts.
    // The kernel's extra inputs, by their names in INPUTS.
    std::map<std::string, ModifierInput> inputs;

    const ModifierInput &input(const std::string &name) const {
        const auto found = inputs.find(name);
        if (found == inputs.end()) {
            throw std::invalid_argument("the kernel declares no input '" + name +
                                        "' (attngen_add_kernel's INPUTS name:type:rank)");
        }
        return found->second;
    }
};

struct ScoreArgs : ModifierArgs {
    // The score in natural units (scale * q.k, after the built-in modifiers), float32.
    Halide::Expr score;
};

// What a mask modifier says about key j of query i.
struct KeyRule {
    // Only whether key j is allowed; the fused schedules then test each block of keys for an
    // allowed one before they compute it.
    KeyRule(Halide::Expr allowed_) : allowed(std::move(allowed_)) {}  // NOLINT: implicit on purpose
    // Also the keys that query i can see at most, [key_begin, key_end): expressions of b and i
    // only (not of j), each non-decreasing in i. Blocks outside are never visited.
    KeyRule(Halide::Expr allowed_, Halide::Expr key_begin_, Halide::Expr key_end_)
        : allowed(std::move(allowed_)),
          key_begin(std::move(key_begin_)),
          key_end(std::move(key_end_)) {}

    Halide::Expr allowed;             // bool.
    Halide::Expr key_begin, key_end;  // int32; undefined where not stated.
};

using ScoreModifierFunction = Halide::Expr (*)(const ScoreArgs &);
using MaskModifierFunction = KeyRule (*)(const ModifierArgs &);

}  // namespace attngen

// Defined by attngen's generator executable, which loads a project's modifiers as a plugin;
// attngen_add_kernel writes the calls, under the names of the variant's score_mod and mask_mod.
extern "C" void attngen_register_score_modifier(const char *name,
                                                attngen::ScoreModifierFunction function);
extern "C" void attngen_register_mask_modifier(const char *name,
                                               attngen::MaskModifierFunction function);
