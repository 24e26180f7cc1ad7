// Picks the compiled kernel for a call: the named schedule, or the best one compiled for the
// call's device, then the kernel of that schedule specialized to the most of the call's
// properties (kernel_choice.h).
#pragma once

#include <string>
#include <vector>

#include "attngen/kernel.h"
#include "attngen/status.h"
#include "kernel_choice.h"

namespace attngen::detail {

// The schedules with a compiled kernel of this op (any op when null), highest priority first.
std::vector<std::string> compiled_schedules(const Op *op);

// The registry's kernel for a call. An empty schedule takes the compiled schedule of highest
// priority for the call's device (CUDA or CPU) that serves the op and, on a GPU, the call's head
// dims. A named schedule that this build does not know, or that does not serve the op, is
// refused with the reason.
Status find_kernel(const KernelRequest &request, const std::string &schedule,
                   const Kernel **kernel);

// check_kernel_fits for a kernel the caller names, after the checks that every call makes.
Status check_given_kernel(const Kernel &kernel, const KernelRequest &request);

}  // namespace attngen::detail
