// The table of a tuning database: per shape, the winner against the hand-written default and
// the best of Halide's autoschedulers, then the geometric mean.
#pragma once

#include <ostream>

#include "database.h"

namespace attngen::tuner {

void print_report(const TuningDatabase &db, std::ostream &out);

}  // namespace attngen::tuner
