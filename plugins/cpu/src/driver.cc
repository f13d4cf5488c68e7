// Drivers of the elementwise kernels, copies, reductions and scans: build the
// iteration plan, split it across threads by the work (grain_of), and call the
// inner loops of the kernel table picked for this CPU.
#include "driver.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <utility>

namespace ndp {

void require_same_shape(const char* fn, const View& a, const View& b) {
    bool same = a.ndim == b.ndim;
    for (int d = 0; same && d < a.ndim; ++d) same = a.shape[d] == b.shape[d];
    if (!same) {
        auto str = [](const View& v) {
            std::string s = "(";
            for (int d = 0; d < v.ndim; ++d) s += std::to_string(v.shape[d]) + (v.ndim == 1 ? "," : d + 1 < v.ndim ? ", " : "");
            return s + ")";
        };
        throw std::invalid_argument(std::string(fn) + ": operand shapes differ: " + str(a) +
                                    " and " + str(b) + " (the core broadcasts before calling a kernel).");
    }
}

void require_dtype(const char* fn, const char* what, const View& v, int dtype) {
    if (v.dtype != dtype)
        throw type_error(std::string(fn) + ": expected " + what + " of dtype " + DT_NAME[dtype] +
                         "; got " + DT_NAME[v.dtype] + ".");
}

bool is_c_contiguous(const View& v) {
    if (v.size == 0) return true;
    int64_t expect = 1;
    for (int d = v.ndim - 1; d >= 0; --d) {
        if (v.shape[d] != 1 && v.strides[d] != expect) return false;
        expect *= v.shape[d];
    }
    return true;
}

// The bytes [lo, hi) a non-empty view can touch.
static std::pair<const char*, const char*> extent(const View& v) {
    const char* lo = v.data;
    const char* hi = v.data + v.itemsize();
    for (int d = 0; d < v.ndim; ++d) {
        const int64_t off = (v.shape[d] - 1) * v.strides[d] * v.itemsize();
        (off < 0 ? lo : hi) += off;
    }
    return {lo, hi};
}

bool overlap(const View& a, const View* b) {
    if (!b || a.size == 0 || b->size == 0) return false;
    auto [alo, ahi] = extent(a);
    auto [blo, bhi] = extent(*b);
    return alo < bhi && blo < ahi;
}

static View contiguous_like(const View& x, int dtype, char* data) {
    View v = x;
    v.dtype = dtype;
    v.data = data;
    int64_t s = 1;
    for (int d = x.ndim - 1; d >= 0; --d) {
        v.strides[d] = s;
        s *= x.shape[d];
    }
    return v;
}

static char* alloc_temp(int64_t nbytes, std::unique_ptr<char[]>& hold) {
    hold.reset(new char[static_cast<size_t>(std::max<int64_t>(nbytes, 16))]);
    return hold.get();
}

View contiguous_as(const View& x, int dtype, std::unique_ptr<char[]>& hold) {
    if (dtype == x.dtype && is_c_contiguous(x)) return x;
    View t = contiguous_like(x, dtype, alloc_temp(x.size * ITEMSIZE[dtype], hold));
    run_cast(x, t);
    return t;
}

// The thread grain of an elementwise region, in elements: GRAIN elements of a float32 binary op
// (12 bytes moved per element, as PyTorch's grain of 32768), scaled down by the bytes an element
// of this region moves and by its cost per element (ops::UNARY_COST, BINARY_COST; float16 costs
// twice, computed in float). A memory-bound region needs a thread per about 384 KB moved; an exp
// of float32 a thread per 12288 elements.
static int64_t grain_of(int64_t bytes, int cost, int dtype = BOOL) {
    if (dtype == F16) cost *= 2;
    return std::max<int64_t>(1024, GRAIN * 12 / (std::max<int64_t>(bytes, 1) * cost));
}

// Runs f(ptrs, n) over all runs of the plan, in parallel above two grains.
template <int N, class F> static void run_plan(const Plan& p, int64_t grain, F&& f) {
    parallel_range(p.size, grain, [&](int64_t b, int64_t e) { run_range<N>(p, b, e, f); });
}

void run_unary(int op, const View& x, const View& out) {
    const Kernels& k = kernels();
    UnaryFn fn = k.unary[op][x.dtype];
    if (!fn) throw type_error("unary: op not supported for dtype " + std::string(DT_NAME[x.dtype]) + ".");
    require_dtype("unary", "out", out, k.unary_out[op][x.dtype]);
    require_same_shape("unary", x, out);
    const View* vs[2] = {&out, &x};
    Plan p = make_plan(vs, 2);
    const int in = p.nd - 1;
    const int64_t grain = grain_of(ITEMSIZE[x.dtype] + ITEMSIZE[out.dtype], ops::UNARY_COST[op], x.dtype);
    run_plan<2>(p, grain, [&](char** ptr, int64_t n) { fn(ptr[1], p.st[1][in], ptr[0], p.st[0][in], n); });
}

void run_binary(int op, const View& a, const View& b, const View& out) {
    const Kernels& k = kernels();
    if (a.dtype != b.dtype)
        throw type_error(std::string("binary: operands have different dtypes ") + DT_NAME[a.dtype] +
                         " and " + DT_NAME[b.dtype] + " (the core casts first).");
    BinaryFn fn = k.binary[op][a.dtype];
    if (!fn) throw type_error("binary: op not supported for dtype " + std::string(DT_NAME[a.dtype]) + ".");
    require_dtype("binary", "out", out, k.binary_out[op][a.dtype]);
    require_same_shape("binary", a, out);
    require_same_shape("binary", b, out);
    const View* vs[3] = {&out, &a, &b};
    Plan p = make_plan(vs, 3);
    const int in = p.nd - 1;
    if (p.size == 0) return;
    const int64_t grain = grain_of(2 * ITEMSIZE[a.dtype] + ITEMSIZE[out.dtype], ops::BINARY_COST[op], a.dtype);
    if (p.nd == 2 && (p.size < 2 * grain || p.shape[0] >= 4 * num_threads())) {
        // Rows (a row-broadcast operand, slices): one call per thread chunk of whole rows.
        // NOTE: with fewer rows than 4 per thread, whole rows would split unevenly.
        BinaryRowsFn rows = k.binary_rows[op][a.dtype];
        const int64_t N = p.shape[1];
        parallel_range(p.shape[0], std::max<int64_t>(1, grain / N), [&](int64_t r0, int64_t r1) {
            rows(p.base[1] + r0 * p.st[1][0], p.st[1][0], p.st[1][1], p.base[2] + r0 * p.st[2][0],
                 p.st[2][0], p.st[2][1], p.base[0] + r0 * p.st[0][0], p.st[0][0], p.st[0][1], r1 - r0, N);
        });
        return;
    }
    run_plan<3>(p, grain, [&](char** ptr, int64_t n) {
        fn(ptr[1], p.st[1][in], ptr[2], p.st[2][in], ptr[0], p.st[0][in], n);
    });
}

void run_where(const View& cond, const View& a, const View& b, const View& out) {
    require_dtype("where", "cond", cond, BOOL);
    require_dtype("where", "a", a, out.dtype);
    require_dtype("where", "b", b, out.dtype);
    require_same_shape("where", cond, out);
    require_same_shape("where", a, out);
    require_same_shape("where", b, out);
    WhereFn fn = kernels().where[log2_itemsize(out.dtype)];
    const View* vs[4] = {&out, &cond, &a, &b};
    Plan p = make_plan(vs, 4);
    const int in = p.nd - 1;
    run_plan<4>(p, grain_of(1 + 3 * ITEMSIZE[out.dtype], 1), [&](char** ptr, int64_t n) {
        fn(ptr[1], p.st[1][in], ptr[2], p.st[2][in], ptr[3], p.st[3][in], ptr[0], p.st[0][in], n);
    });
}

void run_cast(const View& x, const View& out) {
    require_same_shape("cast", x, out);
    UnaryFn fn = kernels().cast[x.dtype][out.dtype];
    const View* vs[2] = {&out, &x};
    Plan p = make_plan(vs, 2);
    const int in = p.nd - 1;
    const int64_t osz = ITEMSIZE[out.dtype], isz = ITEMSIZE[x.dtype];
    if (p.nd == 2 && p.st[0][1] == osz && p.st[1][0] == isz && p.st[1][1] != isz && p.shape[0] >= 8 &&
        p.shape[1] >= 8) {
        // A transposed source (astype of x.T): 32 x 32 tiles, so the 32 rows of a tile
        // reuse the source cache lines the first row brought in.
        constexpr int64_t T = 32;
        const int64_t R = p.shape[0], C = p.shape[1];
        const int64_t bands = (R + T - 1) / T;
        parallel_range(bands, R * C >= 2 * GRAIN ? std::max<int64_t>(1, GRAIN / (T * C)) : bands,
                       [&](int64_t b, int64_t e) {
            for (int64_t r0 = b * T; r0 < std::min(R, e * T); r0 += T)
                for (int64_t c0 = 0; c0 < C; c0 += T)
                    for (int64_t r = r0; r < std::min(R, r0 + T); ++r)
                        fn(p.base[1] + r * p.st[1][0] + c0 * p.st[1][1], p.st[1][1],
                           p.base[0] + r * p.st[0][0] + c0 * osz, osz, std::min(T, C - c0));
        });
        return;
    }
    run_plan<2>(p, grain_of(isz + osz, 1), [&](char** ptr, int64_t n) { fn(ptr[1], p.st[1][in], ptr[0], p.st[0][in], n); });
}

// A 2-D copy from a transposed source (dst rows contiguous, src columns
// contiguous): the ISA's register-blocked transpose over bands of 32 rows.
static void transpose_copy(int L, char* dst, int64_t d0, const char* src, int64_t s1, int64_t R, int64_t C) {
    TransposeFn fn = kernels().transpose[L];
    constexpr int64_t BAND = 32;
    const int64_t bands = (R + BAND - 1) / BAND;
    parallel_range(bands, R * C >= 2 * GRAIN ? std::max<int64_t>(1, GRAIN / (BAND * C)) : bands,
                   [&](int64_t b, int64_t e) { fn(dst, d0, src, s1, b * BAND, std::min(R, e * BAND), C); });
}

void run_copy(const View& src, const View& dst) {
    require_dtype("copy", "src", src, dst.dtype);
    require_same_shape("copy", src, dst);
    const int L = log2_itemsize(dst.dtype);
    const View* vs[2] = {&dst, &src};
    Plan p = make_plan(vs, 2, /*reorder=*/true);
    const int in = p.nd - 1;
    const int64_t isz = ITEMSIZE[dst.dtype];
    if (p.nd == 2 && p.st[0][1] == isz && p.st[1][1] != isz && p.st[1][0] == isz &&
        p.shape[0] >= 8 && p.shape[1] >= 8) {
        if (L <= 3) return transpose_copy(L, p.base[0], p.st[0][0], p.base[1], p.st[1][1], p.shape[0], p.shape[1]);
    }
    UnaryFn fn = kernels().copy[L];
    run_plan<2>(p, grain_of(2 * isz, 1), [&](char** ptr, int64_t n) { fn(ptr[1], p.st[1][in], ptr[0], p.st[0][in], n); });
}

void run_fill(const View& dst, const void* value) {
    FillFn fn = kernels().fill[log2_itemsize(dst.dtype)];
    const View* vs[1] = {&dst};
    Plan p = make_plan(vs, 1, /*reorder=*/true);
    const int in = p.nd - 1;
    run_plan<1>(p, grain_of(ITEMSIZE[dst.dtype], 1), [&](char** ptr, int64_t n) { fn(ptr[0], p.st[0][in], n, value); });
}

static const char* const REDUCE_NAMES[NREDUCE] = {"sum", "prod", "max", "min",
                                                  "argmax", "argmin", "any", "all"};

// A reduction whose kernel writes int64 (counts, argmax/argmin) into the integer `out`: directly,
// or through an int64 temporary cast to out's dtype.
void reduce_to_int(int op, int kernel_dtype, const View& x, const View& out) {
    const Kernels& k = kernels();
    if (out.dtype == I64) return k.reduce[kernel_dtype](op, x, out.data);
    std::unique_ptr<char[]> hold;
    View tmp = contiguous_like(out, I64, alloc_temp(out.size * 8, hold));
    k.reduce[kernel_dtype](op, x, tmp.data);
    run_cast(tmp, out);
}

// fused count_nonzero: x (M, K) of any dtype and strides -> out (M,) integer (int64 directly).
void run_count_nonzero(const View& x, const View& out) {
    if (x.ndim != 2 || out.ndim != 1 || out.shape[0] != x.shape[0])
        throw std::invalid_argument("fused count_nonzero: expected x of shape (M, K) and out of shape (M,).");
    if (out.strides[0] != 1 && out.shape[0] > 1)
        throw std::invalid_argument("fused count_nonzero: out must be contiguous.");
    if (out.dtype < I8 || out.dtype > U64)
        throw type_error("fused count_nonzero: out must have an integer dtype; got " +
                         std::string(DT_NAME[out.dtype]) + ".");
    reduce_to_int(R_COUNT, x.dtype, x, out);
}

// fused minmax: each row's min and max (reduce's own kernels, into a scratch pair of rows),
// written as out (M, 2): an index bounds check in one call.
void run_minmax(const View& x, const View& out) {
    if (x.ndim != 2 || out.ndim != 2 || out.shape[0] != x.shape[0] || out.shape[1] != 2)
        throw std::invalid_argument("fused minmax: expected x of shape (M, K) and out of shape (M, 2).");
    if (x.shape[1] == 0) throw std::invalid_argument("fused minmax: the rows of x are empty.");
    if (x.dtype < I8 || x.dtype > U64)
        throw type_error("fused minmax: x must have an integer dtype; got " + std::string(DT_NAME[x.dtype]) + ".");
    require_dtype("fused minmax", "out", out, x.dtype);
    if (out.strides[1] != 1 || (out.strides[0] != 2 && out.shape[0] > 1))
        throw std::invalid_argument("fused minmax: out must be C-contiguous.");
    const int64_t M = x.shape[0], item = ITEMSIZE[x.dtype];
    std::unique_ptr<char[]> hold;
    char* lo = alloc_temp(2 * M * item, hold);
    char* hi = lo + M * item;
    const Kernels& k = kernels();
    k.reduce[x.dtype](R_MIN, x, lo);
    k.reduce[x.dtype](R_MAX, x, hi);
    for (int64_t m = 0; m < M; ++m) {
        std::memcpy(out.data + (2 * m) * item, lo + m * item, size_t(item));
        std::memcpy(out.data + (2 * m + 1) * item, hi + m * item, size_t(item));
    }
}

// fused sumsq: each row's sum of (x - centre)^2, x (M, K) of a float dtype and any strides,
// centre (M,) and out (M,) contiguous of x's dtype: a 2-norm or a variance without temporaries.
void run_sumsq(const View& x, const View* centre, const View& out) {
    if (x.ndim != 2 || out.ndim != 1 || out.shape[0] != x.shape[0])
        throw std::invalid_argument("fused sumsq: expected x of shape (M, K) and out of shape (M,).");
    const SumsqFn fn = kernels().sumsq[x.dtype];
    if (!fn)
        throw type_error("fused sumsq: x must have a real floating dtype; got " + std::string(DT_NAME[x.dtype]) + ".");
    require_dtype("fused sumsq", "out", out, x.dtype);
    if (out.strides[0] != 1 && out.shape[0] > 1) throw std::invalid_argument("fused sumsq: out must be contiguous.");
    if (centre) {
        if (centre->ndim != 1 || centre->shape[0] != x.shape[0])
            throw std::invalid_argument("fused sumsq: expected the centres of shape (M,).");
        require_dtype("fused sumsq", "the centres", *centre, x.dtype);
        if (centre->strides[0] != 1 && centre->shape[0] > 1)
            throw std::invalid_argument("fused sumsq: the centres must be contiguous.");
    }
    if (x.shape[0]) fn(x, centre ? centre->data : nullptr, out.data);
}

void run_reduce(int op, const View& x, const View& out) {
    if (x.ndim != 2 || out.ndim != 1 || out.shape[0] != x.shape[0])
        throw std::invalid_argument("reduce: expected x of shape (M, K) and out of shape (M,).");
    if (out.strides[0] != 1 && out.shape[0] > 1)
        throw std::invalid_argument("reduce: out must be contiguous.");
    if (x.shape[1] == 0 && (op == R_MAX || op == R_MIN || op == R_ARGMAX || op == R_ARGMIN))
        throw std::invalid_argument(std::string("reduce: ") + REDUCE_NAMES[op] +
                                    " of an empty axis has no identity.");
    const Kernels& k = kernels();
    std::unique_ptr<char[]> hold_x;
    switch (op) {
        case R_SUM:
            if (x.dtype == BOOL && out.dtype >= I8 && out.dtype <= U64) {
                // NOTE: a count (count_nonzero, the sum of a mask): counted straight into
                // int64, not summed over a copy of x cast to out's dtype (8 bytes per bool).
                return reduce_to_int(R_COUNT, BOOL, x, out);
            }
            [[fallthrough]];
        case R_PROD: {
            // NOTE: accumulate in out's dtype: cast x first (int8 summed into int64).
            View xc = x;
            if (x.dtype != out.dtype) xc = contiguous_as(x, out.dtype, hold_x);
            k.reduce[out.dtype](op, xc, out.data);
            return;
        }
        case R_MAX:
        case R_MIN:
            require_dtype("reduce", "out", out, x.dtype);
            k.reduce[x.dtype](op, x, out.data);
            return;
        case R_ARGMAX:
        case R_ARGMIN: {
            if (out.dtype < I8 || out.dtype > U64)
                throw type_error("reduce: argmax/argmin write an integer out; got " +
                                 std::string(DT_NAME[out.dtype]) + ".");
            return reduce_to_int(op, x.dtype, x, out);
        }
        default:
            require_dtype("reduce", "out", out, BOOL);
            k.reduce[x.dtype](op, x, out.data);
            return;
    }
}

void run_scan(int op, const View& x, const View& out) {
    if (x.ndim != 2) throw std::invalid_argument("scan: expected x of shape (M, K).");
    require_same_shape("scan", x, out);
    if (!is_c_contiguous(out)) throw std::invalid_argument("scan: out must be contiguous.");
    std::unique_ptr<char[]> hold;
    View xc = x.dtype == out.dtype ? x : contiguous_as(x, out.dtype, hold);
    kernels().scan[out.dtype](op, xc, out.data);
}

void run_fused(int op, const View& x, const View* weight, const View* bias, double eps,
               const View& out) {
    if (x.ndim != 2 || !is_c_contiguous(x) || !is_c_contiguous(out))
        throw std::invalid_argument("fused: expected a C-contiguous x (M, K) and out.");
    FusedFn fn = kernels().fused[x.dtype];
    if (!fn) throw type_error("fused: only float16, float32 and float64 are fused; got " +
                              std::string(DT_NAME[x.dtype]) + ".");
    require_dtype("fused", "out", out, x.dtype);
    const bool rows = op == FU_LOGSUMEXP;
    if (rows ? (out.ndim != 1 || out.shape[0] != x.shape[0]) : (out.ndim != 2 || out.shape[0] != x.shape[0] || out.shape[1] != x.shape[1]))
        throw std::invalid_argument("fused: out has the wrong shape.");
    std::unique_ptr<char[]> hold[2];
    const View* params[2] = {weight, bias};
    const char* data[2] = {nullptr, nullptr};
    for (int i = 0; i < 2; ++i) {
        if (!params[i]) continue;
        if (params[i]->ndim != 1 || params[i]->shape[0] != x.shape[1])
            throw std::invalid_argument("fused: layer_norm weight and bias must have shape (K,).");
        data[i] = contiguous_as(*params[i], x.dtype, hold[i]).data;
    }
    fn(op, x, data[0], data[1], eps, out.data);
}

}  // namespace ndp
