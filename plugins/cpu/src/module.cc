// The Python module ndplane_cpu._native: reads Refs, converts scalars, picks
// the kernel table for this CPU and releases the GIL around large kernels.
//
// Every kernel entry point takes the protocol's Refs directly, so the Python
// adapter forwards calls without a Python frame. A Ref's slots are read at their
// member offsets (looked up once in init()), which costs a few nanoseconds
// instead of an attribute lookup each; any other object with the same
// attributes works through getattr.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <structmember.h>
#include <cblas.h>

#include <array>
#include <atomic>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <unordered_map>

#include "driver.h"
#include "linalg.h"
#include "memory.h"
#include "optim.h"
#include "conv.h"
#include "pool.h"

namespace nb = nanobind;

namespace ndp {

const Kernels& kernels() {
    static const Kernels k = [] {
        Kernels t{};
        t.isa = "baseline";
        baseline::fill_elementwise(t);
        baseline::fill_reduce(t);
#if defined(NDP_MULTI_ISA)
        __builtin_cpu_init();
        const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                        __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("f16c");
        const bool v4 = v3 && __builtin_cpu_supports("avx512f") &&
                        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd");
        const char* force = std::getenv("NDPLANE_CPU_ISA");  // "baseline", "v3" or "v4"
        std::string want = force ? force : (v4 ? "v4" : v3 ? "v3" : "baseline");
        if (want == "v4" && v4) {
            v4::fill_elementwise(t);
            v4::fill_reduce(t);
            t.isa = "x86-64-v4";
        } else if ((want == "v3" || want == "v4") && v3) {
            v3::fill_elementwise(t);
            v3::fill_reduce(t);
            t.isa = "x86-64-v3";
        }
#endif
        return t;
    }();
    return k;
}

namespace {

// ---------------------------------------------------------------------------
// Ref parsing
// ---------------------------------------------------------------------------
enum Field { F_BUFFER, F_DTYPE, F_SHAPE, F_STRIDES, F_OFFSET, NFIELD };
const char* const FIELD_NAMES[NFIELD] = {"buffer", "dtype", "shape", "strides", "offset"};

PyTypeObject* g_ref_type = nullptr;
Py_ssize_t g_offsets[NFIELD];
PyObject* g_dtypes[NDT] = {};
PyObject* g_oom = nullptr;  // ndplane.OutOfMemoryError
std::string g_device = "cpu:0";

constexpr int64_t GIL_THRESHOLD = GRAIN;

struct Owned {
    PyObject* p[NFIELD] = {};
    ~Owned() {
        for (PyObject* o : p) Py_XDECREF(o);
    }
};

[[noreturn]] void raise_current() { throw nb::python_error(); }

int dtype_code(PyObject* dt) {
    for (int i = 0; i < NDT; ++i)
        if (g_dtypes[i] == dt) return i;
    PyObject* name = PyObject_GetAttrString(dt, "name");
    if (!name) raise_current();
    const char* s = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : nullptr;
    int code = -1;
    for (int i = 0; s && i < NDT; ++i)
        if (std::strcmp(s, DT_NAME[i]) == 0) code = i;
    Py_DECREF(name);
    if (code < 0) throw type_error("ndplane_cpu: unsupported dtype in a Ref.");
    return code;
}

int64_t as_int(PyObject* o, const char* what) {
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        throw type_error(std::string("ndplane_cpu: a Ref's ") + what + " must hold integers.");
    }
    return v;
}

bool is_ref(PyObject* o) {
    return (g_ref_type && PyObject_TypeCheck(o, g_ref_type)) ||
           (!PyNumber_Check(o) && PyObject_HasAttrString(o, "buffer"));
}

void parse(PyObject* ref, View& v, const char* what) {
    PyObject* f[NFIELD];
    Owned owned;
    if (g_ref_type && PyObject_TypeCheck(ref, g_ref_type)) {
        for (int i = 0; i < NFIELD; ++i) {
            f[i] = *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(ref) + g_offsets[i]);
            if (!f[i]) throw std::invalid_argument(std::string(what) + ": Ref has no " + FIELD_NAMES[i]);
        }
    } else {
        for (int i = 0; i < NFIELD; ++i) {
            owned.p[i] = f[i] = PyObject_GetAttrString(ref, FIELD_NAMES[i]);
            if (!f[i]) raise_current();
        }
    }
    if (Py_TYPE(f[F_BUFFER]) != BufferType)
        throw type_error(std::string(what) + ": the Ref's buffer does not belong to the cpu backend.");
    auto* buf = reinterpret_cast<BufferObject*>(f[F_BUFFER]);
    // NOTE: its memory stays valid while the Ref holds the object, but a freed buffer reaching a
    // kernel is a core defect (a temporary let die too early) that the cuda backend, which
    // reuses the memory at once, would refuse: refuse it here too, so the cpu suite shows it.
    if (buf->freed) throw std::invalid_argument(std::string(what) + ": the Ref's buffer was freed.");
    v.dtype = dtype_code(f[F_DTYPE]);
    PyObject* shape = f[F_SHAPE];
    PyObject* strides = f[F_STRIDES];
    if (!PyTuple_Check(shape) || !PyTuple_Check(strides))
        throw type_error(std::string(what) + ": a Ref's shape and strides must be tuples.");
    const Py_ssize_t nd = PyTuple_GET_SIZE(shape);
    if (nd > MAXDIM || PyTuple_GET_SIZE(strides) != nd)
        throw std::invalid_argument(std::string(what) +
                                    ": a Ref's strides must match its shape (at most 64 axes).");
    v.ndim = static_cast<int>(nd);
    const int64_t offset = as_int(f[F_OFFSET], "offset");
    const int64_t isz = ITEMSIZE[v.dtype];
    int64_t size = 1;
    __int128 lo = offset, hi = offset;
    for (Py_ssize_t d = 0; d < nd; ++d) {
        int64_t n = as_int(PyTuple_GET_ITEM(shape, d), "shape");
        int64_t s = as_int(PyTuple_GET_ITEM(strides, d), "strides");
        if (n < 0) throw std::invalid_argument(std::string(what) + ": negative dimension in a Ref.");
        if (__builtin_mul_overflow(size, n, &size))
            throw std::invalid_argument(std::string(what) + ": a Ref's size overflows.");
        v.shape[d] = n;
        v.strides[d] = s;
        if (n > 0) {
            __int128 ext = static_cast<__int128>(n - 1) * s;
            (ext < 0 ? lo : hi) += ext;
        }
    }
    v.size = size;
    if (size > 0 && (lo < 0 || (hi + 1) * isz > buf->nbytes))
        throw std::invalid_argument(std::string(what) + ": the Ref reaches outside its buffer.");
    v.data = buf->ptr + (size > 0 ? offset * isz : 0);
}

