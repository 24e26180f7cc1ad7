#include "mask.h"

#include "dims.h"

namespace attngen::algorithm {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;

namespace {

Expr key_end_expr(const Func &key_lengths, const Expr &i, const Expr &b, const Expr &nq,
                  const Expr &nk, bool causal) {
    Expr end = Halide::clamp(key_lengths(b), 0, nk);
    if (causal) end = Halide::min(end, Halide::max(i + (nk - nq) + 1, 0));
    return end;
}

}  // namespace

KeyMask define_key_mask(const Func &key_lengths, const Expr &nq, const Expr &nk, bool causal) {
    const Dims &v = dims();
    KeyMask mask;
    mask.causal = causal;
    mask.end = Func("key_end");
    mask.end(v.i, v.b) = key_end_expr(key_lengths, v.i, v.b, nq, nk, causal);
    if (causal) {
        // key_end grows with i, so the group's first query has the smallest prefix.
        mask.dense_end = Func("key_end_dense");
        Expr group_start = (v.i / kCausalGroup) * kCausalGroup;
        mask.dense_end(v.i, v.b) = key_end_expr(key_lengths, group_start, v.b, nq, nk, causal);
    } else {
        mask.dense_end = mask.end;
    }
    return mask;
}

namespace {

// The two update definitions of reduce_over_keys; Value is Expr or Tuple.
template <typename Value>
std::pair<RDom, RDom> reduce_prefix(Func f, const std::vector<Expr> &args, const KeyMask &mask,
                                    const Expr &nk, const std::function<Value(Expr)> &value,
                                    const std::function<Value(Value, Value)> &combine,
                                    const std::string &name) {
    const Dims &v = dims();
    RDom dense(0, nk, name + "_dense");
    dense.where(dense < mask.dense_end(v.i, v.b));
    f(args) = combine(Value(f(args)), value(dense));
    RDom band;
    if (mask.causal) {
        band = RDom(0, kCausalGroup, name + "_band");
        Expr key = mask.dense_end(v.i, v.b) + band;
        // key < end, written as a count so that the part that does not depend on the key is
        // computed once per query.
        band.where(band < mask.end(v.i, v.b) - mask.dense_end(v.i, v.b));
        // The clamp changes no allowed key; it tells bounds inference, which does not look at
        // the predicate, that keys past nk are never read.
        f(args) = combine(Value(f(args)), value(Halide::min(key, nk - 1)));
    }
    return {dense, band};
}

}  // namespace

std::pair<RDom, RDom> reduce_over_keys(Func f, const std::vector<Expr> &args, const KeyMask &mask,
                                       const Expr &nk, const std::function<Expr(Expr)> &value,
                                       const std::function<Expr(Expr, Expr)> &combine,
                                       const std::string &name) {
    return reduce_prefix<Expr>(f, args, mask, nk, value, combine, name);
}

std::pair<RDom, RDom> reduce_tuple_over_keys(
    Func f, const std::vector<Expr> &args, const KeyMask &mask, const Expr &nk,
    const std::function<Halide::Tuple(Expr)> &value,
    const std::function<Halide::Tuple(const Halide::Tuple &, const Halide::Tuple &)> &combine,
    const std::string &name) {
    const std::function<Halide::Tuple(Halide::Tuple, Halide::Tuple)> by_value =
        [&](Halide::Tuple a, Halide::Tuple x) { return combine(a, x); };
    return reduce_prefix<Halide::Tuple>(f, args, mask, nk, value, by_value, name);
}

}  // namespace attngen::algorithm
