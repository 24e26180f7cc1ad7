// The weighted-sum stage alone: p [B, H, Nq, Nk], v [B, H_kv, Nk, d_v] -> out [B, H, Nq, d_v],
// summing over the keys that the mask allows.
#include "Halide.h"
#include "algorithm/attention.h"
#include "algorithm/mask.h"
#include "algorithm/weighted_sum.h"
#include "support.h"

namespace attngen::generators {
namespace {

using namespace Halide;

class WeightedSumGenerator : public Generator<WeightedSumGenerator> {
  public:
    GeneratorParam<bool> causal{"causal", false};
    GeneratorParam<std::string> schedule_name{"schedule", "reference"};
    // Tuned values of the schedule's parameters, "name:value,...", empty for its defaults.
    GeneratorParam<std::string> tuning{"tuning", ""};

    Input<Buffer<float, 4>> p{"p"};
    Input<Buffer<float, 4>> v{"v"};
    Input<Buffer<int32_t, 1>> key_lengths{"key_lengths"};

    Output<Buffer<float, 4>> out{"out"};

    void generate() {
        algorithm::AttentionShape shape;
        shape.nk = p.dim(0).extent();
        shape.nq = p.dim(1).extent();
        shape.heads = p.dim(2).extent();
        shape.kv_heads = v.dim(2).extent();
        mask_ = algorithm::define_key_mask(key_lengths, shape.nq, shape.nk, causal);
        funcs_ = algorithm::define_weighted_sum(
            p, algorithm::for_query_heads(v, shape, "v_for_head"), shape.nk, mask_);
        out = funcs_.out;
        require_zero_mins(p);
        require_zero_mins(v);
        require_zero_mins(key_lengths);
        require_zero_mins(out);

        p.set_estimates({{0, 1024}, {0, 1024}, {0, 8}, {0, 1}});
        v.set_estimates({{0, 64}, {0, 1024}, {0, 8}, {0, 1}});
        key_lengths.set_estimates({{0, 1}});
        out.set_estimates({{0, 64}, {0, 1024}, {0, 8}, {0, 1}});
    }

    void schedule() {
        if (const auto *s = schedule_for(schedule_name, auto_schedule)) {
            s->weighted_sum(funcs_, mask_, make_context(get_target(), 0, tuning, causal));
        }
    }

  private:
    algorithm::KeyMask mask_;
    algorithm::WeightedSumFuncs funcs_;
};

}  // namespace
}  // namespace attngen::generators

HALIDE_REGISTER_GENERATOR(attngen::generators::WeightedSumGenerator, weighted_sum)
