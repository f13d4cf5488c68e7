// Aligned allocation with a size-bucketed cache.
//
// Sizes round up to classes 2^k * {1, 1.25, 1.5, 1.75} (at most 25% slack), so arrays of similar
// sizes reuse blocks; freed blocks wait in the cache until it holds more than
// NDPLANE_CPU_CACHE_MB (default 1024) and are returned to the system on allocation failure
// (blocks of 1 MiB and more are unmapped, see system_alloc). Reused pages are already faulted
// in, which is most of the cost of a fresh large allocation.
#include "memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace ndp {

PyTypeObject* BufferType = nullptr;

namespace {

constexpr int64_t ALIGN = 64;

std::mutex g_mutex;
std::unordered_map<int64_t, std::vector<void*>> g_cache;
int64_t g_cached = 0, g_live_buffers = 0, g_live_bytes = 0;

int64_t cache_limit() {
    static const int64_t limit = [] {
        const char* env = std::getenv("NDPLANE_CPU_CACHE_MB");
        int64_t mb = env ? std::atoll(env) : 1024;
        return (mb < 0 ? 0 : mb) << 20;
    }();
    return limit;
}

int64_t size_class(int64_t n) {
    if (n <= ALIGN) return ALIGN;
    int k = 63 - __builtin_clzll(static_cast<unsigned long long>(n - 1));  // 2^k < n <= 2^(k+1)
    int64_t step = k >= 2 ? (int64_t(1) << (k - 2)) : 1;
    int64_t c = (n + step - 1) / step * step;
    return (c + ALIGN - 1) / ALIGN * ALIGN;
}

// Blocks of 1 MiB and more are mapped from the system and unmapped when the cache does not keep
// them. NOTE: glibc's malloc would serve them from its heap as soon as one such block was freed
// (its mmap threshold rises to the largest block freed, up to 32 MiB) and keep those pages after
// free(), so a process's resident memory would follow the largest heap it ever had, not its live
// arrays: cubed's memory bound, which counts resident memory, was exceeded that way.
constexpr int64_t MAPPED = int64_t(1) << 20;

// Blocks of 4 MiB and more are 2 MiB-aligned and advised as transparent huge pages (as NumPy
// does): streaming kernels then take a TLB miss per 2 MiB, not per 4 KiB.
// NDPLANE_CPU_HUGEPAGES=0 turns this off.
constexpr int64_t HUGE = int64_t(2) << 20;
bool use_hugepages() {
    static const bool on = [] {
        const char* env = std::getenv("NDPLANE_CPU_HUGEPAGES");
        return !(env && std::strcmp(env, "0") == 0);
    }();
    return on;
}

// The bytes a mapped block of capacity `cap` spans (size classes of 1 MiB and more are multiples
// of 256 KiB, so of the page size; rounded anyway).
size_t mapped_length(int64_t cap) {
    static const int64_t page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
    return static_cast<size_t>((cap + page - 1) / page * page);
}

void* system_alloc(int64_t cap) {
    if (cap < MAPPED) return std::aligned_alloc(ALIGN, static_cast<size_t>(cap));
    const size_t len = mapped_length(cap);
    const bool huge = cap >= 2 * HUGE && use_hugepages();
    // For a 2 MiB-aligned block, map 2 MiB more and unmap what lies outside the aligned span.
    const size_t extra = huge ? static_cast<size_t>(HUGE) : 0;
    void* raw = mmap(nullptr, len + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    char* p = static_cast<char*>(raw);
    if (huge) {
        const auto addr = reinterpret_cast<uintptr_t>(p);
        char* aligned = p + ((HUGE - static_cast<int64_t>(addr % HUGE)) % HUGE);
        if (aligned > p) munmap(p, static_cast<size_t>(aligned - p));
        char* end = aligned + len;
        if (p + len + extra > end) munmap(end, static_cast<size_t>(p + len + extra - end));
        p = aligned;
#if defined(MADV_HUGEPAGE)
        madvise(p, len, MADV_HUGEPAGE);  // advice only: failure is fine
#endif
    }
    return p;
}

void system_free(void* p, int64_t cap) {
    if (cap < MAPPED)
        std::free(p);
    else
        munmap(p, mapped_length(cap));
}

void release_all_locked() {
    for (auto& [cap, blocks] : g_cache)
        for (void* p : blocks) system_free(p, cap);
    g_cache.clear();
    g_cached = 0;
}

void* take_block(int64_t cap) {
    {
        std::lock_guard<std::mutex> lk(g_mutex);
        auto it = g_cache.find(cap);
        if (it != g_cache.end() && !it->second.empty()) {
            void* p = it->second.back();
            it->second.pop_back();
            g_cached -= cap;
            return p;
        }
    }
    void* p = system_alloc(cap);
    if (!p) {
        std::lock_guard<std::mutex> lk(g_mutex);
        release_all_locked();
        p = system_alloc(cap);
    }
    if (!p) throw std::bad_alloc();
    return p;
}

void give_block(void* p, int64_t cap) {
    std::lock_guard<std::mutex> lk(g_mutex);
    if (g_cached + cap <= cache_limit()) {
        g_cache[cap].push_back(p);
        g_cached += cap;
    } else {
        system_free(p, cap);
    }
}

void buffer_dealloc(PyObject* self) {
    auto* b = reinterpret_cast<BufferObject*>(self);
    if (b->ptr) {
        if (!b->freed) mark_freed(self);
        if (b->adopted)
            PyBuffer_Release(&b->held);
        else
            give_block(b->ptr, b->capacity);
        b->ptr = nullptr;
    }
    PyTypeObject* tp = Py_TYPE(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

int buffer_getbuffer(PyObject* self, Py_buffer* view, int flags) {
    auto* b = reinterpret_cast<BufferObject*>(self);
    return PyBuffer_FillInfo(view, self, b->ptr, static_cast<Py_ssize_t>(b->nbytes), 0, flags);
}

PyObject* buffer_repr(PyObject* self) {
    auto* b = reinterpret_cast<BufferObject*>(self);
    return PyUnicode_FromFormat("<ndplane_cpu.Buffer %lld bytes at %p%s%s>", (long long)b->nbytes,
                                (void*)b->ptr, b->adopted ? " (adopted)" : "", b->freed ? " (freed)" : "");
}

PyObject* buffer_get_address(PyObject* self, void*) {
    return PyLong_FromVoidPtr(reinterpret_cast<BufferObject*>(self)->ptr);
}
PyObject* buffer_get_nbytes(PyObject* self, void*) {
    return PyLong_FromLongLong(reinterpret_cast<BufferObject*>(self)->nbytes);
}

PyGetSetDef buffer_getset[] = {
    {"address", buffer_get_address, nullptr, "Address of the first byte.", nullptr},
    {"nbytes", buffer_get_nbytes, nullptr, "Size in bytes.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

}  // namespace

PyObject* make_buffer_type(const char* module_name) {
    static std::string name = std::string(module_name) + ".Buffer";
    static PyType_Slot slots[] = {
        {Py_tp_dealloc, reinterpret_cast<void*>(buffer_dealloc)},
        {Py_tp_repr, reinterpret_cast<void*>(buffer_repr)},
        {Py_tp_getset, buffer_getset},
        {Py_tp_doc, const_cast<char*>("A block of host memory owned by the ndplane cpu backend.")},
        {Py_bf_getbuffer, reinterpret_cast<void*>(buffer_getbuffer)},
        {0, nullptr},
    };
    static PyType_Spec spec = {name.c_str(), sizeof(BufferObject), 0, Py_TPFLAGS_DEFAULT, slots};
    PyObject* t = PyType_FromSpec(&spec);
    BufferType = reinterpret_cast<PyTypeObject*>(t);
    return t;
}

PyObject* new_buffer(int64_t nbytes) {
    if (nbytes < 0) throw std::invalid_argument("alloc: nbytes must be >= 0.");
    if (nbytes > (int64_t(1) << 60)) throw std::bad_alloc();
    const int64_t cap = size_class(nbytes);
    void* p = take_block(cap);
    PyObject* obj = BufferType->tp_alloc(BufferType, 0);
    if (!obj) {
        give_block(p, cap);
        return nullptr;
    }
    auto* b = reinterpret_cast<BufferObject*>(obj);
    b->ptr = static_cast<char*>(p);
    b->nbytes = nbytes;
    b->capacity = cap;
    b->freed = false;
    b->adopted = false;
    std::lock_guard<std::mutex> lk(g_mutex);
    ++g_live_buffers;
    g_live_bytes += nbytes;
    return obj;
}

PyObject* adopt_buffer(PyObject* exporter) {
    PyObject* obj = BufferType->tp_alloc(BufferType, 0);  // zeroed: ptr null until adopted
    if (!obj) return nullptr;
    auto* b = reinterpret_cast<BufferObject*>(obj);
    if (PyObject_GetBuffer(exporter, &b->held, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) {
        Py_DECREF(obj);
        return nullptr;
    }
    b->ptr = static_cast<char*>(b->held.buf);
    b->nbytes = static_cast<int64_t>(b->held.len);
    b->capacity = 0;
    b->freed = false;
    b->adopted = true;
    if (!b->ptr) {  // NOTE: an empty exporter may hand out a null pointer; views need one
        PyBuffer_Release(&b->held);
        b->adopted = false;
        Py_DECREF(obj);
        PyErr_SetString(PyExc_ValueError, "adopt_host: the array has no memory to adopt.");
        return nullptr;
    }
    std::lock_guard<std::mutex> lk(g_mutex);
    ++g_live_buffers;
    g_live_bytes += b->nbytes;
    return obj;
}

void mark_freed(PyObject* buffer) {
    auto* b = reinterpret_cast<BufferObject*>(buffer);
    if (b->freed) return;
    b->freed = true;
    std::lock_guard<std::mutex> lk(g_mutex);
    --g_live_buffers;
    g_live_bytes -= b->nbytes;
}

MemoryStats memory_stats() {
    std::lock_guard<std::mutex> lk(g_mutex);
    return {g_live_buffers, g_live_bytes, g_cached};
}

void empty_cache() {
    std::lock_guard<std::mutex> lk(g_mutex);
    release_all_locked();
}

}  // namespace ndp
