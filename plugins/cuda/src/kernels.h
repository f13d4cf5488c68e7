// The host's view of the kernels: launcher tables filled by the .cu translation units.
// No CUDA header here, so module.cc (compiled by the host compiler) includes it freely.
#pragma once

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

inline int log2_itemsize(int dtype) {
    const int s = ITEMSIZE[dtype];
    return s == 1 ? 0 : s == 2 ? 1 : s == 4 ? 2 : s == 8 ? 3 : 4;
}

// Reductions and scans over the last axis of a 2-D (M, K) view into out (M,) or (M, K).
enum ReduceOp : int { R_SUM, R_PROD, R_MAX, R_MIN, R_ARGMAX, R_ARGMIN, R_ANY, R_ALL, NREDUCE };
enum ScanOp : int { S_CUMSUM, S_CUMPROD, NSCAN };
inline constexpr const char* REDUCE_NAMES[NREDUCE] = {"sum", "prod", "max", "min", "argmax", "argmin", "any", "all"};
inline constexpr const char* SCAN_NAMES[NSCAN] = {"cumulative_sum", "cumulative_prod"};

struct Rows {  // a 2-D operand: rows M, columns K, strides in elements
    const char* data;
    int64_t m, k, row_stride, col_stride;
};
// True if (op, input dtype, output dtype) has a kernel.
bool reduce_ok(int op, int in_dt, int out_dt);
void launch_reduce(int op, int in_dt, int out_dt, const Rows& x, char* out, Stream s);
bool scan_ok(int op, int in_dt, int out_dt);
void launch_scan(int op, int in_dt, int out_dt, const Rows& x, char* out, Stream s);

// Integer (and bool) matmul: out (B, M, N) = a (B, M, K) @ b (B, K, N), wrapping as NumPy.
bool int_matmul_ok(int dt);
void launch_int_matmul(int dt, const View& a, const View& b, const View& out, Stream s);

// Philox-4x32-10: word i of out is word i % 4 of Philox(key, counter + i / 4).
void launch_random_bits(uint64_t key, uint64_t ctr_lo, uint64_t ctr_hi, uint32_t* out, int64_t n, Stream s);

// Device properties the launchers size their grids by (set once per device).
void set_grid_limit(int blocks);

}  // namespace ndp
