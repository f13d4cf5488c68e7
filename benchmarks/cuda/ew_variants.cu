// Elementwise kernel shapes on one GPU, outside ndplane: copy and add of 2^26 float32 through
// a grid-stride loop (grids of SMs * 8 ... 64 blocks, 1 or 4 packs in flight per thread), a
// grid covering every pack (1-8 packs per thread, blocks of 128-512), and cudaMemcpyAsync.
// CUDA events, median of 30 after 3 warm-ups. The choice in plugins/cuda/src/elementwise.cuh
// (ew_vec_kernel) rests on its H200 run (docs/performance.md). Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=native -o /tmp/ew_variants benchmarks/cuda/ew_variants.cu && /tmp/ew_variants
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("err %s line %d\n", cudaGetErrorString(e), __LINE__); return 1; } } while (0)

template <int U, int NIN>
__global__ void __launch_bounds__(256) gridstride(int64_t groups, float4* out, const float4* a, const float4* b) {
    const int64_t step = int64_t(gridDim.x) * blockDim.x;
    const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    for (int64_t j0 = tid; j0 < groups; j0 += step * U) {
        float4 r[U];
#pragma unroll
        for (int u = 0; u < U; ++u) if (j0 + u * step < groups) {
            float4 x = a[j0 + u * step];
            if (NIN == 2) { float4 y = b[j0 + u * step]; x.x += y.x; x.y += y.y; x.z += y.z; x.w += y.w; }
            r[u] = x;
        }
#pragma unroll
        for (int u = 0; u < U; ++u) if (j0 + u * step < groups) out[j0 + u * step] = r[u];
    }
}

// one shot: each block owns blockDim*U contiguous groups
template <int U, int NIN>
__global__ void oneshot(int64_t groups, float4* out, const float4* a, const float4* b) {
    const int64_t base = int64_t(blockIdx.x) * blockDim.x * U + threadIdx.x;
    float4 r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) { int64_t j = base + u * blockDim.x; if (j < groups) {
        float4 x = a[j];
        if (NIN == 2) { float4 y = b[j]; x.x += y.x; x.y += y.y; x.z += y.z; x.w += y.w; }
        r[u] = x; } }
#pragma unroll
    for (int u = 0; u < U; ++u) { int64_t j = base + u * blockDim.x; if (j < groups) out[j] = r[u]; }
}

int main() {
    const int64_t n = 1ll << 26, groups = n / 4;
    int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    float4 *a, *b, *o;
    CK(cudaMalloc(&a, n * 4)); CK(cudaMalloc(&b, n * 4)); CK(cudaMalloc(&o, n * 4));
    cudaMemset(a, 0, n * 4); cudaMemset(b, 0, n * 4);
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    auto time = [&](const char* name, int nin, auto launch) {
        std::vector<float> t;
        for (int i = 0; i < 33; ++i) {
            cudaEventRecord(e0); launch(); cudaEventRecord(e1); cudaEventSynchronize(e1);
            float ms; cudaEventElapsedTime(&ms, e0, e1); if (i >= 3) t.push_back(ms);
        }
        std::sort(t.begin(), t.end());
        double us = t[t.size() / 2] * 1e3, gbs = (nin + 1) * n * 4.0 / (us * 1e-6) / 1e9;
        printf("%-44s %8.1f us %8.1f GB/s  (best %.1f)\n", name, us, gbs, t[0] * 1e3);
    };
    time("copy memcpyAsync", 1, [&] { cudaMemcpyAsync(o, a, n * 4, cudaMemcpyDeviceToDevice); });
    char name[128];
    for (int nin = 1; nin <= 2; ++nin) {
        for (int mult : {8, 16, 32, 64}) {
            unsigned g = sms * mult;
            snprintf(name, sizeof name, "%s gridstride U4 grid=SM*%d", nin == 1 ? "copy" : "add", mult);
            if (nin == 1) time(name, 1, [&] { gridstride<4, 1><<<g, 256>>>(groups, o, a, b); });
            else time(name, 2, [&] { gridstride<4, 2><<<g, 256>>>(groups, o, a, b); });
        }
        snprintf(name, sizeof name, "%s gridstride U1 grid=SM*8", nin == 1 ? "copy" : "add");
        if (nin == 1) time(name, 1, [&] { gridstride<1, 1><<<sms * 8, 256>>>(groups, o, a, b); });
        else time(name, 2, [&] { gridstride<1, 2><<<sms * 8, 256>>>(groups, o, a, b); });
        for (int threads : {128, 256, 512}) {
#define ONE(U) { unsigned g = unsigned((groups + int64_t(threads) * U - 1) / (int64_t(threads) * U)); \
            snprintf(name, sizeof name, "%s oneshot U%d block %d", nin == 1 ? "copy" : "add", U, threads); \
            if (nin == 1) time(name, 1, [&] { oneshot<U, 1><<<g, threads>>>(groups, o, a, b); }); \
            else time(name, 2, [&] { oneshot<U, 2><<<g, threads>>>(groups, o, a, b); }); }
            ONE(1) ONE(2) ONE(4) ONE(8)
        }
    }
    CK(cudaGetLastError());
    return 0;
}
