#include "alloc.h"

namespace ndp {

CachingAllocator::~CachingAllocator() {
    // NOTE: live blocks are not ours to free; a backend lives as long as the process.
    empty_cache();
}

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

Block* CachingAllocator::take(FreeSet& pool, size_t size, bool small) {
    auto it = pool.lower_bound({size, nullptr});
    if (it == pool.end()) return nullptr;
    Block* b = it->second;
    pool.erase(it);
    // Split when the remainder is worth keeping: any remainder in the small pool, more than
    // a small request's worth in the large one (as PyTorch's allocator does).
    const size_t rest = b->size - size;
    if ((small && rest >= ROUND) || (!small && rest > SMALL)) {
        auto* r = new Block{b->ptr + size, rest, 0, false, small, b, b->next};
        if (b->next) b->next->prev = r;
        b->next = r;
        b->size = size;
        pool.insert({r->size, r});
    }
    return b;
}

Block* CachingAllocator::grow(size_t size, bool small) {
    const size_t seg = small ? SEGMENT : round_up(size, SEGMENT);
    void* p = raw_->alloc(seg);
    if (!p) return nullptr;
    ++st_.raw_allocs;
    ++st_.segments;
    st_.reserved += static_cast<int64_t>(seg);
    auto* b = new Block{static_cast<char*>(p), seg, 0, false, small, nullptr, nullptr};
    (small ? small_free_ : large_free_).insert({seg, b});
    return b;
}

Block* CachingAllocator::allocate(size_t nbytes) {
    std::lock_guard<std::mutex> lock(mu_);
    const size_t size = round_up(nbytes ? nbytes : 1, ROUND);
    const bool small = size <= SMALL;
    FreeSet& pool = small ? small_free_ : large_free_;
    Block* b = take(pool, size, small);
    if (!b) {
        if (!grow(size, small)) {
            // Out of memory: wait for pending work, give the cache back, try once more.
            raw_->synchronize();
            release_free_segments(small_free_);
            release_free_segments(large_free_);
            if (!grow(size, small)) return nullptr;
        }
        b = take(pool, size, small);
    }
    b->used = true;
    b->asked = nbytes;
    ++st_.buffers;
    st_.bytes += static_cast<int64_t>(nbytes);
    if (st_.bytes > st_.peak_bytes) st_.peak_bytes = st_.bytes;
    return b;
}

void CachingAllocator::release(Block* b) {
    std::lock_guard<std::mutex> lock(mu_);
    FreeSet& pool = b->small ? small_free_ : large_free_;
    b->used = false;
    --st_.buffers;
    st_.bytes -= static_cast<int64_t>(b->asked);
    // Merge with free neighbours of the same segment.
    if (b->prev && !b->prev->used) {
        Block* p = b->prev;
        pool.erase({p->size, p});
        p->size += b->size;
        p->next = b->next;
        if (b->next) b->next->prev = p;
        delete b;
        b = p;
    }
    if (b->next && !b->next->used) {
        Block* n = b->next;
        pool.erase({n->size, n});
        b->size += n->size;
        b->next = n->next;
        if (n->next) n->next->prev = b;
        delete n;
    }
    pool.insert({b->size, b});
    if (!caching_ && !b->prev && !b->next) {
        pool.erase({b->size, b});
        raw_->free(b->ptr);
        --st_.segments;
        st_.reserved -= static_cast<int64_t>(b->size);
        delete b;
    }
}

void CachingAllocator::release_free_segments(FreeSet& pool) {
    for (auto it = pool.begin(); it != pool.end();) {
        Block* b = it->second;
        if (!b->prev && !b->next) {  // a whole segment
            raw_->free(b->ptr);
            --st_.segments;
            st_.reserved -= static_cast<int64_t>(b->size);
            delete b;
            it = pool.erase(it);
        } else {
            ++it;
        }
    }
}

void CachingAllocator::empty_cache() {
    std::lock_guard<std::mutex> lock(mu_);
    release_free_segments(small_free_);
    release_free_segments(large_free_);
}

AllocStats CachingAllocator::stats() {
    std::lock_guard<std::mutex> lock(mu_);
    AllocStats s = st_;
    s.cached = 0;
    for (auto& [size, b] : small_free_) s.cached += static_cast<int64_t>(size);
    for (auto& [size, b] : large_free_) s.cached += static_cast<int64_t>(size);
    return s;
}

}  // namespace ndp
