// The composed attention kernel: q [B, H, Nq, d_k], k [B, H_kv, Nk, d_k], v [B, H_kv, Nk, d_v],
// key_lengths [B] -> out [B, H, Nq, d_v], lse [B, H, Nq] and, when output_probs is set,
// probs [B, H, Nq, Nk].
#include <optional>

#include "Halide.h"
#include "algorithm/attention.h"
#include "attention_formulation.h"
#include "support.h"

namespace attngen::generators {
namespace {

using namespace Halide;

class AttentionGenerator : public Generator<AttentionGenerator> {
  public:
    GeneratorParam<bool> causal{"causal", false};
    // 0 means "any, read from the buffers"; a positive value specializes the kernel.
    GeneratorParam<int> heads{"heads", 0};
    GeneratorParam<int> kv_heads{"kv_heads", 0};
    GeneratorParam<int> d_k{"d_k", 0};
    GeneratorParam<int> d_v{"d_v", 0};
    GeneratorParam<bool> output_probs{"output_probs", false};
    // The kernel serves calls with at most this many queries; 0 means any. A small value
    // selects a schedule's decode path.
    GeneratorParam<int> max_queries{"max_queries", 0};
    GeneratorParam<std::string> schedule_name{"schedule", "reference"};
    // Tuned values of the schedule's parameters, "name:value,...", empty for its defaults.
    GeneratorParam<std::string> tuning{"tuning", ""};
    // The Halide target the tuning was measured for, empty for every target: compiled for
    // several targets at once (a library that picks one at run time), the others take the
    // schedule's defaults, as their registers and caches differ.
    GeneratorParam<std::string> tuning_target{"tuning_target", ""};
    // The key count (Nk) that Halide's autoschedulers plan for. Our schedules ignore it: an
    // autoscheduler sizes its tiles from the estimates, and a kernel planned for 1024 queries or
    // keys fails on calls with fewer (its last tile shifts inwards, before the buffer's start),
    // so a baseline for a shape is compiled with that shape's estimates.
    GeneratorParam<int> keys_estimate{"keys_estimate", 1024};

    Input<Buffer<float, 4>> q{"q"};
    Input<Buffer<float, 4>> k{"k"};
    Input<Buffer<float, 4>> v{"v"};
    Input<Buffer<int32_t, 1>> key_lengths{"key_lengths"};
    Input<float> scale{"scale"};

    Output<Buffer<float, 4>> out{"out"};
    Output<Buffer<float, 3>> lse{"lse"};
    Output<Buffer<float, 4>> *probs = nullptr;

    void configure() {
        if (output_probs) {
            probs = add_output<Buffer<float, 4>>("probs");
        }
    }

    void generate() {
        algorithm::AttentionShape shape;
        shape.nq = q.dim(1).extent();
        shape.nk = k.dim(1).extent();
        shape.d_k = param_or(d_k, q.dim(0).extent());
        shape.d_v = param_or(d_v, v.dim(0).extent());
        shape.heads = param_or(heads, q.dim(2).extent());
        shape.kv_heads = param_or(kv_heads, k.dim(2).extent());
        // A schedule of the online-softmax formulation gets that formulation (same results).
        formulation_.emplace(
            schedule_for(schedule_name, auto_schedule),
            make_context(get_target(), max_queries, tuning, causal, d_v, tuning_target), q, k, v,
            key_lengths, shape, scale, causal);
        out = formulation_->out();
        lse = formulation_->lse();
        if (probs != nullptr) {
            *probs = formulation_->probs();
        }
        constrain_buffers();

        // The autoschedulers' estimates: the specialized sizes where there are any, the query
        // bound of a kernel for few queries, else a middle-sized call.
        const int nq_estimate = max_queries > 0 ? int(max_queries) : 1024;
        const int nk_estimate = keys_estimate;
        const int h_estimate = heads > 0 ? int(heads) : 8;
        const int hkv_estimate = kv_heads > 0 ? int(kv_heads) : h_estimate;
        const int dk_estimate = d_k > 0 ? int(d_k) : 64;
        const int dv_estimate = d_v > 0 ? int(d_v) : 64;
        q.set_estimates({{0, dk_estimate}, {0, nq_estimate}, {0, h_estimate}, {0, 1}});
        k.set_estimates({{0, dk_estimate}, {0, nk_estimate}, {0, hkv_estimate}, {0, 1}});
        v.set_estimates({{0, dv_estimate}, {0, nk_estimate}, {0, hkv_estimate}, {0, 1}});
        key_lengths.set_estimates({{0, 1}});
        scale.set_estimate(0.125f);
        out.set_estimates({{0, dv_estimate}, {0, nq_estimate}, {0, h_estimate}, {0, 1}});
        lse.set_estimates({{0, nq_estimate}, {0, h_estimate}, {0, 1}});
        if (probs != nullptr) {
            probs->set_estimates({{0, nk_estimate}, {0, nq_estimate}, {0, h_estimate}, {0, 1}});
        }
    }

    // Without a schedule of ours (an autoscheduler's turn), nothing.
    void schedule() { formulation_->schedule(probs != nullptr); }

  private:
    // Zero mins everywhere, and the extents of a specialized kernel, so that a call with other
    // extents is an error rather than a wrong answer.
    void constrain_buffers() {
        require_zero_mins(q);
        require_zero_mins(k);
        require_zero_mins(v);
        require_zero_mins(key_lengths);
        require_zero_mins(out);
        require_zero_mins(lse);
        if (probs != nullptr) require_zero_mins(*probs);
        if (d_k > 0) {
            q.dim(0).set_extent(d_k);
            k.dim(0).set_extent(d_k);
        }
        if (d_v > 0) {
            v.dim(0).set_extent(d_v);
            out.dim(0).set_extent(d_v);
        }
        if (heads > 0) q.dim(2).set_extent(heads);
        if (kv_heads > 0) {
            k.dim(2).set_extent(kv_heads);
            v.dim(2).set_extent(kv_heads);
        }
    }

    // Made in generate(), where the inputs and the target are known.
    std::optional<schedules::AttentionFormulation> formulation_;
};

}  // namespace
}  // namespace attngen::generators

HALIDE_REGISTER_GENERATOR(attngen::generators::AttentionGenerator, attention)
