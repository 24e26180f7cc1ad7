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

class WeightedSumGenerator : public VariantGenerator<WeightedSumGenerator> {
  public:
    Input<Buffer<float, 4>> p{"p"};
    Input<Buffer<float, 4>> v{"v"};
    Input<Buffer<int32_t, 1>> key_lengths{"key_lengths"};

    Output<Buffer<float, 4>> out{"out"};

    void configure() { read_variant(Op::kWeightedSum); }

    void generate() {
        algorithm::AttentionShape shape;
        shape.nk = p.dim(0).extent();
        shape.nq = p.dim(1).extent();
        shape.heads = p.dim(2).extent();
        shape.kv_heads = v.dim(2).extent();
        mask_ = algorithm::define_key_mask(variant_.mask, key_lengths, shape.nq, shape.nk);
        funcs_ = algorithm::define_weighted_sum(
            p, algorithm::for_query_heads(v, shape, "v_for_head"), shape.nk, mask_);
        out = funcs_.out;
        for (OutputImageParam b : {ImageParam(p), ImageParam(v), ImageParam(key_lengths)}) {
            require_zero_mins(b);
        }
        require_zero_mins(out);

        p.set_estimates({{0, 1024}, {0, 1024}, {0, 8}, {0, 1}});
        v.set_estimates({{0, 64}, {0, 1024}, {0, 8}, {0, 1}});
        key_lengths.set_estimates({{0, 1}});
        out.set_estimates({{0, 64}, {0, 1024}, {0, 8}, {0, 1}});
    }

    void schedule() {
        if (schedule_ != nullptr) schedule_->weighted_sum(funcs_, mask_, ctx_);
    }

  private:
    algorithm::KeyMask mask_;
    algorithm::WeightedSumFuncs funcs_;
};

}  // namespace
}  // namespace attngen::generators

HALIDE_REGISTER_GENERATOR(attngen::generators::WeightedSumGenerator, weighted_sum)