// The Views of an entry point's Ref arguments, in order, each parsed and checked against its
// buffer (errors name `what`): auto [vx, vo] = views("reduce", x, out);
template <class... H> std::array<View, sizeof...(H)> views(const char* what, H... refs) {
    std::array<View, sizeof...(H)> v;
    size_t i = 0;
    (parse(nb::handle(refs).ptr(), v[i++], what), ...);
    return v;
}


// ---------------------------------------------------------------------------
// Python scalars
// ---------------------------------------------------------------------------
struct PyNumberValue {
    enum { INT, UINT, FLOAT, COMPLEX } kind;
    int64_t i;
    uint64_t u;
    double f;
    c128 c;
};

PyNumberValue read_number(PyObject* o, int dtype) {
    PyNumberValue v{};
    if (PyBool_Check(o)) {
        v.kind = PyNumberValue::INT;
        v.i = o == Py_True;
    } else if (PyLong_Check(o)) {
        int overflow = 0;
        v.i = PyLong_AsLongLongAndOverflow(o, &overflow);
        v.kind = PyNumberValue::INT;
        if (overflow > 0) {
            v.u = PyLong_AsUnsignedLongLong(o);
            v.kind = PyNumberValue::UINT;
            if (v.u == static_cast<uint64_t>(-1) && PyErr_Occurred()) {
                PyErr_Clear();
                overflow = 1;
            } else {
                overflow = 0;
            }
        }
        if (overflow) {
            if (dtype < F16) throw std::overflow_error("ndplane_cpu: Python int out of range of the dtype.");
            v.kind = PyNumberValue::FLOAT;
            v.f = PyLong_AsDouble(o);
            if (v.f == -1.0 && PyErr_Occurred()) raise_current();
        }
    } else if (PyFloat_Check(o)) {
        v.kind = PyNumberValue::FLOAT;
        v.f = PyFloat_AS_DOUBLE(o);
    } else if (PyComplex_Check(o) || dtype >= C64) {
        Py_complex c = PyComplex_AsCComplex(o);
        if (c.real == -1.0 && PyErr_Occurred()) raise_current();
        v.kind = PyNumberValue::COMPLEX;
        v.c = c128(c.real, c.imag);
    } else if (dtype >= F16) {
        v.kind = PyNumberValue::FLOAT;
        v.f = PyFloat_AsDouble(o);
        if (v.f == -1.0 && PyErr_Occurred()) raise_current();
    } else if (dtype == BOOL) {
        int t = PyObject_IsTrue(o);
        if (t < 0) raise_current();
        v.kind = PyNumberValue::INT;
        v.i = t;
    } else {
        PyObject* idx = PyNumber_Index(o);
        if (!idx) raise_current();
        PyNumberValue r = read_number(idx, dtype);
        Py_DECREF(idx);
        return r;
    }
    return v;
}

void scalar_to(PyObject* o, int dtype, Scalar& s) {
    PyNumberValue v = read_number(o, dtype);
    std::memset(s.storage, 0, sizeof(s.storage));
    for_each_dtype([&](auto d) {
        constexpr int D = decltype(d)::value;
        using T = typename dt_type<D>::type;
        if (D != dtype) return;
        T t;
        switch (v.kind) {
            case PyNumberValue::INT: t = convert<T>(v.i); break;
            case PyNumberValue::UINT: t = convert<T>(v.u); break;
            case PyNumberValue::FLOAT: t = convert<T>(v.f); break;
            default: t = convert<T>(v.c); break;
        }
        std::memcpy(s.storage, &t, sizeof(T));
    });
}

View scalar_view(const View& like, int dtype, Scalar& s) {
    View v = like;
    v.dtype = dtype;
    v.data = reinterpret_cast<char*>(s.storage);
    for (int d = 0; d < v.ndim; ++d) v.strides[d] = 0;
    return v;
}

// ---------------------------------------------------------------------------
// Op names: interned strings compare by pointer; others by content.
// ---------------------------------------------------------------------------
struct OpTable {
    std::unordered_map<PyObject*, int> by_ptr;
    std::unordered_map<std::string, int> by_name;
    const char* kind;
    void add(const char* name, int code) {
        PyObject* s = PyUnicode_InternFromString(name);  // kept alive for the process
        by_ptr[s] = code;
        by_name[name] = code;
    }
    int lookup(PyObject* op) const {
        auto it = by_ptr.find(op);
        if (it != by_ptr.end()) return it->second;
        if (!PyUnicode_Check(op)) throw type_error(std::string(kind) + ": op must be a str.");
        auto jt = by_name.find(PyUnicode_AsUTF8(op));
        if (jt == by_name.end())
            throw std::invalid_argument(std::string(kind) + ": unknown op '" + PyUnicode_AsUTF8(op) + "'.");
        return jt->second;
    }
};
OpTable g_unary, g_binary, g_reduce, g_scan, g_fused, g_linalg;
PyObject* g_linalg_error = nullptr;  // numpy.linalg.LinAlgError, set by the adapter

void init_op_tables() {
    g_unary.kind = "unary";
    g_binary.kind = "binary";
    g_reduce.kind = "reduce";
    g_scan.kind = "scan";
#define X(n) g_unary.add(#n, ops::u_##n);
    NDP_UNARY_OPS(X)
#undef X
#define X(n) g_binary.add(#n, ops::b_##n);
    NDP_BINARY_OPS(X)
#undef X
    const char* rn[] = {"sum", "prod", "max", "min", "argmax", "argmin", "any", "all"};
    for (int i = 0; i < NREDUCE; ++i) g_reduce.add(rn[i], i);
    g_fused.kind = "fused";
    g_fused.add("softmax", FU_SOFTMAX);
    g_fused.add("log_softmax", FU_LOG_SOFTMAX);
    g_fused.add("logsumexp", FU_LOGSUMEXP);
    g_fused.add("layer_norm", FU_LAYER_NORM);
    g_fused.add("adam", FU_ADAM);
    g_fused.add("conv2d", FU_CONV2D);
    g_fused.add("take_axis", FU_TAKE_AXIS);
    g_fused.add("put_axis", FU_PUT_AXIS);
    g_fused.add("take_along", FU_TAKE_ALONG);
    g_fused.add("max_pool2d", FU_MAX_POOL2D);
    g_fused.add("avg_pool2d", FU_AVG_POOL2D);
    g_fused.add("count_nonzero", FU_COUNT_NONZERO);
    g_fused.add("minmax", FU_MINMAX);
    g_fused.add("nonzero", FU_NONZERO);
    g_fused.add("searchsorted", FU_SEARCHSORTED);
    g_fused.add("arange", FU_ARANGE);
    g_fused.add("sumsq", FU_SUMSQ);
    g_fused.add("clip", FU_CLIP);
    g_fused.add("nll", FU_NLL);
    g_fused.add("uniform", FU_UNIFORM);
    g_fused.add("batch_norm", FU_BATCH_NORM);
    g_fused.add("batch_norm_grad", FU_BATCH_NORM_GRAD);
    g_fused.add("integers", FU_INTEGERS);
    g_fused.add("cross", FU_CROSS);
    g_linalg.kind = "linalg";
    for (int i = 0; i < NLINALG; ++i) g_linalg.add(linalg_name(i), i);
    g_scan.add("cumulative_sum", S_CUMSUM);
    g_scan.add("cumulative_prod", S_CUMPROD);
}

