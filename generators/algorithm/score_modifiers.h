// Score modifiers: the built-in ones of a ScoreSpec (attngen/variant.h), written as one function
// of the score that the scores stage applies to every allowed key (docs/design.md section 1):
//
//   s = scale * dot(q_i, k_j)
//   softcap C:  s = C * tanh(s / C)
//   ALiBi m:    s += -m[h] * |p(i) - j|,  p(i) = i + Nk - Nq
//   bias:       s += bias[b, h, i, j]
//
// A modifier is a plain function of Halide expressions, so a user's score modifier (a function
// compiled into the generator) takes the same place.
#pragma once

#include <functional>

#include "Halide.h"
#include "attngen/variant.h"

namespace attngen::algorithm {

// s -> the modified score of key j for query i of head h in batch element b, in natural units
// (before the softmax's change to base 2).
using ScoreFunction =
    std::function<Halide::Expr(const Halide::Expr &s, const Halide::Expr &j, const Halide::Expr &i,
                               const Halide::Expr &h, const Halide::Expr &b)>;

// A score modifier and what a schedule may want to place of it. Empty: the score is used as it
// is.
struct ScoreModifier {
    ScoreFunction apply;
    // The bias as the modifier reads it, bias(j, i, h, b) with its broadcast dims and the clamps
    // of its indices applied; defined where the modifier adds a bias. Schedules that keep scores
    // query-fastest stage it: its rows are dense along the keys.
    Halide::Func bias;

    explicit operator bool() const { return static_cast<bool>(apply); }
    Halide::Expr operator()(const Halide::Expr &s, const Halide::Expr &j, const Halide::Expr &i,
                            const Halide::Expr &h, const Halide::Expr &b) const {
        return apply(s, j, i, h, b);
    }
};

// The run-time values of the built-in modifiers, each defined where the spec has it.
struct ScoreInputs {
    Halide::Expr softcap;       // C > 0, float32; 0 turns the cap off.
    Halide::Func alibi_slopes;  // alibi_slopes(h), float32.
    Halide::Func bias;          // bias(j, i, h, b), float32.
    // The bias's extents along queries, heads and batch elements: each that of the call or 1,
    // read at 0 for every query, head or batch element (broadcast). Its key dim always has Nk
    // entries, so that rows of keys are dense vector loads.
    Halide::Expr bias_rows, bias_heads, bias_batch;
    // A user-written modifier (attngen/user_modifiers.h), applied after the built-in ones; it
    // receives i and j clamped into [0, nq) and [0, nk). Empty for none.
    ScoreFunction user;
};

// The modifier of a spec and a user's; empty where there is neither. nq and nk give p(i), and bound
// the indices read from the bias (rows and keys past the ends are computed by some schedules and
// never used).
ScoreModifier define_score_modifier(const ScoreSpec &spec, const ScoreInputs &inputs,
                                    const Halide::Expr &nq, const Halide::Expr &nk);

// C tanh(s / C) for float32 s and a cap C > 0, given as bound = 9 C and inverse_cap = 1 / C
// (computed once per call), as a rational function: vectorizes on every target, unlike a libm
// call. Relative error below 1e-6 (tests/algorithm_test.cpp); +-inf gives +-C (to within that
// error), NaN stays NaN.
Halide::Expr capped_tanh(const Halide::Expr &s, const Halide::Expr &bound,
                         const Halide::Expr &inverse_cap);

}  // namespace attngen::algorithm
