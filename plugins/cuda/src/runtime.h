// Devices, streams, errors, the caching allocator per device and cuBLAS (loaded with dlopen
// at first use: nothing CUDA-specific is needed to build beyond nvcc and the runtime).
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "alloc.h"
#include "common.h"

namespace ndp {

// Whether a usable driver and device exist; never creates a context.
struct Probe {
    bool ok;
    int count;
    int driver_version;   // e.g. 13000; 0 without a driver
    int runtime_version;  // what this build was compiled against
    std::string reason;   // why not, and what to do
};
Probe probe();

struct cuda_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};
struct out_of_memory : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// One per device index, created on first use.
struct DeviceState {
    int index = 0;
    cudaStream_t stream = nullptr;
    CachingAllocator* allocator = nullptr;
    std::string name;
    int sms = 0;
    std::string broken;  // set by a sticky error: the device can no longer be used
    void* cublas = nullptr;
    void* cublas_workspace = nullptr;  // library state (cudaMalloc), not a user buffer
    bool allow_tf32 = false;
};

// The state of device `index`, made current on this thread (cudaSetDevice).
DeviceState& device(int index);
int device_count();

// Throws cuda_error naming `what` if err is not cudaSuccess; a sticky error (the context is
// corrupted) marks the device broken so later calls fail fast with the first message.
void check(DeviceState& d, cudaError_t err, const char* what);
// After kernel launches: reports launch-configuration errors (asynchronous faults surface
// at the next synchronising call).
void check_launch(DeviceState& d, const char* what);

// cuBLAS: the library's path once loaded, or why it could not be.
struct CublasInfo {
    bool loaded;
    std::string path_or_reason;
};
CublasInfo cublas_info();
void set_cublas_candidates(std::vector<std::string> paths);  // wheel locations, from Python

// out = a @ b through cublasGemmStridedBatchedEx for float16/32/64 and complex64/128.
void gemm(DeviceState& d, int dtype, const GemmPlan& g, const void* a, const void* b, void* out);

}  // namespace ndp
