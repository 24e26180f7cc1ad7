#include "reference_schedule.h"

namespace attngen::schedules {

using Halide::Func;

void Reference::projection(algorithm::ProjectionFuncs &f, const Context &) const {
    f.product.compute_root();
    f.y.compute_root();
}

void Reference::scores(algorithm::ScoresFuncs &f, algorithm::KeyMask mask, const Context &) const {
    mask.end.compute_root();
    mask.dense_end.compute_root();
    f.dot.compute_root();
    f.scores.compute_root();
}

void Reference::softmax(algorithm::SoftmaxFuncs &f, algorithm::KeyMask mask,
                        const Context &) const {
    mask.end.compute_root();
    mask.dense_end.compute_root();
    f.row_max.compute_root();
    f.weights.compute_root();
    f.row_sum.compute_root();
    f.inv_sum.compute_root();
    f.probs.compute_root();
    f.lse.compute_root();
}

void Reference::weighted_sum(algorithm::WeightedSumFuncs &f, algorithm::KeyMask mask,
                             const Context &) const {
    mask.end.compute_root();
    mask.dense_end.compute_root();
    f.acc.compute_root();
    f.out.compute_root();
}

void Reference::attention(algorithm::AttentionFuncs &f, bool, const Context &ctx) const {
    scores(f.scores, f.mask, ctx);
    softmax(f.softmax, f.mask, ctx);
    weighted_sum(f.weighted_sum, f.mask, ctx);
}

void Reference::mha(algorithm::MhaFuncs &f, const Context &ctx) const {
    projection(f.q_proj, ctx);
    projection(f.k_proj, ctx);
    projection(f.v_proj, ctx);
    attention(f.attention, false, ctx);
    f.concat.compute_root();
    projection(f.out_proj, ctx);
}

}  // namespace attngen::schedules
