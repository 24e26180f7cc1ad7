// A user's modifiers (attngen/user_modifiers.h) as the algorithms take them: the score modifier
// as part of algorithm::ScoreInputs, the mask modifier as algorithm::MaskInputs's per-key test
// and key bounds. Each call of a user's function gets the ModifierArgs of one (b, h, i, j).
#pragma once

#include <map>
#include <string>

#include "Halide.h"
#include "algorithm/mask.h"
#include "algorithm/score_modifiers.h"
#include "attention_pipeline.h"
#include "attngen/user_modifiers.h"

namespace attngen::pipeline {

class UserModifiers {
  public:
    UserModifiers(const ModifierInputs &inputs, const Halide::Expr &nq, const Halide::Expr &nk);

    // Sets the user's part of the algorithms' inputs; nothing where there is no such modifier.
    void add_to(algorithm::ScoreInputs *score) const;
    void add_to(algorithm::MaskInputs *mask) const;

  private:
    ModifierArgs args(const Halide::Expr &j, const Halide::Expr &i, const Halide::Expr &h,
                      const Halide::Expr &b) const;

    ScoreModifierFunction score_ = nullptr;
    MaskModifierFunction mask_ = nullptr;
    Halide::Expr nq_, nk_;
    std::map<std::string, ModifierInput> inputs_;
};

}  // namespace attngen::pipeline