// Runs f with the GIL released when the work is large.
template <class F> void maybe_release(int64_t work, F&& f) {
    if (work >= GIL_THRESHOLD) {
        nb::gil_scoped_release release;
        f();
    } else {
        f();
    }
}

// ---------------------------------------------------------------------------
// entry points
// ---------------------------------------------------------------------------
nb::object py_alloc(nb::handle nbytes) {
    int64_t n = as_int(nbytes.ptr(), "nbytes");
    PyObject* b = nullptr;
    try {
        b = new_buffer(n);
    } catch (const std::bad_alloc&) {
        MemoryStats s = memory_stats();
        PyErr_Format(g_oom ? g_oom : PyExc_MemoryError,
                     "%s: out of memory allocating %lld bytes (%lld bytes in %lld live buffers).",
                     g_device.c_str(), (long long)n, (long long)s.bytes, (long long)s.buffers);
        raise_current();
    }
    if (!b) raise_current();
    return nb::steal(b);
}

void py_free(nb::handle buffer) {
    if (Py_TYPE(buffer.ptr()) != BufferType) throw type_error("free: not a cpu buffer.");
    mark_freed(buffer.ptr());
}

nb::object py_from_host(nb::handle array) {
    Py_buffer view;
    if (PyObject_GetBuffer(array.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0) raise_current();
    struct Release {
        Py_buffer* v;
        ~Release() { PyBuffer_Release(v); }
    } release{&view};
    nb::object b = py_alloc(nb::int_(static_cast<int64_t>(view.len)));
    auto* buf = reinterpret_cast<BufferObject*>(b.ptr());
    // NOTE: in chunks over the pool, as a contiguous copy kernel runs: one thread's memcpy of
    // 4 MB took 1.75x PyTorch's copy (bench_api "asarray (from NumPy)")
    char* dst = static_cast<char*>(buf->ptr);
    const char* src = static_cast<const char*>(view.buf);
    maybe_release(view.len / 8, [&] {
        parallel_range(view.len, GRAIN * 6, [&](int64_t b, int64_t e) {
            std::memcpy(dst + b, src + b, static_cast<size_t>(e - b));
        });
    });
    return b;
}

nb::object py_adopt_host(nb::handle array) {
    PyObject* b = adopt_buffer(array.ptr());
    if (!b) raise_current();
    return nb::steal(b);
}

void py_unary(nb::handle op, nb::handle x, nb::handle out) {
    int code = g_unary.lookup(op.ptr());
    auto [vx, vo] = views("unary", x, out);
    maybe_release(vo.size, [&] { run_unary(code, vx, vo); });
}

void py_binary(nb::handle op, nb::handle a, nb::handle b, nb::handle out) {
    View va, vb, vo;
    Scalar sa, sb;
    int code = g_binary.lookup(op.ptr());
    parse(out.ptr(), vo, "binary");
    const bool ra = is_ref(a.ptr()), rb = is_ref(b.ptr());
    if (ra) parse(a.ptr(), va, "binary");
    if (rb) parse(b.ptr(), vb, "binary");
    if (!ra && !rb) throw type_error("binary: at least one operand must be a Ref.");
    if (!ra) {
        scalar_to(a.ptr(), vb.dtype, sa);
        va = scalar_view(vo, vb.dtype, sa);
    }
    if (!rb) {
        scalar_to(b.ptr(), va.dtype, sb);
        vb = scalar_view(vo, va.dtype, sb);
    }
    maybe_release(vo.size, [&] { run_binary(code, va, vb, vo); });
}

void py_where(nb::handle cond, nb::handle a, nb::handle b, nb::handle out) {
    View vc, va, vb, vo;
    Scalar sa, sb;
    parse(out.ptr(), vo, "where");
    parse(cond.ptr(), vc, "where");
    if (is_ref(a.ptr())) parse(a.ptr(), va, "where");
    else va = (scalar_to(a.ptr(), vo.dtype, sa), scalar_view(vo, vo.dtype, sa));
    if (is_ref(b.ptr())) parse(b.ptr(), vb, "where");
    else vb = (scalar_to(b.ptr(), vo.dtype, sb), scalar_view(vo, vo.dtype, sb));
    maybe_release(vo.size, [&] { run_where(vc, va, vb, vo); });
}

void py_cast(nb::handle x, nb::handle out) {
    auto [vx, vo] = views("cast", x, out);
    maybe_release(vo.size, [&] { run_cast(vx, vo); });
}

void py_copy(nb::handle src, nb::handle dst) {
    auto [vs, vd] = views("copy", src, dst);
    maybe_release(vd.size, [&] { run_copy(vs, vd); });
}

void py_fill(nb::handle dst, nb::handle value) {
    View vd;
    Scalar s;
    parse(dst.ptr(), vd, "fill");
    scalar_to(value.ptr(), vd.dtype, s);
    maybe_release(vd.size, [&] { run_fill(vd, s.storage); });
}

void py_reduce(nb::handle op, nb::handle x, nb::handle out) {
    int code = g_reduce.lookup(op.ptr());
    auto [vx, vo] = views("reduce", x, out);
    maybe_release(vx.size, [&] { run_reduce(code, vx, vo); });
}

void py_scan(nb::handle op, nb::handle x, nb::handle out) {
    int code = g_scan.lookup(op.ptr());
    auto [vx, vo] = views("scan", x, out);
    maybe_release(vx.size, [&] { run_scan(code, vx, vo); });
}

void py_matmul(nb::handle a, nb::handle b, nb::handle out) {
    auto [va, vb, vo] = views("matmul", a, b, out);
    const int64_t k = va.ndim == 3 ? va.shape[2] : 0;
    maybe_release(vo.size * (k + 1), [&] { run_matmul(va, vb, vo); });
}

void py_take(nb::handle x, nb::handle indices, nb::handle out) {
    auto [vx, vi, vo] = views("take", x, indices, out);
    maybe_release(vo.size, [&] { run_take(vx, vi, vo); });
}

void py_scatter_add(nb::handle out, nb::handle indices, nb::handle values) {
    auto [vo, vi, vv] = views("scatter_add", out, indices, values);
    maybe_release(vv.size, [&] { run_scatter_add(vo, vi, vv); });
}

void py_sort(nb::handle x, nb::handle values, nb::handle indices, bool descending, bool stable) {
    View vx, vv, vi;
    parse(x.ptr(), vx, "sort");
    const bool hv = !values.is_none(), hi = !indices.is_none();
    if (hv) parse(values.ptr(), vv, "sort");
    if (hi) parse(indices.ptr(), vi, "sort");
    maybe_release(vx.size * 4, [&] { run_sort(vx, hv ? &vv : nullptr, hi ? &vi : nullptr, descending, stable); });
}

// A fused op's inputs: a tuple of `lo` to `hi` items, else a TypeError naming the op and the
// tuple it takes (`expected`, e.g. "(x, target)"). Returns the tuple's size.
Py_ssize_t fused_inputs(nb::handle inputs, Py_ssize_t lo, Py_ssize_t hi, const std::string& fn, const char* expected) {
    const Py_ssize_t n = PyTuple_Check(inputs.ptr()) ? PyTuple_GET_SIZE(inputs.ptr()) : -1;
    if (n < lo || n > hi) throw type_error(fn + ": inputs must be " + expected + ".");
    return n;
}

PyObject* input(nb::handle inputs, Py_ssize_t i) { return PyTuple_GET_ITEM(inputs.ptr(), i); }

// params[key] of a fused op (borrowed); nullptr when params is no dict or lacks the key.
PyObject* param(nb::handle params, const char* key) {
    return PyDict_Check(params.ptr()) ? PyDict_GetItemString(params.ptr(), key) : nullptr;
}

// A float (or int, or bool) from the params dict; `fallback` when absent.
double param_number(nb::handle params, const char* key, double fallback, const std::string& fn) {
    PyObject* o = param(params, key);
    if (!o) return fallback;
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        throw type_error(fn + ": params['" + key + "'] must be a number.");
    }
    return v;
}

