#include "attngen/status.h"

namespace attngen {

const char *status_code_name(StatusCode code) {
    switch (code) {
        case StatusCode::kOk:
            return "ok";
        case StatusCode::kInvalidArgument:
            return "invalid argument";
        case StatusCode::kNotFound:
            return "not found";
        case StatusCode::kKernelError:
            return "kernel error";
        case StatusCode::kOutOfMemory:
            return "out of memory";
        case StatusCode::kUnavailable:
            return "unavailable";
    }
    return "unknown";
}

std::string Status::to_string() const {
    if (ok()) return "ok";
    return std::string(status_code_name(code_)) + ": " + message_;
}

}  // namespace attngen
