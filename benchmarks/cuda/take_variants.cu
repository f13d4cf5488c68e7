// Gathers of whole rows on one GPU, outside ndplane: out (K, B) = x (N, B)[idx] for bench_cuda's
// "take" case (2^17 random rows of an 8192 x 8192 float32 matrix, int64 indices), the one row of
// the 2026-12-04 H200 table above PyTorch's time (1.14x at the copy's bandwidth; PyTorch's gather
// ran above it, so it must read some rows from L2). Kernel shapes timed here: ndplane's block per
// row (plugins/cuda/src/sort.cu, take_axis_rows_kernel), the same with the output written by
// streaming stores (__stcs: evict-first, so 4 GiB of output does not push the rows drawn again out
// of L2), with the source read through __ldg, with both, with two and four 16-byte words in flight
// per thread, and cudaMemcpyAsync of the whole matrix as the bandwidth reference. CUDA events,
// median of 20 after 3 warm-ups; every variant's output is checked against the first.
// Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=native -o /tmp/take_variants benchmarks/cuda/take_variants.cu && /tmp/take_variants
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#define CK(x)                                                                       \
    do {                                                                            \
        cudaError_t e = (x);                                                        \
        if (e != cudaSuccess) {                                                     \
            printf("error %s at line %d\n", cudaGetErrorString(e), __LINE__);       \
            return 1;                                                               \
        }                                                                           \
    } while (0)

constexpr int BLOCK = 256;

// STREAM: the output by __stcs; LDG: the source by __ldg; U: words in flight per thread.
template <bool STREAM, bool LDG, int U>
__global__ void __launch_bounds__(BLOCK) rows(const uint4* __restrict__ x, int64_t n, int64_t b,
                                              const int64_t* __restrict__ idx, int64_t k, uint4* __restrict__ out) {
    for (int64_t row = blockIdx.x; row < k; row += gridDim.x) {
        const int64_t c = idx[row];
        uint4* o = out + row * b;
        if (c < 0 || c >= n) {
            for (int64_t t = threadIdx.x; t < b; t += BLOCK) o[t] = make_uint4(0, 0, 0, 0);
            continue;
        }
        const uint4* src = x + c * b;
        for (int64_t t0 = threadIdx.x; t0 < b; t0 += int64_t(BLOCK) * U) {
            uint4 v[U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int64_t t = t0 + int64_t(u) * BLOCK;
                if (t < b) v[u] = LDG ? __ldg(src + t) : src[t];
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int64_t t = t0 + int64_t(u) * BLOCK;
                if (t < b) {
                    if (STREAM) __stcs(o + t, v[u]);
                    else o[t] = v[u];
                }
            }
        }
    }
}

int main() {
    const int64_t n = 8192, cols = 8192, k = int64_t(1) << 17, b = cols / 4;  // b: 16-byte words a row
    uint4 *x, *out, *ref;
    int64_t* idx;
    CK(cudaMalloc(&x, n * cols * 4));
    CK(cudaMalloc(&out, k * cols * 4));
    CK(cudaMalloc(&ref, k * cols * 4));
    CK(cudaMalloc(&idx, k * 8));
    std::vector<int64_t> h(k);
    std::mt19937_64 gen(1);
    for (auto& v : h) v = int64_t(gen() % uint64_t(n));
    CK(cudaMemcpy(idx, h.data(), k * 8, cudaMemcpyHostToDevice));
    std::vector<float> hx(n * cols);
    for (int64_t i = 0; i < n * cols; ++i) hx[i] = float(i % 1000003);
    CK(cudaMemcpy(x, hx.data(), n * cols * 4, cudaMemcpyHostToDevice));
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    const double bytes = 2.0 * k * cols * 4;  // read and written once: the least a gather moves
    bool first = true;
    auto time = [&](const char* name, auto launch) -> int {
        std::vector<float> t;
        for (int i = 0; i < 23; ++i) {
            cudaEventRecord(e0);
            launch();
            cudaEventRecord(e1);
            cudaEventSynchronize(e1);
            float ms = 0;
            cudaEventElapsedTime(&ms, e0, e1);
            if (i >= 3) t.push_back(ms);
        }
        CK(cudaGetLastError());
        std::sort(t.begin(), t.end());
        const double us = t[t.size() / 2] * 1e3;
        printf("%-46s %9.1f us %8.1f GB/s  (best %.1f us)\n", name, us, bytes / (us * 1e-6) / 1e9, t[0] * 1e3);
        return 0;
    };
    auto check = [&](const char* name) -> int {
        if (first) {
            CK(cudaMemcpy(ref, out, k * cols * 4, cudaMemcpyDeviceToDevice));
            first = false;
            return 0;
        }
        std::vector<uint32_t> a(4096), r(4096);
        for (int64_t at : {int64_t(0), k * cols / 2, k * cols - 4096}) {
            CK(cudaMemcpy(a.data(), reinterpret_cast<uint32_t*>(out) + at, 4096 * 4, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(r.data(), reinterpret_cast<uint32_t*>(ref) + at, 4096 * 4, cudaMemcpyDeviceToHost));
            if (a != r) printf("  %s: output differs from the first variant's\n", name);
        }
        CK(cudaMemset(out, 0xff, k * cols * 4));
        return 0;
    };
    const unsigned grid = unsigned(k);
#define VARIANT(NAME, S, L, U)                                                               \
    if (time(NAME, [&] { rows<S, L, U><<<grid, BLOCK>>>(x, n, b, idx, k, out); }) || check(NAME)) \
        return 1;
    VARIANT("block per row (ndplane's)", false, false, 1)
    VARIANT("  + streaming stores (__stcs)", true, false, 1)
    VARIANT("  + __ldg reads", false, true, 1)
    VARIANT("  + __stcs and __ldg", true, true, 1)
    VARIANT("  2 words in flight", false, false, 2)
    VARIANT("  2 words in flight, __stcs", true, false, 2)
    VARIANT("  4 words in flight", false, false, 4)
    VARIANT("  4 words in flight, __stcs", true, false, 4)
#undef VARIANT
    // The bandwidth reference: the same bytes as one contiguous copy (4 GiB in, 4 GiB out would
    // need 8 GiB; the matrix is copied k / n times over instead).
    time("cudaMemcpyAsync, the same bytes", [&] {
        for (int64_t r = 0; r < k / n; ++r)
            cudaMemcpyAsync(out + r * n * b, x, n * cols * 4, cudaMemcpyDeviceToDevice);
    });
    printf("(%d SMs; %lld rows of %lld float32 from %lld)\n", sms, (long long)k, (long long)cols, (long long)n);
    return 0;
}
