#include "weighted_sum.h"

#include "dims.h"

namespace attngen::algorithm {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;

namespace {

// The dense part of P V in the paired form (weighted_sum.h): whole pairs of keys as bfloat16
// products, then the keys of the part outside whole pairs in float32.
void add_paired_dense_part(WeightedSumFuncs &f, const Func &bfloat16_v, const Expr &nk,
                           const KeyMask &mask) {
    const Dims &x = dims();
    const Halide::Var r("r"), pair("pair");
    f.p_pairs = Func("p_pairs");
    f.p_pairs(r, x.i, pair, x.h, x.b) = Halide::reinterpret(
        Halide::BFloat(16), narrow(f.p(2 * pair + r, x.i, x.h, x.b), DType::kBFloat16));
    f.v_pairs = Func("v_pairs");
    f.v_pairs(r, x.e, pair, x.h, x.b) = bfloat16_v(x.e, 2 * pair + r, x.h, x.b);

    // The pairs inside [begin, end): from the first even key at or after begin to the last even
    // key before end, 2 x in [2 ceil(begin / 2), 2 floor(end / 2)).
    const Expr end = mask.dense_end(x.i, x.b);
    const bool has_begin = mask.dense_begin.defined();
    const Expr begin = has_begin ? mask.dense_begin(x.i, x.b) : Expr(0);
    f.pairs = RDom(0, 2, 0, nk / 2, "pairs");
    if (has_begin) f.pairs.where(f.pairs.y >= (begin + 1) / 2);
    f.pairs.where(f.pairs.y < end / 2);
    const std::vector<Expr> element{x.e, x.i, x.h, x.b};
    f.acc(element) += Halide::cast<float>(f.p_pairs(f.pairs.x, x.i, f.pairs.y, x.h, x.b)) *
                      Halide::cast<float>(f.v_pairs(f.pairs.x, x.e, f.pairs.y, x.h, x.b));

    // The keys left over: begin where it is odd, end - 1 where end is odd and that key is not in
    // a pair or already begin (end - 1 >= begin rounded up to even). Clamped for bounds
    // inference, which does not look at the predicate.
    Expr key;
    if (has_begin) {
        f.edge = RDom(0, 2, "edge");
        const Expr odd_begin = begin % 2 == 1 && begin < end;
        const Expr odd_end = end % 2 == 1 && end - 1 >= begin + begin % 2;
        f.edge.where(Halide::select(f.edge.x == 0, odd_begin, odd_end));
        key = Halide::select(f.edge.x == 0, begin, end - 1);
    } else {
        // (The key names edge, always 0: an update must read the domain it runs over.)
        f.edge = RDom(0, 1, "edge");
        f.edge.where(end % 2 == 1);
        key = end - 1 + f.edge.x;
    }
    key = Halide::clamp(key, 0, nk - 1);
    f.acc(element) += f.p(key, x.i, x.h, x.b) * f.v(x.e, key, x.h, x.b);
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
    const bool paired = bfloat16_v != nullptr && !mask.allowed.defined();
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