// A pair of ints from the params dict into a and b; left as they are when absent and not `required`.
void param_pair(nb::handle params, const char* key, int64_t& a, int64_t& b, const std::string& fn, bool required) {
    PyObject* o = param(params, key);
    if (!o && !required) return;
    if (!o || !PyTuple_Check(o) || PyTuple_GET_SIZE(o) != 2)
        throw type_error(fn + ": params['" + key + "'] must be a pair of ints.");
    a = PyLong_AsLongLong(PyTuple_GET_ITEM(o, 0));
    b = PyLong_AsLongLong(PyTuple_GET_ITEM(o, 1));
    if (PyErr_Occurred()) raise_current();
}

// params[key] as one of `names` (a fused op's string choice: conv2d's and pooling's 'grad', nll's
// 'reduction', batch_norm_grad's 'part'): its index; -1 when absent or None; anything else, a
// str UTF-8 cannot hold included, throws E(message).
template <class E>
int param_choice(nb::handle params, const char* key, std::initializer_list<const char*> names, const std::string& message) {
    PyObject* o = param(params, key);
    if (!o || o == Py_None) return -1;
    const char* s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : nullptr;
    if (!s) PyErr_Clear();
    int i = 0;
    for (const char* name : names) {
        if (s && !std::strcmp(s, name)) return i;
        ++i;
    }
    throw E(message);
}

// A Philox stream's position: int `key` (modulo 2^64) and the 128-bit int `counter` as two words
// (each modulo 2^64), for random_bits and the fused random ops alike; `what` is the error.
std::array<uint64_t, 3> philox_position(PyObject* key, PyObject* ctr, const char* what) {
    if (!key || !ctr || !PyLong_Check(key) || !PyLong_Check(ctr)) throw type_error(what);
    const nb::object sixty_four = nb::steal(PyLong_FromLong(64));
    const nb::object upper = nb::steal(PyNumber_Rshift(ctr, sixty_four.ptr()));
    if (!upper.is_valid()) raise_current();
    const std::array<uint64_t, 3> out = {PyLong_AsUnsignedLongLongMask(key), PyLong_AsUnsignedLongLongMask(ctr),
                                         PyLong_AsUnsignedLongLongMask(upper.ptr())};
    if (PyErr_Occurred()) raise_current();
    return out;
}

// The position from a fused op's params 'key' and 'counter'.
std::array<uint64_t, 3> philox_params(nb::handle params, const char* what) {
    return philox_position(param(params, "key"), param(params, "counter"), what);
}

// fused("adam", (grad, exp_avg, exp_avg_sq), param, params): param, exp_avg and
// exp_avg_sq are updated in place.
void py_fused_adam(nb::handle inputs, nb::handle out, nb::handle params) {
    const std::string fn = "fused adam";
    fused_inputs(inputs, 3, 3, fn, "a tuple (grad, exp_avg, exp_avg_sq)");
    if (!PyDict_Check(params.ptr())) throw type_error(fn + ": params must be a dict.");
    auto [vp, vg, vm, vv] = views("fused adam", out, input(inputs, 0), input(inputs, 1), input(inputs, 2));
    AdamParams a;
    a.lr = param_number(params, "lr", a.lr, fn);
    a.beta1 = param_number(params, "beta1", a.beta1, fn);
    a.beta2 = param_number(params, "beta2", a.beta2, fn);
    a.eps = param_number(params, "eps", a.eps, fn);
    a.weight_decay = param_number(params, "weight_decay", a.weight_decay, fn);
    a.decoupled = param_number(params, "decoupled", 0.0, fn) != 0.0;
    a.step = static_cast<int64_t>(param_number(params, "step", 1.0, fn));
    maybe_release(vp.size * 4, [&] { run_adam(a, vp, vg, vm, vv); });
}

// fused("conv2d", (a, b, c), out, params): one pass of conv2d (src/conv.h); params holds
// "stride", "padding", "dilation" (pairs), "groups" and "grad" (absent/None, "input", "weight", "bias").
void py_fused_conv2d(nb::handle inputs, nb::handle out, nb::handle params) {
    const std::string fn = "fused conv2d";
    const Py_ssize_t n = fused_inputs(inputs, 1, 3, fn, "a tuple of 1 to 3 Refs");
    if (!PyDict_Check(params.ptr())) throw type_error(fn + ": params must be a dict.");
    ConvParams p;
    param_pair(params, "stride", p.sh, p.sw, fn, false);
    param_pair(params, "padding", p.ph, p.pw, fn, false);
    param_pair(params, "dilation", p.dh, p.dw, fn, false);
    p.groups = static_cast<int64_t>(param_number(params, "groups", 1.0, fn));
    static constexpr int passes[] = {CONV_GRAD_INPUT, CONV_GRAD_WEIGHT, CONV_GRAD_BIAS};
    const int grad = param_choice<std::invalid_argument>(params, "grad", {"input", "weight", "bias"},
                                                         fn + ": params['grad'] must be None, 'input', 'weight' or 'bias'.");
    if (grad >= 0) p.pass = passes[grad];
    View v[3], vo;
    const View* pv[3] = {nullptr, nullptr, nullptr};
    for (Py_ssize_t i = 0; i < n; ++i) {
        if (input(inputs, i) == Py_None) continue;
        parse(input(inputs, i), v[i], "fused conv2d");
        pv[i] = &v[i];
    }
    if (!pv[0]) throw type_error(fn + ": the first input must be a Ref.");
    parse(out.ptr(), vo, "fused conv2d");
    const int64_t work = (vo.size + v[0].size) * (pv[1] ? 9 : 1);
    maybe_release(work, [&] { run_conv2d(p, v[0], pv[1], pv[2], vo); });
}

