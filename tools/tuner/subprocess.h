// Measures a candidate in a child process, so that a candidate that runs for too long is
// stopped, and one that crashes the compiler or the kernel costs only that candidate.
//
// The calling process must not have started threads (Halide's included) before: fork() copies
// only the calling thread. The tuner's own process therefore never compiles or runs a kernel.
#pragma once

#include "measure.h"

namespace attngen::tuner {

Measurement measure_in_child(const Variant &kernel, const TuneShape &shape,
                             const std::string &target, const MeasureOptions &options,
                             double timeout_seconds);

}  // namespace attngen::tuner
