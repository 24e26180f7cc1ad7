// The scores stage alone: scores = q k^T * scale with the mask, q [B, H, Nq, d_k],
// k [B, H_kv, Nk, d_k] -> scores [B, H, Nq, Nk], -inf where masked.
#include "Halide.h"
#include "algorithm/attention.h"
#include "algorithm/mask.h"
#include "algorithm/scores.h"
#include "support.h"

namespace attngen::generators {
namespace {

using namespace Halide;

class ScoresGenerator : public VariantGenerator<ScoresGenerator> {
  public:
    Input<Buffer<float, 4>> q{"q"};
    Input<Buffer<float, 4>> k{"k"};
    Input<Buffer<int32_t, 1>> key_lengths{"key_lengths"};
    Input<float> scale{"scale"};

    Output<Buffer<float, 4>> scores{"scores"};

    void configure() { read_variant(Op::kScores); }

    void generate() {
        algorithm::AttentionShape shape;
        shape.nq = q.dim(1).extent();
        shape.nk = k.dim(1).extent();
        shape.d_k = q.dim(0).extent();
        shape.heads = q.dim(2).extent();
        shape.kv_heads = k.dim(2).extent();
        mask_ = algorithm::define_key_mask(variant_.mask, key_lengths, shape.nq, shape.nk);
        funcs_ = algorithm::define_scores(q, algorithm::for_query_heads(k, shape, "k_for_head"),
                                          shape.d_k, scale, mask_);
        scores = funcs_.scores;
        for (OutputImageParam p : {ImageParam(q), ImageParam(k), ImageParam(key_lengths)}) {
            require_zero_mins(p);
        }
        require_zero_mins(scores);

        q.set_estimates({{0, 64}, {0, 1024}, {0, 8}, {0, 1}});
        k.set_estimates({{0, 64}, {0, 1024}, {0, 8}, {0, 1}});
        key_lengths.set_estimates({{0, 1}});
        scale.set_estimate(0.125f);
        scores.set_estimates({{0, 1024}, {0, 1024}, {0, 8}, {0, 1}});
    }

    void schedule() {
        if (schedule_ != nullptr) schedule_->scores(funcs_, mask_, ctx_);
    }

  private:
    algorithm::KeyMask mask_;
    algorithm::ScoresFuncs funcs_;
};

}  // namespace
}  // namespace attngen::generators

HALIDE_REGISTER_GENERATOR(attngen::generators::ScoresGenerator, scores)
