// The memory allocator of the generated kernels.
//
// Fused schedules allocate the same block-sized scratch (hundreds of KiB) in every iteration of
// their parallel loops. glibc serves such sizes with mmap and returns them with munmap, so each
// iteration would fault in fresh zeroed pages. This allocator keeps a few freed blocks per
// thread and hands them out again; a block is reused only for a request at most its size and
// at least half of it, so reuse never more than doubles the memory a request holds.
#pragma once

#include <cstddef>

namespace attngen::detail {

// Installs the allocator in Halide's runtime (once; later calls do nothing).
void install_allocator();

// Frees every block cached by the calling thread.
void release_cached_blocks();

// Fault injection for the tests: the allocation after the next `count` ones fails (returns
// null, as malloc does when memory runs out), and so does every later one until this is called
// with a negative count, which turns failures off (the default).
void fail_allocations_after(long count);

// Blocks handed to kernels and not yet freed, over all threads. Cached blocks are not counted:
// a kernel that frees everything it allocated leaves this where it was.
long live_blocks();

}  // namespace attngen::detail
