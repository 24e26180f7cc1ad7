// Which processor the benchmark ran on, for the run's JSON context.
//
// Google Benchmark records the number of CPUs and a clock rate, which do not tell an AMD Zen 4
// from a Zen 5: both report "AMD EPYC" in a virtual machine, yet Zen 4 executes a 512-bit FMA in
// two halves and Zen 5 in one, which halves or doubles every compute-bound number here. The
// family and model numbers and the widest vector extension tell them apart.
#pragma once

#include <string>

namespace attngen::bench {

// "<model name>, family <f> model <m>, <widest vector extension>" from /proc/cpuinfo, with the
// parts it does not find left out, or "unknown" when it finds none.
std::string cpu_identity();

}  // namespace attngen::bench
