#include "mask.h"

#include "dims.h"

namespace attngen::algorithm {

using Halide::Expr;
using Halide::Func;

Func define_key_end(const Func &key_lengths, const Expr &nq, const Expr &nk, bool causal) {
    const Dims &v = dims();
    Func key_end("key_end");
    Expr end = Halide::clamp(key_lengths(v.b), 0, nk);
    if (causal) {
        end = Halide::min(end, Halide::max(v.i + (nk - nq) + 1, 0));
    }
    key_end(v.i, v.b) = end;
    return key_end;
}

}  // namespace attngen::algorithm
