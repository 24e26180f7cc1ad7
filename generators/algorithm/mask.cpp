#include "mask.h"

#include <algorithm>

#include "dims.h"

namespace attngen::algorithm {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;

namespace {

// The end of query i's range: its batch element's key length, and for causal masks the key after
// its position p(i) = i + Nk - Nq.
Expr key_end_expr(const MaskSpec &spec, const Func &key_lengths, const Expr &i, const Expr &b,
                  const Expr &nq, const Expr &nk) {
    Expr end = Halide::clamp(key_lengths(b), 0, nk);
    if (spec.causal) end = Halide::min(end, Halide::max(i + (nk - nq) + 1, 0));
    return end;
}

}  // namespace

KeyMask define_key_mask(const MaskSpec &spec, const Func &key_lengths, const Expr &nq,
                        const Expr &nk) {
    const Dims &v = dims();
    KeyMask mask;
    mask.spec = spec;
    mask.end = Func("key_end");
    mask.end(v.i, v.b) = key_end_expr(spec, key_lengths, v.i, v.b, nq, nk);
    if (spec.varies_by_query()) {
        // The end grows with i, so the group's first query has the smallest range.
        mask.dense_end = Func("key_end_dense");
        Expr group_start = (v.i / kCausalGroup) * kCausalGroup;
        mask.dense_end(v.i, v.b) = key_end_expr(spec, key_lengths, group_start, v.b, nq, nk);
    } else {
        mask.dense_end = mask.end;
    }
    return mask;
}

Expr KeyMask::begin_at(const Expr &i, const Expr &b) const {
    return begin.defined() ? begin(i, b) : Expr(0);
}

Expr KeyMask::allows(const Expr &j, const Expr &i, const Expr &b) const {
    Expr in_range = j < end(i, b);
    if (begin.defined()) in_range = in_range && j >= begin(i, b);
    return allowed.defined() ? in_range && allowed(j, i, b) : in_range;
}

std::vector<Func> KeyMask::funcs() const {
    std::vector<Func> list;
    for (const Func &f : {end, begin, dense_begin, dense_end, allowed}) {
        const bool seen = std::any_of(list.begin(), list.end(),
                                      [&](const Func &g) { return g.name() == f.name(); });
        if (f.defined() && !seen) list.push_back(f);
    }
    return list;
}

void KeyMask::compute_root() const {
    for (Func f : funcs()) f.compute_root();
}

namespace {

// The update definitions of reduce_over_keys; Value is Expr or Tuple.
template <typename Value>
KeyReduction reduce(Func f, const std::vector<Expr> &args, const KeyMask &mask, const Expr &nk,
                    const std::function<Value(Expr)> &value,
                    const std::function<Value(Value, Value)> &combine, const std::string &name) {
    const Dims &v = dims();
    KeyReduction r;
    r.dense = RDom(0, nk, name + "_dense");
    if (mask.dense_begin.defined()) r.dense.where(r.dense >= mask.dense_begin(v.i, v.b));
    r.dense.where(r.dense < mask.dense_end(v.i, v.b));
    if (mask.allowed.defined()) r.dense.where(mask.allowed(r.dense, v.i, v.b));
    f(args) = combine(Value(f(args)), value(r.dense));
    if (!mask.has_band()) return r;
    // A band of at most kCausalGroup keys from `first`, the first `count` of them; each key's
    // index is clamped, which changes no allowed key and tells bounds inference (which does not
    // look at the predicate) that keys past nk are never read.
    auto band = [&](const Expr &first, const Expr &count, const std::string &suffix) {
        RDom band(0, kCausalGroup, name + suffix);
        // key < bound, written as a count so that the part that does not depend on the key is
        // computed once per query.
        band.where(band < count);
        const Expr key = Halide::min(first + band, nk - 1);
        if (mask.allowed.defined()) {
            // Clamped at 0 too, for bounds inference of the predicate's Func.
            band.where(mask.allowed(Halide::clamp(first + band, 0, nk - 1), v.i, v.b));
        }
        f(args) = combine(Value(f(args)), value(key));
        return band;
    };
    r.band = band(mask.dense_end(v.i, v.b), mask.end(v.i, v.b) - mask.dense_end(v.i, v.b), "_band");
    if (mask.begin.defined()) {
        const Expr begin = mask.begin(v.i, v.b);
        r.lower_band = band(begin, mask.dense_begin(v.i, v.b) - begin, "_lower_band");
    }
    return r;
}

}  // namespace

KeyReduction reduce_over_keys(Func f, const std::vector<Expr> &args, const KeyMask &mask,
                              const Expr &nk, const std::function<Expr(Expr)> &value,
                              const std::function<Expr(Expr, Expr)> &combine,
                              const std::string &name) {
    return reduce<Expr>(f, args, mask, nk, value, combine, name);
}

KeyReduction reduce_tuple_over_keys(
    Func f, const std::vector<Expr> &args, const KeyMask &mask, const Expr &nk,
    const std::function<Halide::Tuple(Expr)> &value,
    const std::function<Halide::Tuple(const Halide::Tuple &, const Halide::Tuple &)> &combine,
    const std::string &name) {
    const std::function<Halide::Tuple(Halide::Tuple, Halide::Tuple)> by_value =
        [&](Halide::Tuple a, Halide::Tuple x) { return combine(a, x); };
    return reduce<Halide::Tuple>(f, args, mask, nk, value, by_value, name);
}

}  // namespace attngen::algorithm
