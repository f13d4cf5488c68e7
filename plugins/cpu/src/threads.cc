// The iteration plan and a small thread pool.
//
// A region uses one thread per grain of work, up to the thread count (the grain is the
// caller's: elementwise ops scale it by their cost per element, see driver.cc). The pool
// hands out chunks through an atomic ticket and the calling thread takes chunks too, so a
// worker that wakes late (on a busy machine) only means fewer chunks for it, never a wait;
// the caller waits only for chunks a worker has started. The caller rings only the workers
// the region needs, each on its own cache line. Idle workers poll their line for
// NDPLANE_CPU_SPIN_US (200) microseconds before sleeping. Only one parallel region runs at
// a time; a second caller (another Python thread with the GIL released) runs serially.
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
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

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

using Clock = std::chrono::steady_clock;

// The most threads one parallel region uses, and the most chunks it is cut into: one long
// chunk and two short ones per thread (see split).
constexpr int64_t MAX_THREADS = 128;
constexpr int64_t MAX_CHUNKS = 3 * MAX_THREADS;

// Microseconds a worker polls for the next job before sleeping on the condition
// variable: back-to-back kernels (a Python loop) then start without a futex wake-up.
int64_t spin_us() {
    const char* env = std::getenv("NDPLANE_CPU_SPIN_US");
    return env ? std::max(0, std::atoi(env)) : 200;
}

// A worker's doorbell, on a cache line of its own: the caller rings only the workers a job
// needs, so the others keep polling their own line and never touch the job's.
struct alignas(64) Slot {
    std::atomic<uint64_t> gen{0};     // the last job this worker was asked to help with
    std::atomic<int> sleeping{0};
    std::mutex m;                     // the sleep/wake handshake only
    std::condition_variable cv;
};

struct Pool {
    std::mutex busy;  // held by the thread running a parallel region
    std::mutex grow;  // thread creation only
    Slot slots[MAX_THREADS - 1];
    std::vector<std::thread> workers;
    const int64_t spin = spin_us();
    // The current job. NOTE: no lock on the hot path: the caller stores the fields, then the
    // ticket (release), then rings the slots; a worker loads its slot's gen (acquire), then the
    // fields, and claims chunks through the ticket (generation << 32 | chunk count << 16 | next
    // chunk); chunk c is [bounds[c], bounds[c + 1]), the bounds on the caller's stack (alive
    // while a chunk is unclaimed, as ctx is).
    // The claim checks the count held in the ticket itself, never the worker's copy of the
    // fields: a claim that succeeds proves that job unfinished, hence not yet replaced, hence
    // the fields the worker read (after its acquire of gen) are that job's. A worker that read
    // a later job's fields (or a mix) fails it: that job's ticket has no chunk left.
    std::atomic<void (*)(void*, int64_t, int64_t)> fn{nullptr};
    std::atomic<void*> ctx{nullptr};
    std::atomic<const int64_t*> bounds{nullptr};
    uint64_t gen = 0;  // the caller's count of jobs (under busy)
    alignas(64) std::atomic<uint64_t> ticket{0};
    alignas(64) std::atomic<int64_t> done{0};

    struct Job {
        void (*fn)(void*, int64_t, int64_t);
        void* ctx;
        const int64_t* bounds;
        uint64_t gen;
    };

    Job snapshot(uint64_t g) const {
        return Job{fn.load(std::memory_order_relaxed), ctx.load(std::memory_order_relaxed),
                   bounds.load(std::memory_order_relaxed), g};
    }

    // Claims and runs chunks of job j until none is left (or the job is gone).
    void work(const Job& j) {
        uint64_t t = ticket.load(std::memory_order_acquire);
        int64_t ran = 0;
        for (;;) {
            if ((t >> 32) != (j.gen & 0xffffffffu) || (t & 0xffffu) >= ((t >> 16) & 0xffffu)) break;
            if (!ticket.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel)) continue;
            const int64_t c = int64_t(t & 0xffffu);
            j.fn(j.ctx, j.bounds[c], j.bounds[c + 1]);
            ++ran;
            t = ticket.load(std::memory_order_acquire);
        }
        // NOTE: one increment per thread, not per chunk: every atomic here moves a cache line.
        if (ran) done.fetch_add(ran, std::memory_order_release);
    }

    void loop(Slot& s) {
        uint64_t seen = 0;
        for (;;) {
            // Poll first, then sleep.
            const auto until = Clock::now() + std::chrono::microseconds(spin);
            uint64_t g;
            for (int i = 0; (g = s.gen.load(std::memory_order_acquire)) == seen; ++i) {
                if ((i & 63) == 63 && Clock::now() > until) break;
                cpu_relax();
            }
            if (g == seen) {
                std::unique_lock<std::mutex> lk(s.m);
                s.sleeping.store(1);
                s.cv.wait(lk, [&] { return s.gen.load() != seen; });
                s.sleeping.store(0);
                g = s.gen.load(std::memory_order_acquire);
            }
            seen = g;
            work(snapshot(g));
        }
    }

    // Publishes a job of nchunks chunks and rings the first `helpers` workers.
    void publish(void (*f)(void*, int64_t, int64_t), void* c, const int64_t* bounds_, int64_t nchunks,
                 uint64_t g, int helpers) {  // fmt: skip
        fn.store(f, std::memory_order_relaxed);
        ctx.store(c, std::memory_order_relaxed);
        bounds.store(bounds_, std::memory_order_relaxed);
        done.store(0, std::memory_order_relaxed);
        ticket.store((g & 0xffffffffu) << 32 | uint64_t(nchunks) << 16, std::memory_order_release);
        for (int i = 0; i < helpers; ++i) {
            Slot& s = slots[i];
            // NOTE: a worker going to sleep sets sleeping, then re-checks gen under m; the
            // caller stores gen, then checks sleeping. Both seq_cst: one of them sees the other.
            s.gen.store(g);
            if (s.sleeping.load()) {
                { std::lock_guard<std::mutex> lk(s.m); }
                s.cv.notify_one();
            }
        }
    }

    void ensure(int helpers) {
        if ((int)workers.size() >= helpers) return;
        std::lock_guard<std::mutex> lk(grow);
        while ((int)workers.size() < helpers) {
            Slot* s = &slots[workers.size()];
            workers.emplace_back([this, s] { loop(*s); });
        }
    }
};

