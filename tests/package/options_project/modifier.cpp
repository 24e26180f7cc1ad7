// A user-written score modifier for the option checks (configured, never compiled there).
#include "attngen/user_modifiers.h"

Halide::Expr scaled(const attngen::ScoreArgs &a) {
    return a.score * a.input("table")(a.h, 0);
}
