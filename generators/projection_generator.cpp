// The projection stage alone: y = x w + bias, x [B, N, d_in], w [d_in, d_out], bias [d_out].
#include "Halide.h"
#include "algorithm/projection.h"
#include "support.h"

namespace attngen::generators {
namespace {

using namespace Halide;

class ProjectionGenerator : public VariantGenerator<ProjectionGenerator> {
  public:
    Input<Buffer<float, 3>> x{"x"};
    Input<Buffer<float, 2>> w{"w"};
    Input<Buffer<float, 1>> bias{"bias"};

    Output<Buffer<float, 3>> y{"y"};

    void configure() { read_variant(Op::kProjection); }

    void generate() {
        funcs_ = algorithm::define_projection(x, w, bias, x.dim(0).extent());
        y = funcs_.y;
        for (OutputImageParam p : {ImageParam(x), ImageParam(w), ImageParam(bias)}) {
            require_zero_mins(p);
        }
        require_zero_mins(y);

        x.set_estimates({{0, 512}, {0, 1024}, {0, 1}});
        w.set_estimates({{0, 512}, {0, 512}});
        bias.set_estimates({{0, 512}});
        y.set_estimates({{0, 512}, {0, 1024}, {0, 1}});
    }

    void schedule() {
        if (schedule_ != nullptr) schedule_->projection(funcs_, ctx_);
    }

  private:
    algorithm::ProjectionFuncs funcs_;
};

}  // namespace
}  // namespace attngen::generators

HALIDE_REGISTER_GENERATOR(attngen::generators::ProjectionGenerator, projection)
