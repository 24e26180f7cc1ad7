// The runtime's Status as a Python exception.
#pragma once

#include "attngen/status.h"

namespace attngen_py {

// Does nothing for an ok status. Otherwise raises, with the runtime's message: ValueError for a
// call the runtime refuses (kInvalidArgument: shapes, strides, dtypes, values; kNotFound: no
// compiled kernel or schedule for the request), MemoryError for kOutOfMemory, and RuntimeError
// for a kernel that failed while running (kKernelError) or a missing device (kUnavailable).
void raise_if_error(const attngen::Status &status);

}  // namespace attngen_py
