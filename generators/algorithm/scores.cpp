#include "scores.h"

#include "dims.h"
#include "numerics.h"

namespace attngen::algorithm {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;

ScoresFuncs define_scores(const Func &q, const Func &k, const Expr &d_k, const Expr &scale,
                          const KeyMask &mask, bool masked, const ScoreModifier &modifier,
                          const Expr &natural_scale, const BFloat16Operands *bfloat16) {
    const Dims &v = dims();
    ScoresFuncs f;
    f.q = q;
    f.k = k;
    f.dot = Func("dot");
    f.dot(v.j, v.i, v.h, v.b) = 0.0f;
    if (bfloat16 != nullptr) {
        const Halide::Var r("r"), x("x");
        f.q_pairs = Func("q_pairs");
        f.q_pairs(r, v.i, x, v.h, v.b) = bfloat16->q(2 * x + r, v.i, v.h, v.b);
        f.pairs = RDom(0, 2, 0, d_k / 2, "pairs");
        const Expr feature = 2 * f.pairs.y + f.pairs.x;
        f.dot(v.j, v.i, v.h, v.b) +=
            Halide::cast<float>(f.q_pairs(f.pairs.x, v.i, f.pairs.y, v.h, v.b)) *
            Halide::cast<float>(bfloat16->k(feature, v.j, v.h, v.b));
        f.odd_feature = RDom(d_k - d_k % 2, d_k % 2, "odd_feature");
        f.dot(v.j, v.i, v.h, v.b) +=
            q(f.odd_feature, v.i, v.h, v.b) * k(f.odd_feature, v.j, v.h, v.b);
    } else {
        f.d = RDom(0, d_k, "rd");
        f.dot(v.j, v.i, v.h, v.b) += q(f.d, v.i, v.h, v.b) * k(f.d, v.j, v.h, v.b);
    }
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
