#include "projection.h"

#include "dims.h"

namespace attngen::algorithm {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;

ProjectionFuncs define_projection(const Func &x, const Func &w, const Func &bias, const Expr &d_in,
                                  const std::string &prefix, const std::string &output_name) {
    const Dims &v = dims();
    ProjectionFuncs f;
    f.x = x;
    f.w = w;
    f.bias = bias;
    f.c = RDom(0, d_in, prefix + "c");
    f.product = Func(prefix + "product");
    f.product(v.o, v.n, v.b) = 0.0f;
    f.product(v.o, v.n, v.b) += x(f.c, v.n, v.b) * w(v.o, f.c);
    f.y = Func(output_name.empty() ? prefix + "y" : output_name);
    f.y(v.o, v.n, v.b) = f.product(v.o, v.n, v.b) + bias(v.o);
    return f;
}

}  // namespace attngen::algorithm
