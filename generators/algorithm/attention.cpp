#include "attention.h"

#include <optional>

#include "dims.h"
#include "mask.h"
#include "numerics.h"

namespace attngen::algorithm {

using Halide::Expr;
using Halide::Func;

Func for_query_heads(const Func &kv, const AttentionShape &shape, const std::string &name) {
    const Dims &x = dims();
    // Query heads per key/value head. With H_kv = H this is 1 and the division disappears.
    Expr group = shape.heads / shape.kv_heads;
    Func mapped(name);
    mapped(x.d, x.j, x.h, x.b) = kv(x.d, x.j, x.h / group, x.b);
    return mapped;
}

AttentionFuncs define_attention(const Func &q, const Func &k, const Func &v, const KeyMask &mask,
                                const AttentionShape &shape, const Expr &scale,
                                const ScoreModifier &modifier, const BFloat16Operands *bfloat16) {
    AttentionFuncs f;
    f.q = q;
    f.k = k;
    f.v = v;
    f.shape = shape;
    f.mask = mask;
    f.k_for_head = for_query_heads(k, shape, "k_for_head");
    f.v_for_head = for_query_heads(v, shape, "v_for_head");
    // The scores are kept in base 2 (softmax.h): log2(e) joins the scale, so no score is
    // multiplied twice. They are left unmasked (scores.h): the softmax visits allowed keys only.
    std::optional<BFloat16Operands> paired;
    if (bfloat16 != nullptr) {
        paired =
            BFloat16Operands{bfloat16->q, for_query_heads(bfloat16->k, shape, "k_bf16_for_head")};
        if (bfloat16->v.defined()) {
            paired->v = for_query_heads(bfloat16->v, shape, "v_bf16_for_head");
        }
    }
    f.scores = define_scores(q, f.k_for_head, shape.d_k, base_two_scale(scale), f.mask,
                             /*masked=*/false, modifier, scale, paired ? &*paired : nullptr);
    f.softmax = define_softmax(f.scores.scores, shape.nk, f.mask, 1.0f);
    f.weighted_sum =
        define_weighted_sum(f.softmax.weights, f.v_for_head, shape.nk, f.mask, f.softmax.inv_sum,
                            shape.storage, paired && paired->v.defined() ? &paired->v : nullptr);
    f.out = f.weighted_sum.out;
    f.lse = f.softmax.lse;
    f.probs = f.softmax.probs;
    return f;
}

}  // namespace attngen::algorithm
