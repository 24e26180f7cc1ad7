#include "failures.h"

namespace attngen::bench {

namespace {
bool failed = false;
}  // namespace

void fail_benchmark(benchmark::State &state, const std::string &message) {
    failed = true;
    state.SkipWithError(message.c_str());
}

bool any_benchmark_failed() {
    return failed;
}

}  // namespace attngen::bench
