// The Python module ndplane_cuda._native: parses Refs, checks every layout against its
// buffer before any kernel runs, converts scalars and calls the launchers on the device's
// stream. Kernels are asynchronous; to_host and synchronize wait.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "kernels.h"
#include "philox.h"
#include "runtime.h"

namespace nb = nanobind;

namespace ndp {
namespace {

// ---------------------------------------------------------------------------
// Buffers: device memory from the caching allocator
// ---------------------------------------------------------------------------
struct Buffer {
    int device;
    Block* block;  // from the caching allocator; nullptr for memory imported through DLPack
    int64_t nbytes;
    bool freed = false;
    char* external = nullptr;  // imported memory: element 0 of the producer's tensor,
    nb::ndarray<> imported;    // which this holds (the producer frees it when released)
    char* ptr() const { return block ? block->ptr : external; }
    ~Buffer();
};

// NOTE: plain pointers, kept alive for the process: a static nb::object would decref after
// the interpreter is gone.
PyObject* g_oom = nullptr;          // ndplane.OutOfMemoryError
PyObject* g_dtypes[NDT] = {};       // the dtype singletons, in code order
bool g_finalizing = false;

[[noreturn]] void raise_oom(int device, int64_t nbytes) {
    std::string msg = "cuda:" + std::to_string(device) + ": out of memory allocating " + std::to_string(nbytes) +
                      " bytes (cached blocks were released and the allocation retried)";
    PyErr_SetString(g_oom ? g_oom : PyExc_MemoryError, msg.c_str());
    throw nb::python_error();
}

Buffer* new_buffer(int device, int64_t nbytes) {
    if (nbytes < 0) throw std::invalid_argument("alloc: nbytes must be >= 0.");
    DeviceState& d = ndp::device(device);
    Block* b = d.allocator->allocate(static_cast<size_t>(nbytes));
    if (!b) raise_oom(device, nbytes);
    return new Buffer{device, b, nbytes};
}

void free_buffer(Buffer& b) {
    if (b.freed) return;
    b.freed = true;
    if (g_finalizing) return;  // the runtime may be gone; the process is ending
    if (!b.block) {
        b.imported = nb::ndarray<>();  // the producer's deleter runs (the GIL is held: from Python)
        return;
    }
    DeviceState& d = ndp::device(b.device);
    d.allocator->release(b.block);
}

// The core frees every buffer exactly once; a Buffer dropped without that still returns
// its block (never throwing from a destructor).
Buffer::~Buffer() {
    try {
        free_buffer(*this);
    } catch (...) {
    }
}

int dtype_code(nb::handle dt) {
    for (int i = 0; i < NDT; ++i)
        if (g_dtypes[i] && g_dtypes[i] == dt.ptr()) return i;
    std::string name = nb::cast<std::string>(dt.attr("name"));
    for (int i = 0; i < NDT; ++i)
        if (name == DT_NAME[i]) return i;
    throw type_error("ndplane_cuda: unsupported dtype '" + name + "' in a Ref.");
}

// A Ref parsed and checked: the layout stays inside the buffer, the buffer is ours.
struct Parsed {
    View v;
    Buffer* buf;
};

Parsed parse(nb::handle ref, const char* what) {
    nb::handle buffer = ref.attr("buffer");
    if (!nb::isinstance<Buffer>(buffer))
        throw type_error(std::string(what) + ": the Ref's buffer does not belong to the cuda backend.");
    Parsed p;
    p.buf = nb::inst_ptr<Buffer>(buffer);
    if (p.buf->freed) throw std::invalid_argument(std::string(what) + ": the Ref's buffer was freed.");
    View& v = p.v;
    v.dtype = dtype_code(ref.attr("dtype"));
    nb::tuple shape = nb::cast<nb::tuple>(ref.attr("shape"));
    nb::tuple strides = nb::cast<nb::tuple>(ref.attr("strides"));
    const int64_t offset = nb::cast<int64_t>(ref.attr("offset"));
    if (shape.size() > 64 || strides.size() != shape.size())
        throw std::invalid_argument(std::string(what) + ": a Ref's strides must match its shape (at most 64 axes).");
    v.ndim = static_cast<int>(shape.size());
    v.size = 1;
    __int128 lo = offset, hi = offset;
    for (int d = 0; d < v.ndim; ++d) {
        const int64_t n = nb::cast<int64_t>(shape[d]), s = nb::cast<int64_t>(strides[d]);
        if (n < 0) throw std::invalid_argument(std::string(what) + ": negative dimension in a Ref.");
        if (__builtin_mul_overflow(v.size, n, &v.size))
            throw std::invalid_argument(std::string(what) + ": a Ref's size overflows.");
        v.shape[d] = n;
        v.strides[d] = s;
        if (n > 0) {
            const __int128 ext = static_cast<__int128>(n - 1) * s;
            (ext < 0 ? lo : hi) += ext;
        }
    }
    const int64_t isz = ITEMSIZE[v.dtype];
    if (v.size > 0 && (lo < 0 || (hi + 1) * isz > p.buf->nbytes))
        throw std::invalid_argument(std::string(what) + ": the Ref reaches outside its buffer.");
    v.data = p.buf->ptr() + (v.size > 0 ? offset * isz : 0);
    return p;
}

bool is_ref(nb::handle o) { return nb::hasattr(o, "buffer") && !PyNumber_Check(o.ptr()); }

// ---------------------------------------------------------------------------
// Python scalars, converted to a dtype's bytes (the core has already chosen the dtype)
// ---------------------------------------------------------------------------
template <class T> void put(Scalar& s, T v) { std::memcpy(s.bytes, &v, sizeof(T)); }

Scalar to_scalar(nb::handle o, int dtype) {
    Scalar s{};
    PyObject* p = o.ptr();
    if (dtype >= C64) {
        Py_complex c = PyComplex_AsCComplex(p);
        if (c.real == -1.0 && PyErr_Occurred()) throw nb::python_error();
        if (dtype == C64) {
            float f[2] = {static_cast<float>(c.real), static_cast<float>(c.imag)};
            std::memcpy(s.bytes, f, sizeof f);
        } else {
            double f[2] = {c.real, c.imag};
            std::memcpy(s.bytes, f, sizeof f);
        }
        return s;
    }
    if (dtype >= F16) {
        const double v = PyFloat_AsDouble(p);
        if (v == -1.0 && PyErr_Occurred()) throw nb::python_error();
        if (dtype == F16) put(s, static_cast<_Float16>(v));
        else if (dtype == F32) put(s, static_cast<float>(v));
        else put(s, v);
        return s;
    }
    if (dtype == BOOL) {
        const int t = PyObject_IsTrue(p);
        if (t < 0) throw nb::python_error();
        put(s, static_cast<bool>(t));
        return s;
    }
    nb::object idx = nb::steal(PyNumber_Index(p));
    if (!idx.is_valid()) throw nb::python_error();
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(idx.ptr(), &overflow);
    uint64_t u = static_cast<uint64_t>(v);
    if (overflow > 0) {
        u = PyLong_AsUnsignedLongLongMask(idx.ptr());
    } else if (overflow < 0) {
        throw std::overflow_error("ndplane_cuda: Python int out of range of the dtype.");
    }
    switch (dtype) {
        case I8: put(s, static_cast<int8_t>(u)); break;
        case I16: put(s, static_cast<int16_t>(u)); break;
        case I32: put(s, static_cast<int32_t>(u)); break;
        case I64: put(s, static_cast<int64_t>(u)); break;
        case U8: put(s, static_cast<uint8_t>(u)); break;
        case U16: put(s, static_cast<uint16_t>(u)); break;
        case U32: put(s, static_cast<uint32_t>(u)); break;
        default: put(s, u); break;
    }
    return s;
}

// ---------------------------------------------------------------------------
// Elementwise launches
// ---------------------------------------------------------------------------
struct EwCall {
    Launch fn;
    char* out;
    In in[MAXARGS - 1];
    int nin;
    int isz[MAXARGS];
    Stream stream;
};

void ew_one(const Plan& p, const int64_t* base, void* ctx) {
    auto* c = static_cast<EwCall*>(ctx);
    In in[MAXARGS - 1];
    for (int k = 0; k < c->nin; ++k) {
        in[k] = c->in[k];
        if (in[k].ptr) in[k].ptr += base[k + 1] * c->isz[k + 1];
    }
    c->fn(p, c->out + base[0] * c->isz[0], in, c->stream);
}

// Runs fn over out's shape: operands are Views of out's shape or scalars (nullptr view).
void run_elementwise(DeviceState& d, Launch fn, const View& out, const View* const* ins, const Scalar* scalars,
                     int nin, const char* what) {
    if (!fn) throw std::invalid_argument(std::string(what) + ": no kernel for this dtype.");
    if (out.size == 0) return;
    const int64_t* strides[MAXARGS] = {out.strides};
    EwCall c{fn, out.data, {}, nin, {ITEMSIZE[out.dtype]}, d.stream};
    for (int k = 0; k < nin; ++k) {
        const View* v = ins[k];
        if (v) {
            if (v->ndim != out.ndim) throw std::invalid_argument(std::string(what) + ": operand ranks differ from out's.");
            for (int ax = 0; ax < out.ndim; ++ax)
                if (v->shape[ax] != out.shape[ax])
                    throw std::invalid_argument(std::string(what) + ": operand shapes differ from out's.");
            strides[k + 1] = v->strides;
            c.in[k].ptr = v->data;
            c.isz[k + 1] = ITEMSIZE[v->dtype];
        } else {
            // NOTE: a scalar is read at no offset, so it takes out's strides: it then merges
            // like out and leaves a contiguous launch contiguous (zero strides made every
            // `maximum(x, 0.0)` take the strided kernel: 74 % of copy bandwidth on an H100).
            strides[k + 1] = out.strides;
            c.in[k].ptr = nullptr;
            c.in[k].scalar = scalars[k];
            c.isz[k + 1] = 0;
        }
    }
    Merged m = coalesce(out.ndim, out.shape, nin + 1, strides);
    split(m, &ew_one, &c);
    check_launch(d, what);
}


// ---------------------------------------------------------------------------
// entry points
// ---------------------------------------------------------------------------
nb::object py_alloc(int device, int64_t nbytes) {
    return nb::cast(new_buffer(device, nbytes), nb::rv_policy::take_ownership);
}

void py_free(Buffer& b) { free_buffer(b); }

nb::object py_from_host(int device, nb::handle array) {
    // A C-contiguous NumPy array: its buffer protocol gives the bytes.
    Py_buffer view;
    if (PyObject_GetBuffer(array.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0) throw nb::python_error();
    Buffer* b = nullptr;
    try {
        b = new_buffer(device, view.len);
        DeviceState& d = ndp::device(device);
        if (view.len) check(d, cudaMemcpyAsync(b->ptr(), view.buf, static_cast<size_t>(view.len), cudaMemcpyHostToDevice, d.stream),
                            "from_host");
    } catch (...) {
        PyBuffer_Release(&view);
        if (b) {
            free_buffer(*b);
            delete b;
        }
        throw;
    }
    PyBuffer_Release(&view);
    return nb::cast(b, nb::rv_policy::take_ownership);
}

void py_copy(nb::handle src, nb::handle dst);

// to_host(ref, address, nbytes): the values of ref (any layout) into C-contiguous host memory.
void py_to_host(nb::handle ref, uintptr_t address, int64_t nbytes) {
    Parsed p = parse(ref, "to_host");
    const View& v = p.v;
    if (nbytes != v.size * ITEMSIZE[v.dtype]) throw std::invalid_argument("to_host: the host buffer has the wrong size.");
    DeviceState& d = ndp::device(p.buf->device);
    if (v.size == 0) return;
    Merged m;
    const int64_t* st[1] = {v.strides};
    m = coalesce(v.ndim, v.shape, 1, st);
    const bool dense = m.ndim == 0 || (m.ndim == 1 && m.strides[0][0] == 1);
    if (dense) {
        check(d, cudaMemcpyAsync(reinterpret_cast<void*>(address), v.data, static_cast<size_t>(nbytes), cudaMemcpyDeviceToHost, d.stream),
              "to_host");
    } else {
        Block* tmp = d.allocator->allocate(static_cast<size_t>(nbytes));
        if (!tmp) raise_oom(d.index, nbytes);
        View t = v;
        t.data = tmp->ptr;
        int64_t s = 1;
        for (int ax = v.ndim - 1; ax >= 0; --ax) {
            t.strides[ax] = s;
            s *= v.shape[ax];
        }
        const View* ins[1] = {&v};
        try {
            run_elementwise(d, tables().copy[log2_itemsize(v.dtype)], t, ins, nullptr, 1, "to_host");
            check(d, cudaMemcpyAsync(reinterpret_cast<void*>(address), tmp->ptr, static_cast<size_t>(nbytes), cudaMemcpyDeviceToHost, d.stream),
                  "to_host");
        } catch (...) {
            d.allocator->release(tmp);
            throw;
        }
        d.allocator->release(tmp);  // stream-ordered: the copy above finishes first
    }
    nb::gil_scoped_release release;
    check(d, cudaStreamSynchronize(d.stream), "to_host");
}

void py_copy(nb::handle src, nb::handle dst) {
    Parsed s = parse(src, "copy"), o = parse(dst, "copy");
    if (s.v.dtype != o.v.dtype) throw std::invalid_argument("copy: dtypes differ.");
    if (s.buf->device != o.buf->device) throw std::invalid_argument("copy: the Refs are on different devices.");
    DeviceState& d = ndp::device(o.buf->device);
    const View* ins[1] = {&s.v};
    run_elementwise(d, tables().copy[log2_itemsize(o.v.dtype)], o.v, ins, nullptr, 1, "copy");
}

void py_fill(nb::handle dst, nb::handle value) {
    Parsed o = parse(dst, "fill");
    DeviceState& d = ndp::device(o.buf->device);
    Scalar s = to_scalar(value, o.v.dtype);
    const View* ins[1] = {nullptr};
    run_elementwise(d, tables().fill[log2_itemsize(o.v.dtype)], o.v, ins, &s, 1, "fill");
}

int lookup(const char* const* names, int n, const std::string& op, const char* kind) {
    for (int i = 0; i < n; ++i)
        if (op == names[i]) return i;
    throw std::invalid_argument(std::string(kind) + ": unknown op '" + op + "'.");
}

void py_unary(const std::string& op, nb::handle x, nb::handle out) {
    const int code = lookup(UNARY_NAMES, NUNARY, op, "unary");
    Parsed px = parse(x, "unary"), po = parse(out, "unary");
    const Tables& t = tables();
    if (t.unary_out[code][px.v.dtype] != po.v.dtype)
        throw std::invalid_argument("unary " + op + ": no kernel from " + DT_NAME[px.v.dtype] + " to " + DT_NAME[po.v.dtype] + ".");
    DeviceState& d = ndp::device(po.buf->device);
    const View* ins[1] = {&px.v};
    run_elementwise(d, t.unary[code][px.v.dtype], po.v, ins, nullptr, 1, "unary");
}

void py_binary(const std::string& op, nb::handle a, nb::handle b, nb::handle out) {
    const int code = lookup(BINARY_NAMES, NBINARY, op, "binary");
    Parsed po = parse(out, "binary");
    Parsed pa{}, pb{};
    const bool ra = is_ref(a), rb = is_ref(b);
    if (ra) pa = parse(a, "binary");
    if (rb) pb = parse(b, "binary");
    if (!ra && !rb) throw std::invalid_argument("binary: at least one operand must be a Ref.");
    const int dt = ra ? pa.v.dtype : pb.v.dtype;
    if (ra && rb && pa.v.dtype != pb.v.dtype) throw std::invalid_argument("binary: operand dtypes differ.");
    const Tables& t = tables();
    if (t.binary_out[code][dt] != po.v.dtype)
        throw std::invalid_argument("binary " + op + ": no kernel from " + DT_NAME[dt] + " to " + DT_NAME[po.v.dtype] + ".");
    Scalar sc[2]{};
    if (!ra) sc[0] = to_scalar(a, dt);
    if (!rb) sc[1] = to_scalar(b, dt);
    DeviceState& d = ndp::device(po.buf->device);
    const View* ins[2] = {ra ? &pa.v : nullptr, rb ? &pb.v : nullptr};
    run_elementwise(d, t.binary[code][dt], po.v, ins, sc, 2, "binary");
}

void py_where(nb::handle cond, nb::handle a, nb::handle b, nb::handle out) {
    Parsed pc = parse(cond, "where"), pa = parse(a, "where"), pb = parse(b, "where"), po = parse(out, "where");
    if (pc.v.dtype != BOOL) throw std::invalid_argument("where: cond must be bool.");
    if (pa.v.dtype != po.v.dtype || pb.v.dtype != po.v.dtype) throw std::invalid_argument("where: dtypes differ.");
    DeviceState& d = ndp::device(po.buf->device);
    const View* ins[3] = {&pc.v, &pa.v, &pb.v};
    run_elementwise(d, tables().where[log2_itemsize(po.v.dtype)], po.v, ins, nullptr, 3, "where");
}

void py_cast(nb::handle x, nb::handle out) {
    Parsed px = parse(x, "cast"), po = parse(out, "cast");
    DeviceState& d = ndp::device(po.buf->device);
    const View* ins[1] = {&px.v};
    run_elementwise(d, tables().cast[px.v.dtype][po.v.dtype], po.v, ins, nullptr, 1, "cast");
}

Rows as_rows(const View& v, const char* what) {
    if (v.ndim != 2) throw std::invalid_argument(std::string(what) + ": x must be 2-D (M, K).");
    return {v.data, v.shape[0], v.shape[1], v.strides[0], v.strides[1]};
}

// Scratch for one launcher call, from the device's caching allocator (see kernels.h); its
// blocks go back to the cache when the call returns, ordered by the device's one stream.
struct DeviceScratch final : Scratch {
    DeviceState& d;
    std::vector<Block*> blocks;
    explicit DeviceScratch(DeviceState& dev) : d(dev) {}
    ~DeviceScratch() override {
        for (Block* b : blocks) d.allocator->release(b);
    }
    void* get(size_t nbytes) override {
        Block* b = d.allocator->allocate(nbytes);
        if (!b) raise_oom(d.index, static_cast<int64_t>(nbytes));
        return keep(b)->ptr;
    }
    Block* keep(Block* b) {  // a block allocated elsewhere (cast_to_temp), released with the rest
        blocks.push_back(b);
        return b;
    }
};

// A C-contiguous copy of x converted to `dtype` in a temporary block (released by the caller).
Block* cast_to_temp(DeviceState& d, const View& x, int dtype, View& t) {
    const int64_t nbytes = x.size * ITEMSIZE[dtype];
    Block* tmp = d.allocator->allocate(static_cast<size_t>(nbytes));
    if (!tmp) raise_oom(d.index, nbytes);
    t = x;
    t.dtype = dtype;
    t.data = tmp->ptr;
    int64_t s = 1;
    for (int ax = x.ndim - 1; ax >= 0; --ax) {
        t.strides[ax] = s;
        s *= x.shape[ax];
    }
    const View* ins[1] = {&x};
    try {
        run_elementwise(d, tables().cast[x.dtype][dtype], t, ins, nullptr, 1, "reduce");
    } catch (...) {
        d.allocator->release(tmp);
        throw;
    }
    return tmp;
}

void py_reduce(const std::string& op, nb::handle x, nb::handle out) {
    const int code = lookup(REDUCE_NAMES, NREDUCE, op, "reduce");
    Parsed px = parse(x, "reduce"), po = parse(out, "reduce");
    if (po.v.ndim != 1 || px.v.ndim != 2 || po.v.shape[0] != px.v.shape[0] || (po.v.strides[0] != 1 && po.v.shape[0] > 1))
        throw std::invalid_argument("reduce: x must be (M, K) and out a contiguous (M,).");
    if (px.v.shape[1] == 0 && code >= R_MAX && code <= R_ARGMIN)
        throw std::invalid_argument("reduce " + op + ": a row of length 0 has no " + op + ".");
    DeviceState& d = ndp::device(po.buf->device);
    if (po.v.size == 0) return;
    const int in_dt = px.v.dtype, out_dt = po.v.dtype;
    DeviceScratch temps(d);
    if (reduce_ok(code, in_dt, out_dt)) {
        launch_reduce(code, in_dt, out_dt, as_rows(px.v, "reduce"), po.v.data, temps, d.stream);
    } else if ((code == R_SUM || code == R_PROD) && reduce_ok(code, out_dt, out_dt)) {
        View t;
        temps.keep(cast_to_temp(d, px.v, out_dt, t));
        launch_reduce(code, out_dt, out_dt, as_rows(t, "reduce"), po.v.data, temps, d.stream);
    } else {
        throw std::invalid_argument("reduce " + op + ": no kernel from " + DT_NAME[in_dt] + " to " + DT_NAME[out_dt] + ".");
    }
    check_launch(d, "reduce");
}

void py_scan(const std::string& op, nb::handle x, nb::handle out) {
    const int code = lookup(SCAN_NAMES, NSCAN, op, "scan");
    Parsed px = parse(x, "scan"), po = parse(out, "scan");
    if (po.v.ndim != 2 || px.v.ndim != 2 || po.v.shape[0] != px.v.shape[0] || po.v.shape[1] != px.v.shape[1] ||
        (po.v.size > 0 && (po.v.strides[1] != 1 && po.v.shape[1] > 1)) || (po.v.shape[0] > 1 && po.v.strides[0] != po.v.shape[1]))
        throw std::invalid_argument("scan: x must be (M, K) and out a C-contiguous (M, K).");
    DeviceState& d = ndp::device(po.buf->device);
    if (po.v.size == 0) return;
    Rows rows = as_rows(px.v, "scan");
    if (px.v.dtype != po.v.dtype) {
        // Cast into out, then scan it in place (each chunk is read before it is written).
        const View* ins[1] = {&px.v};
        run_elementwise(d, tables().cast[px.v.dtype][po.v.dtype], po.v, ins, nullptr, 1, "scan");
        rows = as_rows(po.v, "scan");
    }
    launch_scan(code, po.v.dtype, po.v.dtype, rows, po.v.data, d.stream);
    check_launch(d, "scan");
}

void py_matmul(nb::handle a, nb::handle b, nb::handle out) {
    Parsed pa = parse(a, "matmul"), pb = parse(b, "matmul"), po = parse(out, "matmul");
    const int dt = po.v.dtype;
    if (pa.v.dtype != dt || pb.v.dtype != dt) throw std::invalid_argument("matmul: dtypes differ.");
    DeviceState& d = ndp::device(po.buf->device);
    GemmPlan g = plan_gemm(pa.v, pb.v, po.v);
    if (po.v.size == 0) return;
    if (g.k == 0) {
        Scalar zero{};
        const View* ins[1] = {nullptr};
        run_elementwise(d, tables().fill[log2_itemsize(dt)], po.v, ins, &zero, 1, "matmul");
        return;
    }
    if (int_matmul_ok(dt)) launch_int_matmul(dt, pa.v, pb.v, po.v, d.stream);
    else gemm(d, dt, g, pa.v.data, pb.v.data, po.v.data);
    check_launch(d, "matmul");
}

void py_random_bits(uint64_t key, uint64_t ctr_lo, uint64_t ctr_hi, nb::handle out) {
    Parsed po = parse(out, "random_bits");
    if (po.v.dtype != U32 || po.v.ndim != 1 || (po.v.strides[0] != 1 && po.v.size > 1))
        throw std::invalid_argument("random_bits: out must be a contiguous 1-D uint32 array.");
    DeviceState& d = ndp::device(po.buf->device);
    launch_random_bits(key, ctr_lo, ctr_hi, reinterpret_cast<uint32_t*>(po.v.data), po.v.size, d.stream);
    check_launch(d, "random_bits");
}

void same_device(const Parsed& a, const Parsed& b, const char* what) {
    if (a.buf->device != b.buf->device) throw std::invalid_argument(std::string(what) + ": the Refs are on different devices.");
}

Index as_index(const Parsed& p, int64_t k, const char* what) {
    if (p.v.ndim != 1 || p.v.shape[0] != k)
        throw std::invalid_argument(std::string(what) + ": indices must be 1-D with one entry per gathered column.");
    if (p.v.dtype < I8 || p.v.dtype > U64)
        throw type_error(std::string(what) + ": indices must have an integer dtype, not " + DT_NAME[p.v.dtype] + ".");
    return {p.v.data, p.v.dtype, p.v.shape[0], p.v.strides[0]};
}

// The operands of take and scatter_add, checked: `dense` (M, N), whose N columns the indices
// (K,) address, and `sparse` (M, K), one column per index; one device and one dtype.
struct Gathered {
    Parsed dense, indices, sparse;
    Rows rd, rs;
    Index idx;
};

Gathered gathered(nb::handle dense, nb::handle indices, nb::handle sparse, const char* what, const char* dense_name,
                  const char* sparse_name) {
    Gathered g{parse(dense, what), parse(indices, what), parse(sparse, what), {}, {}, {}};
    const std::string w(what), dn(dense_name), sn(sparse_name);
    same_device(g.dense, g.sparse, what);
    same_device(g.indices, g.sparse, what);
    if (g.dense.v.dtype != g.sparse.v.dtype) throw std::invalid_argument(w + ": " + dn + " and " + sn + " dtypes differ.");
    g.rd = as_rows(g.dense.v, what), g.rs = as_rows(g.sparse.v, what);
    if (g.rd.m != g.rs.m) throw std::invalid_argument(w + ": " + dn + " (M, N) and " + sn + " (M, K) differ in M.");
    g.idx = as_index(g.indices, g.rs.k, what);
    return g;
}

// take(x (M, N), indices (K,), out (M, K)): out[m, k] = x[m, indices[k]].
void py_take(nb::handle x, nb::handle indices, nb::handle out) {
    const Gathered g = gathered(x, indices, out, "take", "x", "out");
    if (g.rd.k == 0 && g.rs.m * g.rs.k > 0) throw index_error("take: cannot take from an empty axis.");
    DeviceState& d = ndp::device(g.sparse.buf->device);
    launch_take(g.rd, g.idx, g.rs, g.sparse.v.dtype, d.stream);
    check_launch(d, "take");
}

// scatter_add(out (M, N), indices (K,), values (M, K)): out[m, indices[k]] += values[m, k].
void py_scatter_add(nb::handle out, nb::handle indices, nb::handle values) {
    const Gathered g = gathered(out, indices, values, "scatter_add", "out", "values");
    if (g.rd.k == 0 && g.rs.m * g.rs.k > 0) throw index_error("scatter_add: cannot add into an empty axis.");
    DeviceState& d = ndp::device(g.dense.buf->device);
    DeviceScratch scratch(d);
    launch_scatter_add(g.rd, g.idx, g.rs, g.dense.v.dtype, scratch, d.stream);
    check_launch(d, "scatter_add");
}

// C-contiguous, the stride of an axis of length 0 or 1 not counting (as NumPy's flag).
bool c_contiguous(const View& v) {
    int64_t expect = 1;
    for (int ax = v.ndim - 1; ax >= 0; --ax) {
        if (v.shape[ax] > 1 && v.strides[ax] != expect) return false;
        expect *= v.shape[ax];
    }
    return true;
}

bool c_contiguous_2d(const View& v, int64_t m, int64_t k) {
    return v.ndim == 2 && v.shape[0] == m && v.shape[1] == k && c_contiguous(v);
}

// sort(x (M, K), values_out, indices_out, descending, stable); either output may be None.
void py_sort(nb::handle x, nb::handle values_out, nb::handle indices_out, bool descending, bool stable) {
    (void)stable;  // the radix sort is stable: one kernel serves both
    Parsed px = parse(x, "sort");
    const Rows rx = as_rows(px.v, "sort");
    Parsed pv{}, pi{};
    const bool want_v = !values_out.is_none(), want_i = !indices_out.is_none();
    if (!want_v && !want_i) throw std::invalid_argument("sort: asked for neither values nor indices.");
    if (want_v) {
        pv = parse(values_out, "sort");
        same_device(px, pv, "sort");
        if (pv.v.dtype != px.v.dtype || !c_contiguous_2d(pv.v, rx.m, rx.k))
            throw std::invalid_argument("sort: values_out must be a C-contiguous (M, K) array of x's dtype.");
    }
    const int index_dtype = want_i ? (pi = parse(indices_out, "sort")).v.dtype : I64;
    if (want_i) {
        same_device(px, pi, "sort");
        if (!c_contiguous_2d(pi.v, rx.m, rx.k)) throw std::invalid_argument("sort: indices_out must be a C-contiguous (M, K) array.");
    }
    if (!sort_ok(px.v.dtype, index_dtype))
        throw type_error(std::string("sort: no kernel for ") + DT_NAME[px.v.dtype] + " with " + DT_NAME[index_dtype] +
                         " indices (sortable: bool, integers, real floats; indices int32 or int64).");
    DeviceState& d = ndp::device(px.buf->device);
    DeviceScratch scratch(d);
    launch_sort(rx, px.v.dtype, want_v ? pv.v.data : nullptr, want_i ? pi.v.data : nullptr, index_dtype, descending,
                scratch, d.stream);
    check_launch(d, "sort");
}

// fused("adam", (grad, exp_avg, exp_avg_sq), param, params): param and the two moments in place.
void py_fused_adam(nb::tuple inputs, nb::handle out, nb::dict params) {
    if (inputs.size() != 3) throw std::invalid_argument("fused adam: inputs must be (grad, exp_avg, exp_avg_sq).");
    Parsed pp = parse(out, "fused adam"), pg = parse(inputs[0], "fused adam"), pm = parse(inputs[1], "fused adam"),
           pv = parse(inputs[2], "fused adam");
    const Parsed* all[4] = {&pp, &pg, &pm, &pv};
    const char* names[4] = {"param (out)", "grad", "exp_avg", "exp_avg_sq"};
    if (!fused_ok(pp.v.dtype))
        throw type_error(std::string("fused adam: only float16, float32 and float64 parameters; got ") +
                         DT_NAME[pp.v.dtype] + ".");
    for (int i = 0; i < 4; ++i) {
        const View& v = all[i]->v;
        same_device(*all[i], pp, "fused adam");
        bool same = v.dtype == pp.v.dtype && v.ndim == pp.v.ndim && c_contiguous(v);
        for (int ax = 0; same && ax < v.ndim; ++ax) same = v.shape[ax] == pp.v.shape[ax];
        if (!same)
            throw std::invalid_argument(std::string("fused adam: ") + names[i] +
                                        " must be C-contiguous, with param's dtype and shape.");
    }
    auto number = [&](const char* key, double dflt) { return params.contains(key) ? nb::cast<double>(params[key]) : dflt; };
    AdamArgs a{number("lr", 1e-3), number("beta1", 0.9), number("beta2", 0.999), number("eps", 1e-8),
               number("weight_decay", 0.0), params.contains("decoupled") && PyObject_IsTrue(params["decoupled"].ptr()) == 1,
               params.contains("step") ? nb::cast<int64_t>(params["step"]) : 1};
    if (a.step < 1) throw std::invalid_argument("fused adam: step must be >= 1; got " + std::to_string(a.step) + ".");
    if (!(a.beta1 >= 0 && a.beta1 < 1 && a.beta2 >= 0 && a.beta2 < 1))
        throw std::invalid_argument("fused adam: beta1 and beta2 must be in [0, 1).");
    DeviceState& d = ndp::device(pp.buf->device);
    launch_adam(pp.v.dtype, pp.v.data, pg.v.data, pm.v.data, pv.v.data, pp.v.size, a, d.stream);
    check_launch(d, "fused adam");
}

// fused("take_axis", (x, indices), out, {}): x (A, N, B) and out (A, K, B) C-contiguous, one
// dtype; indices (K,) of any integer dtype (in [0, N) by the protocol; the kernel never reads
// outside x for one that is not).
void py_take_axis(nb::tuple inputs, nb::handle out) {
    const char* fn = "fused take_axis";
    if (inputs.size() != 2) throw std::invalid_argument("fused take_axis: inputs must be (x, indices).");
    Parsed px = parse(inputs[0], fn), pi = parse(inputs[1], fn), po = parse(out, fn);
    same_device(px, po, fn);
    same_device(pi, po, fn);
    if (px.v.ndim != 3 || po.v.ndim != 3 || !c_contiguous(px.v) || !c_contiguous(po.v))
        throw std::invalid_argument("fused take_axis: x (A, N, B) and out (A, K, B) must be C-contiguous 3-D arrays.");
    if (po.v.dtype != px.v.dtype) throw std::invalid_argument("fused take_axis: out must have x's dtype.");
    const int64_t a = px.v.shape[0], n = px.v.shape[1], b = px.v.shape[2], k = po.v.shape[1];
    if (po.v.shape[0] != a || po.v.shape[2] != b)
        throw std::invalid_argument("fused take_axis: out must be (A, K, B) for x (A, N, B).");
    const Index idx = as_index(pi, k, fn);
    DeviceState& d = ndp::device(po.buf->device);
    launch_take_axis(px.v.data, a, n, b, idx, po.v.data, px.v.dtype, d.stream);
    check_launch(d, fn);
}

// fused("arange", (), out, {"start": s, "step": d}): out (N,) contiguous; s and d ints for an
// integer out, floats for a real floating one.
void py_arange(nb::tuple inputs, nb::handle out, nb::dict params) {
    const char* fn = "fused arange";
    if (inputs.size() != 0) throw std::invalid_argument("fused arange: inputs must be ().");
    Parsed po = parse(out, fn);
    const int dt = po.v.dtype;
    if (!arange_ok(dt))
        throw type_error(std::string("fused arange: expected an integer or real floating out; got ") + DT_NAME[dt] + ".");
    if (po.v.ndim != 1 || !c_contiguous(po.v)) throw std::invalid_argument("fused arange: out must be 1-D and contiguous.");
    const bool integral = dt >= I8 && dt <= U64;
    auto is_num = [&](const char* key) {
        if (!params.contains(key)) return false;
        PyObject* o = nb::handle(params[key]).ptr();
        return integral ? PyLong_Check(o) != 0 : PyFloat_Check(o) != 0;
    };
    if (!is_num("start") || !is_num("step"))
        throw type_error(std::string("fused arange: params['start'] and params['step'] must be ") +
                         (integral ? "ints" : "floats") + " for a " + DT_NAME[dt] + " out.");
    double fs = 0, fd = 0;
    int64_t is = 0, id = 0;
    if (integral) {
        is = nb::cast<int64_t>(params["start"]);
        id = nb::cast<int64_t>(params["step"]);
    } else {
        fs = nb::cast<double>(params["start"]);
        fd = nb::cast<double>(params["step"]);
    }
    DeviceState& d = ndp::device(po.buf->device);
    launch_arange(dt, po.v.data, po.v.size, fs, fd, is, id, d.stream);
    check_launch(d, fn);
}

// fused(op, (x, weight, bias), out, params): see kernels.h; weight and bias only for layer_norm.
void py_fused(const std::string& op, nb::tuple inputs, nb::handle out, nb::dict params) {
    const int code = lookup(FUSED_NAMES, NFUSED, op, "fused");
    if (code == FU_ADAM) return py_fused_adam(inputs, out, params);
    if (code == FU_TAKE_AXIS) return py_take_axis(inputs, out);
    if (code == FU_ARANGE) return py_arange(inputs, out, params);
    if (inputs.size() < 1) throw std::invalid_argument("fused: inputs must start with x.");
    Parsed px = parse(inputs[0], "fused"), po = parse(out, "fused");
    same_device(px, po, "fused");
    const int dt = px.v.dtype;
    if (!fused_ok(dt))
        throw type_error(std::string("fused: only float16, float32 and float64 are fused; got ") + DT_NAME[dt] + ".");
    if (po.v.dtype != dt) throw std::invalid_argument("fused: out must have x's dtype.");
    if (px.v.ndim != 2) throw std::invalid_argument("fused: x must be a C-contiguous (M, K) array.");
    const int64_t m = px.v.shape[0], k = px.v.shape[1];
    const bool rows = code == FU_LOGSUMEXP;
    if (!c_contiguous_2d(px.v, m, k) ||
        (rows ? (po.v.ndim != 1 || po.v.shape[0] != m || (m > 1 && po.v.strides[0] != 1)) : !c_contiguous_2d(po.v, m, k)))
        throw std::invalid_argument("fused: expected a C-contiguous x (M, K) and out (M, K), or (M,) for logsumexp.");
    DeviceState& d = ndp::device(po.buf->device);
    DeviceScratch temps(d);
    const char* wb[2] = {nullptr, nullptr};
    for (size_t i = 1; i < 3 && i < inputs.size(); ++i) {
        if (code != FU_LAYER_NORM || inputs[i].is_none()) continue;
        Parsed pp = parse(inputs[i], "fused");
        same_device(pp, po, "fused");
        if (pp.v.ndim != 1 || pp.v.shape[0] != k)
            throw std::invalid_argument("fused: layer_norm weight and bias must have shape (K,).");
        if (pp.v.dtype == dt && (k <= 1 || pp.v.strides[0] == 1)) {
            wb[i - 1] = pp.v.data;
        } else {
            View t;
            temps.keep(cast_to_temp(d, pp.v, dt, t));
            wb[i - 1] = t.data;
        }
    }
    const double eps = params.contains("eps") ? nb::cast<double>(params["eps"]) : 1e-5;
    launch_fused(code, dt, px.v.data, po.v.data, m, k, wb[0], wb[1], eps, d.stream);
    check_launch(d, "fused");
}

// ---------------------------------------------------------------------------
// DLPack: device memory shared with PyTorch, CuPy, JAX ... both ways (device type CUDA)
// ---------------------------------------------------------------------------
nb::dlpack::dtype dl_dtype(int dt) {
    using C = nb::dlpack::dtype_code;
    const C code = dt == BOOL ? C::Bool : dt <= I64 ? C::Int : dt <= U64 ? C::UInt : dt <= F64 ? C::Float : C::Complex;
    return {static_cast<uint8_t>(code), static_cast<uint8_t>(ITEMSIZE[dt] * 8), 1};
}

int from_dl_dtype(nb::dlpack::dtype t) {
    for (int dt = 0; dt < NDT; ++dt)
        if (dl_dtype(dt) == t) return dt;
    throw type_error("from_dlpack: the tensor's dtype (DLPack code " + std::to_string(t.code) + ", " +
                     std::to_string(t.bits) + " bits, " + std::to_string(t.lanes) + " lanes) is no ndplane dtype.");
}

// Orders the device's queued work before the consumer's stream (DLPack's `stream`): None waits
// for it to finish, -1 asks for nothing, 1 and 2 are the legacy and per-thread default streams,
// any other integer a cudaStream_t.
void order_before_consumer(DeviceState& d, nb::handle stream) {
    if (stream.is_none()) {
        nb::gil_scoped_release release;
        check(d, cudaStreamSynchronize(d.stream), "__dlpack__");
        return;
    }
    const int64_t s = nb::cast<int64_t>(stream);
    if (s == -1) return;
    if (s == 0)
        throw std::invalid_argument("__dlpack__: stream=0 is ambiguous for CUDA and DLPack forbids it; pass 1 (the "
                                    "legacy default stream), 2 (per-thread default) or a stream handle.");
    cudaStream_t c = s == 1 ? cudaStreamLegacy : s == 2 ? cudaStreamPerThread
                                                       : reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(s));
    if (c == d.stream) return;
    cudaEvent_t ev = nullptr;
    check(d, cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "__dlpack__");
    cudaError_t err = cudaEventRecord(ev, d.stream);
    if (err == cudaSuccess) err = cudaStreamWaitEvent(c, ev, 0);
    cudaEventDestroy(ev);  // released once the wait has happened
    check(d, err, "__dlpack__");
}

// An nb_ndarray (it has __dlpack__ and __dlpack_device__) over ref's memory, holding `owner`.
nb::object py_export_dlpack(nb::handle ref, nb::handle owner, nb::handle stream) {
    Parsed p = parse(ref, "__dlpack__");
    DeviceState& d = ndp::device(p.buf->device);
    order_before_consumer(d, stream);
    size_t shape[64];
    for (int i = 0; i < p.v.ndim; ++i) shape[i] = static_cast<size_t>(p.v.shape[i]);
    nb::ndarray<> a(p.v.data, static_cast<size_t>(p.v.ndim), shape, owner, p.v.strides, dl_dtype(p.v.dtype),
                    nb::device::cuda::value, p.buf->device);
    return a.cast(nb::rv_policy::reference);
}

// A capsule of CUDA memory on `device` as (Buffer, dtype name, shape, strides, nbytes), the
// Buffer holding the capsule's tensor; None for a layout with negative strides (the core copies).
nb::object py_import_dlpack(int device, nb::handle capsule) {
    nb::ndarray<> a = nb::cast<nb::ndarray<>>(capsule);
    if (a.device_type() != nb::device::cuda::value || a.device_id() != device)
        throw std::invalid_argument("from_dlpack: the tensor is on DLPack device (" + std::to_string(a.device_type()) +
                                    ", " + std::to_string(a.device_id()) + "), not cuda:" + std::to_string(device) + ".");
    const int dt = from_dl_dtype(a.dtype());
    nb::list shape, strides;
    int64_t hi = 0;
    bool empty = false;
    for (size_t i = 0; i < a.ndim(); ++i) {
        const int64_t n = static_cast<int64_t>(a.shape(i)), st = a.stride(i);
        if (st < 0) return nb::none();
        empty |= n == 0;
        hi += n > 0 ? (n - 1) * st : 0;
        shape.append(n);
        strides.append(st);
    }
    const int64_t nbytes = empty ? 0 : (hi + 1) * ITEMSIZE[dt];
    auto* b = new Buffer{device, nullptr, nbytes};
    b->external = static_cast<char*>(a.data());
    b->imported = a;
    return nb::make_tuple(nb::cast(b, nb::rv_policy::take_ownership), DT_NAME[dt], nb::tuple(shape), nb::tuple(strides),
                          nbytes);
}

nb::dict op_dtypes() {
    const Tables& t = tables();
    nb::dict unary, binary;
    for (int op = 0; op < NUNARY; ++op) {
        nb::list l;
        for (int dt = 0; dt < NDT; ++dt)
            if (t.unary[op][dt]) l.append(DT_NAME[dt]);
        unary[UNARY_NAMES[op]] = l;
    }
    for (int op = 0; op < NBINARY; ++op) {
        nb::list l;
        for (int dt = 0; dt < NDT; ++dt)
            if (t.binary[op][dt]) l.append(DT_NAME[dt]);
        binary[BINARY_NAMES[op]] = l;
    }
    nb::list reduce, scan;
    for (auto* n : REDUCE_NAMES) reduce.append(n);
    for (auto* n : SCAN_NAMES) scan.append(n);
    nb::dict r;
    r["unary"] = unary;
    r["binary"] = binary;
    r["reduce"] = reduce;
    r["scan"] = scan;
    return r;
}

// The allocator's bookkeeping as memory_stats() reports it (devices and the host test alike).
nb::dict stats_dict(const AllocStats& s) {
    nb::dict r;
    r["buffers"] = s.buffers;
    r["bytes"] = s.bytes;
    r["reserved_bytes"] = s.reserved;
    r["cached_bytes"] = s.cached;
    r["peak_bytes"] = s.peak_bytes;
    r["segments"] = s.segments;
    r["raw_allocs"] = s.raw_allocs;
    return r;
}

// ---------------------------------------------------------------------------
// host self-tests (no GPU needed)
// ---------------------------------------------------------------------------
nb::tuple selftest_coalesce(std::vector<int64_t> shape, std::vector<std::vector<int64_t>> strides) {
    std::vector<const int64_t*> st;
    for (auto& s : strides) {
        if (s.size() != shape.size()) throw std::invalid_argument("strides must match shape");
        st.push_back(s.data());
    }
    if (st.size() > MAXARGS) throw std::invalid_argument("at most 4 operands");
    Merged m = coalesce(static_cast<int>(shape.size()), shape.data(), static_cast<int>(st.size()), st.data());
    std::vector<int64_t> ms(m.shape, m.shape + m.ndim);
    std::vector<std::vector<int64_t>> mst;
    for (int a = 0; a < m.nargs; ++a) mst.emplace_back(m.strides[a], m.strides[a] + m.ndim);
    // The launches split() would make: (ndim of each plan, base offsets), up to 1000 of them.
    struct Ctx {
        std::vector<std::tuple<int, bool, std::vector<int64_t>>> launches;
        int nargs;
    } ctx{{}, m.nargs};
    split(m, [](const Plan& p, const int64_t* base, void* c) {
        auto* x = static_cast<Ctx*>(c);
        if (x->launches.size() < 1000) x->launches.emplace_back(p.ndim, p.contiguous, std::vector<int64_t>(base, base + x->nargs));
    }, &ctx);
    return nb::make_tuple(m.n, ms, mst, ctx.launches);
}

View view_of(std::vector<int64_t> shape, std::vector<int64_t> strides) {
    View v;
    v.ndim = static_cast<int>(shape.size());
    for (int i = 0; i < v.ndim; ++i) {
        v.shape[i] = shape[i];
        v.strides[i] = strides[i];
    }
    return v;
}

nb::dict selftest_gemm(std::vector<int64_t> a_shape, std::vector<int64_t> a_strides, std::vector<int64_t> b_shape,
                       std::vector<int64_t> b_strides) {
    std::vector<int64_t> o_shape = {std::max(a_shape[0], b_shape[0]), a_shape[1], b_shape[2]};
    std::vector<int64_t> o_strides = {o_shape[1] * o_shape[2], o_shape[2], 1};
    GemmPlan g = plan_gemm(view_of(a_shape, a_strides), view_of(b_shape, b_strides), view_of(o_shape, o_strides));
    nb::dict r;
    r["trans_a"] = g.trans_a;
    r["trans_b"] = g.trans_b;
    r["m"] = g.m;
    r["n"] = g.n;
    r["k"] = g.k;
    r["lda"] = g.lda;
    r["ldb"] = g.ldb;
    r["ldc"] = g.ldc;
    r["stride_a"] = g.stride_a;
    r["stride_b"] = g.stride_b;
    r["stride_c"] = g.stride_c;
    r["batch"] = g.batch;
    return r;
}

struct HostRaw final : RawAllocator {
    int64_t limit, used = 0;
    std::vector<std::pair<void*, size_t>> live;
    explicit HostRaw(int64_t lim) : limit(lim) {}
    void* alloc(size_t n) override {
        if (used + static_cast<int64_t>(n) > limit) return nullptr;
        void* p = std::aligned_alloc(512, (n + 511) / 512 * 512);  // like cudaMalloc's alignment
        if (p) {
            used += static_cast<int64_t>(n);
            live.emplace_back(p, n);
        }
        return p;
    }
    void free(void* p) override {
        for (auto it = live.begin(); it != live.end(); ++it)
            if (it->first == p) {
                used -= static_cast<int64_t>(it->second);
                live.erase(it);
                break;
            }
        std::free(p);
    }
};

// The caching allocator over host memory with a byte limit, for the bookkeeping tests.
struct HostAllocator {
    HostRaw raw;
    CachingAllocator alloc;
    std::vector<Block*> blocks;
    HostAllocator(int64_t limit, bool caching) : raw(limit), alloc(&raw, caching) {}
    int64_t allocate(int64_t n) {  // a handle, or -1 when out of memory
        Block* b = alloc.allocate(static_cast<size_t>(n));
        if (!b) return -1;
        std::memset(b->ptr, 0xab, static_cast<size_t>(n));  // the memory is really there
        blocks.push_back(b);
        return static_cast<int64_t>(blocks.size() - 1);
    }
    void release(int64_t h) {
        if (h < 0 || h >= static_cast<int64_t>(blocks.size()) || !blocks[h]) throw std::invalid_argument("bad handle");
        alloc.release(blocks[h]);
        blocks[h] = nullptr;
    }
    uintptr_t address(int64_t h) { return reinterpret_cast<uintptr_t>(blocks[h]->ptr); }
    nb::dict stats() {
        nb::dict r = stats_dict(alloc.stats());
        r["raw_in_use"] = raw.used;
        return r;
    }
};

}  // namespace
}  // namespace ndp

