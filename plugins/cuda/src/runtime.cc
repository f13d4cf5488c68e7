#include "runtime.h"

#include <dlfcn.h>
#include <library_types.h>

#include <cstdlib>
#include <mutex>

namespace ndp {

Probe probe() {
    Probe p{false, 0, 0, 0, ""};
    cudaRuntimeGetVersion(&p.runtime_version);
    if (cudaDriverGetVersion(&p.driver_version) != cudaSuccess || p.driver_version == 0) {
        p.reason = "no NVIDIA driver found (libcuda.so.1 could not be loaded); install the NVIDIA driver";
        return p;
    }
    cudaError_t err = cudaGetDeviceCount(&p.count);
    cudaGetLastError();
    if (err == cudaErrorInsufficientDriver) {
        p.reason = "the NVIDIA driver supports CUDA " + std::to_string(p.driver_version / 1000) + "." +
                   std::to_string(p.driver_version % 1000 / 10) + " but ndplane-cuda was built for CUDA " +
                   std::to_string(p.runtime_version / 1000) + "." + std::to_string(p.runtime_version % 1000 / 10) +
                   "; update the driver";
        p.count = 0;
        return p;
    }
    if (err == cudaErrorNoDevice || (err == cudaSuccess && p.count == 0)) {
        p.reason = "the NVIDIA driver is installed but no CUDA device is visible (check CUDA_VISIBLE_DEVICES)";
        p.count = 0;
        return p;
    }
    if (err != cudaSuccess) {
        p.reason = std::string("CUDA could not start: ") + cudaGetErrorString(err);
        p.count = 0;
        return p;
    }
    p.ok = true;
    return p;
}

namespace {

struct CudaRaw final : RawAllocator {
    DeviceState* d;
    explicit CudaRaw(DeviceState* dev) : d(dev) {}
    void* alloc(size_t n) override {
        void* p = nullptr;
        if (cudaMalloc(&p, n) != cudaSuccess) {
            cudaGetLastError();  // clear the (non-sticky) allocation error
            return nullptr;
        }
        return p;
    }
    void free(void* p) override { cudaFree(p); }
    void synchronize() override { cudaStreamSynchronize(d->stream); }
};

std::mutex g_mu;
std::vector<DeviceState*> g_devices;
thread_local int t_current = -1;

bool is_sticky(cudaError_t e) {
    switch (e) {
        case cudaErrorIllegalAddress:
        case cudaErrorLaunchFailure:
        case cudaErrorIllegalInstruction:
        case cudaErrorMisalignedAddress:
        case cudaErrorInvalidAddressSpace:
        case cudaErrorInvalidPc:
        case cudaErrorHardwareStackError:
        case cudaErrorAssert:
        case cudaErrorECCUncorrectable:
        case cudaErrorUnknown:
            return true;
        default:
            return false;
    }
}

}  // namespace

int device_count() {
    static int n = [] {
        int c = 0;
        if (cudaGetDeviceCount(&c) != cudaSuccess) {
            cudaGetLastError();
            c = 0;
        }
        return c;
    }();
    return n;
}

DeviceState& device(int index) {
    if (index < 0 || index >= device_count())
        throw std::invalid_argument("cuda: no device cuda:" + std::to_string(index) + " (" +
                                    std::to_string(device_count()) + " visible).");
    DeviceState* d;
    {
        std::lock_guard<std::mutex> lock(g_mu);
        if (g_devices.empty()) g_devices.resize(static_cast<size_t>(device_count()), nullptr);
        d = g_devices[static_cast<size_t>(index)];
        if (!d) {
            d = new DeviceState();
            d->index = index;
            if (cudaSetDevice(index) != cudaSuccess) throw cuda_error("cuda: cannot select device " + std::to_string(index));
            cudaDeviceProp prop{};
            cudaGetDeviceProperties(&prop, index);
            d->name = prop.name;
            d->sms = prop.multiProcessorCount;
            if (cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking) != cudaSuccess)
                throw cuda_error("cuda: cannot create a stream on device " + std::to_string(index));
            const char* nc = std::getenv("NDPLANE_CUDA_NO_CACHE");
            d->allocator = new CachingAllocator(new CudaRaw(d), !(nc && *nc && *nc != '0'));
            const char* tf32 = std::getenv("NDPLANE_CUDA_ALLOW_TF32");
            d->allow_tf32 = tf32 && *tf32 && *tf32 != '0';
            g_devices[static_cast<size_t>(index)] = d;
            t_current = index;
        }
    }
    if (!d->broken.empty()) throw cuda_error(d->broken);
    if (t_current != index) {
        cudaSetDevice(index);
        t_current = index;
    }
    return *d;
}