// fused("max_pool2d" | "avg_pool2d", inputs, out, params): src/pool.h; params holds "kernel"
// and "stride" (pairs) and "grad" (absent/None or "input").
void py_fused_pool(int code, nb::handle inputs, nb::handle out, nb::handle params) {
    const char* fn = code == FU_MAX_POOL2D ? "fused max_pool2d" : "fused avg_pool2d";
    if (!PyDict_Check(params.ptr())) throw type_error(std::string(fn) + ": params must be a dict.");
    PoolParams p;
    p.max = code == FU_MAX_POOL2D;
    param_pair(params, "kernel", p.kh, p.kw, fn, true);
    param_pair(params, "stride", p.sh, p.sw, fn, true);
    p.grad = param_choice<std::invalid_argument>(params, "grad", {"input"},
                                                 std::string(fn) + ": params['grad'] must be None or 'input'.") == 0;
    const Py_ssize_t want = p.grad && p.max ? 2 : 1;
    fused_inputs(inputs, want, want, fn, want == 2 ? "a tuple of 2 Refs" : "a tuple of 1 Ref");
    View va, vb, vo;
    parse(input(inputs, 0), va, fn);
    if (want == 2) parse(input(inputs, 1), vb, fn);
    parse(out.ptr(), vo, fn);
    maybe_release(vo.size + va.size, [&] { run_pool2d(p, va, want == 2 ? &vb : nullptr, vo); });
}

