#include "cuda_device.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace attngen::detail {

namespace {

// The two driver entry points the probe needs, declared here so that the runtime builds without
// the CUDA toolkit's headers. Both return a CUresult, 0 on success.
using CuInit = int (*)(unsigned int flags);
using CuDeviceGetCount = int (*)(int *count);

Status probe() {
    const char *disabled = std::getenv("ATTNGEN_DISABLE_CUDA");
    if (disabled != nullptr && *disabled != '\0' && std::string(disabled) != "0") {
        return Status::Unavailable("CUDA is disabled by ATTNGEN_DISABLE_CUDA=" +
                                   std::string(disabled));
    }
    // The same library Halide's CUDA runtime loads. It stays loaded: the kernels use it next.
    void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_GLOBAL);
    if (driver == nullptr) {
        const std::string reason = dlerror();
        driver = dlopen("libcuda.so", RTLD_LAZY | RTLD_GLOBAL);
        if (driver == nullptr) {
            return Status::Unavailable("no CUDA driver: libcuda.so.1 could not be loaded (" +
                                       reason + ")");
        }
    }
    auto cu_init = reinterpret_cast<CuInit>(dlsym(driver, "cuInit"));
    auto cu_count = reinterpret_cast<CuDeviceGetCount>(dlsym(driver, "cuDeviceGetCount"));
    if (cu_init == nullptr || cu_count == nullptr) {
        return Status::Unavailable("the CUDA driver libcuda.so.1 lacks cuInit or cuDeviceGetCount");
    }
    if (int err = cu_init(0); err != 0) {
        return Status::Unavailable("the CUDA driver failed to initialize (cuInit returned " +
                                   std::to_string(err) + ")");
    }
    int count = 0;
    if (int err = cu_count(&count); err != 0 || count <= 0) {
        return Status::Unavailable("the CUDA driver found no device (cuDeviceGetCount returned " +
                                   std::to_string(err) + ", " + std::to_string(count) +
                                   " devices)");
    }
    return Status::Ok();
}

}  // namespace

Status cuda_device_status() {
    static const Status status = probe();
    return status;
}

}  // namespace attngen::detail
