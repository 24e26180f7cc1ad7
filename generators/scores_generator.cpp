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

class ScoresGenerator : public Generator<ScoresGenerator> {
  public:
    GeneratorParam<bool> causal{"causal", false};
    GeneratorParam<std::string> schedule_name{"schedule", "reference"};
    // Tuned values of the schedule's parameters, "name:value,...", empty for its defaults.
    GeneratorParam<std::string> tuning{"tuning", ""};

    Input<Buffer<float, 4>> q{"q"};
    Input<Buffer<float, 4>> k{"k"};
    Input<Buffer<int32_t, 1>> key_lengths{"key_lengths"};
    Input<float> scale{"scale"};

    Output<Buffer<float, 4>> scores{"scores"};

    void generate() {
        algorithm::AttentionShape shape;
        shape.nq = q.dim(1).extent();
        shape.nk = k.dim(1).extent();
        shape.d_k = q.dim(0).extent();
        shape.heads = q.dim(2).extent();
        shape.kv_heads = k.dim(2).extent();
        mask_ = algorithm::define_key_mask(key_lengths, shape.nq, shape.nk, causal);
        funcs_ = algorithm::define_scores(q, algorithm::for_query_heads(k, shape, "k_for_head"),
                                          shape.d_k, scale, mask_.end);
        scores = funcs_.scores;
        require_zero_mins(q);
        require_zero_mins(k);
        require_zero_mins(key_lengths);
        require_zero_mins(scores);

        q.set_estimates({{0, 64}, {0, 1024}, {0, 8}, {0, 1}});
        k.set_estimates({{0, 64}, {0, 1024}, {0, 8}, {0, 1}});
        key_lengths.set_estimates({{0, 1}});
        scale.set_estimate(0.125f);
        scores.set_estimates({{0, 1024}, {0, 1024}, {0, 8}, {0, 1}});
    }

    void schedule() {
        if (const auto *s = schedule_for(schedule_name, auto_schedule)) {
            s->scores(funcs_, mask_, make_context(get_target(), 0, tuning, causal));
        }
    }

  private:
    algorithm::KeyMask mask_;
    algorithm::ScoresFuncs funcs_;
};

}  // namespace
}  // namespace attngen::generators

HALIDE_REGISTER_GENERATOR(attngen::generators::ScoresGenerator, scores)