void py_fused(nb::handle op, nb::handle inputs, nb::handle out, nb::handle params) {
    int code = g_fused.lookup(op.ptr());
    if (code == FU_MAX_POOL2D || code == FU_AVG_POOL2D) return py_fused_pool(code, inputs, out, params);
    if (code == FU_ADAM) return py_fused_adam(inputs, out, params);
    if (code == FU_CONV2D) return py_fused_conv2d(inputs, out, params);
    if (code == FU_COUNT_NONZERO || code == FU_MINMAX || code == FU_NONZERO) {
        const char* fn = code == FU_MINMAX    ? "fused minmax"
                         : code == FU_NONZERO ? "fused nonzero"
                                              : "fused count_nonzero";
        fused_inputs(inputs, 1, 1, fn, "a tuple (x,)");
        auto [vx, vo] = views(fn, input(inputs, 0), out);
        if (code == FU_MINMAX) return maybe_release(vx.size, [&] { run_minmax(vx, vo); });
        if (code == FU_NONZERO) return maybe_release(vx.size, [&] { run_nonzero(vx, vo); });
        return maybe_release(vx.size, [&] { run_count_nonzero(vx, vo); });
    }
    if (code == FU_TAKE_AXIS || code == FU_PUT_AXIS) {
        // fused("take_axis", (x, indices), out, {}) and fused("put_axis", (indices, values), out,
        // {} or {"distinct": bool}): src/driver.h; put_axis writes `out` in place
        const char* fn = code == FU_TAKE_AXIS ? "fused take_axis" : "fused put_axis";
        fused_inputs(inputs, 2, 2, fn, "a tuple of 2 Refs");
        bool distinct = false;
        if (code == FU_PUT_AXIS) {
            PyObject* d = param(params, "distinct");
            if (d && !PyBool_Check(d)) throw type_error("fused put_axis: params['distinct'] must be a bool.");
            distinct = d == Py_True;
        }
        auto [v0, v1, vo] = views(fn, input(inputs, 0), input(inputs, 1), out);
        if (code == FU_TAKE_AXIS) return maybe_release(vo.size, [&] { run_take_axis(v0, v1, vo); });
        return maybe_release(v1.size, [&] { run_put_axis(vo, v0, v1, distinct); });
    }
    if (code == FU_TAKE_ALONG) {
        // fused("take_along", (x, indices), out, {}): src/driver.h
        fused_inputs(inputs, 2, 2, "fused take_along", "a tuple (x, indices)");
        auto [vx, vi, vo] = views("fused take_along", input(inputs, 0), input(inputs, 1), out);
        return maybe_release(vo.size, [&] { run_take_along(vx, vi, vo); });
    }
    if (code == FU_CROSS) {
        fused_inputs(inputs, 2, 2, "fused cross", "a tuple (a, b)");
        auto [va, vb, vo] = views("fused cross", input(inputs, 0), input(inputs, 1), out);
        return maybe_release(vo.size * 4, [&] { run_cross(va, vb, vo); });
    }
    if (code == FU_SEARCHSORTED) {
        const char* fn = "fused searchsorted";
        fused_inputs(inputs, 2, 2, fn, "a tuple (a, v)");
        PyObject* r = param(params, "right");
        if (!r || !PyBool_Check(r)) throw type_error("fused searchsorted: params['right'] must be a bool.");
        auto [va, vv, vo] = views(fn, input(inputs, 0), input(inputs, 1), out);
        return maybe_release(vv.size, [&] { run_searchsorted(va, vv, vo, r == Py_True); });
    }
    if (code == FU_CLIP) {
        fused_inputs(inputs, 1, 1, "fused clip", "a tuple (x,)");
        auto [vx, vo] = views("fused clip", input(inputs, 0), out);
        double bound[2] = {0, 0};
        bool has[2] = {false, false};
        const char* keys[2] = {"min", "max"};
        for (int j = 0; j < 2; ++j) {
            PyObject* o = param(params, keys[j]);
            if (!o) throw type_error("fused clip: params must hold 'min' and 'max' (floats or None).");
            if (o == Py_None) continue;
            if (!PyFloat_Check(o)) throw type_error(std::string("fused clip: params['") + keys[j] + "'] must be a float or None.");
            bound[j] = PyFloat_AsDouble(o);
            has[j] = true;
        }
        return maybe_release(vx.size, [&] { run_clip(vx, vo, has[0], bound[0], has[1], bound[1]); });
    }
    if (code == FU_NLL) {
        fused_inputs(inputs, 2, 2, "fused nll", "a tuple (x, target)");
        const char* message = "fused nll: params['reduction'] must be 'none', 'sum' or 'mean'.";
        const int choice = param_choice<type_error>(params, "reduction", {"none", "sum", "mean"}, message);
        if (choice < 0) throw type_error(message);
        static constexpr NllReduction reductions[] = {NLL_NONE, NLL_SUM, NLL_MEAN};
        const NllReduction how = reductions[choice];
        auto [vx, vt, vo] = views("fused nll", input(inputs, 0), input(inputs, 1), out);
        return maybe_release(vt.size * 16, [&] { run_nll(vx, vt, how, vo); });
    }
    if (code == FU_SUMSQ) {
        const Py_ssize_t n = fused_inputs(inputs, 1, 2, "fused sumsq", "a tuple (x,) or (x, centre)");
        View vx, vc, vo;
        parse(input(inputs, 0), vx, "fused sumsq");
        if (n == 2) parse(input(inputs, 1), vc, "fused sumsq");
        parse(out.ptr(), vo, "fused sumsq");
        return maybe_release(vx.size, [&] { run_sumsq(vx, n == 2 ? &vc : nullptr, vo); });
    }
    if (code == FU_ARANGE) {
        fused_inputs(inputs, 0, 0, "fused arange", "()");
        auto [vo] = views("fused arange", out);
        PyObject* a = param(params, "start");
        PyObject* b = param(params, "step");
        const bool integral = vo.dtype >= I8 && vo.dtype <= U64;
        auto is_num = [&](PyObject* o) { return o && (integral ? PyLong_Check(o) : PyFloat_Check(o)); };
        if (!is_num(a) || !is_num(b))
            throw type_error(std::string("fused arange: params['start'] and params['step'] must be ") +
                             (integral ? "ints" : "floats") + " for a " + DT_NAME[vo.dtype] + " out.");
        double fs = 0, fd = 0;
        int64_t is = 0, id = 0;
        if (integral) {
            is = PyLong_AsLongLong(a);
            id = PyLong_AsLongLong(b);
        } else {
            fs = PyFloat_AsDouble(a);
            fd = PyFloat_AsDouble(b);
        }
        if (PyErr_Occurred()) raise_current();
        return maybe_release(vo.size, [&] { run_arange(vo, fs, fd, is, id); });
    }
    if (code == FU_UNIFORM) {
        const char* what = "fused uniform: params must hold ints 'key' and 'counter' and floats 'low' and 'high'.";
        fused_inputs(inputs, 0, 0, "fused uniform", "()");
        auto [vo] = views("fused uniform", out);
        PyObject* lo = param(params, "low");
        PyObject* hi = param(params, "high");
        if (!lo || !hi || !PyFloat_Check(lo) || !PyFloat_Check(hi)) throw type_error(what);
        const std::array<uint64_t, 3> at = philox_params(params, what);
        const double l = PyFloat_AsDouble(lo), h = PyFloat_AsDouble(hi);
        if (PyErr_Occurred()) raise_current();
        // NOTE: the scale is high - low in float64, then rounded to out's dtype, as the core's
        // composite multiplies by that Python float
        return maybe_release(vo.size, [&] { run_uniform(at[0], at[1], at[2], h - l, l, vo); });
    }
    if (code == FU_INTEGERS) {
        const char* what = "fused integers: params must hold ints 'key', 'counter', 'top' (0 to 2**64 - 1) and 'low'.";
        fused_inputs(inputs, 0, 0, "fused integers", "()");
        auto [vo] = views("fused integers", out);
        PyObject* top = param(params, "top");
        PyObject* low = param(params, "low");
        if (!top || !low || !PyLong_Check(top) || !PyLong_Check(low)) throw type_error(what);
        const std::array<uint64_t, 3> at = philox_params(params, what);
        const uint64_t t = PyLong_AsUnsignedLongLong(top);
        if (PyErr_Occurred()) {
            PyErr_Clear();
            throw type_error(what);
        }
        const uint64_t l = PyLong_AsUnsignedLongLongMask(low);  // modulo 2^64, as the sum wraps
        if (PyErr_Occurred()) raise_current();
        return maybe_release(vo.size, [&] { run_integers(at[0], at[1], at[2], t, l, vo); });
    }
    if (code == FU_BATCH_NORM) {
        const char* fn = "fused batch_norm";
        fused_inputs(inputs, 5, 5, fn, "a tuple (x, mean, var, weight or None, bias or None)");
        PyObject* e = param(params, "eps");
        if (!e || !PyFloat_Check(e)) throw type_error("fused batch_norm: params['eps'] must be a float.");
        const double eps = PyFloat_AsDouble(e);
        View v[5], vo;
        bool given[5] = {};
        for (int j = 0; j < 5; ++j) {
            if (j >= 3 && input(inputs, j) == Py_None) continue;
            parse(input(inputs, j), v[j], fn);
            given[j] = true;
        }
        parse(out.ptr(), vo, fn);
        return maybe_release(vo.size, [&] {
            run_batch_norm(v[0], v[1], v[2], given[3] ? &v[3] : nullptr, given[4] ? &v[4] : nullptr, eps, vo);
        });
    }
    if (code == FU_BATCH_NORM_GRAD) {
        // params['part']: "sums" with inputs (x, g, mean), "input" with (x, g, mean, coef)
        const char* fn = "fused batch_norm_grad";
        const char* message = "fused batch_norm_grad: params['part'] must be 'sums' or 'input'.";
        const int part = param_choice<type_error>(params, "part", {"sums", "input"}, message);
        if (part < 0) throw type_error(message);
        const bool grad_input = part == 1;
        fused_inputs(inputs, grad_input ? 4 : 3, grad_input ? 4 : 3, fn, grad_input ? "a tuple (x, g, mean, coef)" : "a tuple (x, g, mean)");
        View v[4], vo;
        for (int j = 0; j < (grad_input ? 4 : 3); ++j) parse(input(inputs, j), v[j], fn);
        parse(out.ptr(), vo, fn);
        return maybe_release(v[0].size * (grad_input ? 2 : 1), [&] { run_batch_norm_grad(v[0], v[1], v[2], grad_input ? &v[3] : nullptr, vo); });
    }
    // the row ops (softmax, log_softmax, logsumexp, layer_norm): (x, weight or None, bias or None)
    const Py_ssize_t n = fused_inputs(inputs, 1, 3, "fused", "a tuple (x, ...)");
    View vx, vo, vw, vb;
    parse(input(inputs, 0), vx, "fused");
    parse(out.ptr(), vo, "fused");
    const bool hw = n > 1 && input(inputs, 1) != Py_None, hb = n > 2 && input(inputs, 2) != Py_None;
    if (hw) parse(input(inputs, 1), vw, "fused");
    if (hb) parse(input(inputs, 2), vb, "fused");
    const double eps = param_number(params, "eps", 1e-5, "fused");
    maybe_release(vx.size * 8, [&] { run_fused(code, vx, hw ? &vw : nullptr, hb ? &vb : nullptr, eps, vo); });
}

