// The stages alone, one kernel per stage variant (op projection, scores, softmax or
// weighted_sum), for the tests and benchmarks that call a stage by itself:
//
//   projection    x [B, N, d_in], w [d_in, d_out], bias [d_out] -> y [B, N, d_out]
//   scores        q [B, H, Nq, d_k], k [B, H_kv, Nk, d_k], key_lengths [B], scale
//                 -> scores [B, H, Nq, Nk], -inf where masked
//   softmax       scores [B, H, Nq, Nk], key_lengths [B] -> probs [B, H, Nq, Nk], lse [B, H, Nq]
//   weighted_sum  p [B, H, Nq, Nk], v [B, H_kv, Nk, d_v], key_lengths [B] -> out [B, H, Nq, d_v]
//
// The variant's op decides which inputs and outputs the generator declares (configure), so one
// generator serves the four; the runtime passes the buffers by these names.
#include "Halide.h"
#include "algorithm/attention.h"
#include "algorithm/mask.h"
#include "algorithm/projection.h"
#include "algorithm/scores.h"
#include "algorithm/softmax.h"
#include "algorithm/weighted_sum.h"
#include "support.h"

namespace attngen::generators {
namespace {

using namespace Halide;

using Buffer4 = Buffer<float, 4>;

class StageGenerator : public VariantGenerator<StageGenerator> {
  public:
    void configure() {
        read_variant({Op::kProjection, Op::kScores, Op::kSoftmax, Op::kWeightedSum});
        switch (variant_.op) {
            case Op::kProjection:
                x_ = add_input<Buffer<float, 3>>("x");
                w_ = add_input<Buffer<float, 2>>("w");
                bias_ = add_input<Buffer<float, 1>>("bias");
                y_ = add_output<Buffer<float, 3>>("y");
                break;
            case Op::kScores:
                q_ = add_input<Buffer4>("q");
                k_ = add_input<Buffer4>("k");
                add_key_lengths();
                scale_ = add_input<float>("scale");
                scores_out_ = add_output<Buffer4>("scores");
                break;
            case Op::kSoftmax:
                scores_in_ = add_input<Buffer4>("scores");
                add_key_lengths();
                probs_ = add_output<Buffer4>("probs");
                lse_ = add_output<Buffer<float, 3>>("lse");
                break;
            default:  // Op::kWeightedSum
                p_ = add_input<Buffer4>("p");
                v_ = add_input<Buffer4>("v");
                add_key_lengths();
                out_ = add_output<Buffer4>("out");
                break;
        }
    }

    void generate() {
        switch (variant_.op) {
            case Op::kProjection:
                return generate_projection();
            case Op::kScores:
                return generate_scores();
            case Op::kSoftmax:
                return generate_softmax();
            default:
                return generate_weighted_sum();
        }
    }

    void schedule() {
        if (schedule_ == nullptr) return;
        switch (variant_.op) {
            case Op::kProjection:
                return schedule_->projection(projection_, ctx_);
            case Op::kScores:
                return schedule_->scores(scores_, mask_, ctx_);
            case Op::kSoftmax:
                return schedule_->softmax(softmax_, mask_, ctx_);
            default:
                return schedule_->weighted_sum(weighted_sum_, mask_, ctx_);
        }
    }

  private:
    void add_key_lengths() { key_lengths_ = add_input<Buffer<int32_t, 1>>("key_lengths"); }

    // The mask of a stage over Nq queries and Nk keys; zero mins on every buffer.
    void define_mask(const Expr &nq, const Expr &nk) {
        mask_ = algorithm::define_key_mask(variant_.mask, {*key_lengths_}, nq, nk);
        zero_mins_and_estimates(*key_lengths_, {{0, 1}});
    }

    void generate_projection() {
        projection_ = algorithm::define_projection(*x_, *w_, *bias_, x_->dim(0).extent());
        *y_ = projection_.y;
        zero_mins_and_estimates(*x_, {{0, 512}, {0, 1024}, {0, 1}});
        zero_mins_and_estimates(*w_, {{0, 512}, {0, 512}});
        zero_mins_and_estimates(*bias_, {{0, 512}});
        zero_mins_and_estimates(*y_, {{0, 512}, {0, 1024}, {0, 1}});
    }