void check(DeviceState& d, cudaError_t err, const char* what) {
    if (err == cudaSuccess) return;
    std::string msg = std::string(what) + " on cuda:" + std::to_string(d.index) + " failed: " + cudaGetErrorName(err) +
                      " (" + cudaGetErrorString(err) + ")";
    if (is_sticky(err)) {
        d.broken = msg + "; the CUDA context is corrupted and cuda:" + std::to_string(d.index) +
                   " cannot be used again in this process (restart Python)";
        throw cuda_error(d.broken);
    }
    cudaGetLastError();
    throw cuda_error(msg);
}

void check_launch(DeviceState& d, const char* what) { check(d, cudaGetLastError(), what); }

// ---------------------------------------------------------------------------
// cuBLAS through dlopen: our own prototypes for the few functions we call.
// ---------------------------------------------------------------------------
namespace {

using Handle = void*;
using Status = int;
enum { OP_N = 0, OP_T = 1 };
enum { COMPUTE_32F = 68, COMPUTE_64F = 70, COMPUTE_32F_FAST_TF32 = 77 };
enum { GEMM_DEFAULT = -1 };
enum { DEFAULT_MATH = 0 };

struct Cublas {
    void* lib = nullptr;
    std::string path, error;
    Status (*create)(Handle*) = nullptr;
    Status (*set_stream)(Handle, cudaStream_t) = nullptr;
    Status (*set_workspace)(Handle, void*, size_t) = nullptr;
    Status (*set_math_mode)(Handle, int) = nullptr;
    Status (*gemm)(Handle, int, int, int, int, int, const void*, const void*, cudaDataType, int, long long,
                   const void*, cudaDataType, int, long long, const void*, void*, cudaDataType, int, long long, int,
                   int, int) = nullptr;
};

std::vector<std::string> g_candidates;
std::once_flag g_cublas_once;
Cublas g_cublas;

void load_cublas() {
    Cublas& c = g_cublas;
    std::vector<std::string> tried;
    auto attempt = [&](const std::string& name, int flags) {
        if (c.lib) return;
        c.lib = dlopen(name.c_str(), flags);
        if (c.lib) c.path = name;
        else tried.push_back(name);
    };
    attempt("libcublas.so.13", RTLD_NOW | RTLD_NOLOAD);  // already loaded (e.g. by PyTorch)
    if (const char* env = std::getenv("NDPLANE_CUBLAS")) attempt(env, RTLD_NOW | RTLD_LOCAL);
    for (const auto& p : g_candidates) attempt(p, RTLD_NOW | RTLD_LOCAL);
    attempt("libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
    attempt("libcublas.so.12", RTLD_NOW | RTLD_LOCAL);
    if (!c.lib) {
        c.error = "cuBLAS could not be loaded (tried";
        for (auto& t : tried) c.error += " " + t;
        c.error += "); pip install nvidia-cublas (or set NDPLANE_CUBLAS to libcublas.so)";
        return;
    }
    auto sym = [&](const char* name) {
        void* f = dlsym(c.lib, name);
        if (!f && c.error.empty()) c.error = std::string("cuBLAS at ") + c.path + " lacks " + name;
        return f;
    };
    c.create = reinterpret_cast<decltype(c.create)>(sym("cublasCreate_v2"));
    c.set_stream = reinterpret_cast<decltype(c.set_stream)>(sym("cublasSetStream_v2"));
    c.set_workspace = reinterpret_cast<decltype(c.set_workspace)>(sym("cublasSetWorkspace_v2"));
    c.set_math_mode = reinterpret_cast<decltype(c.set_math_mode)>(sym("cublasSetMathMode"));
    c.gemm = reinterpret_cast<decltype(c.gemm)>(sym("cublasGemmStridedBatchedEx"));
    // NOTE: never dlclose: handles and kernels of the library may outlive any owner here.
}

const Cublas& cublas() {
    std::call_once(g_cublas_once, load_cublas);
    return g_cublas;
}

constexpr size_t WORKSPACE = size_t(32) << 20;

}  // namespace

void set_cublas_candidates(std::vector<std::string> paths) { g_candidates = std::move(paths); }

CublasInfo cublas_info() {
    const Cublas& c = cublas();
    if (!c.error.empty()) return {false, c.error};
    return {true, c.path};
}

void gemm(DeviceState& d, int dtype, const GemmPlan& g, const void* a, const void* b, void* out) {
    const Cublas& c = cublas();
    if (!c.error.empty()) throw cuda_error("matmul: " + c.error);
    if (!d.cublas) {
        Handle h = nullptr;
        if (c.create(&h) != 0) throw cuda_error("matmul: cublasCreate failed on cuda:" + std::to_string(d.index));
        d.cublas = h;
        // NOTE: the workspace is the handle's own state, like the handle: taken straight from
        // the driver so that memory_stats counts only the arrays' buffers (a user who frees
        // every array sees buffers == bytes == 0). Without it cuBLAS allocates its own.
        if (cudaMalloc(&d.cublas_workspace, WORKSPACE) != cudaSuccess) {
            cudaGetLastError();
            d.cublas_workspace = nullptr;
        }
        c.set_math_mode(h, DEFAULT_MATH);  // no TF32 unless asked for (compute type below)
    }
    // NOTE: SetStream resets the workspace, so the workspace is set after it, every call.
    c.set_stream(d.cublas, d.stream);
    if (d.cublas_workspace) c.set_workspace(d.cublas, d.cublas_workspace, WORKSPACE);
    constexpr long long INT_MAX_ = 2147483647;
    if (g.m > INT_MAX_ || g.n > INT_MAX_ || g.k > INT_MAX_ || g.lda > INT_MAX_ || g.ldb > INT_MAX_ || g.ldc > INT_MAX_)
        throw std::invalid_argument("matmul: a matrix dimension exceeds 2**31 - 1, which cuBLAS cannot take.");
    cudaDataType type;
    int compute;
    float f1[2] = {1.0f, 0.0f}, f0[2] = {0.0f, 0.0f};
    double d1[2] = {1.0, 0.0}, d0[2] = {0.0, 0.0};
    const void *alpha = f1, *beta = f0;
    switch (dtype) {
        case F16: type = CUDA_R_16F; compute = COMPUTE_32F; break;
        case F32: type = CUDA_R_32F; compute = d.allow_tf32 ? COMPUTE_32F_FAST_TF32 : COMPUTE_32F; break;
        case F64: type = CUDA_R_64F; compute = COMPUTE_64F; alpha = d1; beta = d0; break;
        case C64: type = CUDA_C_32F; compute = COMPUTE_32F; break;
        case C128: type = CUDA_C_64F; compute = COMPUTE_64F; alpha = d1; beta = d0; break;
        default: throw std::invalid_argument("matmul: cuBLAS has no kernel for this dtype.");
    }
    for (int64_t z0 = 0; z0 < g.batch; z0 += 65535) {
        const int64_t nb = g.batch - z0 < 65535 ? g.batch - z0 : 65535;
        const size_t isz = static_cast<size_t>(ITEMSIZE[dtype]);
        Status s = c.gemm(d.cublas, g.trans_a ? OP_T : OP_N, g.trans_b ? OP_T : OP_N, int(g.m), int(g.n), int(g.k), alpha,
                          static_cast<const char*>(b) + z0 * g.stride_a * isz, type, int(g.lda), g.stride_a,
                          static_cast<const char*>(a) + z0 * g.stride_b * isz, type, int(g.ldb), g.stride_b, beta,
                          static_cast<char*>(out) + z0 * g.stride_c * isz, type, int(g.ldc), g.stride_c, int(nb), compute,
                          GEMM_DEFAULT);
        if (s != 0) throw cuda_error("matmul: cublasGemmStridedBatchedEx returned status " + std::to_string(s));
    }
}

}  // namespace ndp
