// The softmax stage alone: scores [B, H, Nq, Nk] -> probs [B, H, Nq, Nk] and lse [B, H, Nq],
// over the keys that the mask allows.
#include "Halide.h"
#include "algorithm/mask.h"
#include "algorithm/softmax.h"
#include "support.h"

namespace attngen::generators {
namespace {

using namespace Halide;

class SoftmaxGenerator : public VariantGenerator<SoftmaxGenerator> {
  public:
    Input<Buffer<float, 4>> scores{"scores"};
    Input<Buffer<int32_t, 1>> key_lengths{"key_lengths"};

    Output<Buffer<float, 4>> probs{"probs"};
    Output<Buffer<float, 3>> lse{"lse"};

    void configure() { read_variant(Op::kSoftmax); }

    void generate() {
        const Expr nk = scores.dim(0).extent(), nq = scores.dim(1).extent();
        mask_ = algorithm::define_key_mask(variant_.mask, key_lengths, nq, nk);
        funcs_ = algorithm::define_softmax(scores, nk, mask_);
        probs = funcs_.probs;
        lse = funcs_.lse;
        require_zero_mins(scores);
        require_zero_mins(key_lengths);
        require_zero_mins(probs);
        require_zero_mins(lse);

        scores.set_estimates({{0, 1024}, {0, 1024}, {0, 8}, {0, 1}});
        key_lengths.set_estimates({{0, 1}});
        probs.set_estimates({{0, 1024}, {0, 1024}, {0, 8}, {0, 1}});
        lse.set_estimates({{0, 1024}, {0, 8}, {0, 1}});
    }

    void schedule() {
        if (schedule_ != nullptr) schedule_->softmax(funcs_, mask_, ctx_);
    }

  private:
    algorithm::KeyMask mask_;
    algorithm::SoftmaxFuncs funcs_;
};

}  // namespace
}  // namespace attngen::generators

HALIDE_REGISTER_GENERATOR(attngen::generators::SoftmaxGenerator, softmax)
