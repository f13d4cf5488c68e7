// The elementwise engine: one grid-stride kernel over a Plan (strided, signed strides,
// broadcast operands read in place) and a vectorised kernel for contiguous, 16-byte
// aligned operands. Every elementwise launcher (unary, binary, cast, where, copy, fill)
// is an instance of `launch<R, Fn, Ins...>`.
#pragma once

#include <cstring>
#include <type_traits>
#include <utility>

#include "device.cuh"
#include "kernels.h"
#include "ops.cuh"

namespace ndp {

extern int g_grid_limit;

template <class T> struct Arg {
    const T* ptr;
    T scalar;
    __device__ __forceinline__ T at(int64_t i) const { return ptr ? ptr[i] : scalar; }
};

template <class R, class Fn, size_t... K, class... Ts>
__device__ __forceinline__ void strided_one(std::index_sequence<K...>, const Plan& p, Fn fn, R* out, int64_t i,
                                            const Arg<Ts>&... in) {
    int64_t off[sizeof...(Ts) + 1];
    offsets<sizeof...(Ts) + 1>(p, i, off);
    out[off[0]] = fn(in.at(off[K + 1])...);
}

template <class R, class Fn, class... Ts>
__global__ void __launch_bounds__(BLOCK) ew_kernel(Plan p, Fn fn, R* __restrict__ out, Arg<Ts>... in) {
    const int64_t n = p.n;
    const int64_t step = int64_t(gridDim.x) * BLOCK;
    int64_t i = int64_t(blockIdx.x) * BLOCK + threadIdx.x;
    if (p.contiguous) {
        for (; i < n; i += step) out[i] = fn(in.at(i)...);
    } else {
        for (; i < n; i += step) strided_one(std::index_sequence_for<Ts...>{}, p, fn, out, i, in...);
    }
}

template <class T, int V> __device__ __forceinline__ Pack<T, V> load_pack(const Arg<T>& a, int64_t j) {
    if (a.ptr) return reinterpret_cast<const Pack<T, V>*>(a.ptr)[j];
    Pack<T, V> r;
#pragma unroll
    for (int v = 0; v < V; ++v) r.v[v] = a.scalar;
    return r;
}

template <int V, class R, class Fn, class... Ts>
__device__ __forceinline__ Pack<R, V> vec_apply(Fn fn, const Pack<Ts, V>&... pk) {
    Pack<R, V> r;
#pragma unroll
    for (int v = 0; v < V; ++v) r.v[v] = fn(pk.v[v]...);
    return r;
}

template <int V, class R, class Fn, class... Ts>
__device__ __forceinline__ void vec_step(Fn fn, R* out, int64_t j, const Pack<Ts, V>&... pk) {
    reinterpret_cast<Pack<R, V>*>(out)[j] = vec_apply<V, R>(fn, pk...);
}

// One pack of V elements per thread, every pointer 16-byte aligned (checked by the host); the
// grid covers every pack (blocks of BLOCK consecutive packs, coalesced; the loop turns only
// past 2^31 - 1 blocks), the last n % V elements go to the first threads. Measured on an H200
// (2^26 float32, a standalone build of both kernels): copy 4.10 TB/s (cudaMemcpyAsync 4.08),
// add 4.24; the grid-stride loop over SMs * 8 blocks with four packs in flight per thread
// that this replaces moved 3.73 and 3.98 (PyTorch's own kernels: 4.03 and 4.18).
template <int V, class R, class Fn, class... Ts>
__global__ void __launch_bounds__(BLOCK) ew_vec_kernel(int64_t n, Fn fn, R* __restrict__ out, Arg<Ts>... in) {
    const int64_t groups = n / V;
    const int64_t step = int64_t(gridDim.x) * BLOCK;
    const int64_t tid = int64_t(blockIdx.x) * BLOCK + threadIdx.x;
    for (int64_t j = tid; j < groups; j += step) vec_step<V>(fn, out, j, load_pack<Ts, V>(in, j)...);
    for (int64_t i = groups * V + tid; i < n; i += step) out[i] = fn(in.at(i)...);
}

// An operand of a 2-D launch by rows: unit stride along the row (`along`), or one value per
// row (a column broadcast) or the scalar (ptr == nullptr).
template <class T> struct RowArg {
    const T* ptr;
    T scalar;
    int64_t row_stride;
    bool along;
};

template <class T, int V> __device__ __forceinline__ Pack<T, V> load_row(const RowArg<T>& a, int64_t r, int64_t c) {
    if (a.ptr && a.along) return reinterpret_cast<const Pack<T, V>*>(a.ptr + r * a.row_stride)[c];
    const T v = a.ptr ? a.ptr[r * a.row_stride] : a.scalar;
    Pack<T, V> pk;
#pragma unroll
    for (int i = 0; i < V; ++i) pk.v[i] = v;
    return pk;
}

// Rows of `packs` groups of V elements (row broadcasts such as x + b[None, :], column ones,
// strided rows of a slice): every row start 16-byte aligned (checked by the host), one
// division per V elements where the general kernel spends one per axis per element.
template <int V, class R, class Fn, class... Ts>
__global__ void __launch_bounds__(BLOCK) ew_rows_kernel(int64_t rows, int64_t packs, int64_t out_stride, Fn fn,
                                                        R* __restrict__ out, RowArg<Ts>... in) {
    const int64_t n = rows * packs;
    const int64_t step = int64_t(gridDim.x) * BLOCK;
    for (int64_t j = int64_t(blockIdx.x) * BLOCK + threadIdx.x; j < n; j += step) {
        const int64_t r = j / packs, c = j - r * packs;
        vec_step<V>(fn, out + r * out_stride, c, load_row<Ts, V>(in, r, c)...);
    }
}

// A transposing launch (one input read along the plan's second-to-last axis, the output
// along its last: x.T copied or cast): 32 x 32 tiles through shared memory, so both
// the reads and the writes coalesce where the element-order kernel reads with a stride of a
// whole row. Blocks: x over the last axis's tiles, y over the second-to-last's, z (striding)
// over the leading axes' indices, whose offsets are computed once per block.
inline constexpr int TILE = 32;
template <class R, class Fn, class T>
__global__ void __launch_bounds__(BLOCK) ew_transpose_kernel(Plan p, int64_t batches, Fn fn, R* __restrict__ out,
                                                             const T* __restrict__ in) {
    __shared__ T tile[TILE][TILE + 1];
    const int nd = p.ndim;
    const int64_t A = p.shape[nd - 2], B = p.shape[nd - 1];
    const int64_t ia = p.strides[1][nd - 2], ib = p.strides[1][nd - 1];  // ia == 1
    const int64_t oa = p.strides[0][nd - 2];                             // out's last stride is 1
    const int64_t a0 = int64_t(blockIdx.y) * TILE, b0 = int64_t(blockIdx.x) * TILE;
    const int tx = threadIdx.x % TILE, ty = threadIdx.x / TILE;
    for (int64_t z = blockIdx.z; z < batches; z += gridDim.z) {
        int64_t off_out = 0, off_in = 0, rest = z;
        for (int d = nd - 3; d >= 0; --d) {
            const int64_t q = rest / p.shape[d], r = rest - q * p.shape[d];
            off_out += r * p.strides[0][d];
            off_in += r * p.strides[1][d];
            rest = q;
        }
        // Read: consecutive threads take consecutive a (the input's unit stride).
#pragma unroll
        for (int j = ty; j < TILE; j += BLOCK / TILE) {
            const int64_t a = a0 + tx, b = b0 + j;
            if (a < A && b < B) tile[j][tx] = in[off_in + a * ia + b * ib];
        }
        __syncthreads();
        // Write: consecutive threads take consecutive b (the output's unit stride).
#pragma unroll
        for (int j = ty; j < TILE; j += BLOCK / TILE) {
            const int64_t a = a0 + j, b = b0 + tx;
            if (a < A && b < B) out[off_out + a * oa + b] = fn(tile[tx][j]);
        }
        __syncthreads();
    }
}

// The functors that take the tiled road (copy and cast, where transposed reads are common: a
// member `static constexpr bool tiled_transpose = true`); the other maps keep one kernel per
// op and dtype, not two.
template <class Fn, class = void> inline constexpr bool tiled_transpose_v = false;
template <class Fn>
inline constexpr bool tiled_transpose_v<Fn, std::void_t<decltype(Fn::tiled_transpose)>> = Fn::tiled_transpose;

// Whether a one-input plan is a transpose the tiled kernel takes: the output dense along the
// last axis, the input along the second-to-last and not the last, both axes at least a tile
// and the grid within CUDA's limits for y.
inline bool transposing(const Plan& p, const void* in) {
    if (!in || p.contiguous || p.ndim < 2 || p.n < 4 * TILE * TILE) return false;
    const int nd = p.ndim;
    return p.strides[0][nd - 1] == 1 && p.strides[1][nd - 2] == 1 && p.strides[1][nd - 1] != 1 &&
           p.shape[nd - 2] >= TILE && p.shape[nd - 1] >= TILE && (p.shape[nd - 2] + TILE - 1) / TILE <= 65535;
}

template <class T> constexpr int max_size() { return sizeof(T); }
template <class T, class U, class... Rest> constexpr int max_size() {
    return sizeof(T) > max_size<U, Rest...>() ? sizeof(T) : max_size<U, Rest...>();
}

// A grid of one thread per item of `work`, at most `cap` blocks: the grid-stride kernels' limit
// (SMs x 8 blocks), or the launch limit of 2^31 - 1 for a grid that covers the work.
inline constexpr int64_t MAX_GRID = 0x7fffffff;
inline unsigned grid_for(int64_t work, int64_t cap = g_grid_limit) {
    int64_t blocks = (work + BLOCK - 1) / BLOCK;
    if (blocks > cap) blocks = cap;
    return static_cast<unsigned>(blocks < 1 ? 1 : blocks);
}

template <class T> Arg<T> make_arg(const In& in) {
    Arg<T> a;
    a.ptr = reinterpret_cast<const T*>(in.ptr);
    static_assert(sizeof(T) <= sizeof(Scalar));
    memcpy(static_cast<void*>(&a.scalar), in.scalar.bytes, sizeof(T));
    return a;
}

template <class T> RowArg<T> make_row_arg(const In& in, const Plan& p, int a) {
    const Arg<T> flat = make_arg<T>(in);
    return {flat.ptr, flat.scalar, p.strides[a][0], p.strides[a][1] == 1};
}

// A 2-D plan the rows kernel takes: out dense along its rows, every input dense along them
// or constant (stride 0), rows a multiple of V long, every row start 16-byte aligned.
template <class T> bool row_operand_ok(const char* ptr, const Plan& p, int a) {
    if (!ptr || p.strides[a][1] == 0) return true;
    return p.strides[a][1] == 1 && reinterpret_cast<uintptr_t>(ptr) % 16 == 0 &&
           (p.strides[a][0] * int64_t(sizeof(T))) % 16 == 0;
}

template <class R, class Fn, class... Ts, size_t... K>
void launch_impl(const Plan& p, char* out, const In* in, Stream s, std::index_sequence<K...>) {
    auto stream = static_cast<cudaStream_t>(s);
    constexpr int V = 16 / max_size<R, Ts...>() > 0 ? 16 / max_size<R, Ts...>() : 1;
    bool aligned = p.contiguous && (reinterpret_cast<uintptr_t>(out) % 16 == 0);
    ((aligned = aligned && reinterpret_cast<uintptr_t>(in[K].ptr) % 16 == 0), ...);
    bool rows = V > 1 && !p.contiguous && p.ndim == 2 && p.shape[1] % V == 0 && p.strides[0][1] == 1 &&
                row_operand_ok<R>(out, p, 0);
    ((rows = rows && row_operand_ok<Ts>(in[K].ptr, p, int(K) + 1)), ...);
    if constexpr (sizeof...(Ts) == 1 && tiled_transpose_v<Fn>) {
        if (transposing(p, in[0].ptr)) {
            const int nd = p.ndim;
            const int64_t batches = p.n / (p.shape[nd - 2] * p.shape[nd - 1]);
            const dim3 grid(unsigned((p.shape[nd - 1] + TILE - 1) / TILE), unsigned((p.shape[nd - 2] + TILE - 1) / TILE),
                            unsigned(batches < 65535 ? batches : 65535));
            ew_transpose_kernel<R, Fn, Ts...><<<grid, BLOCK, 0, stream>>>(
                p, batches, Fn{}, reinterpret_cast<R*>(out), reinterpret_cast<const Ts*>(in[0].ptr)...);
            return;
        }
    }
    if (V > 1 && aligned && p.n >= 4 * V) {
        ew_vec_kernel<V, R, Fn, Ts...><<<grid_for(p.n / V, MAX_GRID), BLOCK, 0, stream>>>(
            p.n, Fn{}, reinterpret_cast<R*>(out), make_arg<Ts>(in[K])...);
    } else if (rows && p.n >= 4 * V) {
        ew_rows_kernel<V, R, Fn, Ts...><<<grid_for(p.n / V), BLOCK, 0, stream>>>(
            p.shape[0], p.shape[1] / V, p.strides[0][0], Fn{}, reinterpret_cast<R*>(out),
            make_row_arg<Ts>(in[K], p, int(K) + 1)...);
    } else {
        ew_kernel<R, Fn, Ts...><<<grid_for(p.n), BLOCK, 0, stream>>>(p, Fn{}, reinterpret_cast<R*>(out),
                                                                    make_arg<Ts>(in[K])...);
    }
}

// The launcher for out = Fn()(inputs...) with storage types R and Ts.
template <class R, class Fn, class... Ts> void launch(const Plan& p, char* out, const In* in, Stream s) {
    launch_impl<R, Fn, Ts...>(p, out, in, s, std::index_sequence_for<Ts...>{});
}

template <class Op, class T> struct UnaryFn {
    using R = typename ops::result1<Op, T>::type;
    __device__ __forceinline__ R operator()(T x) const {
        static_assert(cuda::std::is_same_v<decltype(ops::apply1<Op>(x)), R>, "ops::result1 is wrong for this op");
        return ops::apply1<Op>(x);
    }
};
template <class Op, class T> struct BinaryFn {
    using R = typename ops::result2<Op, T>::type;
    __device__ __forceinline__ R operator()(T a, T b) const {
        static_assert(cuda::std::is_same_v<decltype(ops::apply2<Op>(a, b)), R>, "ops::result2 is wrong for this op");
        return ops::apply2<Op>(a, b);
    }
};

template <class T> constexpr int dtype_of() {
    if constexpr (cuda::std::is_same_v<T, bool>) return BOOL;
    else if constexpr (cuda::std::is_same_v<T, int8_t>) return I8;
    else if constexpr (cuda::std::is_same_v<T, int16_t>) return I16;
    else if constexpr (cuda::std::is_same_v<T, int32_t>) return I32;
    else if constexpr (cuda::std::is_same_v<T, int64_t>) return I64;
    else if constexpr (cuda::std::is_same_v<T, uint8_t>) return U8;
    else if constexpr (cuda::std::is_same_v<T, uint16_t>) return U16;
    else if constexpr (cuda::std::is_same_v<T, uint32_t>) return U32;
    else if constexpr (cuda::std::is_same_v<T, uint64_t>) return U64;
    else if constexpr (cuda::std::is_same_v<T, f16>) return F16;
    else if constexpr (cuda::std::is_same_v<T, float>) return F32;
    else if constexpr (cuda::std::is_same_v<T, double>) return F64;
    else if constexpr (cuda::std::is_same_v<T, c64>) return C64;
    else return C128;
}

template <class F, int... D> void for_each_dtype_impl(F&& f, std::integer_sequence<int, D...>) {
    (f(std::integral_constant<int, D>{}), ...);
}
template <class F> void for_each_dtype(F&& f) { for_each_dtype_impl(f, std::make_integer_sequence<int, NDT>{}); }

// Fills the unary table rows for Op (code `op`).
template <class Op> void fill_unary_op(Tables& t, int op) {
    for_each_dtype([&](auto d) {
        constexpr int D = decltype(d)::value;
        using T = dt_t<D>;
        if constexpr (Op::template ok<T>) {
            using R = typename UnaryFn<Op, T>::R;
            t.unary[op][D] = &launch<R, UnaryFn<Op, T>, T>;
            t.unary_out[op][D] = dtype_of<R>();
        }
    });
}
template <class Op> void fill_binary_op(Tables& t, int op) {
    for_each_dtype([&](auto d) {
        constexpr int D = decltype(d)::value;
        using T = dt_t<D>;
        if constexpr (Op::template ok<T>) {
            using R = typename BinaryFn<Op, T>::R;
            t.binary[op][D] = &launch<R, BinaryFn<Op, T>, T, T>;
            t.binary_out[op][D] = dtype_of<R>();
        }
    });
}

}  // namespace ndp
