#include "weighted_sum.h"

#include "dims.h"

namespace attngen::algorithm {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;

WeightedSumFuncs define_weighted_sum(const Func &p, const Func &v, const Expr &nk,
                                     const Func &key_end, const Func &row_scale) {
    const Dims &x = dims();
    WeightedSumFuncs f;
    f.p = p;
    f.v = v;
    f.row_scale = row_scale;
    f.keys = RDom(0, nk, "keys");
    f.keys.where(f.keys < key_end(x.i, x.b));
    f.acc = Func("acc");
    f.acc(x.e, x.i, x.h, x.b) = 0.0f;
    f.acc(x.e, x.i, x.h, x.b) += p(f.keys, x.i, x.h, x.b) * v(x.e, f.keys, x.h, x.b);
    f.out = Func("out");
    Expr result = f.acc(x.e, x.i, x.h, x.b);
    if (row_scale.defined()) {
        result = result * row_scale(x.i, x.h, x.b);
    }
    f.out(x.e, x.i, x.h, x.b) = result;
    return f;
}

}  // namespace attngen::algorithm
