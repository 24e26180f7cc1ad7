#include "allocator.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>

#include "HalideRuntime.h"

namespace attngen::detail {

namespace {

// AVX-512 loads are fastest from 64-byte boundaries; Halide also requires that 8 bytes before
// and after a block may be read.
constexpr std::size_t kAlignment = 64;
constexpr std::size_t kPadding = 8;
// Only blocks at least this large are cached: smaller ones come from malloc's free lists,
// which are fast already.
constexpr std::size_t kMinCachedBytes = 64 * 1024;
// Per thread: a handful of blocks (a fused block needs two or three at once), and at most
// 64 MiB in all, so that an idle thread holds a bounded amount of memory.
constexpr int kCachedBlocks = 4;
constexpr std::size_t kMaxCachedBytesPerThread = 64u << 20;

// Every block starts with this header, kAlignment bytes before the pointer handed to Halide.
struct Header {
    uint64_t magic;        // kMagic: the block came from allocate_new.
    void *raw;             // What malloc returned.
    std::size_t capacity;  // Usable bytes after the header.
};
constexpr uint64_t kMagic = 0x61747467656e3031;  // "attngen01"
static_assert(sizeof(Header) <= kAlignment - kPadding, "header must leave room for padding");

struct ThreadCache {
    Header *blocks[kCachedBlocks] = {};
    std::size_t cached_bytes = 0;

    ~ThreadCache() { clear(); }
    void clear() {
        for (Header *&h : blocks) {
            if (h != nullptr) std::free(h->raw);
            h = nullptr;
        }
        cached_bytes = 0;
    }
};

thread_local ThreadCache cache;

// Allocations left before injected failures start; negative: never fail. Shared by all threads
// so that a test can make a kernel's worker threads fail too.
std::atomic<long> allocations_before_failure{-1};
std::atomic<long> live{0};

bool injected_failure() {
    long left = allocations_before_failure.load(std::memory_order_relaxed);
    while (left > 0 && !allocations_before_failure.compare_exchange_weak(
                           left, left - 1, std::memory_order_relaxed)) {
    }
    return left == 0;
}

Header *header_of(void *ptr) {
    return reinterpret_cast<Header *>(static_cast<uint8_t *>(ptr) - kAlignment);
}

void *allocate_new(std::size_t bytes) {
    void *raw = std::malloc(bytes + 2 * kAlignment + kPadding);
    if (raw == nullptr) {
        live.fetch_sub(1, std::memory_order_relaxed);
        return nullptr;
    }
    auto address = reinterpret_cast<uintptr_t>(raw) + kAlignment;
    address = (address + kAlignment - 1) & ~(uintptr_t)(kAlignment - 1);
    auto *user = reinterpret_cast<uint8_t *>(address);
    Header *h = header_of(user);
    h->magic = kMagic;
    h->raw = raw;
    h->capacity = bytes;
    return user;
}

void *cached_malloc(void *, std::size_t bytes) {
    if (injected_failure()) return nullptr;
    live.fetch_add(1, std::memory_order_relaxed);
    if (bytes >= kMinCachedBytes) {
        for (Header *&h : cache.blocks) {
            if (h != nullptr && h->capacity >= bytes && h->capacity / 2 <= bytes) {
                Header *found = h;
                h = nullptr;
                cache.cached_bytes -= found->capacity;
                return reinterpret_cast<uint8_t *>(found) + kAlignment;
            }
        }
    }
    return allocate_new(bytes);
}

void cached_free(void *, void *ptr) {
    if (ptr == nullptr) return;
    Header *h = header_of(ptr);
    if (h->magic != kMagic) {
        // Allocated before this allocator was installed; it belongs to Halide's default one.
        halide_default_free(nullptr, ptr);
        return;
    }
    live.fetch_sub(1, std::memory_order_relaxed);
    if (h->capacity >= kMinCachedBytes &&
        cache.cached_bytes + h->capacity <= kMaxCachedBytesPerThread) {
        for (Header *&slot : cache.blocks) {
            if (slot == nullptr) {
                slot = h;
                cache.cached_bytes += h->capacity;
                return;
            }
        }
    }
    std::free(h->raw);
}

}  // namespace

void install_allocator() {
    static const bool installed = [] {
        halide_set_custom_malloc(&cached_malloc);
        halide_set_custom_free(&cached_free);
        return true;
    }();
    (void)installed;
}

void release_cached_blocks() {
    cache.clear();
}

void fail_allocations_after(long count) {
    allocations_before_failure.store(count, std::memory_order_relaxed);
}

long live_blocks() {
    return live.load(std::memory_order_relaxed);
}

// Installed while the program starts, before any kernel can allocate, so that every block
// Halide frees through cached_free came from cached_malloc. This initializer runs only in a
// program that links allocator.o; every kernel call references install_allocator (CallContext)
// so that every program that calls a kernel does.
static const bool kInstalledAtStartup = (install_allocator(), true);

}  // namespace attngen::detail
