// Which Halide targets this machine can run. The tuner compiles and times its candidates here,
// so it measures for a target only when this machine has every instruction set the target
// names: a kernel for a missing one dies of an illegal instruction, candidate after candidate.
#pragma once

#include <string>
#include <vector>

#include "Halide.h"

namespace attngen::tuner {

// Empty when this machine can run code for `target`; otherwise what it lacks, as Halide names it
// ("avx512, avx512_skylake", or "arm-64" for another architecture). GPU features are not
// checked: whether a device is present is the CUDA runtime's question, answered when the first
// candidate runs.
std::string missing_on_host(const Halide::Target &target);

// Empty when code for `target` uses only what missing_on_host checks; otherwise what this machine
// lacks of the CPU that LLVM compiles for. Halide 14 hands LLVM the Sapphire Rapids CPU for
// avx512_sapphirerapids, and LLVM then may use its AVX512-FP16 (vmovw, for one), which AMD's
// Zen 4 and Zen 5 lack although they have the AVX512-BF16 and VNNI that Halide's host target
// looks for: a candidate that holds such an instruction dies of SIGILL there.
std::string llvm_cpu_may_exceed_host(const Halide::Target &target);

// The first of `targets` (most capable first) that this machine can run; empty when none.
std::string first_runnable(const std::vector<std::string> &targets);

}  // namespace attngen::tuner
