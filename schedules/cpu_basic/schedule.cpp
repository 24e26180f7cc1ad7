// cpu_basic: every stage materialized as in the reference schedule, but each loop nest
// vectorized along its contiguous dimension and parallel over heads and batch elements. It is
// the simplest schedule that uses the whole machine, and a stepping stone for the tiled and
// fused schedules.
#include "schedule.h"

#include "algorithm/dims.h"

namespace attngen::schedules {

using Halide::Func;
using Halide::TailStrategy;
using Halide::Var;

namespace {

// Every split here guards its tail with an if: head dims and sequence lengths are arbitrary
// (1, 3, 17, ...), often below one vector, and rounding a loop up would read past the end of
// the input buffers.
constexpr TailStrategy kTail = TailStrategy::GuardWithIf;

// Heads and batch elements are independent; one fused parallel loop over both keeps both cores
// busy whether the call has many heads or many batch elements.
const Var &head_batch() {
    static const Var hb("hb");
    return hb;
}

class CpuBasic final : public Schedule {
  public:
    CpuBasic() : Schedule("cpu_basic") {}

    void projection(algorithm::ProjectionFuncs &f, const Context &ctx) const override {
        const auto &v = algorithm::dims();
        const int vec = ctx.vector_width();
        Var nb("nb");
        f.y.compute_root().fuse(v.n, v.b, nb).parallel(nb).vectorize(v.o, vec, kTail);
        // One output row at a time: for each input feature c, a vector of outputs o accumulates
        // x(c) * w(o, c), streaming the contiguous rows of W.
        f.product.compute_at(f.y, nb).vectorize(v.o, vec, kTail);
        f.product.update().reorder(v.o, f.c).vectorize(v.o, vec, kTail);
    }

    void scores(algorithm::ScoresFuncs &f, const algorithm::KeyMask &mask,
                const Context &ctx) const override {
        const auto &v = algorithm::dims();
        const Var &hb = head_batch();
        const int vec = ctx.vector_width();
        mask.compute_root();
        f.scores.compute_root().fuse(v.h, v.b, hb).parallel(hb).vectorize(v.j, vec, kTail);
        // K transposed once per head, so that a vector of keys j is contiguous in the dot product.
        f.k.compute_at(f.scores, hb).reorder_storage(v.j, v.d);
        f.dot.compute_at(f.scores, v.i).vectorize(v.j, vec, kTail);
        f.dot.update().reorder(v.j, f.d).vectorize(v.j, vec, kTail);
    }

    void softmax(algorithm::SoftmaxFuncs &f, const algorithm::KeyMask &mask,
                 const Context &ctx) const override {
        const auto &v = algorithm::dims();
        const Var &hb = head_batch();
        const int vec = ctx.vector_width();
        mask.compute_root();
        f.row_max.compute_root().fuse(v.h, v.b, hb).parallel(hb);
        f.row_max.update().fuse(v.h, v.b, hb).parallel(hb);
        f.weights.compute_root().fuse(v.h, v.b, hb).parallel(hb).vectorize(v.j, vec, kTail);
        f.row_sum.compute_root().fuse(v.h, v.b, hb).parallel(hb);
        f.row_sum.update().fuse(v.h, v.b, hb).parallel(hb);
        // The bands of each row (see mask.h), parallel like the dense part.
        for (int stage = 1; stage < f.row_max.num_update_definitions(); stage++) {
            f.row_max.update(stage).fuse(v.h, v.b, hb).parallel(hb);
            f.row_sum.update(stage).fuse(v.h, v.b, hb).parallel(hb);
        }
        f.probs.compute_root().fuse(v.h, v.b, hb).parallel(hb).vectorize(v.j, vec, kTail);
        f.lse.compute_root().fuse(v.h, v.b, hb).parallel(hb).vectorize(v.i, vec, kTail);
    }

    void weighted_sum(algorithm::WeightedSumFuncs &f, const algorithm::KeyMask &mask,
                      const Context &ctx) const override {
        const auto &v = algorithm::dims();
        const Var &hb = head_batch();
        const int vec = ctx.vector_width();
        mask.compute_root();
        f.out.compute_root().fuse(v.h, v.b, hb).parallel(hb).vectorize(v.e, vec, kTail);
        // One output row at a time: a vector of value features e accumulates p(j) * v(e, j) over
        // the allowed keys j.
        f.acc.compute_at(f.out, v.i).vectorize(v.e, vec, kTail);
        f.acc.update().reorder(v.e, f.keys).vectorize(v.e, vec, kTail);
        for (const auto &[stage, band] : {std::pair{1, f.band}, std::pair{2, f.lower_band}}) {
            if (band.defined()) f.acc.update(stage).reorder(v.e, band).vectorize(v.e, vec, kTail);
        }
    }

    void attention(algorithm::AttentionFuncs &f, bool, const Context &ctx) const override {
        scores(f.scores, f.mask, ctx);
        softmax(f.softmax, f.mask, ctx);
        weighted_sum(f.weighted_sum, f.mask, ctx);
    }

    void mha(algorithm::MhaFuncs &f, const Context &ctx) const override {
        const auto &v = algorithm::dims();
        projection(f.q_proj, ctx);
        projection(f.k_proj, ctx);
        projection(f.v_proj, ctx);
        attention(f.attention, false, ctx);
        Var nb("nb");
        f.concat.compute_root()
            .fuse(v.n, v.b, nb)
            .parallel(nb)
            .vectorize(v.o, ctx.vector_width(), kTail);
        projection(f.out_proj, ctx);
    }
};

}  // namespace

const Schedule &registered_cpu_basic() {
    static const CpuBasic schedule;
    return schedule;
}

}  // namespace attngen::schedules
