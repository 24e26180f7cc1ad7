#include "weighted_sum.h"

#include "dims.h"

namespace attngen::algorithm {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;

namespace {

// The dense part of P V in the paired form (weighted_sum.h): whole pairs of keys as bfloat16
// products, then an odd last key in float32.
void add_paired_dense_part(WeightedSumFuncs &f, const Func &bfloat16_v, const Expr &nk,
                           const KeyMask &mask) {
    const Dims &x = dims();
    const Halide::Var r("r"), pair("pair");
    f.p_pairs = Func("p_pairs");
    // Rounded by Halide's own cast: on the targets that take this form (AVX512-BF16) it is one
    // vcvtne2ps2bf16 per 32 weights, which rounds to nearest even and keeps a NaN a NaN, as
    // narrow() does in about ten instructions per 16 weights. Weights are 0 or at least 2^-64
    // (numerics.h), so that the instruction's flushing of subnormals never applies.
    f.p_pairs(r, x.i, pair, x.h, x.b) =
        Halide::cast(Halide::BFloat(16), f.p(2 * pair + r, x.i, x.h, x.b));
    f.v_pairs = Func("v_pairs");
    f.v_pairs(r, x.e, pair, x.h, x.b) = bfloat16_v(x.e, 2 * pair + r, x.h, x.b);

    // The pairs before end (the dense part starts at key 0 where this form is taken), 2 x in
    // [0, 2 floor(end / 2)).
    const Expr end = mask.dense_end(x.i, x.b);
    f.pairs = RDom(0, 2, 0, nk / 2, "pairs");
    f.pairs.where(f.pairs.y < end / 2);
    const std::vector<Expr> element{x.e, x.i, x.h, x.b};
    f.acc(element) += Halide::cast<float>(f.p_pairs(f.pairs.x, x.i, f.pairs.y, x.h, x.b)) *
                      Halide::cast<float>(f.v_pairs(f.pairs.x, x.e, f.pairs.y, x.h, x.b));

    // The key left over where end is odd, end - 1, in float32. It names edge, always 0, since an
    // update must read the domain it runs over; clamped for bounds inference, which does not look
    // at the predicate. Its value is widened from bfloat16 here rather than read from f.v: where
    // nothing else reads f.v (no bands), the schedule's widened copy of the head's values, a
    // float32 copy of every value per head for the one key it served, is then never computed
    // (0.6% of the time of B1 H8 Nq256 Nk1024 d64 by perf).
    f.edge = RDom(0, 1, "edge");
    f.edge.where(end % 2 == 1);
    const Expr key = Halide::clamp(end - 1 + f.edge.x, 0, nk - 1);
    f.acc(element) += f.p(key, x.i, x.h, x.b) * Halide::cast<float>(bfloat16_v(x.e, key, x.h, x.b));
}

}  // namespace

WeightedSumFuncs define_weighted_sum(const Func &p, const Func &v, const Expr &nk,
                                     const KeyMask &mask, const Func &row_scale, DType storage,
                                     const Func *bfloat16_v) {
    const Dims &x = dims();
    WeightedSumFuncs f;
    f.p = p;
    f.v = v;
    f.row_scale = row_scale;
    f.acc = Func("acc");
    const std::vector<Expr> element{x.e, x.i, x.h, x.b};
    f.acc(element) = 0.0f;
    const bool paired =
        bfloat16_v != nullptr && !mask.allowed.defined() && !mask.dense_begin.defined();
    if (paired) add_paired_dense_part(f, *bfloat16_v, nk, mask);
    KeyReduction keys = reduce_over_keys(
        f.acc, element, mask, nk,
        [&](Expr key) { return p(key, x.i, x.h, x.b) * v(x.e, key, x.h, x.b); },
        [](Expr a, Expr term) { return a + term; }, Expr(0.0f), "keys", /*with_dense=*/!paired);
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
