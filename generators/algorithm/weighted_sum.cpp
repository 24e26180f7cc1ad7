#include "weighted_sum.h"

#include "dims.h"

namespace attngen::algorithm {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;

WeightedSumFuncs define_weighted_sum(const Func &p, const Func &v, const Expr &nk,
                                     const KeyMask &mask, const Func &row_scale, DType storage) {
    const Dims &x = dims();
    WeightedSumFuncs f;
    f.p = p;
    f.v = v;
    f.row_scale = row_scale;
    f.acc = Func("acc");
    const std::vector<Expr> element{x.e, x.i, x.h, x.b};
    f.acc(element) = 0.0f;
    KeyReduction keys = reduce_over_keys(
        f.acc, element, mask, nk,
        [&](Expr key) { return p(key, x.i, x.h, x.b) * v(x.e, key, x.h, x.b); },
        [](Expr a, Expr term) { return a + term; }, Expr(0.0f), "keys");
    f.keys = keys.dense;
    f.band = keys.band;
    f.lower_band = keys.lower_band;
    f.out = Func("out");
    Expr result = f.acc(x.e, x.i, x.h, x.b);
    if (row_scale.defined()) {
        result = result * row_scale(x.i, x.h, x.b);
    }
    f.out(x.e, x.i, x.h, x.b) = narrow(result, storage);
    return f;
}

}  // namespace attngen::algorithm
