// A caching allocator over a raw allocator (cudaMalloc on a device, malloc in the host
// self-tests): blocks rounded to 512 bytes; requests up to 1 MiB carved from 2 MiB
// segments, larger ones from segments of their own size rounded to 2 MiB; best fit with
// splitting, and merging of free neighbours. All work of a device runs on one stream, so
// a freed block can be reused at once: later kernels are ordered after earlier ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>

namespace ndp {

struct RawAllocator {
    virtual ~RawAllocator() = default;
    virtual void* alloc(size_t nbytes) = 0;  // nullptr when out of memory
    virtual void free(void* ptr) = 0;
    virtual void synchronize() {}            // before the cache is released on OOM
};

struct Block {
    char* ptr;
    size_t size;      // bytes held (rounded)
    size_t asked;     // bytes requested (stats)
    bool used;
    bool small;       // from the small pool
    Block* prev;      // neighbours inside the same segment
    Block* next;
};

struct AllocStats {
    int64_t buffers = 0;      // live blocks
    int64_t bytes = 0;        // live bytes as requested
    int64_t reserved = 0;     // bytes held from the raw allocator
    int64_t cached = 0;       // reserved, not in use
    int64_t segments = 0;
    int64_t peak_bytes = 0;
    int64_t raw_allocs = 0;   // calls to the raw allocator (tests: the cache is used)
};

class CachingAllocator {
  public:
    static constexpr size_t ROUND = 512;
    static constexpr size_t SMALL = size_t(1) << 20;
    static constexpr size_t SEGMENT = size_t(2) << 20;

    CachingAllocator(RawAllocator* raw, bool caching) : raw_(raw), caching_(caching) {}
    ~CachingAllocator();
    CachingAllocator(const CachingAllocator&) = delete;
    CachingAllocator& operator=(const CachingAllocator&) = delete;

    // A block of at least nbytes (nbytes 0 gives a block of ROUND); nullptr when even
    // after releasing the cache the raw allocator has no memory.
    Block* allocate(size_t nbytes);
    void release(Block* b);
    // Returns every fully free segment to the raw allocator.
    void empty_cache();
    AllocStats stats();

  private:
    using FreeSet = std::set<std::pair<size_t, Block*>>;
    Block* take(FreeSet& pool, size_t size, bool small);
    Block* grow(size_t size, bool small);
    void release_free_segments(FreeSet& pool);

    RawAllocator* raw_;
    bool caching_;
    std::mutex mu_;
    FreeSet small_free_, large_free_;
    AllocStats st_;
};

}  // namespace ndp
