// Reductions and inclusive scans over the last axis of a 2-D (M, K) view, deterministic:
// a fixed tree per launch shape, no atomics. Three reduction layouts:
//   - a block per row (long rows), threads striding along the row;
//   - a warp per row (rows of at most 256 elements), 8 rows per block;
//   - a thread per row when rows are adjacent in memory and columns are not (a reduction
//     over a leading axis, e.g. column sums): reads coalesce across the warp.
// Inputs of another dtype than the accumulator are cast first by the caller (module.cc),
// so each kernel is instantiated for one storage type (argmax/argmin/any/all: the input's).
#include "elementwise.cuh"

namespace ndp {

namespace {

// Each reduction: Acc (accumulator), init, take (element k of a row), combine, result.
// sum (PROD false) or prod, accumulating in the compute type (float for float16).
template <class T, bool PROD> struct ArithR {
    using C = compute_t<T>;
    using Acc = C;
    __device__ static Acc init() { return C(PROD ? 1 : 0); }
    __device__ static Acc take(T v, int64_t) { return widen(v); }
    __device__ static Acc combine(Acc a, Acc b) { return PROD ? ops::multiply::f(a, b) : ops::add::f(a, b); }
    __device__ static T result(Acc a) { return convert<T>(a); }
};
template <class T, bool MAX> struct ExtremeR {
    using C = compute_t<T>;
    using Acc = C;
    // The identity: what a thread with no element of the row contributes.
    __device__ static Acc init() {
        if constexpr (is_complex_v<C>) {
            using Re = real_t<C>;
            const Re inf = cuda::std::numeric_limits<Re>::infinity();
            return MAX ? C(-inf, -inf) : C(inf, inf);
        } else if constexpr (cuda::std::is_floating_point_v<C>) {
            return MAX ? -cuda::std::numeric_limits<C>::infinity() : cuda::std::numeric_limits<C>::infinity();
        } else {
            return MAX ? cuda::std::numeric_limits<C>::lowest() : cuda::std::numeric_limits<C>::max();
        }
    }
    __device__ static Acc take(T v, int64_t) { return widen(v); }
    __device__ static Acc combine(Acc a, Acc b) {
        if constexpr (MAX) return ops::maximum::f(a, b);
        else return ops::minimum::f(a, b);
    }
    __device__ static T result(Acc a) { return convert<T>(a); }
};
template <class T> struct Indexed {
    compute_t<T> v;
    int64_t i;  // -1: empty
};
// The first index of the extreme; NaN counts as the extreme (the first NaN wins).
template <class T, bool MAX> struct ArgR {
    using C = compute_t<T>;
    using Acc = Indexed<T>;
    __device__ static Acc init() { return {C(0), -1}; }
    __device__ static Acc take(T v, int64_t k) { return {widen(v), k}; }
    __device__ static bool before(const Acc& a, const Acc& b) {  // is a preferred to b
        if (b.i < 0) return a.i >= 0;
        if (a.i < 0) return false;
        const bool an = is_nan(a.v), bn = is_nan(b.v);
        if (an || bn) return an && (!bn || a.i < b.i);
        bool better, equal;
        if constexpr (is_complex_v<C>) {
            better = MAX ? ops::clt(b.v, a.v) : ops::clt(a.v, b.v);
            equal = a.v == b.v;
        } else {
            better = MAX ? a.v > b.v : a.v < b.v;
            equal = a.v == b.v;
        }
        return better || (equal && a.i < b.i);
    }
    __device__ static Acc combine(Acc a, Acc b) { return before(b, a) ? b : a; }
    __device__ static int64_t result(Acc a) { return a.i < 0 ? 0 : a.i; }
};
template <class T, bool ANYR> struct BoolR {
    using Acc = bool;
    __device__ static Acc init() { return !ANYR; }
    __device__ static Acc take(T v, int64_t) { return truthy(v); }
    __device__ static Acc combine(Acc a, Acc b) { return ANYR ? (a || b) : (a && b); }
    __device__ static bool result(Acc a) { return a; }
};

template <class T> __device__ __forceinline__ T at(const Rows& x, int64_t r, int64_t k) {
    return reinterpret_cast<const T*>(x.data)[r * x.row_stride + k * x.col_stride];
}

// Tree over `n` (a power of two) accumulators in shared memory, in a fixed order.
template <class R> __device__ typename R::Acc tree(typename R::Acc* s, int lane, int n) {
    for (int w = n / 2; w > 0; w /= 2) {
        if (n == 32) __syncwarp();
        else __syncthreads();
        if (lane < w) s[lane] = R::combine(s[lane], s[lane + w]);
    }
    if (n == 32) __syncwarp();
    else __syncthreads();
    return s[0];
}

template <class T, class R, class Out>
__global__ void __launch_bounds__(BLOCK) reduce_block_rows(Rows x, Out* __restrict__ out) {
    __shared__ typename R::Acc s[BLOCK];
    for (int64_t r = blockIdx.x; r < x.m; r += gridDim.x) {
        typename R::Acc acc = R::init();
        for (int64_t k = threadIdx.x; k < x.k; k += BLOCK) acc = R::combine(acc, R::take(at<T>(x, r, k), k));
        s[threadIdx.x] = acc;
        typename R::Acc total = tree<R>(s, threadIdx.x, BLOCK);
        if (threadIdx.x == 0) out[r] = R::result(total);
        __syncthreads();
    }
}

template <class T, class R, class Out>
__global__ void __launch_bounds__(BLOCK) reduce_warp_rows(Rows x, Out* __restrict__ out) {
    __shared__ typename R::Acc s[BLOCK];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    typename R::Acc* mine = s + warp * 32;
    // Every warp runs the same number of iterations (the loop bound is uniform per block).
    for (int64_t base = int64_t(blockIdx.x) * (BLOCK / 32); base < x.m; base += int64_t(gridDim.x) * (BLOCK / 32)) {
        const int64_t r = base + warp;
        typename R::Acc acc = R::init();
        if (r < x.m)
            for (int64_t k = lane; k < x.k; k += 32) acc = R::combine(acc, R::take(at<T>(x, r, k), k));
        mine[lane] = acc;
        typename R::Acc total = tree<R>(mine, lane, 32);
        if (lane == 0 && r < x.m) out[r] = R::result(total);
        __syncwarp();
    }
}

template <class T, class R, class Out>
__global__ void __launch_bounds__(BLOCK) reduce_thread_rows(Rows x, Out* __restrict__ out) {
    for (int64_t r = int64_t(blockIdx.x) * BLOCK + threadIdx.x; r < x.m; r += int64_t(gridDim.x) * BLOCK) {
        typename R::Acc acc = R::init();
        for (int64_t k = 0; k < x.k; ++k) acc = R::combine(acc, R::take(at<T>(x, r, k), k));
        out[r] = R::result(acc);
    }
}

template <class T, class R, class Out> void run_reduce(const Rows& x, char* out, Stream s) {
    auto stream = static_cast<cudaStream_t>(s);
    auto* o = reinterpret_cast<Out*>(out);
    const int64_t as = x.row_stride < 0 ? -x.row_stride : x.row_stride;
    const int64_t ac = x.col_stride < 0 ? -x.col_stride : x.col_stride;
    const int64_t grid_cap = g_grid_limit;
    if (x.m >= 32 && ac != 1 && as < ac) {
        reduce_thread_rows<T, R, Out><<<grid_for(x.m), BLOCK, 0, stream>>>(x, o);
    } else if (x.k <= 256) {
        int64_t blocks = (x.m + BLOCK / 32 - 1) / (BLOCK / 32);
        reduce_warp_rows<T, R, Out><<<unsigned(blocks < grid_cap ? blocks : grid_cap), BLOCK, 0, stream>>>(x, o);
    } else {
        int64_t blocks = x.m < 65535 * 16 ? x.m : 65535 * 16;
        reduce_block_rows<T, R, Out><<<unsigned(blocks), BLOCK, 0, stream>>>(x, o);
    }
}

using ReduceFn = void (*)(const Rows&, char*, Stream);
struct ReduceTable {
    ReduceFn fn[NREDUCE][NDT] = {};
    int out[NREDUCE][NDT] = {};  // the output dtype each kernel writes
};

template <int D> void fill_reduce_dtype(ReduceTable& t) {
    using T = dt_t<D>;
    t.fn[R_SUM][D] = &run_reduce<T, ArithR<T, false>, T>;
    t.out[R_SUM][D] = D;
    t.fn[R_PROD][D] = &run_reduce<T, ArithR<T, true>, T>;
    t.out[R_PROD][D] = D;
    t.fn[R_MAX][D] = &run_reduce<T, ExtremeR<T, true>, T>;
    t.out[R_MAX][D] = D;
    t.fn[R_MIN][D] = &run_reduce<T, ExtremeR<T, false>, T>;
    t.out[R_MIN][D] = D;
    t.fn[R_ARGMAX][D] = &run_reduce<T, ArgR<T, true>, int64_t>;
    t.out[R_ARGMAX][D] = I64;
    t.fn[R_ARGMIN][D] = &run_reduce<T, ArgR<T, false>, int64_t>;
    t.out[R_ARGMIN][D] = I64;
    t.fn[R_ANY][D] = &run_reduce<T, BoolR<T, true>, bool>;
    t.out[R_ANY][D] = BOOL;
    t.fn[R_ALL][D] = &run_reduce<T, BoolR<T, false>, bool>;
    t.out[R_ALL][D] = BOOL;
}

const ReduceTable& reduce_table() {
    static const ReduceTable t = [] {
        ReduceTable r;
        for_each_dtype([&](auto d) { fill_reduce_dtype<decltype(d)::value>(r); });
        return r;
    }();
    return t;
}

// ---------------------------------------------------------------------------
// scans: a block per row, chunks of BLOCK * ITEMS elements, a carry between chunks
// ---------------------------------------------------------------------------
constexpr int ITEMS = 8;

template <class T, bool PROD>
__global__ void __launch_bounds__(BLOCK) scan_rows(Rows x, T* __restrict__ out) {
    using C = compute_t<T>;
    __shared__ C part[BLOCK];
    auto op = [](C a, C b) { return PROD ? ops::multiply::f(a, b) : ops::add::f(a, b); };
    const C identity = PROD ? C(1) : C(0);
    for (int64_t r = blockIdx.x; r < x.m; r += gridDim.x) {
        C carry = identity;
        for (int64_t start = 0; start < x.k; start += int64_t(BLOCK) * ITEMS) {
            C v[ITEMS];
            const int64_t k0 = start + int64_t(threadIdx.x) * ITEMS;
            C local = identity;
#pragma unroll
            for (int j = 0; j < ITEMS; ++j) {
                v[j] = k0 + j < x.k ? widen(at<T>(x, r, k0 + j)) : identity;
                local = op(local, v[j]);
                v[j] = local;
            }
            // Inclusive scan of the per-thread totals (Hillis-Steele, fixed order).
            part[threadIdx.x] = local;
            __syncthreads();
            for (int w = 1; w < BLOCK; w *= 2) {
                C add = threadIdx.x >= w ? part[threadIdx.x - w] : identity;
                __syncthreads();
                part[threadIdx.x] = op(add, part[threadIdx.x]);
                __syncthreads();
            }
            const C before = op(carry, threadIdx.x > 0 ? part[threadIdx.x - 1] : identity);
            const C chunk_total = part[BLOCK - 1];
            __syncthreads();
            T* row = out + r * x.k;
#pragma unroll
            for (int j = 0; j < ITEMS; ++j)
                if (k0 + j < x.k) row[k0 + j] = convert<T>(op(before, v[j]));
            carry = op(carry, chunk_total);
        }
    }
}

using ScanFn = void (*)(const Rows&, char*, Stream);
template <class T, bool PROD> void run_scan(const Rows& x, char* out, Stream s) {
    int64_t blocks = x.m < 65535 * 16 ? x.m : 65535 * 16;
    scan_rows<T, PROD><<<unsigned(blocks), BLOCK, 0, static_cast<cudaStream_t>(s)>>>(x, reinterpret_cast<T*>(out));
}

const ScanFn (&scan_table())[NSCAN][NDT] {
    static ScanFn t[NSCAN][NDT] = {};
    static bool once = [] {
        for_each_dtype([&](auto d) {
            constexpr int D = decltype(d)::value;
            t[S_CUMSUM][D] = &run_scan<dt_t<D>, false>;
            t[S_CUMPROD][D] = &run_scan<dt_t<D>, true>;
        });
        return true;
    }();
    (void)once;
    return t;
}

}  // namespace

bool reduce_ok(int op, int in_dt, int out_dt) {
    return op >= 0 && op < NREDUCE && reduce_table().fn[op][in_dt] && reduce_table().out[op][in_dt] == out_dt;
}
void launch_reduce(int op, int in_dt, int out_dt, const Rows& x, char* out, Stream s) {
    if (!reduce_ok(op, in_dt, out_dt)) throw std::invalid_argument("reduce: no kernel for this dtype pair.");
    reduce_table().fn[op][in_dt](x, out, s);
}
bool scan_ok(int op, int in_dt, int out_dt) { return op >= 0 && op < NSCAN && in_dt == out_dt; }
void launch_scan(int op, int in_dt, int out_dt, const Rows& x, char* out, Stream s) {
    if (!scan_ok(op, in_dt, out_dt)) throw std::invalid_argument("scan: no kernel for this dtype pair.");
    scan_table()[op][in_dt](x, out, s);
}

}  // namespace ndp
