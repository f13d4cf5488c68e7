// Philox random bits, arange, and the integer (and bool) matmul, which cuBLAS does not have.
#include "elementwise.cuh"
#include "philox.h"

namespace ndp {

namespace {

__global__ void __launch_bounds__(BLOCK) philox_kernel(uint64_t key, uint64_t lo, uint64_t hi, uint32_t* out, int64_t n) {
    const int64_t blocks = (n + 3) / 4;
    for (int64_t b = int64_t(blockIdx.x) * BLOCK + threadIdx.x; b < blocks; b += int64_t(gridDim.x) * BLOCK) {
        const Philox4 r = philox_block(key, lo, hi, uint64_t(b));
        const int64_t i = b * 4;
        if (i + 3 < n && reinterpret_cast<uintptr_t>(out + i) % 16 == 0) {
            reinterpret_cast<uint4*>(out + i)[0] = make_uint4(r.w[0], r.w[1], r.w[2], r.w[3]);
        } else {
            for (int j = 0; j < 4 && i + j < n; ++j) out[i + j] = r.w[j];
        }
    }
}

constexpr int TILE = 16;

// out[z] = a[z] @ b[z], 16 x 16 tiles through shared memory, wrapping as NumPy's integer
// matmul (bool: OR of ANDs). Strides in elements, any layout; batch stride 0 broadcasts.
template <class T>
__global__ void int_matmul_kernel(const T* a, const T* b, T* out, int64_t M, int64_t N, int64_t K, int64_t sa0,
                                  int64_t sa1, int64_t sa2, int64_t sb0, int64_t sb1, int64_t sb2, int64_t so0) {
    __shared__ T ta[TILE][TILE + 1], tb[TILE][TILE + 1];
    const int64_t z = blockIdx.z;
    const int64_t row = int64_t(blockIdx.y) * TILE + threadIdx.y, col = int64_t(blockIdx.x) * TILE + threadIdx.x;
    T acc = T(0);
    for (int64_t k0 = 0; k0 < K; k0 += TILE) {
        const int64_t ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        ta[threadIdx.y][threadIdx.x] = row < M && ka < K ? a[z * sa0 + row * sa1 + ka * sa2] : T(0);
        tb[threadIdx.y][threadIdx.x] = kb < K && col < N ? b[z * sb0 + kb * sb1 + col * sb2] : T(0);
        __syncthreads();
#pragma unroll
        for (int j = 0; j < TILE; ++j) acc = ops::add::f(acc, ops::multiply::f(ta[threadIdx.y][j], tb[j][threadIdx.x]));
        __syncthreads();
    }
    if (row < M && col < N) out[z * so0 + row * N + col] = acc;
}

using IntMatmul = void (*)(const View&, const View&, const View&, cudaStream_t);
template <class T> void run_int_matmul(const View& a, const View& b, const View& out, cudaStream_t s) {
    const int64_t B = out.shape[0], M = out.shape[1], N = out.shape[2], K = a.shape[2];
    dim3 block(TILE, TILE);
    for (int64_t z0 = 0; z0 < B; z0 += 65535) {
        const int64_t nz = B - z0 < 65535 ? B - z0 : 65535;
        for (int64_t r0 = 0; r0 < M; r0 += int64_t(65535) * TILE) {
            const int64_t nr = M - r0 < int64_t(65535) * TILE ? M - r0 : int64_t(65535) * TILE;
            dim3 grid(unsigned((N + TILE - 1) / TILE), unsigned((nr + TILE - 1) / TILE), unsigned(nz));
            const int64_t sa0 = a.shape[0] == 1 ? 0 : a.strides[0], sb0 = b.shape[0] == 1 ? 0 : b.strides[0];
            const T* pa = reinterpret_cast<const T*>(a.data) + z0 * sa0 + r0 * a.strides[1];
            const T* pb = reinterpret_cast<const T*>(b.data) + z0 * sb0;
            T* po = reinterpret_cast<T*>(out.data) + (z0 * M + r0) * N;
            int_matmul_kernel<T><<<grid, block, 0, s>>>(pa, pb, po, nr, N, K, sa0, a.strides[1], a.strides[2], sb0,
                                                        b.strides[1], b.strides[2], M * N);
        }
    }
}

template <class T>
__global__ void __launch_bounds__(BLOCK) arange_kernel(T* out, int64_t n, double start, double step, int64_t istart,
                                                       int64_t istep) {
    for (int64_t i = int64_t(blockIdx.x) * BLOCK + threadIdx.x; i < n; i += int64_t(gridDim.x) * BLOCK) {
        if constexpr (is_float_v<T>)
            out[i] = convert<T>(__dadd_rn(__dmul_rn(double(i), step), start));
        else
            out[i] = static_cast<T>(static_cast<int64_t>(uint64_t(istart) + uint64_t(i) * uint64_t(istep)));
    }
}

using Arange = void (*)(char*, int64_t, double, double, int64_t, int64_t, cudaStream_t);
template <int D>
void run_arange(char* out, int64_t n, double start, double step, int64_t istart, int64_t istep, cudaStream_t s) {
    arange_kernel<dt_t<D>><<<grid_for(n), BLOCK, 0, s>>>(reinterpret_cast<dt_t<D>*>(out), n, start, step, istart, istep);
}
constexpr Arange ARANGE[NDT] = {nullptr,         &run_arange<I8>,  &run_arange<I16>, &run_arange<I32>, &run_arange<I64>,
                                &run_arange<U8>, &run_arange<U16>, &run_arange<U32>, &run_arange<U64>, &run_arange<F16>,
                                &run_arange<F32>, &run_arange<F64>, nullptr,         nullptr};

}  // namespace

bool arange_ok(int dt) { return dt >= 0 && dt < NDT && ARANGE[dt] != nullptr; }

void launch_arange(int dt, char* out, int64_t n, double start, double step, int64_t istart, int64_t istep, Stream s) {
    if (!arange_ok(dt)) throw std::invalid_argument("fused arange: no kernel for this dtype.");
    if (n > 0) ARANGE[dt](out, n, start, step, istart, istep, static_cast<cudaStream_t>(s));
}

bool int_matmul_ok(int dt) { return dt >= BOOL && dt <= U64; }

void launch_int_matmul(int dt, const View& a, const View& b, const View& out, Stream s) {
    static const IntMatmul table[U64 + 1] = {
        &run_int_matmul<bool>,    &run_int_matmul<int8_t>,  &run_int_matmul<int16_t>,
        &run_int_matmul<int32_t>, &run_int_matmul<int64_t>, &run_int_matmul<uint8_t>,
        &run_int_matmul<uint16_t>, &run_int_matmul<uint32_t>, &run_int_matmul<uint64_t>};
    if (!int_matmul_ok(dt)) throw std::invalid_argument("matmul: no integer kernel for this dtype.");
    table[dt](a, b, out, static_cast<cudaStream_t>(s));
}

void launch_random_bits(uint64_t key, uint64_t ctr_lo, uint64_t ctr_hi, uint32_t* out, int64_t n, Stream s) {
    if (n <= 0) return;
    philox_kernel<<<grid_for((n + 3) / 4), BLOCK, 0, static_cast<cudaStream_t>(s)>>>(key, ctr_lo, ctr_hi, out, n);
}

}  // namespace ndp
