// How the benchmark process allocates memory, set once at start-up for every implementation.
#pragma once

namespace attngen::bench {

// Makes glibc serve every allocation from its heap and keep freed memory, instead of mapping
// large blocks (above 32 MiB at most) with mmap and unmapping them on free. An implementation
// that allocates its temporaries on every call, as libtorch does with the Nq x Nk scores and
// weights, would otherwise pay for the kernel faulting in and zeroing fresh pages on every
// call: that was half of the torch peer's time on shape (b) (283 ms against 137 ms at 1
// thread). Deployments of libtorch on CPUs use a caching allocator (jemalloc, tcmalloc) for the
// same reason. It holds for every implementation alike: the OpenBLAS and oneDNN peers allocate
// their buffers before timing, and attngen's runtime keeps freed kernel scratch of up to 64 MiB
// per thread itself, so it matters there only for the Nq x Nk buffers of the materializing
// schedules (cpu_basic, reference, the autoschedulers) on the larger shapes.
void keep_freed_memory_in_process();

}  // namespace attngen::bench
