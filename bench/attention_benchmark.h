// The benchmarks "attention/<shape id>/<implementation>/threads:<n>": one shape computed by one
// implementation on n threads, checked against the fp64 reference before it is timed.
#pragma once

#include <vector>

#include "implementation.h"

namespace attngen::bench {

// Registers, for one thread count, one benchmark per shape of bench_shapes() and implementation
// that supports it (and is not excluded from it, see exclusions.h), ordered by shape, then
// implementation.
void register_attention_benchmarks(const std::vector<Implementation> &implementations, int threads);

}  // namespace attngen::bench