// linalg(op, inputs, outputs): tuples of Refs.
void py_linalg(nb::handle op, nb::handle inputs, nb::handle outputs) {
    int code = g_linalg.lookup(op.ptr());
    if (!PyTuple_Check(inputs.ptr()) || !PyTuple_Check(outputs.ptr()))
        throw type_error("linalg: inputs and outputs must be tuples of Refs.");
    const Py_ssize_t nin = PyTuple_GET_SIZE(inputs.ptr()), nout = PyTuple_GET_SIZE(outputs.ptr());
    if (nin < 1 || nin > 2 || nout < 1 || nout > 3)
        throw std::invalid_argument(std::string("linalg.") + linalg_name(code) + ": expected 1-2 inputs and 1-3 outputs.");
    View in[2], out[3];
    for (Py_ssize_t i = 0; i < nin; ++i) parse(PyTuple_GET_ITEM(inputs.ptr(), i), in[i], "linalg");
    for (Py_ssize_t i = 0; i < nout; ++i) parse(PyTuple_GET_ITEM(outputs.ptr(), i), out[i], "linalg");
    const int64_t n = in[0].ndim == 3 ? std::max(in[0].shape[1], in[0].shape[2]) : 0;
    maybe_release(in[0].size * n, [&] { run_linalg(code, in, int(nin), out, int(nout)); });
}

// _call_chunks(fn, plan, tail, x, x_step, out, out_step, chunks): fn(plan, x + i * x_step,
// out + i * out_step) for every i in [0, chunks) on the backend's pool, `tail` the plan of the
// last chunk; fn is the address of a C function void(void*, void*, void*): FFTW's new-array
// execute, which may run one plan on several threads at once (ndplane_cpu/_fft.py). FFTW's own
// threads would be a second pool (OpenMP) spinning beside this one after every transform.
// NOTE: private to _fft.py, which takes every address from FFTW and from the Refs it checked:
// nothing here can tell an address from a number.
void py_call_chunks(uintptr_t fn, uintptr_t plan, uintptr_t tail, uintptr_t x, int64_t x_step, uintptr_t out,
                    int64_t out_step, int64_t chunks) {
    if (!fn || !plan || !tail || !x || !out || chunks < 1)
        throw std::invalid_argument("_call_chunks: expected non-null addresses and chunks >= 1.");
    using Fn = void (*)(void*, void*, void*);
    const Fn f = reinterpret_cast<Fn>(fn);
    nb::gil_scoped_release release;
    parallel_range(chunks, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
            f(reinterpret_cast<void*>(i == chunks - 1 ? tail : plan), reinterpret_cast<void*>(x + i * x_step),
              reinterpret_cast<void*>(out + i * out_step));
    });
}

// One block of columns of _call_columns: gathered into `s` (column c of the block as row c, rows
// `dist` elements apart), transformed in place by fn(plan, s, s), scattered into out times
// `factor`. E is the element type (complex64 or complex128), R its real part.
template <class E, class R>
void column_block(void (*fn)(void*, void*, void*), void* plan, const char* x, int64_t x_row, char* out,
                  int64_t out_row, int64_t n, int64_t width, int64_t dist, R factor, E* s) {
    for (int64_t r = 0; r < n; ++r) {  // NOTE: row r of x holds element r of every column
        const E* src = reinterpret_cast<const E*>(x + r * x_row);
        for (int64_t c = 0; c < width; ++c) s[c * dist + r] = src[c];
    }
    fn(plan, s, s);
    for (int64_t r = 0; r < n; ++r) {
        E* dst = reinterpret_cast<E*>(out + r * out_row);
        if (factor == R(1))
            for (int64_t c = 0; c < width; ++c) dst[c] = s[c * dist + r];
        else
            for (int64_t c = 0; c < width; ++c) dst[c] = s[c * dist + r] * factor;
    }
}

// _call_columns(fn, plan, tail, x, x_row, out, out_row, n, cols, block, dist, itemsize, factor):
// the transforms of length n down `cols` adjacent columns of x (element r of column c at byte
// x + r * x_row + c * itemsize) into the same columns of out, scaled by `factor`; per block of
// `block` columns on the backend's pool: the block gathered into a scratch of `block` rows
// `dist` elements apart (64-byte aligned, as the plans were made), fn(plan, s, s) in place
// (`tail` the plan of the last, narrower block), scattered back. FFTW planned on the columns as
// they lie reads them a power-of-two row length apart, all in one cache set (256 x 256
// complex128: 2.5x the time of its rows); here each block reads whole cache lines of x, and
// `dist` (the caller pads it) keeps the scratch's rows out of one set. fn as in _call_chunks.
// NOTE: private to _fft.py, which takes every address from FFTW and from the Refs it checked.
void py_call_columns(uintptr_t fn, uintptr_t plan, uintptr_t tail, uintptr_t x, int64_t x_row, uintptr_t out,
                     int64_t out_row, int64_t n, int64_t cols, int64_t block, int64_t dist, int64_t itemsize,
                     double factor) {
    if (!fn || !plan || !tail || !x || !out || n < 1 || cols < 1 || block < 1 || dist < n ||
        (itemsize != 8 && itemsize != 16))
        throw std::invalid_argument("_call_columns: expected non-null addresses, n, cols, block >= 1, "
                                    "dist >= n and an itemsize of 8 or 16.");
    using Fn = void (*)(void*, void*, void*);
    const Fn f = reinterpret_cast<Fn>(fn);
    const int64_t blocks = (cols + block - 1) / block, bytes = (block * dist * itemsize + 63) / 64 * 64;
    std::atomic<bool> failed{false};
    {
        nb::gil_scoped_release release;
        // NOTE: one block a thread at the least: a block is a whole transform's worth of work
        parallel_range(blocks, 1, [&](int64_t b, int64_t e) {
            void* s = std::aligned_alloc(64, size_t(bytes));
            if (!s) {
                failed = true;
                return;
            }
            for (int64_t i = b; i < e; ++i) {
                const int64_t c0 = i * block, width = std::min(block, cols - c0);
                void* p = reinterpret_cast<void*>(i == blocks - 1 ? tail : plan);
                const char* xs = reinterpret_cast<const char*>(x) + c0 * itemsize;
                char* os = reinterpret_cast<char*>(out) + c0 * itemsize;
                if (itemsize == 8)
                    column_block<std::complex<float>, float>(f, p, xs, x_row, os, out_row, n, width, dist,
                                                             float(factor), static_cast<std::complex<float>*>(s));
                else
                    column_block<std::complex<double>, double>(f, p, xs, x_row, os, out_row, n, width, dist, factor,
                                                               static_cast<std::complex<double>*>(s));
            }
            std::free(s);
        });
    }
    if (failed) throw std::bad_alloc();
}

