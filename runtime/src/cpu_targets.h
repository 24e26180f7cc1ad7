// Which compiled target a kernel runs on this CPU.
//
// A kernel compiled for several targets (Halide multitarget) calls
// halide_can_use_target_features with each target's feature bits, most capable first, and
// keeps the first one the CPU supports. The runtime installs its own check in Halide's runtime
// at startup: the CPU must support the features, and the environment variable
// ATTNGEN_MAX_CPU_ISA (avx512, avx2, sse41 or armv8) may forbid the more capable ones, so that
// tests and users can run the AVX-512 (without bfloat16 instructions), AVX2 or SSE4.1 code on a
// machine with more. ATTNGEN_BF16_DOT (auto, on or off) says where the entries for AVX512-BF16
// run: by default on AMD's cores only, where vdpbf16ps outruns float32 FMAs (cpu_targets.cpp).
// Halide caches its choice at a kernel's first call; the limit is read once, before any kernel
// runs.
#pragma once

#include <string>

#include "attngen/status.h"

namespace attngen::detail {

// Installs the check (once; it also runs while the program starts).
void install_cpu_target_check();

// An error if ATTNGEN_MAX_CPU_ISA or ATTNGEN_BF16_DOT holds an unknown value, else ok.
Status cpu_isa_limit_status();

// The first target of a comma-separated list ("x86-64-linux-avx2-fma,x86-64-linux-sse41") that
// the check accepts on this machine, or "" if none does. "host" is returned as is.
std::string selected_target(const std::string &targets);

}  // namespace attngen::detail
