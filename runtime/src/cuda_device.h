// Whether this process can run CUDA kernels: a driver (libcuda.so.1) that initializes and at least
// one device. Probed once, on first use, without linking the driver: a build with CUDA kernels
// runs on machines without NVIDIA's driver, and then uses the kernels' CPU entries.
#pragma once

#include "attngen/status.h"

namespace attngen::detail {

// Ok when a CUDA device is usable; otherwise kUnavailable with the reason (no driver, cuInit
// failed, no device, or ATTNGEN_DISABLE_CUDA set). The result never changes within a process,
// because Halide's multitarget kernels cache their first choice of entry.
Status cuda_device_status();

}  // namespace attngen::detail
