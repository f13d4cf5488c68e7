// Sorting, and the gather and scatter along the last axis that share its machinery:
//  - take: a gather, instantiated by item size and index dtype;
//  - scatter_add: deterministic (no atomics): the indices are stably radix-sorted, then each
//    target element adds its values in increasing k, as NumPy's add.at does;
//  - sort: a stable LSD radix sort (CUB) of order-preserving unsigned keys: alone for values
//    of bool and integers (the keys map back), with the values' own bits as payload for
//    values of floats, or with the column as payload and one gather of the values from x
//    when indices are asked for (so -0.0, 0.0 and NaN payloads come back bit for bit).
// Every index is in range by the protocol (the core checks); an index outside [0, N) is still
// never dereferenced here, so a broken caller cannot make a kernel read or write out of bounds.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include <climits>
#include <initializer_list>
#include <string>

#include "elementwise.cuh"

namespace ndp {
namespace {

void check_cub(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

template <class T> T* scratch_array(Scratch& scratch, int64_t n) {
    return static_cast<T*>(scratch.get(static_cast<size_t>(n > 0 ? n : 1) * sizeof(T)));
}

template <int D> __device__ __forceinline__ int64_t index_at(const Index& idx, int64_t k) {
    return static_cast<int64_t>(reinterpret_cast<const dt_t<D>*>(idx.data)[k * idx.stride]);
}

#define NDP_INDEX_ROW(F, ...)                                                                         \
    {nullptr, &F<__VA_ARGS__ I8>, &F<__VA_ARGS__ I16>, &F<__VA_ARGS__ I32>, &F<__VA_ARGS__ I64>,       \
     &F<__VA_ARGS__ U8>, &F<__VA_ARGS__ U16>, &F<__VA_ARGS__ U32>, &F<__VA_ARGS__ U64>,               \
     nullptr, nullptr, nullptr, nullptr, nullptr}

void require_index(const Index& idx, const char* what) {
    if (idx.dtype < I8 || idx.dtype > U64)
        throw std::invalid_argument(std::string(what) + ": indices must have an integer dtype.");
}

// ---------------------------------------------------------------------------
// take
// ---------------------------------------------------------------------------
// Consecutive threads take consecutive j (the gathered axis) or, with rows_fast (rows adjacent
// in memory: a gather of whole rows, e.g. take along axis 0), consecutive m.
template <class W, int ID>
__global__ void __launch_bounds__(BLOCK) take_kernel(Rows x, Index idx, Rows out, bool rows_fast) {
    const int64_t n = out.m * out.k;
    for (int64_t i = int64_t(blockIdx.x) * BLOCK + threadIdx.x; i < n; i += int64_t(gridDim.x) * BLOCK) {
        int64_t m, j;
        if (rows_fast) {
            j = i / out.m;
            m = i - j * out.m;
        } else {
            m = i / out.k;
            j = i - m * out.k;
        }
        const int64_t c = index_at<ID>(idx, j);
        W* o = reinterpret_cast<W*>(const_cast<char*>(out.data)) + m * out.row_stride + j * out.col_stride;
        *o = c >= 0 && c < x.k ? reinterpret_cast<const W*>(x.data)[m * x.row_stride + c * x.col_stride] : W{};
    }
}

using TakeFn = void (*)(const Rows&, const Index&, const Rows&, cudaStream_t);
template <int L, int ID> void run_take(const Rows& x, const Index& idx, const Rows& out, cudaStream_t s) {
    const bool rows_fast = (out.row_stride < 0 ? -out.row_stride : out.row_stride) <
                           (out.col_stride < 0 ? -out.col_stride : out.col_stride);
    take_kernel<word_t<L>, ID><<<grid_for(out.m * out.k), BLOCK, 0, s>>>(x, idx, out, rows_fast);
}

// The widest word (log2 of its bytes, at most 16 bytes) that moves runs of `items` adjacent
// items of 2^l bytes: it divides the run, every stride (in items) and every address.
int widest_word(int l, int64_t items, std::initializer_list<int64_t> strides, std::initializer_list<const void*> ptrs) {
    for (int w = 4; w > l; --w) {
        const int64_t bytes = int64_t(1) << w, f = bytes >> l;
        bool ok = items % f == 0;
        for (int64_t st : strides) ok = ok && (st * (int64_t(1) << l)) % bytes == 0;
        for (const void* p : ptrs) ok = ok && reinterpret_cast<uintptr_t>(p) % bytes == 0;
        if (ok) return w;
    }
    return l;
}

// Rows of unit stride in x and out move as the widest word: item size 2^L becomes 2^W, m and
// the column strides shrink by the factor. Returns the new log2 item size.
int widen_rows(Rows& x, Rows& out, int L) {
    if (x.row_stride != 1 || out.row_stride != 1 || x.m != out.m) return L;
    const int w = widest_word(L, x.m, {x.col_stride, out.col_stride}, {x.data, out.data});
    const int64_t f = int64_t(1) << (w - L);
    x.m /= f;
    out.m /= f;
    x.col_stride /= f;
    out.col_stride /= f;
    return w;
}
constexpr TakeFn TAKE[5][NDT] = {NDP_INDEX_ROW(run_take, 0,), NDP_INDEX_ROW(run_take, 1,), NDP_INDEX_ROW(run_take, 2,),
                                 NDP_INDEX_ROW(run_take, 3,), NDP_INDEX_ROW(run_take, 4,)};

// fused take_axis: out (A, K, B) = x (A, N, B) at the indices along the middle axis, both
// C-contiguous (take along a leading axis: whole rows of B items, read and written in order).
template <class W, int ID>
__global__ void __launch_bounds__(BLOCK) take_axis_kernel(const W* __restrict__ x, int64_t n, int64_t b, Index idx,
                                                          W* __restrict__ out, int64_t total) {
    const int64_t kb = idx.k * b;
    for (int64_t i = int64_t(blockIdx.x) * BLOCK + threadIdx.x; i < total; i += int64_t(gridDim.x) * BLOCK) {
        const int64_t a = i / kb, r = i - a * kb, kk = r / b, bb = r - kk * b;
        const int64_t c = index_at<ID>(idx, kk);
        out[i] = c >= 0 && c < n ? x[(a * n + c) * b + bb] : W{};
    }
}

// The same for rows of at least BLOCK / 2 words: a block per output row (a, kk), its threads
// along the row, so no thread divides per word (three 64-bit divisions per word made the
// flat kernel compute-bound at 16-byte words).
template <class W, int ID>
__global__ void __launch_bounds__(BLOCK) take_axis_rows_kernel(const W* __restrict__ x, int64_t n, int64_t b, Index idx,
                                                               W* __restrict__ out, int64_t rows) {
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const int64_t a = row / idx.k, kk = row - a * idx.k;
        const int64_t c = index_at<ID>(idx, kk);
        W* o = out + row * b;
        if (c >= 0 && c < n) {
            const W* src = x + (a * n + c) * b;
            for (int64_t t = threadIdx.x; t < b; t += BLOCK) o[t] = src[t];
        } else {
            for (int64_t t = threadIdx.x; t < b; t += BLOCK) o[t] = W{};
        }
    }
}

using TakeAxisFn = void (*)(const char*, int64_t, int64_t, int64_t, const Index&, char*, cudaStream_t);
template <int L, int ID>
void run_take_axis(const char* x, int64_t a, int64_t n, int64_t b, const Index& idx, char* out, cudaStream_t s) {
    using W = word_t<L>;
    const int64_t rows = a * idx.k;
    if (b >= BLOCK / 2) {
        take_axis_rows_kernel<W, ID><<<unsigned(rows < MAX_GRID ? rows : MAX_GRID), BLOCK, 0, s>>>(
            reinterpret_cast<const W*>(x), n, b, idx, reinterpret_cast<W*>(out), rows);
        return;
    }
    const int64_t total = rows * b;
    take_axis_kernel<W, ID><<<grid_for(total), BLOCK, 0, s>>>(reinterpret_cast<const W*>(x), n, b, idx,
                                                              reinterpret_cast<W*>(out), total);
}
constexpr TakeAxisFn TAKE_AXIS[5][NDT] = {NDP_INDEX_ROW(run_take_axis, 0,), NDP_INDEX_ROW(run_take_axis, 1,),
                                          NDP_INDEX_ROW(run_take_axis, 2,), NDP_INDEX_ROW(run_take_axis, 3,),
                                          NDP_INDEX_ROW(run_take_axis, 4,)};

// ---------------------------------------------------------------------------
// radix sorting through CUB: rows of keys with their columns as payload
// ---------------------------------------------------------------------------
__global__ void row_offsets_kernel(int* off, int64_t rows, int64_t k) {
    for (int64_t r = int64_t(blockIdx.x) * BLOCK + threadIdx.x; r <= rows; r += int64_t(gridDim.x) * BLOCK)
        off[r] = static_cast<int>(r * k);
}

// One CUB radix sort call, of keys with payload P or of keys alone (P = cub::NullType, pos_*
// null): the device-wide sort for `n` items, or the segmented one for `rows` rows at `off`.
template <class K, class P, class N>
cudaError_t cub_sort(void* tmp, size_t& bytes, const K* ki, K* ko, const P* pi, P* po, N n, int end_bit, cudaStream_t s) {
    if constexpr (cuda::std::is_same_v<P, cub::NullType>)
        return cub::DeviceRadixSort::SortKeys(tmp, bytes, ki, ko, n, 0, end_bit, s);
    else
        return cub::DeviceRadixSort::SortPairs(tmp, bytes, ki, ko, pi, po, n, 0, end_bit, s);
}
template <class K, class P>
cudaError_t cub_segmented(void* tmp, size_t& bytes, const K* ki, K* ko, const P* pi, P* po, int items, int rows,
                          const int* off, int end_bit, cudaStream_t s) {
    if constexpr (cuda::std::is_same_v<P, cub::NullType>)
        return cub::DeviceSegmentedRadixSort::SortKeys(tmp, bytes, ki, ko, items, rows, off, off + 1, 0, end_bit, s);
    else
        return cub::DeviceSegmentedRadixSort::SortPairs(tmp, bytes, ki, ko, pi, po, items, rows, off, off + 1, 0, end_bit,
                                                        s);
}

// Sorts each of the m rows of k keys (keys_in -> keys_out, pos_in -> pos_out), stably, on
// bits [0, end_bit): CUB's segmented sort for many rows (it counts items in int, so at most
// INT_MAX items per call), its device-wide sort for one row or rows longer than INT_MAX (the
// item count as int where it fits: CUB's 64-bit-count instantiation is slower).
struct TempStorage {
    Scratch& scratch;
    void* ptr = nullptr;
    size_t have = 0;
    void* at_least(size_t bytes) {
        if (bytes > have) {
            ptr = scratch.get(bytes);
            have = bytes;
        }
        return ptr;
    }
};

template <class K, class P, class N>
void sort_each_row(const K* keys_in, K* keys_out, const P* pos_in, P* pos_out, int64_t m, N k, int end_bit,
                   Scratch& scratch, cudaStream_t s) {
    TempStorage tmp{scratch};
    for (int64_t r = 0; r < m; ++r) {
        const int64_t o = r * int64_t(k);
        const P* pi = pos_in ? pos_in + o : nullptr;
        P* po = pos_out ? pos_out + o : nullptr;
        size_t bytes = 0;
        check_cub(cub_sort(nullptr, bytes, keys_in + o, keys_out + o, pi, po, k, end_bit, s), "sort");
        check_cub(cub_sort(tmp.at_least(bytes), bytes, keys_in + o, keys_out + o, pi, po, k, end_bit, s), "sort");
    }
}

template <class K, class P>
void segmented(const K* keys_in, K* keys_out, const P* pos_in, P* pos_out, int64_t m, int64_t k, int end_bit,
               Scratch& scratch, cudaStream_t s) {
    TempStorage tmp{scratch};
    const int64_t group = INT_MAX / k < m ? INT_MAX / k : m;
    int* off = scratch_array<int>(scratch, group + 1);
    row_offsets_kernel<<<grid_for(group + 1), BLOCK, 0, s>>>(off, group, k);
    for (int64_t r0 = 0; r0 < m; r0 += group) {
        const int rows = static_cast<int>(m - r0 < group ? m - r0 : group);
        const int64_t o = r0 * k;
        const int items = static_cast<int>(rows * k);
        const P* pi = pos_in ? pos_in + o : nullptr;
        P* po = pos_out ? pos_out + o : nullptr;
        size_t bytes = 0;
        check_cub(cub_segmented(nullptr, bytes, keys_in + o, keys_out + o, pi, po, items, rows, off, end_bit, s), "sort");
        check_cub(cub_segmented(tmp.at_least(bytes), bytes, keys_in + o, keys_out + o, pi, po, items, rows, off, end_bit, s),
                  "sort");
    }
}

// P: the payload (cub::NullType with null pos_*: keys alone).
template <class K, class P>
void radix_rows(const K* keys_in, K* keys_out, const P* pos_in, P* pos_out, int64_t m, int64_t k, int end_bit,
                Scratch& scratch, cudaStream_t s) {
    if (k > INT_MAX) sort_each_row(keys_in, keys_out, pos_in, pos_out, m, k, end_bit, scratch, s);
    else if (m == 1) sort_each_row(keys_in, keys_out, pos_in, pos_out, m, static_cast<int>(k), end_bit, scratch, s);
    else segmented(keys_in, keys_out, pos_in, pos_out, m, k, end_bit, scratch, s);
}

// ---------------------------------------------------------------------------
// scatter_add
// ---------------------------------------------------------------------------
template <int ID> __global__ void __launch_bounds__(BLOCK) index_keys_kernel(Index idx, uint64_t* keys, int64_t* pos) {
    for (int64_t j = int64_t(blockIdx.x) * BLOCK + threadIdx.x; j < idx.k; j += int64_t(gridDim.x) * BLOCK) {
        keys[j] = static_cast<uint64_t>(index_at<ID>(idx, j));  // a negative index becomes huge: skipped below
        pos[j] = j;
    }
}
using IndexKeysFn = void (*)(const Index&, uint64_t*, int64_t*, cudaStream_t);
template <int ID> void run_index_keys(const Index& idx, uint64_t* keys, int64_t* pos, cudaStream_t s) {
    index_keys_kernel<ID><<<grid_for(idx.k), BLOCK, 0, s>>>(idx, keys, pos);
}
constexpr IndexKeysFn INDEX_KEYS[NDT] = NDP_INDEX_ROW(run_index_keys, );

// NumPy's in-place add, one element at a time (float16 rounds after every addition).
template <class T> __device__ __forceinline__ T accumulate(T a, T b) {
    if constexpr (is_bool_v<T>) return a || b;
    else if constexpr (is_f16_v<T>) return __float2half_rn(__half2float(a) + __half2float(b));
    else if constexpr (is_int_v<T>) return wrap_add(a, b);
    else return a + b;
}

// Thread (m, j) owns target out[m, key[j]] when j starts a run of equal keys, and adds the
// run's values in increasing k (the sort was stable).
template <class T>
__global__ void __launch_bounds__(BLOCK) scatter_runs_kernel(Rows out, Rows values, const uint64_t* keys, const int64_t* pos) {
    const int64_t k = values.k, n = out.m * k;
    for (int64_t i = int64_t(blockIdx.x) * BLOCK + threadIdx.x; i < n; i += int64_t(gridDim.x) * BLOCK) {
        const int64_t m = i / k, j = i - m * k;
        const uint64_t c = keys[j];
        if ((j > 0 && keys[j - 1] == c) || c >= static_cast<uint64_t>(out.k)) continue;
        T* o = reinterpret_cast<T*>(const_cast<char*>(out.data)) + m * out.row_stride + static_cast<int64_t>(c) * out.col_stride;
        const T* v = reinterpret_cast<const T*>(values.data) + m * values.row_stride;
        T acc = *o;
        for (int64_t t = j; t < k && keys[t] == c; ++t) acc = accumulate(acc, v[pos[t] * values.col_stride]);
        *o = acc;
    }
}
using ScatterFn = void (*)(const Rows&, const Rows&, const uint64_t*, const int64_t*, cudaStream_t);
template <int D> void run_scatter(const Rows& out, const Rows& values, const uint64_t* keys, const int64_t* pos, cudaStream_t s) {
    scatter_runs_kernel<dt_t<D>><<<grid_for(out.m * values.k), BLOCK, 0, s>>>(out, values, keys, pos);
}
constexpr ScatterFn SCATTER[NDT] = {&run_scatter<BOOL>, &run_scatter<I8>,  &run_scatter<I16>, &run_scatter<I32>,
                                    &run_scatter<I64>,  &run_scatter<U8>,  &run_scatter<U16>, &run_scatter<U32>,
                                    &run_scatter<U64>,  &run_scatter<F16>, &run_scatter<F32>, &run_scatter<F64>,
                                    &run_scatter<C64>,  &run_scatter<C128>};

// ---------------------------------------------------------------------------
// sort
// ---------------------------------------------------------------------------
template <int D> using key_t = word_t<log2_itemsize(D)>;

// An unsigned key whose order is the value order: bool and unsigned as they are, signed with
// the sign bit flipped, floats sign-magnitude to offset binary after -0.0 -> 0.0 and every
// NaN -> one NaN above +inf.
template <int D> __device__ __forceinline__ key_t<D> order_key(dt_t<D> v) {
    using K = key_t<D>;
    constexpr int BITS = 8 * sizeof(K);
    constexpr K SIGN = static_cast<K>(K(1) << (BITS - 1));
    if constexpr (D == BOOL) {
        return K(v ? 1 : 0);
    } else if constexpr (D >= U8 && D <= U64) {
        return K(v);
    } else if constexpr (D >= I8 && D <= I64) {
        return static_cast<K>(static_cast<K>(v) ^ SIGN);
    } else {
        K u;
        if constexpr (D == F16) u = __half_as_ushort(v);
        else if constexpr (D == F32) u = __float_as_uint(v);
        else u = static_cast<K>(__double_as_longlong(v));
        constexpr K INF = D == F16 ? K(0x7c00) : D == F32 ? K(0x7f800000u) : K(0x7ff0000000000000ull);
        constexpr K QNAN = D == F16 ? K(0x7e00) : D == F32 ? K(0x7fc00000u) : K(0x7ff8000000000000ull);
        const K mag = static_cast<K>(u & static_cast<K>(~SIGN));
        if (mag > INF) u = QNAN;
        else if (mag == 0) u = 0;
        return (u & SIGN) ? static_cast<K>(~u) : static_cast<K>(u | SIGN);
    }
}

// The value whose order_key is `key`, where order_key is one to one (bool and integers).
template <int D> __device__ __forceinline__ dt_t<D> from_key(key_t<D> key) {
    using K = key_t<D>;
    if constexpr (D == BOOL) return key != 0;
    else if constexpr (D >= U8 && D <= U64) return static_cast<dt_t<D>>(key);
    else return static_cast<dt_t<D>>(static_cast<K>(key ^ static_cast<K>(K(1) << (8 * sizeof(K) - 1))));
}
template <int D> inline constexpr bool one_to_one_key = D == BOOL || (D >= I8 && D <= U64);

// keys[i] = order_key(x[m, j]) ^ flip with i = m * K + j; with pos, pos[i] = j; with bits,
// bits[i] = the element's own bits (the payload that comes out as the sorted values).
template <int D, class P>
__global__ void __launch_bounds__(BLOCK) sort_keys_kernel(Rows x, key_t<D>* keys, P* pos, key_t<D>* bits, key_t<D> flip) {
    const int64_t n = x.m * x.k;
    for (int64_t i = int64_t(blockIdx.x) * BLOCK + threadIdx.x; i < n; i += int64_t(gridDim.x) * BLOCK) {
        const int64_t m = i / x.k, j = i - m * x.k;
        const dt_t<D> v = reinterpret_cast<const dt_t<D>*>(x.data)[m * x.row_stride + j * x.col_stride];
        keys[i] = static_cast<key_t<D>>(order_key<D>(v) ^ flip);
        if (pos) pos[i] = static_cast<P>(j);
        if (bits) memcpy(&bits[i], &v, sizeof(v));
    }
}

template <int D>
__global__ void __launch_bounds__(BLOCK) sort_values_kernel(const key_t<D>* keys, int64_t n, key_t<D> flip,
                                                            dt_t<D>* __restrict__ values_out) {
    for (int64_t i = int64_t(blockIdx.x) * BLOCK + threadIdx.x; i < n; i += int64_t(gridDim.x) * BLOCK)
        values_out[i] = from_key<D>(static_cast<key_t<D>>(keys[i] ^ flip));
}

// values_out[i] = x[row, pos[i]], indices_out[i] = pos[i], both C-contiguous (M, K).
template <class W, class P, class IO>
__global__ void __launch_bounds__(BLOCK) sort_gather_kernel(Rows x, const P* pos, W* values_out, IO* indices_out) {
    const int64_t n = x.m * x.k;
    for (int64_t i = int64_t(blockIdx.x) * BLOCK + threadIdx.x; i < n; i += int64_t(gridDim.x) * BLOCK) {
        const int64_t m = i / x.k, p = static_cast<int64_t>(pos[i]);
        if (values_out) values_out[i] = reinterpret_cast<const W*>(x.data)[m * x.row_stride + p * x.col_stride];
        if (indices_out) indices_out[i] = static_cast<IO>(p);
    }
}

// Three roads, by what is asked for: values alone of bool and integers sort the keys alone and
// map them back; values alone of floats carry their own bits as the payload, which CUB writes
// straight into values_out (so -0.0 and NaN payloads come back bit for bit, in stable order),
// when those bits are no wider than a position; otherwise the positions are the payload and
// one gather makes the values and the indices.
template <int D, class P>
void sort_with(const Rows& x, char* values_out, char* indices_out, int index_dtype, bool descending, Scratch& scratch,
               cudaStream_t s) {
    using K = key_t<D>;
    const int64_t n = x.m * x.k;
    const K flip = descending ? static_cast<K>(~K(0)) : K(0);
    const int end_bit = D == BOOL ? 1 : int(8 * sizeof(K));
    K* k0 = scratch_array<K>(scratch, n);
    K* k1 = scratch_array<K>(scratch, n);
    if (!indices_out && one_to_one_key<D>) {
        sort_keys_kernel<D, P><<<grid_for(n), BLOCK, 0, s>>>(x, k0, nullptr, nullptr, flip);
        radix_rows<K, cub::NullType>(k0, k1, nullptr, nullptr, x.m, x.k, end_bit, scratch, s);
        sort_values_kernel<D><<<grid_for(n), BLOCK, 0, s>>>(k1, n, flip, reinterpret_cast<dt_t<D>*>(values_out));
        return;
    }
    if (!indices_out && sizeof(K) <= sizeof(P)) {
        K* b0 = scratch_array<K>(scratch, n);
        sort_keys_kernel<D, P><<<grid_for(n), BLOCK, 0, s>>>(x, k0, nullptr, b0, flip);
        radix_rows<K, K>(k0, k1, b0, reinterpret_cast<K*>(values_out), x.m, x.k, end_bit, scratch, s);
        return;
    }
    P* p0 = scratch_array<P>(scratch, n);
    P* p1 = scratch_array<P>(scratch, n);
    sort_keys_kernel<D, P><<<grid_for(n), BLOCK, 0, s>>>(x, k0, p0, nullptr, flip);
    radix_rows(k0, k1, p0, p1, x.m, x.k, end_bit, scratch, s);
    using W = word_t<log2_itemsize(D)>;
    W* vo = reinterpret_cast<W*>(values_out);
    if (index_dtype == I32)
        sort_gather_kernel<W, P, int32_t><<<grid_for(n), BLOCK, 0, s>>>(x, p1, vo, reinterpret_cast<int32_t*>(indices_out));
    else
        sort_gather_kernel<W, P, int64_t><<<grid_for(n), BLOCK, 0, s>>>(x, p1, vo, reinterpret_cast<int64_t*>(indices_out));
}

using SortFn = void (*)(const Rows&, char*, char*, int, bool, Scratch&, cudaStream_t);
template <int D> void run_sort(const Rows& x, char* vo, char* io, int index_dtype, bool descending, Scratch& scratch, cudaStream_t s) {
    if (x.k <= INT_MAX) sort_with<D, int32_t>(x, vo, io, index_dtype, descending, scratch, s);
    else sort_with<D, int64_t>(x, vo, io, index_dtype, descending, scratch, s);
}
constexpr SortFn SORT[NDT] = {&run_sort<BOOL>, &run_sort<I8>,  &run_sort<I16>, &run_sort<I32>, &run_sort<I64>,
                              &run_sort<U8>,   &run_sort<U16>, &run_sort<U32>, &run_sort<U64>, &run_sort<F16>,
                              &run_sort<F32>,  &run_sort<F64>, nullptr,        nullptr};

}  // namespace

void launch_take(const Rows& x, const Index& idx, const Rows& out, int dtype, Stream s) {
    require_index(idx, "take");
    if (out.m * out.k == 0) return;
    Rows xw = x, ow = out;
    const int w = widen_rows(xw, ow, log2_itemsize(dtype));
    TAKE[w][idx.dtype](xw, idx, ow, static_cast<cudaStream_t>(s));
}

void launch_take_axis(const char* x, int64_t a, int64_t n, int64_t b, const Index& idx, char* out, int dtype, Stream s) {
    require_index(idx, "fused take_axis");
    if (a * idx.k * b == 0) return;
    // Rows of B items as the widest word that divides them and both addresses.
    const int l = log2_itemsize(dtype), w = widest_word(l, b, {}, {x, out});
    TAKE_AXIS[w][idx.dtype](x, a, n, b >> (w - l), idx, out, static_cast<cudaStream_t>(s));
}

void launch_scatter_add(const Rows& out, const Index& idx, const Rows& values, int dtype, Scratch& scratch, Stream s) {
    require_index(idx, "scatter_add");
    if (out.m * idx.k == 0) return;
    const auto st = static_cast<cudaStream_t>(s);
    const int64_t k = idx.k;
    uint64_t* k0 = scratch_array<uint64_t>(scratch, k);
    uint64_t* k1 = scratch_array<uint64_t>(scratch, k);
    int64_t* p0 = scratch_array<int64_t>(scratch, k);
    int64_t* p1 = scratch_array<int64_t>(scratch, k);
    INDEX_KEYS[idx.dtype](idx, k0, p0, st);
    // Only the bits an index in [0, N) has (an index out of range, which the protocol rules
    // out, is skipped by the kernel's bounds check: no access outside out, whatever it sums).
    int end_bit = 1;
    while (end_bit < 64 && (static_cast<uint64_t>(out.k - 1) >> end_bit) != 0) ++end_bit;
    radix_rows(k0, k1, p0, p1, 1, k, end_bit, scratch, st);
    SCATTER[dtype](out, values, k1, p1, st);
}

bool sort_ok(int dtype, int index_dtype) {
    return dtype >= 0 && dtype < NDT && SORT[dtype] != nullptr && (index_dtype == I32 || index_dtype == I64);
}

void launch_sort(const Rows& x, int dtype, char* values_out, char* indices_out, int index_dtype, bool descending,
                 Scratch& scratch, Stream s) {
    if (!sort_ok(dtype, index_dtype))
        throw std::invalid_argument(std::string("sort: no kernel for ") + DT_NAME[dtype] + " with " + DT_NAME[index_dtype] +
                                    " indices (sortable: bool, integers, real floats; indices int32 or int64).");
    if (x.m * x.k == 0) return;
    SORT[dtype](x, values_out, indices_out, index_dtype, descending, scratch, static_cast<cudaStream_t>(s));
}

}  // namespace ndp
