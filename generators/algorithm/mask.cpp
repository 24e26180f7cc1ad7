#include "mask.h"

#include <algorithm>

#include "dims.h"

namespace attngen::algorithm {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;

namespace {

// The position of query i among the keys, p(i) = i + Nk - Nq (bottom-right alignment).
Expr position(const Expr &i, const Expr &nq, const Expr &nk) {
    return i + (nk - nq);
}

// The end of query i's range: its batch element's key length; for causal masks the key after
// p(i), or the prefix length where that is later; for windows the key after p(i) + R.
Expr key_end_expr(const MaskSpec &spec, const MaskInputs &in, const Expr &i, const Expr &b,
                  const Expr &nq, const Expr &nk) {
    const Expr p = position(i, nq, nk);
    Expr end = Halide::clamp(in.key_lengths(b), 0, nk);
    if (spec.causal) {
        Expr causal_end = p + 1;
        if (spec.prefix) causal_end = Halide::max(causal_end, in.prefix_lengths(b));
        end = Halide::min(end, Halide::max(causal_end, 0));
    }
    if (spec.window) end = Halide::min(end, Halide::max(p + in.window_right + 1, 0));
    return end;
}

// The first key of query i's range (windows only): p(i) - L, clamped into [0, nk].
Expr key_begin_expr(const MaskInputs &in, const Expr &i, const Expr &nq, const Expr &nk) {
    return Halide::clamp(position(i, nq, nk) - in.window_left, 0, nk);
}

}  // namespace

KeyMask define_key_mask(const MaskSpec &spec, const MaskInputs &in, const Expr &nq,
                        const Expr &nk) {
    const Dims &v = dims();
    KeyMask mask;
    mask.spec = spec;
    mask.end = Func("key_end");
    mask.end(v.i, v.b) = key_end_expr(spec, in, v.i, v.b, nq, nk);
    if (spec.window) {
        mask.begin = Func("key_begin");
        mask.begin(v.i, v.b) = key_begin_expr(in, v.i, nq, nk);
    }
    if (spec.varies_by_query()) {
        // The end grows with i, so the group's first query has the smallest range; the begin
        // grows too, so its last query has the latest begin. Rows past Nq in the last group
        // count as queries of the formula, which keeps the bounds of a whole group uniform.
        const Expr group_start = (v.i / kCausalGroup) * kCausalGroup;
        mask.dense_end = Func("key_end_dense");
        mask.dense_end(v.i, v.b) = key_end_expr(spec, in, group_start, v.b, nq, nk);
        if (spec.window) {
            // Clamped at dense_end: a window narrower than the group leaves no key that all of
            // its queries see, and the bands then cover every query's whole range.
            mask.dense_begin = Func("key_begin_dense");
            mask.dense_begin(v.i, v.b) =
                Halide::min(key_begin_expr(in, group_start + (kCausalGroup - 1), nq, nk),
                            mask.dense_end(v.i, v.b));
        }
    } else {
        mask.dense_end = mask.end;
    }
    // Indices clamped for bounds inference, which does not see that the range test guards
    // the per-key tests: rows past Nq (whole vectors of queries) and keys past Nk (whole key
    // blocks) are computed and never used.
    const Expr row = Halide::clamp(v.i, 0, nq - 1), key = Halide::clamp(v.j, 0, nk - 1);
    Expr allowed;
    if (spec.segments) allowed = in.q_segments(row, v.b) == in.kv_segments(key, v.b);
    if (in.user_allowed) {
        const Expr user = in.user_allowed(key, row, v.b);
        allowed = allowed.defined() ? allowed && user : user;
    }
    if (allowed.defined()) {
        mask.allowed = Func("key_allowed");
        mask.allowed(v.j, v.i, v.b) = allowed;
    }
    if (in.user_bounds) {
        // Defined over the clamped row, as the user's expressions may read tensors by it, and
        // clamped into [0, nk] like every bound here.
        const auto [begin, end] = in.user_bounds(row, v.b);
        mask.bound_begin = Func("user_key_begin");
        mask.bound_begin(v.i, v.b) = Halide::clamp(begin, 0, nk);
        mask.bound_end = Func("user_key_end");
        mask.bound_end(v.i, v.b) = Halide::clamp(end, 0, nk);
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
    for (const Func &f : {end, begin, dense_begin, dense_end, bound_begin, bound_end}) {
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

Expr select_value(const Expr &condition, const Expr &value, const Expr &otherwise) {
    return Halide::select(condition, value, otherwise);
}

Halide::Tuple select_value(const Expr &condition, const Halide::Tuple &value,
                           const Halide::Tuple &otherwise) {
    std::vector<Expr> parts;
    for (std::size_t k = 0; k < value.size(); k++) {
        parts.push_back(Halide::select(condition, value[k], otherwise[k]));
    }
    return Halide::Tuple(parts);
}

// The update definitions of reduce_over_keys; Value is Expr or Tuple.
template <typename Value>
KeyReduction reduce(Func f, const std::vector<Expr> &args, const KeyMask &mask, const Expr &nk,
                    const std::function<Value(Expr)> &value,
                    const std::function<Value(Value, Value)> &combine, const Value &identity,
                    const std::string &name, bool with_dense = true) {
    const Dims &v = dims();
    // The per-key test (segments) chooses the identity for a key it refuses rather than guarding
    // the reduction with a predicate: a vectorized loop over queries then stays free of per-lane
    // branches (with predicates, one kernel with every mask kind took 3 minutes to compile), and
    // the refused key's value, even NaN, is never combined. The index is clamped for bounds
    // inference, which does not see that the range test keeps keys below nk.
    auto value_at = [&](const Expr &key, const Expr &unclamped) {
        if (!mask.allowed.defined()) return value(key);
        return select_value(mask.allowed(Halide::clamp(unclamped, 0, nk - 1), v.i, v.b), value(key),
                            identity);
    };
    KeyReduction r;
    if (with_dense) {
        r.dense = RDom(0, nk, name + "_dense");
        if (mask.dense_begin.defined()) r.dense.where(r.dense >= mask.dense_begin(v.i, v.b));
        r.dense.where(r.dense < mask.dense_end(v.i, v.b));
        f(args) = combine(Value(f(args)), value_at(r.dense, r.dense));
    }
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
        f(args) = combine(Value(f(args)), value_at(key, first + band));
        return band;
    };
    // The upper band starts at dense_end, or at the query's own begin where that is later (a
    // window narrower than the group); the lower band ends at dense_begin, or at the query's end
    // where that is earlier.
    const Expr dense_end = mask.dense_end(v.i, v.b);
    const Expr upper_first =
        mask.begin.defined() ? Halide::max(dense_end, mask.begin(v.i, v.b)) : dense_end;
    r.band = band(upper_first, mask.end(v.i, v.b) - upper_first, "_band");
    if (mask.begin.defined()) {
        const Expr begin = mask.begin(v.i, v.b);
        const Expr lower_end = Halide::min(mask.dense_begin(v.i, v.b), mask.end(v.i, v.b));
        r.lower_band = band(begin, lower_end - begin, "_lower_band");
    }
    return r;
}

}  // namespace

KeyReduction reduce_over_keys(Func f, const std::vector<Expr> &args, const KeyMask &mask,
                              const Expr &nk, const std::function<Expr(Expr)> &value,
                              const std::function<Expr(Expr, Expr)> &combine, const Expr &identity,
                              const std::string &name, bool with_dense) {
    return reduce<Expr>(f, args, mask, nk, value, combine, identity, name, with_dense);
}

KeyReduction reduce_tuple_over_keys(
    Func f, const std::vector<Expr> &args, const KeyMask &mask, const Expr &nk,
    const std::function<Halide::Tuple(Expr)> &value,
    const std::function<Halide::Tuple(const Halide::Tuple &, const Halide::Tuple &)> &combine,
    const Halide::Tuple &identity, const std::string &name) {
    const std::function<Halide::Tuple(Halide::Tuple, Halide::Tuple)> by_value =
        [&](Halide::Tuple a, Halide::Tuple x) { return combine(a, x); };
    return reduce<Halide::Tuple>(f, args, mask, nk, value, by_value, identity, name);
}

}  // namespace attngen::algorithm
