// reference: every stage computed over its whole domain before the next one starts
// (compute_root), in plain serial loops. It is the slowest schedule and the simplest to trust, so
// it anchors the tests of every other schedule.
#include "schedule.h"

namespace attngen::schedules {

using Halide::Func;

namespace {

class Reference final : public Schedule {
  public:
    Reference() : Schedule("reference") {}

    void projection(algorithm::ProjectionFuncs &f, const Context &) const override {
        f.product.compute_root();
        f.y.compute_root();
    }

    void scores(algorithm::ScoresFuncs &f, const algorithm::KeyMask &mask,
                const Context &) const override {
        mask.compute_root();
        f.dot.compute_root();
        f.scores.compute_root();
    }

    void softmax(algorithm::SoftmaxFuncs &f, const algorithm::KeyMask &mask,
                 const Context &) const override {
        mask.compute_root();
        f.row_max.compute_root();
        f.weights.compute_root();
        f.row_sum.compute_root();
        f.inv_sum.compute_root();
        f.probs.compute_root();
        f.lse.compute_root();
    }

    void weighted_sum(algorithm::WeightedSumFuncs &f, const algorithm::KeyMask &mask,
                      const Context &) const override {
        mask.compute_root();
        f.acc.compute_root();
        f.out.compute_root();
    }

    void attention(algorithm::AttentionFuncs &f, bool, const Context &ctx) const override {
        scores(f.scores, f.mask, ctx);
        softmax(f.softmax, f.mask, ctx);
        weighted_sum(f.weighted_sum, f.mask, ctx);
    }

    void mha(algorithm::MhaFuncs &f, const Context &ctx) const override {
        projection(f.q_proj, ctx);
        projection(f.k_proj, ctx);
        projection(f.v_proj, ctx);
        attention(f.attention, false, ctx);
        f.concat.compute_root();
        projection(f.out_proj, ctx);
    }
};

}  // namespace

const Schedule &registered_reference() {
    static const Reference schedule;
    return schedule;
}

}  // namespace attngen::schedules
