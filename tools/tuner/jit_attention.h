// The attention kernel of one variant, JIT-compiled through the same pipeline builder as the
// attention generator (generators/pipeline/attention_pipeline.h), for a target this machine can
// run.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "Halide.h"
#include "attngen/variant.h"
#include "tune_shape.h"

namespace attngen::tuner {

// What to compile in a bucket: a schedule of ours with parameter values, or one of Halide's
// autoschedulers (Adams2019, Li2018, Mullapudi2016) with none.
struct Candidate {
    std::string schedule;
    std::map<std::string, int> params;

    // "cpu_fused{key_tile=6,query_vectors=2}".
    std::string describe() const;
    // The kernel of this candidate in a bucket: the bucket with the schedule and parameters.
    Variant in(const Variant &bucket) const;
    bool operator<(const Candidate &o) const {
        return schedule != o.schedule ? schedule < o.schedule : params < o.params;
    }
    bool operator==(const Candidate &o) const {
        return schedule == o.schedule && params == o.params;
    }
};

// Whether the schedule is one of Halide's autoschedulers (the schedules' own facts say so).
bool is_autoscheduler(const std::string &schedule);

class JitAttention {
  public:
    // Compiles; throws Halide::CompileError (or Halide::Error) when the kernel cannot be
    // compiled. `estimate` sizes the autoschedulers' view of the problem.
    JitAttention(const Variant &kernel, const Halide::Target &target, const TuneShape &estimate);

    // Runs on dense [B, H, N, D] inputs (Halide order: d, n, h, b), with the values of the
    // modifiers that `shape` has (its window, documents, prefix, softcap, slopes and bias;
    // tune_shape.h), and the neutral values of the variant's others (an unbounded window,
    // prefixes of 0, one segment, no softcap, zero slopes and bias), as the runtime passes them:
    // the search then times the work of the shape's calls, skipped blocks included. q and out
    // are of the kernel's storage type, k and v of its kv_storage (buffer_type). Returns
    // Halide's error code; messages go to the error handler of the JIT runtime (stderr).
    int run(Halide::Buffer<> q, Halide::Buffer<> k, Halide::Buffer<> v,
            Halide::Buffer<int32_t> key_lengths, float scale, Halide::Buffer<> out,
            Halide::Buffer<float> lse, const TuneShape &shape);

    // The element type of a buffer of this storage type (bfloat16 as its bits, uint16).
    static Halide::Type buffer_type(DType storage);

    // The message of the last failed run.
    const std::string &last_error() const { return last_error_; }

  private:
    std::string last_error_;
    // Binds the modifiers' inputs for a call of these extents, with the values of `shape`'s.
    void set_modifiers(int batch, int heads, int nq, int nk, const TuneShape &shape);

    Variant kernel_;
    Halide::ImageParam q_, k_, v_, key_lengths_;
    Halide::Param<float> scale_;
    Halide::Param<int32_t> window_left_{"window_left"}, window_right_{"window_right"};
    Halide::Param<float> softcap_{"softcap"};
    Halide::ImageParam prefix_lengths_, q_segments_, kv_segments_, alibi_slopes_, bias_;
    // The buffers bound to them, kept alive between runs.
    std::vector<Halide::Buffer<int32_t>> int_inputs_;
    std::vector<Halide::Buffer<float>> float_inputs_;
    Halide::Pipeline pipeline_;
};

}  // namespace attngen::tuner
