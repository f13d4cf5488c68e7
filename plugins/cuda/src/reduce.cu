// Reductions and inclusive scans over the last axis of a 2-D (M, K) view, deterministic:
// a fixed tree per launch shape, no atomics. Three reduction layouts:
//   - a block per row (long rows), threads striding along the row; where rows are few (a
//     full reduction is one row), each row split into segments over the grid's y as well;
//   - a warp per row (rows of at most 256 elements), 8 rows per block;
//   - when rows are adjacent in memory and columns are not (a reduction over a leading axis,
//     e.g. column sums): a block is 32 adjacent rows (the lanes: reads coalesce) times 8
//     slices of the columns; a long reduced axis is split into segments over the grid's y
//     as well, whose partial accumulators a second kernel combines in segment order. The
//     split depends on (M, K) alone, so a result is the same on every GPU.
// Inputs of another dtype than the accumulator are cast first by the caller (module.cc),
// so each kernel is instantiated for one storage type (argmax/argmin/any/all: the input's).
#include <cub/block/block_exchange.cuh>

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
    __device__ static Acc step(Acc a, T v, int64_t k) { return combine(a, take(v, k)); }
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
    __device__ static Acc step(Acc a, T v, int64_t k) { return combine(a, take(v, k)); }
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
    // combine(a, take(v, k)) for a k after every index a has seen (a thread's own elements,
    // in order): the new element wins only when strictly better, or the first NaN.
    __device__ static Acc step(Acc a, T v, int64_t k) {
        const C c = widen(v);
        if (a.i < 0) return {c, k};
        if (is_nan(a.v)) return a;
        bool better;
        if constexpr (is_complex_v<C>) better = MAX ? ops::clt(a.v, c) : ops::clt(c, a.v);
        else better = MAX ? c > a.v : c < a.v;
        return better || is_nan(c) ? Acc{c, k} : a;
    }
};
template <class T, bool ANYR> struct BoolR {
    using Acc = bool;
    __device__ static Acc init() { return !ANYR; }
    __device__ static Acc take(T v, int64_t) { return truthy(v); }
    __device__ static Acc combine(Acc a, Acc b) { return ANYR ? (a || b) : (a && b); }
    __device__ static bool result(Acc a) { return a; }
    __device__ static Acc step(Acc a, T v, int64_t k) { return combine(a, take(v, k)); }
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

// Rows r (blockIdx.x, striding), columns [seg * seg_len, +seg_len) of segment seg
// (blockIdx.y): the accumulator of each row's segment, or with part == nullptr its result.
template <class T, class R, class Out>
__global__ void __launch_bounds__(BLOCK) reduce_block_rows(Rows x, int64_t seg_len, typename R::Acc* __restrict__ part,
                                                           Out* __restrict__ out) {
    __shared__ typename R::Acc s[BLOCK];
    const int64_t k0 = int64_t(blockIdx.y) * seg_len;
    const int64_t k1 = k0 + seg_len < x.k ? k0 + seg_len : x.k;
    for (int64_t r = blockIdx.x; r < x.m; r += gridDim.x) {
        typename R::Acc acc = R::init();
        int64_t k = k0 + threadIdx.x;
        // Four loads in flight before they are combined in order (the same result as one at a time).
        for (; k + 3 * BLOCK < k1; k += 4 * BLOCK) {
            const T v0 = at<T>(x, r, k), v1 = at<T>(x, r, k + BLOCK), v2 = at<T>(x, r, k + 2 * BLOCK),
                    v3 = at<T>(x, r, k + 3 * BLOCK);
            acc = R::step(acc, v0, k);
            acc = R::step(acc, v1, k + BLOCK);
            acc = R::step(acc, v2, k + 2 * BLOCK);
            acc = R::step(acc, v3, k + 3 * BLOCK);
        }
        for (; k < k1; k += BLOCK) acc = R::step(acc, at<T>(x, r, k), k);
        s[threadIdx.x] = acc;
        typename R::Acc total = tree<R>(s, threadIdx.x, BLOCK);
        if (threadIdx.x == 0) {
            if (part) part[blockIdx.y * x.m + r] = total;
            else out[r] = R::result(total);
        }
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
            for (int64_t k = lane; k < x.k; k += 32) acc = R::step(acc, at<T>(x, r, k), k);
        mine[lane] = acc;
        typename R::Acc total = tree<R>(mine, lane, 32);
        if (lane == 0 && r < x.m) out[r] = R::result(total);
        __syncwarp();
    }
}

constexpr int SLICES = BLOCK / 32;

// Rows r of a tile of 32 (blockIdx.x), columns [seg * seg_len, +seg_len) of segment seg
// (blockIdx.y): the accumulator of each row, or with part == nullptr its result in out.
template <class T, class R, class Out>
__global__ void __launch_bounds__(BLOCK) reduce_cols(Rows x, int64_t seg_len, typename R::Acc* __restrict__ part,
                                                     Out* __restrict__ out) {
    __shared__ typename R::Acc s[BLOCK];
    const int lane = threadIdx.x % 32, slice = threadIdx.x / 32;
    const int64_t r = int64_t(blockIdx.x) * 32 + lane;
    const int64_t k0 = int64_t(blockIdx.y) * seg_len;
    const int64_t k1 = k0 + seg_len < x.k ? k0 + seg_len : x.k;
    typename R::Acc acc = R::init();
    if (r < x.m) {
#pragma unroll 4
        for (int64_t k = k0 + slice; k < k1; k += SLICES) acc = R::step(acc, at<T>(x, r, k), k);
    }
    s[threadIdx.x] = acc;
    __syncthreads();
    if (slice == 0 && r < x.m) {
#pragma unroll
        for (int j = 1; j < SLICES; ++j) acc = R::combine(acc, s[j * 32 + lane]);
        if (part) part[blockIdx.y * x.m + r] = acc;
        else out[r] = R::result(acc);
    }
}

// out[r] = the segments' accumulators of row r combined in segment order.
template <class R, class Out>
__global__ void __launch_bounds__(BLOCK) combine_segments(const typename R::Acc* __restrict__ part, int64_t segs,
                                                          int64_t m, Out* __restrict__ out) {
    for (int64_t r = int64_t(blockIdx.x) * BLOCK + threadIdx.x; r < m; r += int64_t(gridDim.x) * BLOCK) {
        typename R::Acc acc = part[r];
        for (int64_t j = 1; j < segs; ++j) acc = R::combine(acc, part[j * m + r]);
        out[r] = R::result(acc);
    }
}

// Segments of the reduced axis when `blocks` blocks would cover the rows: enough to fill a
// large GPU (about 2048 blocks: two waves of 8 per SM on an H100) while each of a block's
// `readers` threads still reads at least 16 elements of a segment; from the shape alone, so a
// result is the same on every GPU.
int64_t segments(int64_t blocks, int64_t k, int64_t readers) {
    int64_t segs = (2048 + blocks - 1) / blocks;
    const int64_t most = k / (readers * 16);
    if (segs > most) segs = most;
    if (segs > 65535) segs = 65535;
    return segs < 1 ? 1 : segs;
}

template <class Acc> Acc* partials(Scratch& scratch, int64_t segs, int64_t m) {
    return segs > 1 ? static_cast<Acc*>(scratch.get(static_cast<size_t>(segs * m) * sizeof(Acc))) : nullptr;
}

template <class T, class R, class Out> void run_reduce(const Rows& x, char* out, Scratch& scratch, Stream s) {
    auto stream = static_cast<cudaStream_t>(s);
    auto* o = reinterpret_cast<Out*>(out);
    const int64_t as = x.row_stride < 0 ? -x.row_stride : x.row_stride;
    const int64_t ac = x.col_stride < 0 ? -x.col_stride : x.col_stride;
    const int64_t grid_cap = g_grid_limit;
    using Acc = typename R::Acc;
    if (x.m >= 32 && ac != 1 && as < ac) {
        const int64_t tiles = (x.m + 31) / 32;
        const int64_t segs = segments(tiles, x.k, SLICES), seg_len = (x.k + segs - 1) / segs;
        Acc* part = partials<Acc>(scratch, segs, x.m);
        reduce_cols<T, R, Out><<<dim3(unsigned(tiles), unsigned(segs)), BLOCK, 0, stream>>>(x, seg_len, part, o);
        if (part) combine_segments<R, Out><<<grid_for(x.m), BLOCK, 0, stream>>>(part, segs, x.m, o);
    } else if (x.k <= 256) {
        int64_t blocks = (x.m + BLOCK / 32 - 1) / (BLOCK / 32);
        reduce_warp_rows<T, R, Out><<<unsigned(blocks < grid_cap ? blocks : grid_cap), BLOCK, 0, stream>>>(x, o);
    } else {
        // Long rows: a block per row and, where the rows are few (a full reduction is one row),
        // segments of each row over the grid's y too.
        const int64_t blocks = x.m < 65535 * 16 ? x.m : 65535 * 16;
        const int64_t segs = segments(blocks, x.k, BLOCK), seg_len = (x.k + segs - 1) / segs;
        Acc* part = partials<Acc>(scratch, segs, x.m);
        reduce_block_rows<T, R, Out><<<dim3(unsigned(blocks), unsigned(segs)), BLOCK, 0, stream>>>(x, seg_len, part, o);
        if (part) combine_segments<R, Out><<<grid_for(x.m), BLOCK, 0, stream>>>(part, segs, x.m, o);
    }
}

using ReduceFn = void (*)(const Rows&, char*, Scratch&, Stream);
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
// scans: a block per row, chunks of BLOCK * ITEMS elements, a carry between chunks; each
// warp reads and writes its part of a chunk warp-striped (consecutive lanes, consecutive
// elements: coalesced) and CUB's BlockExchange turns that into ITEMS consecutive elements
// per thread for the scan and back
// ---------------------------------------------------------------------------
constexpr int ITEMS = 8;

// __shfl_up_sync for any accumulator type (complex, float16's float, bool), as 32-bit words.
template <class C> __device__ __forceinline__ C shuffle_up(C v, int delta) {
    constexpr int W = (sizeof(C) + 3) / 4;
    unsigned w[W] = {};
    memcpy(w, &v, sizeof(C));
#pragma unroll
    for (int i = 0; i < W; ++i) w[i] = __shfl_up_sync(0xffffffffu, w[i], delta);
    memcpy(&v, w, sizeof(C));
    return v;
}

template <class T, bool PROD>
__global__ void __launch_bounds__(BLOCK) scan_rows(Rows x, T* __restrict__ out) {
    using C = compute_t<T>;
    constexpr int WARPS = BLOCK / 32;
    using Exchange = cub::BlockExchange<C, BLOCK, ITEMS>;
    __shared__ typename Exchange::TempStorage exchange;
    __shared__ C warp_total[WARPS];
    auto op = [](C a, C b) { return PROD ? ops::multiply::f(a, b) : ops::add::f(a, b); };
    const C identity = PROD ? C(1) : C(0);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int64_t r = blockIdx.x; r < x.m; r += gridDim.x) {
        C carry = identity;
        for (int64_t start = 0; start < x.k; start += int64_t(BLOCK) * ITEMS) {
            C v[ITEMS];
            const int64_t ws = start + int64_t(warp) * 32 * ITEMS + lane;  // this lane's first, warp-striped
#pragma unroll
            for (int j = 0; j < ITEMS; ++j) {
                const int64_t k = ws + j * 32;
                v[j] = k < x.k ? widen(at<T>(x, r, k)) : identity;
            }
            Exchange(exchange).WarpStripedToBlocked(v);  // v[j]: element start + threadIdx.x * ITEMS + j
            C local = identity;
#pragma unroll
            for (int j = 0; j < ITEMS; ++j) {
                local = op(local, v[j]);
                v[j] = local;
            }
            // The threads' totals scanned in a fixed order: within each warp by shuffles, then
            // across the warps' totals (two barriers a chunk).
            C incl = local;
#pragma unroll
            for (int d = 1; d < 32; d *= 2) {
                const C y = shuffle_up(incl, d);
                if (lane >= d) incl = op(y, incl);
            }
            C excl = shuffle_up(incl, 1);
            if (lane == 0) excl = identity;
            if (lane == 31) warp_total[warp] = incl;
            __syncthreads();
            C before = carry, chunk_total = carry;
#pragma unroll
            for (int w = 0; w < WARPS; ++w) {
                if (w < warp) before = op(before, warp_total[w]);
                chunk_total = op(chunk_total, warp_total[w]);
            }
            __syncthreads();
            before = op(before, excl);
#pragma unroll
            for (int j = 0; j < ITEMS; ++j) v[j] = op(before, v[j]);
            Exchange(exchange).BlockedToWarpStriped(v);
            T* row = out + r * x.k;
#pragma unroll
            for (int j = 0; j < ITEMS; ++j) {
                const int64_t k = ws + j * 32;
                if (k < x.k) row[k] = convert<T>(v[j]);
            }
            __syncwarp();  // the warp's exchange space is written again by the next chunk
            carry = chunk_total;
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
void launch_reduce(int op, int in_dt, int out_dt, const Rows& x, char* out, Scratch& scratch, Stream s) {
    if (!reduce_ok(op, in_dt, out_dt)) throw std::invalid_argument("reduce: no kernel for this dtype pair.");
    reduce_table().fn[op][in_dt](x, out, scratch, s);
}
bool scan_ok(int op, int in_dt, int out_dt) { return op >= 0 && op < NSCAN && in_dt == out_dt; }
void launch_scan(int op, int in_dt, int out_dt, const Rows& x, char* out, Stream s) {
    if (!scan_ok(op, in_dt, out_dt)) throw std::invalid_argument("scan: no kernel for this dtype pair.");
    scan_table()[op][in_dt](x, out, s);
}

}  // namespace ndp
