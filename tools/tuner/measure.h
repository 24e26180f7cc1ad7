// Measures one candidate: compile, check against the fp64 reference on a small problem, then
// time it on the shape with a warm-up and the median of several runs.
#pragma once

#include <string>

#include "jit_attention.h"
#include "tune_shape.h"

namespace attngen::tuner {

struct Measurement {
    enum class Outcome { kOk, kCompileFailed, kWrong, kRunFailed, kTimeout, kCrashed };
    Outcome outcome = Outcome::kOk;
    std::string detail;    // Why it failed, or the comparison summary.
    double median_ms = 0;  // Median time of one call on the shape.
    double compile_s = 0;  // JIT compile time.
    int runs = 0;          // Timed runs.

    bool ok() const { return outcome == Outcome::kOk; }
    static const char *outcome_name(Outcome o);
};

struct MeasureOptions {
    int runs = 5;                 // Timed runs after one warm-up.
    double max_run_seconds = 20;  // Stop timing after this long (at least one run is timed).
    int threads = 0;              // Halide threads; 0 keeps the default (one per core).
};

// Runs the kernel on shape s (two batch elements; the second has 7 keys of padding) and compares
// out and lse with the fp64 reference on the same inputs (rounded to the shape's storage types),
// allowing a plain implementation's error in those types (docs/testing.md). Empty when they
// match, else what differs.
std::string check_against_reference(JitAttention &kernel, const TuneShape &s);

// The small problem a kernel for `shape` must get right before it is timed: the kernel's head
// dims and mask, the shape's modifiers (a window, documents and a prefix shrunk to the problem),
// lengths that are not multiples of any tile, key padding in one batch element, and no more
// queries than the kernel serves.
TuneShape check_shape(const Variant &kernel, const TuneShape &shape);

// The inputs and outputs of one timed call on a shape: random inputs, every key allowed; q and
// out of the shape's storage type, k and v of its kv_storage.
struct TimedProblem {
    explicit TimedProblem(const TuneShape &shape);
    int run(JitAttention &kernel);  // Halide's error code.
    TuneShape shape;                // Its modifiers' values too.
    Halide::Buffer<> q, k, v, out;
    Halide::Buffer<float> lse;
    Halide::Buffer<int32_t> key_lengths;
    float scale;
};

// Sets up this process for timing kernels: the heap keeps freed memory, and the runtime's pool
// (which the candidates run on) gets `threads` threads (0 keeps one per core).
void prepare_timing_process(int threads);

// Measures the kernel of this variant on `shape`, in this process (see subprocess.h for the
// isolated, time-limited form).
Measurement measure(const Variant &kernel, const TuneShape &shape, const std::string &target,
                    const MeasureOptions &options);

}  // namespace attngen::tuner
