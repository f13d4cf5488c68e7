// Kernel tables. The inner loops (elementwise.cc) and the reductions
// (reduce.cc) are compiled once per x86-64 ISA level; kernels_for_cpu()
// picks the best set the running CPU supports.
#pragma once

#include "common.h"
#include "ops.h"

namespace ndp {

// One run of n elements; strides in bytes. Inputs may have stride 0.
using UnaryFn = void (*)(const char* x, int64_t sx, char* o, int64_t so, int64_t n);
using BinaryFn = void (*)(const char* a, int64_t sa, const char* b, int64_t sb, char* o,
                          int64_t so, int64_t n);
// `rows` runs of n elements, run r at a + r * sa0 (b, o likewise); strides in bytes.
using BinaryRowsFn = void (*)(const char* a, int64_t sa0, int64_t sa, const char* b, int64_t sb0,
                              int64_t sb, char* o, int64_t so0, int64_t so, int64_t rows, int64_t n);
using WhereFn = void (*)(const char* c, int64_t sc, const char* a, int64_t sa, const char* b,
                         int64_t sb, char* o, int64_t so, int64_t n);
using FillFn = void (*)(char* o, int64_t so, int64_t n, const void* value);
// Rows [r0, r1) of o (unit element stride, row stride so bytes) from a source
// contiguous along rows: o(r, c) = x(r * itemsize + c * sx).
using TransposeFn = void (*)(char* o, int64_t so, const char* x, int64_t sx, int64_t r0, int64_t r1,
                             int64_t C);

// reduce(op, x (M, K) any strides, out (M,) contiguous of x's dtype (or int64 for arg*)).
using ReduceFn = void (*)(int op, const View& x, char* out);
// scan(op, x (M, K) any strides, out (M, K) contiguous of x's dtype).
using ScanFn = void (*)(int op, const View& x, char* out);
using SumsqFn = void (*)(const View& x, const char* centre, char* out);
// random_bits: Philox-4x32-10 of the counters ctr + i for blocks i in [b, e), each block's four
// words at out[4 (i - b) .. 4 (i - b) + 3] (contiguous).
using PhiloxFn = void (*)(uint64_t key, uint64_t ctr_lo, uint64_t ctr_hi, int64_t b, int64_t e, uint32_t* out);

// fused(op, x (M, K) contiguous, weight (K,) or null, bias (K,) or null, eps, out).
using FusedFn = void (*)(int op, const View& x, const char* weight, const char* bias, double eps,
                         char* out);

enum FusedOp : int { FU_SOFTMAX, FU_LOG_SOFTMAX, FU_LOGSUMEXP, FU_LAYER_NORM, FU_ADAM, NFUSED };
// R_COUNT (no name of its own: the driver's sum of bools into an integer) counts truthy
// elements into an int64 out, without casting x to int64 first.
enum ReduceOp : int {
    R_SUM, R_PROD, R_MAX, R_MIN, R_ARGMAX, R_ARGMIN, R_ANY, R_ALL, NREDUCE, R_COUNT = NREDUCE
};
enum ScanOp : int { S_CUMSUM, S_CUMPROD, NSCAN };

struct Kernels {
    const char* isa;
    UnaryFn unary[ops::NUNARY][NDT];
    int8_t unary_out[ops::NUNARY][NDT];  // result dtype, -1: unsupported
    BinaryFn binary[ops::NBINARY][NDT];
    BinaryRowsFn binary_rows[ops::NBINARY][NDT];  // the same loops, for a 2-D plan
    int8_t binary_out[ops::NBINARY][NDT];
    UnaryFn cast[NDT][NDT];  // [from][to]
    UnaryFn copy[5];         // by log2(itemsize)
    TransposeFn transpose[4];  // by log2(itemsize), up to 8 bytes
    WhereFn where[5];
    FillFn fill[5];
    ReduceFn reduce[NDT];
    ScanFn scan[NDT];
    FusedFn fused[NDT];  // float dtypes only
    SumsqFn sumsq[NDT];  // float dtypes only
    PhiloxFn philox;
};

#define NDP_DECLARE_ISA(isa) \
    namespace isa {          \
    void fill_elementwise(Kernels& k); \
    void fill_reduce(Kernels& k);      \
    }
NDP_DECLARE_ISA(baseline)
#if defined(NDP_MULTI_ISA)
NDP_DECLARE_ISA(v3)
NDP_DECLARE_ISA(v4)
#endif
#undef NDP_DECLARE_ISA

const Kernels& kernels();

inline int log2_itemsize(int dtype) {
    switch (ITEMSIZE[dtype]) {
        case 1: return 0;
        case 2: return 1;
        case 4: return 2;
        case 8: return 3;
        default: return 4;
    }
}

}  // namespace ndp
