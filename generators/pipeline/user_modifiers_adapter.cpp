#include "user_modifiers_adapter.h"

#include <stdexcept>
#include <utility>
#include <vector>

namespace attngen::pipeline {

using Halide::Expr;

namespace {

// A user's mistake in a modifier, reported by the generator at build time.
[[noreturn]] void modifier_error(const std::string &name, const std::string &message) {
    throw std::invalid_argument("user modifier " + name + ": " + message);
}

}  // namespace

UserModifiers::UserModifiers(const ModifierInputs &in, const Expr &nq, const Expr &nk)
    : score_(in.user_score), mask_(in.user_mask), nq_(nq), nk_(nk) {
    for (const auto &[name, param] : in.user_inputs) {
        // ModifierInput indexes in the caller's order, outermost dim first; Halide's dim 0 is
        // the innermost.
        std::vector<Expr> extents;
        for (int d = param.dimensions() - 1; d >= 0; d--) extents.push_back(param.dim(d).extent());
        inputs_.emplace(name, ModifierInput(Halide::Func(param), std::move(extents)));
    }
}

ModifierArgs UserModifiers::args(const Expr &j, const Expr &i, const Expr &h, const Expr &b) const {
    ModifierArgs a;
    a.b = b;
    a.h = h;
    a.i = i;
    a.j = j;
    a.p = i + nk_ - nq_;
    a.nq = nq_;
    a.nk = nk_;
    a.inputs = inputs_;
    return a;
}

void UserModifiers::add_to(algorithm::ScoreInputs *score) const {
    if (score_ == nullptr) return;
    score->user = [this_score = score_, self = *this](const Expr &s, const Expr &j, const Expr &i,
                                                      const Expr &h, const Expr &b) {
        ScoreArgs a;
        static_cast<ModifierArgs &>(a) = self.args(j, i, h, b);
        a.score = s;
        const Expr modified = this_score(a);
        if (!modified.defined()) modifier_error("score", "returned no expression");
        return Halide::cast<float>(modified);
    };
}

void UserModifiers::add_to(algorithm::MaskInputs *mask) const {
    if (mask_ == nullptr) return;
    const MaskModifierFunction function = mask_;
    const UserModifiers self = *this;
    // The bounds come from a call at a key that no caller sees, so that a bound that depends on
    // the key (which the rule forbids) is caught rather than silently used at one key.
    const Halide::Var probe("user_bounds_probe_key");
    auto bounds = [function, self, probe](const Expr &i, const Expr &b) {
        const KeyRule rule = function(self.args(probe, i, Expr(), b));
        if (rule.key_begin.defined() != rule.key_end.defined()) {
            modifier_error("mask", "a KeyRule states key_begin and key_end together");
        }
        for (const Expr &bound : {rule.key_begin, rule.key_end}) {
            if (bound.defined() && Halide::Internal::expr_uses_var(bound, probe.name())) {
                modifier_error("mask", "key_begin and key_end depend on the query, not on j");
            }
        }
        return rule;
    };
    if (bounds(Expr(0), Expr(0)).key_begin.defined()) {
        mask->user_bounds = [bounds](const Expr &i, const Expr &b) {
            const KeyRule rule = bounds(i, b);
            return std::pair<Expr, Expr>(Halide::cast<int>(rule.key_begin),
                                         Halide::cast<int>(rule.key_end));
        };
    }
    // The per-key test also refuses the keys outside the stated bounds, so that the schedules
    // that skip blocks by the bounds and those that test every key agree.
    mask->user_allowed = [function, self](const Expr &j, const Expr &i, const Expr &b) {
        const KeyRule rule = function(self.args(j, i, Expr(), b));
        if (!rule.allowed.defined()) modifier_error("mask", "returned no expression");
        Expr allowed = rule.allowed;
        if (!allowed.type().is_bool())
            allowed = allowed != Halide::Internal::make_zero(allowed.type());
        if (rule.key_begin.defined()) {
            allowed = allowed && j >= rule.key_begin && j < rule.key_end;
        }
        return allowed;
    };
}

}  // namespace attngen::pipeline
