// How a command reports failure: one line on stderr and an exit code.
#pragma once

#include <stdexcept>
#include <string>

#include "attngen/status.h"

namespace attngen::cli {

// Exit codes of the attngen command.
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;   // A kernel failed, or a check (demo) did not pass.
constexpr int kExitBadInput = 2;  // A malformed file, a wrong dtype or shape, a bad option.

// Thrown by commands; main() prints "attngen: error: <message>" and exits with code.
class Error : public std::runtime_error {
  public:
    Error(int code, const std::string &message) : std::runtime_error(message), code_(code) {}
    int code() const { return code_; }

  private:
    int code_;
};

// Throws an Error for a failed status: bad input for invalid arguments and unknown schedules,
// failure for everything else.
inline void check(const Status &status) {
    if (status.ok()) return;
    const bool bad_input =
        status.code() == StatusCode::kInvalidArgument || status.code() == StatusCode::kNotFound;
    throw Error(bad_input ? kExitBadInput : kExitFailure, status.message());
}

}  // namespace attngen::cli