NB_MODULE(_native, m) {
    using namespace ndp;
    m.doc() = "CUDA kernels of the ndplane cuda backend.";
    nb::class_<Buffer>(m, "Buffer")
        .def_prop_ro("device", [](const Buffer& b) { return b.device; })
        .def_prop_ro("nbytes", [](const Buffer& b) { return b.nbytes; })
        .def_prop_ro("ptr", [](const Buffer& b) { return reinterpret_cast<uintptr_t>(b.ptr()); })
        .def("__repr__", [](const Buffer& b) {
            return "<ndplane_cuda Buffer cuda:" + std::to_string(b.device) + " " + std::to_string(b.nbytes) + " bytes>";
        });
    nb::register_exception_translator([](const std::exception_ptr& p, void*) {
        try {
            std::rethrow_exception(p);
        } catch (const type_error& e) {
            PyErr_SetString(PyExc_TypeError, e.what());
        } catch (const index_error& e) {
            PyErr_SetString(PyExc_IndexError, e.what());
        } catch (const cuda_error& e) {
            PyErr_SetString(PyExc_RuntimeError, e.what());
        }
    });
    m.def("init", [](nb::tuple dtypes, nb::object oom) {
        if (dtypes.size() != NDT) throw std::invalid_argument("init: expected the 14 dtypes of ndplane.ALL_DTYPES");
        for (int i = 0; i < NDT; ++i) g_dtypes[i] = nb::object(dtypes[i]).release().ptr();
        g_oom = oom.release().ptr();
        // Frees after the interpreter starts finalising are skipped: the CUDA runtime may be gone.
        nb::module_::import_("atexit").attr("register")(nb::cpp_function([] { g_finalizing = true; }));
    });
    m.def("probe", [] {
        Probe p = probe();
        return nb::make_tuple(p.ok, p.count, p.driver_version, p.runtime_version, p.reason);
    }, "(available, device count, driver version, runtime version, reason): creates no CUDA context.");
    m.def("device_info", [](int index) {
        DeviceState& d = device(index);
        return nb::make_tuple(d.name, d.sms);
    });
    m.def("architectures", [] { return std::string(NDP_CUDA_ARCHITECTURES); },
          "CMAKE_CUDA_ARCHITECTURES of this build, comma-separated, e.g. '75-real,80-real,90'.");
    m.def("set_cublas_candidates", &set_cublas_candidates);
    m.def("cublas_info", [] {
        CublasInfo c = cublas_info();
        return nb::make_tuple(c.loaded, c.path_or_reason);
    });
    m.def("alloc", &py_alloc);
    m.def("free", &py_free);
    m.def("from_host", &py_from_host);
    m.def("to_host", &py_to_host);
    m.def("copy", &py_copy);
    m.def("fill", &py_fill);
    m.def("unary", &py_unary);
    m.def("binary", &py_binary);
    m.def("where", &py_where);
    m.def("cast", &py_cast);
    m.def("reduce", &py_reduce);
    m.def("scan", &py_scan);
    m.def("matmul", &py_matmul);
    m.def("random_bits", &py_random_bits);
    m.def("fused", &py_fused);
    m.def("fused_ops", [] {
        nb::list l;
        for (auto* n : FUSED_NAMES) l.append(n);
        return l;
    });
    m.def("export_dlpack", &py_export_dlpack, nb::arg("ref"), nb::arg("owner"), nb::arg("stream").none());
    m.def("import_dlpack", &py_import_dlpack);
    m.def("device_pointer", [](nb::handle ref) {
        Parsed p = parse(ref, "__cuda_array_interface__");
        return nb::make_tuple(reinterpret_cast<uintptr_t>(p.v.data),
                              reinterpret_cast<uintptr_t>(device(p.buf->device).stream));
    }, "(address of the Ref's element 0, the device's cudaStream_t as an integer).");
    m.def("stream_handle", [](int index) { return reinterpret_cast<uintptr_t>(device(index).stream); },
          "The device's cudaStream_t as an integer (what a DLPack producer orders its work before).");
    m.def("take", &py_take);
    m.def("scatter_add", &py_scatter_add);
    m.def("sort", &py_sort, nb::arg("x"), nb::arg("values_out").none(), nb::arg("indices_out").none(),
          nb::arg("descending"), nb::arg("stable"));
    m.def("synchronize", [](int index) {
        DeviceState& d = device(index);
        nb::gil_scoped_release release;
        check(d, cudaStreamSynchronize(d.stream), "synchronize");
    });
    m.def("memory_stats", [](int index) { return stats_dict(device(index).allocator->stats()); });
    m.def("empty_cache", [](int index) { device(index).allocator->empty_cache(); });
    m.def("set_grid_limit", &set_grid_limit);
    m.def("op_dtypes", &op_dtypes, "{'unary': {op: [dtype names]}, 'binary': {...}, 'reduce': [...], 'scan': [...]}.");
    // host self-tests
    m.def("_selftest_coalesce", &selftest_coalesce);
    m.def("_selftest_gemm", &selftest_gemm);
    m.def("_selftest_philox", [](uint64_t key, uint64_t lo, uint64_t hi) {
        Philox4 r = philox4x32(key, lo, hi);
        return nb::make_tuple(r.w[0], r.w[1], r.w[2], r.w[3]);
    });
    nb::class_<HostAllocator>(m, "_HostAllocator")
        .def(nb::init<int64_t, bool>())
        .def("allocate", &HostAllocator::allocate)
        .def("release", &HostAllocator::release)
        .def("address", &HostAllocator::address)
        .def("empty_cache", [](HostAllocator& h) { h.alloc.empty_cache(); })
        .def("stats", &HostAllocator::stats);
}
