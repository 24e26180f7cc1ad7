#include "allocator.h"

#include <malloc.h>

namespace attngen::bench {

void keep_freed_memory_in_process() {
    mallopt(M_MMAP_MAX, 0);              // Never mmap: large blocks come from the heap too.
    mallopt(M_TRIM_THRESHOLD, 1 << 30);  // Return heap memory to the system only above 1 GiB free.
}

}  // namespace attngen::bench
