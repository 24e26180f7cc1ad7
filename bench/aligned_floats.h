// Float arrays that start on a 64-byte boundary: every buffer the benchmark hands to an
// implementation, inputs and outputs alike.
//
// glibc's malloc aligns to 16 bytes only, so which of a kernel's vector loads straddle two cache
// lines depended on where each array happened to land, and that moved with every change to the
// allocations before it: in one build (f)'s q, v and out started 48, 16 and 32 bytes into a
// line. A driver that called the d64 cpu_fused kernel on (f) directly, alternating between
// aligned arrays and copies 16 bytes off, measured the shifted ones 1.8-3.4% slower (AVX-512,
// two threads, three runs). Tensors that users pass usually are aligned: PyTorch's CPU allocator
// and oneDNN's memory objects align to 64 bytes. Aligned buffers make the comparison repeatable,
// and every implementation gets the same ones.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace attngen::bench {

template <typename T>
struct CacheLineAllocator {
    using value_type = T;
    static constexpr std::align_val_t kAlignment{64};

    CacheLineAllocator() = default;
    template <typename U>
    CacheLineAllocator(const CacheLineAllocator<U> &) {}

    T *allocate(std::size_t n) {
        return static_cast<T *>(::operator new(n * sizeof(T), kAlignment));
    }
    void deallocate(T *p, std::size_t) { ::operator delete(p, kAlignment); }

    template <typename U>
    bool operator==(const CacheLineAllocator<U> &) const {
        return true;
    }
    template <typename U>
    bool operator!=(const CacheLineAllocator<U> &) const {
        return false;
    }
};

using Floats = std::vector<float, CacheLineAllocator<float>>;

}  // namespace attngen::bench