    void generate_scores() {
        algorithm::AttentionShape shape;
        shape.nq = q_->dim(1).extent();
        shape.nk = k_->dim(1).extent();
        shape.d_k = q_->dim(0).extent();
        shape.heads = q_->dim(2).extent();
        shape.kv_heads = k_->dim(2).extent();
        define_mask(shape.nq, shape.nk);
        scores_ = algorithm::define_scores(
            *q_, algorithm::for_query_heads(*k_, shape, "k_for_head"), shape.d_k, *scale_, mask_);
        *scores_out_ = scores_.scores;
        zero_mins_and_estimates(*q_, {{0, 64}, {0, 1024}, {0, 8}, {0, 1}});
        zero_mins_and_estimates(*k_, {{0, 64}, {0, 1024}, {0, 8}, {0, 1}});
        zero_mins_and_estimates(*scores_out_, {{0, 1024}, {0, 1024}, {0, 8}, {0, 1}});
        scale_->set_estimate(0.125f);
    }

    void generate_softmax() {
        const Expr nk = scores_in_->dim(0).extent(), nq = scores_in_->dim(1).extent();
        define_mask(nq, nk);
        softmax_ = algorithm::define_softmax(*scores_in_, nk, mask_);
        *probs_ = softmax_.probs;
        *lse_ = softmax_.lse;
        zero_mins_and_estimates(*scores_in_, {{0, 1024}, {0, 1024}, {0, 8}, {0, 1}});
        zero_mins_and_estimates(*probs_, {{0, 1024}, {0, 1024}, {0, 8}, {0, 1}});
        zero_mins_and_estimates(*lse_, {{0, 1024}, {0, 8}, {0, 1}});
    }

    void generate_weighted_sum() {
        algorithm::AttentionShape shape;
        shape.nk = p_->dim(0).extent();
        shape.nq = p_->dim(1).extent();
        shape.heads = p_->dim(2).extent();
        shape.kv_heads = v_->dim(2).extent();
        define_mask(shape.nq, shape.nk);
        weighted_sum_ = algorithm::define_weighted_sum(
            *p_, algorithm::for_query_heads(*v_, shape, "v_for_head"), shape.nk, mask_);
        *out_ = weighted_sum_.out;
        zero_mins_and_estimates(*p_, {{0, 1024}, {0, 1024}, {0, 8}, {0, 1}});
        zero_mins_and_estimates(*v_, {{0, 64}, {0, 1024}, {0, 8}, {0, 1}});
        zero_mins_and_estimates(*out_, {{0, 64}, {0, 1024}, {0, 8}, {0, 1}});
    }

    // The inputs and outputs of the variant's op, declared in configure().
    GeneratorInput<Buffer<float, 3>> *x_ = nullptr;
    GeneratorInput<Buffer<float, 2>> *w_ = nullptr;
    GeneratorInput<Buffer<float, 1>> *bias_ = nullptr;
    GeneratorInput<Buffer4> *q_ = nullptr, *k_ = nullptr, *scores_in_ = nullptr, *p_ = nullptr,
                            *v_ = nullptr;
    GeneratorInput<Buffer<int32_t, 1>> *key_lengths_ = nullptr;
    GeneratorInput<float> *scale_ = nullptr;
    GeneratorOutput<Buffer<float, 3>> *y_ = nullptr, *lse_ = nullptr;
    GeneratorOutput<Buffer4> *scores_out_ = nullptr, *probs_ = nullptr, *out_ = nullptr;

    algorithm::KeyMask mask_;
    algorithm::ProjectionFuncs projection_;
    algorithm::ScoresFuncs scores_;
    algorithm::SoftmaxFuncs softmax_;
    algorithm::WeightedSumFuncs weighted_sum_;
};

}  // namespace
}  // namespace attngen::generators

HALIDE_REGISTER_GENERATOR(attngen::generators::StageGenerator, stage)