void py_random_bits(nb::handle key, nb::handle counter, nb::handle out) {
    const std::array<uint64_t, 3> at =
        philox_position(key.ptr(), counter.ptr(), "random_bits: key and counter must be ints.");
    auto [vo] = views("random_bits", out);
    maybe_release(vo.size, [&] { run_random_bits(at[0], at[1], at[2], vo); });
}

void py_init(nb::handle ref_type, nb::handle dtypes, nb::handle oom, std::string device) {
    g_ref_type = nullptr;
    for (int i = 0; i < NFIELD; ++i) {
        PyObject* d = PyObject_GetAttrString(ref_type.ptr(), FIELD_NAMES[i]);
        if (!d) {
            PyErr_Clear();
            return;  // not a slotted Ref: every Ref goes through getattr
        }
        bool ok = Py_TYPE(d) == &PyMemberDescr_Type &&
                  reinterpret_cast<PyMemberDescrObject*>(d)->d_member->type == T_OBJECT_EX;
        if (ok) g_offsets[i] = reinterpret_cast<PyMemberDescrObject*>(d)->d_member->offset;
        Py_DECREF(d);
        if (!ok) return;
    }
    if (!PyType_Check(ref_type.ptr())) return;
    Py_INCREF(ref_type.ptr());
    g_ref_type = reinterpret_cast<PyTypeObject*>(ref_type.ptr());
    nb::tuple dt = nb::borrow<nb::tuple>(dtypes);
    if (dt.size() != NDT) throw std::invalid_argument("init: expected the 14 dtypes of ndplane.ALL_DTYPES.");
    for (int i = 0; i < NDT; ++i) {
        g_dtypes[i] = dt[i].ptr();
        Py_INCREF(g_dtypes[i]);
    }
    Py_XINCREF(oom.ptr());
    g_oom = oom.ptr();
    g_device = device;
}

nb::dict op_dtypes() {
    const Kernels& k = kernels();
    nb::dict out;
    auto table = [&](auto names, int n, auto pred) {
        nb::dict d;
        for (int i = 0; i < n; ++i) {
            nb::list l;
            for (int t = 0; t < NDT; ++t)
                if (pred(i, t)) l.append(DT_NAME[t]);
            d[names[i]] = l;
        }
        return d;
    };
    const char* un[] = {
#define X(n) #n,
        NDP_UNARY_OPS(X)
#undef X
    };
    const char* bn[] = {
#define X(n) #n,
        NDP_BINARY_OPS(X)
#undef X
    };
    out["unary"] = table(un, ops::NUNARY, [&](int i, int t) { return k.unary[i][t] != nullptr; });
    out["binary"] = table(bn, ops::NBINARY, [&](int i, int t) { return k.binary[i][t] != nullptr; });
    // The other families by name only (their dtypes are the adapter's to state): the plugin
    // declares exactly these, so a core that knows more ops never sees them claimed here.
    for (const OpTable* t : {&g_reduce, &g_scan, &g_fused, &g_linalg}) {
        nb::list names;
        for (const auto& [name, code] : t->by_name) names.append(name);
        out[t->kind] = names;
    }
    return out;
}

}  // namespace
}  // namespace ndp

NB_MODULE(_native, m) {
    using namespace ndp;
    m.doc() = "C++ kernels of the ndplane cpu backend.";
    nb::object buffer_type = nb::steal(make_buffer_type("ndplane_cpu._native"));
    if (!buffer_type.is_valid()) throw nb::python_error();
    m.attr("Buffer") = buffer_type;
    init_op_tables();
    nb::register_exception_translator([](const std::exception_ptr& p, void*) {
        try {
            std::rethrow_exception(p);
        } catch (const type_error& e) {
            PyErr_SetString(PyExc_TypeError, e.what());
        } catch (const index_error& e) {
            PyErr_SetString(PyExc_IndexError, e.what());
        } catch (const linalg_error& e) {
            PyErr_SetString(g_linalg_error ? g_linalg_error : PyExc_ValueError, e.what());
        }
    });
    m.def("init", &py_init, "Register the Ref class, the dtype singletons, OutOfMemoryError and the device name.");
    m.def("alloc", &py_alloc);
    m.def("free", &py_free);
    m.def("from_host", &py_from_host);
    m.def("adopt_host", &py_adopt_host);
    m.def("copy", &py_copy);
    m.def("fill", &py_fill);
    m.def("unary", &py_unary);
    m.def("binary", &py_binary);
    m.def("where", &py_where);
    m.def("cast", &py_cast);
    m.def("reduce", &py_reduce);
    m.def("scan", &py_scan);
    m.def("matmul", &py_matmul);
    m.def("take", &py_take);
    m.def("scatter_add", &py_scatter_add);
    m.def("sort", &py_sort, nb::arg("x"), nb::arg("values_out").none(),
          nb::arg("indices_out").none(), nb::arg("descending"), nb::arg("stable"));
    m.def("random_bits", &py_random_bits);
    m.def("_call_chunks", &py_call_chunks);
    m.def("_call_columns", &py_call_columns);
    m.def("fused", &py_fused);
    m.def("linalg", &py_linalg, "linalg(op, inputs, outputs): batched LAPACK (see Backend.linalg).");
    m.def("set_linalg_error", [](nb::handle cls) {
        Py_XINCREF(cls.ptr());
        g_linalg_error = cls.ptr();
    }, "The exception class raised for singular / non-positive-definite / non-converging input.");
    m.def("op_dtypes", &op_dtypes,
          "{'unary': {op: [dtype names]}, 'binary': {...}} of native loops, and the op names of "
          "'reduce', 'scan', 'fused' and 'linalg' (the FFT is ducc0's: ndplane_cpu/_fft.py).");
    m.def("memory_stats", [] {
        MemoryStats s = memory_stats();
        return std::make_tuple(s.buffers, s.bytes, s.cached_bytes);
    });
    m.def("empty_cache", [] {
        empty_cache();
        release_sort_scratch();
    });
    m.def("isa", [] { return std::string(kernels().isa); });
    // Where the transcendental functions' vector code comes from (src/vmath.h).
#if defined(NDP_LIBMVEC)
    m.def("vector_math", [] { return std::string("libmvec"); });
#else
    m.def("vector_math", [] { return std::string("scalar"); });
#endif
    m.def("num_threads", &num_threads);
    m.def("chunk_bounds", &chunk_bounds, nb::arg("n"), nb::arg("grain"), nb::arg("threads"),
          "The chunk bounds a parallel region over n items cuts on `threads` threads (for tests).");
    m.def("set_num_threads", [](int n) {
        set_num_threads(n);
        scipy_openblas_set_num_threads(num_threads());
    });
}
