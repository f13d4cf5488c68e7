// Host buffers: 64-byte aligned blocks with a size-bucketed cache, handed to
// Python as `Buffer` objects (which export the buffer protocol, so NumPy can
// view them without a copy); or another object's memory, adopted without a copy.
#pragma once

#include <Python.h>

#include <cstdint>

namespace ndp {

struct BufferObject {
    PyObject_HEAD
    char* ptr;
    int64_t nbytes;    // what was asked for
    int64_t capacity;  // the size class actually held
    bool freed;        // Backend.free() was called: kernels refuse it; memory lives until dealloc
    bool adopted;      // ptr is `held`'s memory (adopt_buffer), released at dealloc
    Py_buffer held;
};

extern PyTypeObject* BufferType;

// Creates the Buffer type; returns it (a new reference) or nullptr with an exception set.
PyObject* make_buffer_type(const char* module_name);
// A new Buffer of nbytes; throws std::bad_alloc when the memory cannot be had.
PyObject* new_buffer(int64_t nbytes);
// A Buffer over the memory of `exporter` (a writable, C-contiguous buffer-protocol object),
// which it keeps alive until the Buffer dies; nullptr with a Python exception set on failure.
PyObject* adopt_buffer(PyObject* exporter);
void mark_freed(PyObject* buffer);

struct MemoryStats {
    int64_t buffers, bytes, cached_bytes;
};
MemoryStats memory_stats();
void empty_cache();

}  // namespace ndp