Pool* g_pool = nullptr;
std::mutex g_pool_init;
std::atomic<int> g_threads{0};

// NDPLANE_CPU_THREADS, else OMP_NUM_THREADS (as PyTorch: dask's worker processes, for one, start
// with OMP_NUM_THREADS=1 because they run a task per core already), else the cores this process
// may run on.
int default_threads() {
    for (const char* name : {"NDPLANE_CPU_THREADS", "OMP_NUM_THREADS"}) {
        if (const char* env = std::getenv(name)) {
            int n = std::atoi(env);
            if (n > 0) return n;
        }
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

// The chunk bounds of a parallel region over [0, n) on p threads (bounds[0] = 0; returns the
// chunk count). Each thread first gets one long chunk, 7/8 of its share, so it streams through
// memory without jumps; the last eighth is cut into two short chunks per thread, which balance a
// thread that started late or ran slow. With equal threads every one ends at n / p: the short
// chunks are a sixteenth of a share, never a grain (tail chunks of a grain each, as before,
// left threads of a 10^6-element add on 16 threads running 1.8x the even share). Sizes are
// multiples of 64 items when the grain allows: element ranges then start on a cache line (a
// chunk starting mid-line splits every vector load of it across two lines). A share under
// four grains is one chunk per thread, the p chunks as even as the alignment allows (the
// remainder once went whole to the last chunk: 15 row blocks of a column sum on 8 threads were
// cut 1+1+1+1+1+1+1+1+7, and the region lasted 7 blocks instead of 2). NOTE: four fixed chunks
// per thread, interleaved between the threads, measured 2-5 % slower on 1000^2 add/mul;
// unaligned long chunks 8 %.
static int64_t split(int64_t n, int64_t grain, int64_t p, int64_t* bounds) {
    const int64_t q = grain >= 64 ? 64 : 1;
    auto up = [q](int64_t v) { return (v + q - 1) / q * q; };
    const int64_t share = n / p;
    int64_t nchunks = 0, pos = 0;
    bounds[0] = 0;
    if (share < 4 * grain) {
        for (int64_t t = 1; t < p; ++t) {
            const int64_t b = up(n / p * t + n % p * t / p);  // n t / p without overflow
            if (b > pos && b < n) bounds[++nchunks] = pos = b;
        }
        bounds[++nchunks] = n;
        return nchunks;
    }
    const int64_t lead = up(share * 7 / 8);
    for (int64_t t = 0; t < p && pos + lead < n; ++t) bounds[++nchunks] = pos += lead;
    const int64_t pieces = 2 * p, piece = up((n - pos + pieces - 1) / pieces);
    for (int64_t t = 0; t < pieces && pos + piece < n; ++t) bounds[++nchunks] = pos += piece;
    bounds[++nchunks] = n;  // pos < n here: every step above stopped short of n
    return nchunks;
}

// The threads a region uses: they follow the work, one per grain, up to the thread count.
int64_t region_threads(int64_t n, int64_t grain, int threads) {
    return std::min<int64_t>({threads, n / std::max<int64_t>(grain, 1), MAX_THREADS});
}

std::vector<int64_t> chunk_bounds(int64_t n, int64_t grain, int threads) {
    const int64_t p = region_threads(n, grain, threads);
    if (p < 2) return {0, n};
    int64_t bounds[MAX_CHUNKS + 1];
    const int64_t nchunks = split(n, grain, p, bounds);
    return std::vector<int64_t>(bounds, bounds + nchunks + 1);
}

void parallel_for(int64_t n, int64_t grain, void (*fn)(void*, int64_t, int64_t), void* ctx) {
    const int64_t p = region_threads(n, grain, num_threads());
    if (p < 2) {
        fn(ctx, 0, n);
        return;
    }
    Pool* pl = pool();
    std::unique_lock<std::mutex> busy(pl->busy, std::try_to_lock);
    if (!busy.owns_lock()) {
        fn(ctx, 0, n);
        return;
    }
    int64_t bounds[MAX_CHUNKS + 1];
    const int64_t nchunks = split(n, grain, p, bounds);
    const int helpers = int(std::min<int64_t>(p, nchunks) - 1);
    pl->ensure(helpers);
    const uint64_t g = ++pl->gen;
    pl->publish(fn, ctx, bounds, nchunks, g, helpers);
    const Pool::Job j{fn, ctx, bounds, g};
    pl->work(j);
    for (int i = 0; pl->done.load(std::memory_order_acquire) < nchunks; ++i) {
        if (i < 4096) cpu_relax();
        else std::this_thread::yield();
    }
}

}  // namespace ndp
