// Shared by the host code (g++) and the kernels (nvcc): dtype codes, layouts and the
// launch planner. Nothing here includes a CUDA header, so the host self-tests of the
// planner run on machines without a GPU.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#if defined(__CUDACC__)
#define NDP_HD __host__ __device__
#else
#define NDP_HD
#endif

namespace ndp {

// Dtype codes follow ndplane.ALL_DTYPES order.
enum DT : int { BOOL, I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, C64, C128, NDT };

inline constexpr int ITEMSIZE[NDT] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 8, 16};
inline constexpr const char* DT_NAME[NDT] = {
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128"};

// Axes a kernel walks after merging; a layout with more (rare: > 8 axes that do not
// merge) is split by the host into several launches over its leading axes.
inline constexpr int MAXDIM = 8;
// Operands of one elementwise launch: out plus up to three inputs (where).
inline constexpr int MAXARGS = 4;

// An elementwise launch: `n` elements over `ndim` merged axes, each operand's strides in
// elements (signed: negative and zero strides need no special case). Passed by value.
struct Plan {
    int ndim;
    int nargs;
    int64_t n;
    int64_t shape[MAXDIM];                // innermost last
    int64_t strides[MAXARGS][MAXDIM];     // per operand, in elements
    bool contiguous;                      // every operand dense with unit stride: one flat axis
};

// A Ref as the host sees it after parsing: device pointer to element 0 of the view.
struct View {
    char* data = nullptr;
    int dtype = 0;
    int ndim = 0;
    int64_t size = 0;
    int64_t shape[64] = {};
    int64_t strides[64] = {};
};

// Operands of one shape with their axes merged: size-1 axes dropped, neighbours joined
// where every operand steps through them as one axis (zero and negative strides too).
struct Merged {
    int ndim = 0;
    int nargs = 0;
    int64_t n = 1;  // elements; 0 if any axis is empty
    int64_t shape[64] = {};
    int64_t strides[MAXARGS][64] = {};
};
Merged coalesce(int ndim, const int64_t* shape, int nargs, const int64_t* const* strides);

// Calls launch(plan, base) with a Plan of at most MAXDIM axes and each operand's element
// offset `base[a]`: once when the merged layout fits, else once per index of the axes
// in front of the last MAXDIM (rare: more than 8 axes that do not merge).
void split(const Merged& m, void (*launch)(const Plan&, const int64_t*, void*), void* ctx);

// The cuBLAS call for out (B, M, N) = a (B, M, K) @ b (B, K, N), row-major out, as the
// column-major product out^T = b^T a^T. A matrix is "row" (unit stride on its last axis)
// or "col" (unit stride on its second-to-last axis); batch strides may be 0.
struct GemmPlan {
    bool trans_a, trans_b;  // cuBLAS op flags for its first (our b) and second (our a) operand
    int64_t m, n, k;        // cuBLAS's m, n, k
    int64_t lda, ldb, ldc;  // for cuBLAS's first operand (our b), second (our a), and out
    int64_t stride_a, stride_b, stride_c;  // batch strides of cuBLAS's first, second, out
    int64_t batch;
};
// Throws std::invalid_argument when a matrix is neither row- nor column-major.
GemmPlan plan_gemm(const View& a, const View& b, const View& out);

struct type_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};
struct index_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace ndp
