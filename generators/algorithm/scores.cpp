#include "scores.h"

#include "dims.h"
#include "numerics.h"

namespace attngen::algorithm {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;

ScoresFuncs define_scores(const Func &q, const Func &k, const Expr &d_k, const Expr &scale,
                          const KeyMask &mask, bool masked, const ScoreModifier &modifier,
                          const Expr &natural_scale) {
    const Dims &v = dims();
    ScoresFuncs f;
    f.q = q;
    f.k = k;
    f.d = RDom(0, d_k, "rd");
    f.dot = Func("dot");
    f.dot(v.j, v.i, v.h, v.b) = 0.0f;
    f.dot(v.j, v.i, v.h, v.b) += q(f.d, v.i, v.h, v.b) * k(f.d, v.j, v.h, v.b);
    f.scores = Func("scores");
    Expr scaled = f.dot(v.j, v.i, v.h, v.b) * scale;
    if (modifier) {
        // The attention callers' scale is natural_scale log2(e) (base_two_scale).
        const Expr natural = f.dot(v.j, v.i, v.h, v.b) * natural_scale;
        scaled = modifier(natural, v.j, v.i, v.h, v.b) * kLog2e;
        f.modified = true;
        f.bias = modifier.bias;
    }
    f.scores(v.j, v.i, v.h, v.b) =
        masked ? Halide::select(mask.allows(v.j, v.i, v.b), scaled, masked_score()) : scaled;
    return f;
}

}  // namespace attngen::algorithm
