// The (implementation, shape) pairs that attention_bench does not register, each with its reason:
// mostly slow baselines on the largest shapes, where one call takes seconds and bench/run.sh
// makes 22 calls per benchmark (a checked call and 3 rounds of 7 repetitions) at each of two
// thread counts, and an autoscheduler that cannot plan a kernel for a shape. The same schedules
// are timed on every other shape. main.cpp lists them in the JSON context
// ("excluded/<implementation>/<shape ids>") and make_results.py in RESULTS.md.
#pragma once

#include <string>
#include <vector>

namespace attngen::bench {

struct Exclusion {
    std::string implementation;
    std::vector<std::string> shapes;  // Shape ids.
    std::string reason;               // With the measured time of one call.
};

const std::vector<Exclusion> &exclusions();

bool is_excluded(const std::string &implementation, const std::string &shape);

}  // namespace attngen::bench
