// The host's view of the kernels: launcher tables filled by the .cu translation units.
// No CUDA header here, so module.cc (compiled by the host compiler) includes it freely.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common.h"

namespace ndp {

using Stream = void*;  // cudaStream_t

// A scalar operand already converted to the operation's dtype, as raw bytes.
struct Scalar {
    alignas(16) unsigned char bytes[16];
};

// An elementwise input: a device pointer to element 0 of the launch (base offset applied),
// or, with ptr == nullptr, a scalar broadcast to every element.
struct In {
    const char* ptr;
    Scalar scalar;
};

using Launch = void (*)(const Plan& p, char* out, const In* in, Stream s);

// The op codes, in the order of NDP_UNARY_OPS / NDP_BINARY_OPS: the lists live only in
// ops.cuh (adding an op there is all the plugin needs); their lengths come from copy.cu.
inline constexpr int MAXOPS = 64;
extern const int NUNARY;
extern const int NBINARY;
extern const char* const UNARY_NAMES[MAXOPS];
extern const char* const BINARY_NAMES[MAXOPS];

struct Tables {
    Launch unary[MAXOPS][NDT];       // by input dtype; nullptr where the op does not take it
    int unary_out[MAXOPS][NDT];      // result dtype code
    Launch binary[MAXOPS][NDT];
    int binary_out[MAXOPS][NDT];
    Launch cast[NDT][NDT];           // [from][to]
    Launch copy[5];                  // by log2(itemsize): 1, 2, 4, 8, 16 bytes
    Launch fill[5];                  // in[0].scalar holds the value
    Launch where[5];                 // in = (cond, a, b)
};

// Each translation unit fills its part (unary_a.cu, unary_b.cu, binary_a.cu, ...).
void fill_unary_a(Tables& t);
void fill_unary_b(Tables& t);
void fill_binary_a(Tables& t);
void fill_binary_b(Tables& t);
void fill_cast(Tables& t);
void fill_copy(Tables& t);
const Tables& tables();

inline constexpr int log2_itemsize(int dtype) {
    const int s = ITEMSIZE[dtype];
    return s == 1 ? 0 : s == 2 ? 1 : s == 4 ? 2 : s == 8 ? 3 : 4;
}

// Reductions and scans over the last axis of a 2-D (M, K) view into out (M,) or (M, K).
enum ReduceOp : int { R_SUM, R_PROD, R_MAX, R_MIN, R_ARGMAX, R_ARGMIN, R_ANY, R_ALL, NREDUCE };
enum ScanOp : int { S_CUMSUM, S_CUMPROD, NSCAN };
inline constexpr const char* REDUCE_NAMES[NREDUCE] = {"sum", "prod", "max", "min", "argmax", "argmin", "any", "all"};
inline constexpr const char* SCAN_NAMES[NSCAN] = {"cumulative_sum", "cumulative_prod"};

struct Scratch;  // below: device memory for a launch's temporaries

struct Rows {  // a 2-D operand: rows M, columns K, strides in elements
    const char* data;
    int64_t m, k, row_stride, col_stride;
};
// True if (op, input dtype, output dtype) has a kernel.
bool reduce_ok(int op, int in_dt, int out_dt);
void launch_reduce(int op, int in_dt, int out_dt, const Rows& x, char* out, Scratch& scratch, Stream s);
bool scan_ok(int op, int in_dt, int out_dt);
void launch_scan(int op, int in_dt, int out_dt, const Rows& x, char* out, Stream s);

// Integer (and bool) matmul: out (B, M, N) = a (B, M, K) @ b (B, K, N), wrapping as NumPy.
bool int_matmul_ok(int dt);
void launch_int_matmul(int dt, const View& a, const View& b, const View& out, Stream s);

// Device scratch for launchers that need temporaries (sort, scatter_add): blocks from the
// device's caching allocator, released when the Scratch is destroyed -- safe while kernels
// still run, since all work of a device is ordered on its one stream.
struct Scratch {
    virtual ~Scratch() = default;
    virtual void* get(size_t nbytes) = 0;  // never nullptr: throws when out of memory
};

// The indices of take and scatter_add: 1-D, any integer dtype, every value in [0, N).
struct Index {
    const char* data;
    int dtype;
    int64_t k, stride;  // elements, stride in elements
};
// out (M, K) = x (M, N) gathered at the indices along the last axis; any layouts.
void launch_take(const Rows& x, const Index& idx, const Rows& out, int dtype, Stream s);
// The fused take_axis: out (A, K, B) = x (A, N, B) at the indices (K of them) along the middle
// axis, both C-contiguous, any dtype.
void launch_take_axis(const char* x, int64_t a, int64_t n, int64_t b, const Index& idx, char* out, int dtype, Stream s);
// out (M, N) [m, idx[k]] += values (M, K) [m, k] (bool: OR), deterministic: the indices are
// stably sorted, and each target element adds its values in increasing k, as NumPy's add.at.
void launch_scatter_add(const Rows& out, const Index& idx, const Rows& values, int dtype, Scratch& scratch, Stream s);
// Sorts each row of x (M, K) (bool, integer or real floating dtype): a stable radix sort on
// order-preserving keys (-0.0 == 0.0, NaN last; descending sorts the complemented keys, which
// keeps equal elements in input order and puts NaN first). Writes the sorted values and/or
// the permutation (index_dtype int32 or int64) into C-contiguous (M, K) outputs (nullptr:
// not wanted).
bool sort_ok(int dtype, int index_dtype);
void launch_sort(const Rows& x, int dtype, char* values_out, char* indices_out, int index_dtype, bool descending,
                 Scratch& scratch, Stream s);

// The fused row ops (fused.cu): x and out C-contiguous (M, K) (logsumexp: out (M,)) of one
// float dtype; layer_norm's weight and bias (K,) of that dtype or nullptr.
enum FusedOp : int { FU_SOFTMAX, FU_LOG_SOFTMAX, FU_LOGSUMEXP, FU_LAYER_NORM, FU_ADAM, FU_TAKE_AXIS, FU_ARANGE, NFUSED };
inline constexpr const char* FUSED_NAMES[NFUSED] = {"softmax", "log_softmax", "logsumexp", "layer_norm", "adam",
                                                    "take_axis", "arange"};
bool fused_ok(int dtype);
void launch_fused(int op, int dtype, const char* x, char* out, int64_t m, int64_t k, const char* w, const char* b,
                  double eps, Stream s);
// The optimizers' Adam/AdamW update of n elements in place (param, exp_avg, exp_avg_sq; grad
// read), as Backend.fused's docstring states it; float16 computed in float.
struct AdamArgs {
    double lr, beta1, beta2, eps, weight_decay;
    bool decoupled;
    int64_t step;
};
void launch_adam(int dtype, char* param, const char* grad, char* exp_avg, char* exp_avg_sq, int64_t n,
                 const AdamArgs& a, Stream s);

// fused arange: out (N,) contiguous, integer or real floating (misc.cu): out[i] = i * step +
// start in float64 (rounded once, no FMA), or istart + i * istep in wrapping int64 for integers:
// what the core makes on the host, so that nd.arange uploads nothing.
bool arange_ok(int dtype);
void launch_arange(int dtype, char* out, int64_t n, double start, double step, int64_t istart, int64_t istep, Stream s);

// Philox-4x32-10: word i of out is word i % 4 of Philox(key, counter + i / 4).
void launch_random_bits(uint64_t key, uint64_t ctr_lo, uint64_t ctr_hi, uint32_t* out, int64_t n, Stream s);

// Device properties the launchers size their grids by (set once per device).
void set_grid_limit(int blocks);

}  // namespace ndp
