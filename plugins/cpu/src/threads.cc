// The iteration plan and a small thread pool.
//
// The pool hands out chunks through an atomic counter and the calling thread
// takes chunks too, so a worker that wakes late (on a busy machine) only means
// fewer chunks for it, never a wait. Only one parallel region runs at a time;
// a second caller (another Python thread with the GIL released) runs serially.
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "common.h"

namespace ndp {

Plan make_plan(const View* const* views, int nops, bool reorder) {
    Plan p;
    p.nops = nops;
    const View& v0 = *views[0];
    p.size = v0.size;
    for (int k = 0; k < nops; ++k) p.base[k] = views[k]->data;
    int axes[MAXDIM];
    int nd = 0;
    for (int d = 0; d < v0.ndim; ++d)
        if (v0.shape[d] != 1) axes[nd++] = d;
    if (reorder && nd > 1) {
        // NOTE: stable, so axes of equal stride keep C order.
        std::stable_sort(axes, axes + nd, [&](int a, int b) {
            return std::llabs(v0.strides[a]) > std::llabs(v0.strides[b]);
        });
    }
    int out = 0;
    for (int i = 0; i < nd; ++i) {
        int d = axes[i];
        if (out > 0) {
            bool merge = true;
            for (int k = 0; k < nops && merge; ++k)
                merge = p.st[k][out - 1] ==
                        views[k]->strides[d] * ITEMSIZE[views[k]->dtype] * v0.shape[d];
            if (merge) {
                p.shape[out - 1] *= v0.shape[d];
                for (int k = 0; k < nops; ++k)
                    p.st[k][out - 1] = views[k]->strides[d] * ITEMSIZE[views[k]->dtype];
                continue;
            }
        }
        p.shape[out] = v0.shape[d];
        for (int k = 0; k < nops; ++k)
            p.st[k][out] = views[k]->strides[d] * ITEMSIZE[views[k]->dtype];
        ++out;
    }
    if (out == 0) {  // 0-d or all size-1 axes: one element
        p.shape[0] = 1;
        for (int k = 0; k < nops; ++k) p.st[k][0] = 0;
        out = 1;
    }
    p.nd = out;
    return p;
}

namespace {

struct Pool {
    std::mutex busy;  // held by the thread running a parallel region
    std::mutex m;
    std::condition_variable cv;
    std::vector<std::thread> workers;
    uint64_t generation = 0;
    bool stop = false;
    // The current job.
    void (*fn)(void*, int64_t, int64_t) = nullptr;
    void* ctx = nullptr;
    int64_t n = 0, chunk = 0, nchunks = 0;
    std::atomic<int64_t> next{0};
    std::atomic<int64_t> done{0};
    std::atomic<int> active{0};

    void work() {
        int64_t c;
        while ((c = next.fetch_add(1, std::memory_order_relaxed)) < nchunks) {
            int64_t b = c * chunk, e = std::min(n, b + chunk);
            fn(ctx, b, e);
            done.fetch_add(1, std::memory_order_release);
        }
    }

    void loop() {
        uint64_t seen = 0;
        for (;;) {
            {
                std::unique_lock<std::mutex> lk(m);
                cv.wait(lk, [&] { return stop || generation != seen; });
                if (stop) return;
                seen = generation;
                active.fetch_add(1, std::memory_order_acquire);
            }
            work();
            active.fetch_sub(1, std::memory_order_release);
        }
    }

    void ensure(int nthreads) {
        while ((int)workers.size() < nthreads - 1) workers.emplace_back([this] { loop(); });
    }
};

Pool* g_pool = nullptr;
std::mutex g_pool_init;
std::atomic<int> g_threads{0};

int default_threads() {
    if (const char* env = std::getenv("NDPLANE_CPU_THREADS")) {
        int n = std::atoi(env);
        if (n > 0) return n;
    }
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
    return std::max(1u, std::thread::hardware_concurrency());
}

// NOTE: threads do not survive fork(); the child starts a fresh pool and leaks
// the parent's (its mutexes may be held by threads that no longer exist).
void after_fork_child() { g_pool = nullptr; }
int register_atfork = pthread_atfork(nullptr, nullptr, after_fork_child);

Pool* pool() {
    std::lock_guard<std::mutex> lk(g_pool_init);
    if (!g_pool) g_pool = new Pool();
    return g_pool;
}

}  // namespace

int num_threads() {
    int n = g_threads.load(std::memory_order_relaxed);
    if (n == 0) {
        n = default_threads();
        g_threads.store(n, std::memory_order_relaxed);
    }
    return n;
}

void set_num_threads(int n) { g_threads.store(n < 1 ? 1 : n, std::memory_order_relaxed); }

void parallel_for(int64_t n, int64_t grain, void (*fn)(void*, int64_t, int64_t), void* ctx) {
    int nt = num_threads();
    Pool* p = pool();
    std::unique_lock<std::mutex> busy(p->busy, std::try_to_lock);
    if (!busy.owns_lock() || nt < 2 || n < 2 * grain) {
        fn(ctx, 0, n);
        return;
    }
    // A few chunks per thread balance load when a core is shared.
    int64_t nchunks = std::min<int64_t>(n / grain, int64_t(nt) * 4);
    int64_t chunk = (n + nchunks - 1) / nchunks;
    nchunks = (n + chunk - 1) / chunk;
    {
        std::lock_guard<std::mutex> lk(p->m);
        // NOTE: a worker that woke late for the previous job may still be in work();
        // workers only enter under `m`, so once none is active none reads the fields.
        while (p->active.load(std::memory_order_acquire) != 0) std::this_thread::yield();
        p->ensure(nt);
        p->fn = fn;
        p->ctx = ctx;
        p->n = n;
        p->chunk = chunk;
        p->nchunks = nchunks;
        p->done.store(0);
        p->next.store(0);
        ++p->generation;
    }
    p->cv.notify_all();
    p->work();
    while (p->done.load(std::memory_order_acquire) < nchunks) std::this_thread::yield();
}

}  // namespace ndp
