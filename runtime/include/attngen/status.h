// The result of every attngen call: ok, or a code and a message that names the problem.
#pragma once

#include <string>
#include <utility>

namespace attngen {

enum class StatusCode {
    kOk = 0,
    kInvalidArgument,  // A shape, stride, dtype or value the call cannot accept.
    kNotFound,         // No compiled kernel matches the request (schedule, variant).
    kKernelError,      // A generated kernel reported an error while running.
    kOutOfMemory,      // An allocation failed.
    kUnavailable,      // A device or driver that the call needs is missing.
};

// Human-readable name of a code, e.g. "invalid argument".
const char *status_code_name(StatusCode code);

class [[nodiscard]] Status {
  public:
    Status() = default;
    Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

    static Status Ok() { return Status(); }
    static Status InvalidArgument(std::string message) {
        return Status(StatusCode::kInvalidArgument, std::move(message));
    }
    static Status NotFound(std::string message) {
        return Status(StatusCode::kNotFound, std::move(message));
    }
    static Status Unavailable(std::string message) {
        return Status(StatusCode::kUnavailable, std::move(message));
    }

    bool ok() const { return code_ == StatusCode::kOk; }
    StatusCode code() const { return code_; }
    const std::string &message() const { return message_; }

    // "ok", or "<code name>: <message>".
    std::string to_string() const;

  private:
    StatusCode code_ = StatusCode::kOk;
    std::string message_;
};

}  // namespace attngen
