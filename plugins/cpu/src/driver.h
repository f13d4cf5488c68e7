// Kernel drivers: validated Views in, work split across threads, no Python.
// Every function checks what it relies on (dtypes, shapes) and throws
// std::invalid_argument / type_error / index_error instead of misbehaving.
#pragma once

#include <memory>

#include "kernels.h"

namespace ndp {

// A scalar operand: a View of out's shape with zero strides over `storage`.
struct Scalar {
    alignas(16) unsigned char storage[16];
};

void run_unary(int op, const View& x, const View& out);
void run_binary(int op, const View& a, const View& b, const View& out);
void run_where(const View& cond, const View& a, const View& b, const View& out);
void run_cast(const View& x, const View& out);
void run_copy(const View& src, const View& dst);
void run_fill(const View& dst, const void* value);
void run_reduce(int op, const View& x, const View& out);
// fused count_nonzero (driver.cc): x (M, K) of any dtype and strides, out (M,) integer.
void run_count_nonzero(const View& x, const View& out);
// fused minmax (driver.cc): x (M, K), K >= 1, integer, any strides; out (M, 2) of x's dtype.
void run_minmax(const View& x, const View& out);
void run_sumsq(const View& x, const View* centre, const View& out);
void run_scan(int op, const View& x, const View& out);
void run_matmul(const View& a, const View& b, const View& out);
void run_take(const View& x, const View& indices, const View& out);
// fused take_along (index.cc): x (M, N) any strides, indices (M, J) and out (M, J) C-contiguous:
// out[m, j] = x[m, indices[m, j]], every index checked to be in [0, N) first.
void run_take_along(const View& x, const View& indices, const View& out);
void run_scatter_add(const View& out, const View& indices, const View& values);
// fused take_axis / put_axis (index.cc): x or out (A, N, B), indices (K,), the other (A, K, B),
// all C-contiguous: out[a, k, b] = x[a, indices[k], b], and out[a, indices[k], b] = values[a, k, b]
// in place (the last k wins).
enum IndexFused : int {
    FU_TAKE_AXIS = 70, FU_PUT_AXIS = 71, FU_COUNT_NONZERO = 74, FU_MINMAX = 75, FU_NONZERO = 76,
    FU_SEARCHSORTED = 77, FU_ARANGE = 78, FU_SUMSQ = 79, FU_CLIP = 80, FU_NLL = 81, FU_UNIFORM = 82, FU_BATCH_NORM = 83,
    FU_BATCH_NORM_GRAD = 84, FU_INTEGERS = 85, FU_CROSS = 86, FU_TAKE_ALONG = 87
};
// fused nll (index.cc): x (M, K) of a real float dtype and any strides, target (M,) integer (each in
// [0, K), else index_error); out (M,) = -x[m, target[m]] or (1,) = their sum (/ M for the mean).
enum NllReduction : int { NLL_NONE, NLL_SUM, NLL_MEAN };
void run_nll(const View& x, const View& target, NllReduction reduction, const View& out);
void run_take_axis(const View& x, const View& indices, const View& out);
void run_put_axis(const View& out, const View& indices, const View& values, bool distinct);
// fused nonzero (index.cc): x (1, K) of any dtype and stride; out (N,) int64 gets the positions of
// its N truthy elements in order (a different count is an error, nothing written past N).
void run_nonzero(const View& x, const View& out);
void run_sort(const View& x, const View* values, const View* indices, bool descending, bool stable);
// fused searchsorted (sort.cc): a (1, N) sorted in the sort order, v (1, K) of a's real dtype, any
// strides; out (K,) int64: how many of a are below each v (right: not above), NaN the largest.
void run_searchsorted(const View& a, const View& v, const View& out, bool right);
// Scratch memory (sort.cc, for the sort and the scatter): blocks of 1 MiB and more
// huge-page aligned, and the two last freed of at most 32 MiB kept for the next call.
struct FreeBlock {
    size_t cap;  // 0: from malloc
    void operator()(void* p) const;
};
using Block = std::unique_ptr<void, FreeBlock>;
Block take_block(size_t bytes);  // throws std::bad_alloc
// Frees the scratch blocks kept between calls (at most 64 MiB, sort.cc).
void release_sort_scratch();
void run_fused(int op, const View& x, const View* weight, const View* bias, double eps,
               const View& out);
// fused cross (index.cc): a and b (M, 3) of one real non-bool dtype, any strides (zero ones too),
// out (M, 3) C-contiguous = the cross product of each row, bit for bit the composite's ops.
void run_cross(const View& a, const View& b, const View& out);
void run_random_bits(uint64_t key, uint64_t ctr_lo, uint64_t ctr_hi, const View& out);
// fused uniform (index.cc): out (N,) contiguous float32/float64 = the core's Generator.uniform of
// the Philox stream from (key, counter), u * scale + low rounded as two ops.
void run_uniform(uint64_t key, uint64_t ctr_lo, uint64_t ctr_hi, double scale, double low, const View& out);
// fused integers (index.cc): Generator.integers' values, 1-D contiguous integer out (see there).
void run_integers(uint64_t key, uint64_t ctr_lo, uint64_t ctr_hi, uint64_t top, uint64_t low, const View& out);
// fused batch_norm (index.cc): x (A, C, B) and out C-contiguous float32/float64, mean, var and the
// optional weight and bias (C,) of x's dtype: out = x * s[c] + t[c], the composite's inference rule.
void run_batch_norm(const View& x, const View& mean, const View& var, const View* weight, const View* bias,
                    double eps, const View& out);
// fused batch_norm_grad (index.cc), training batch_norm's backward: x and g (A, C, B) C-contiguous
// float32/float64, mean (C,). With `coef` null, out (2, C) = (the sum of g, the sum of g * (x -
// mean)) over A and B per channel; with coef (3, C) = (c0, c1, c2), out (A, C, B) = ((g - c0) - (x -
// mean) * c1) * c2 per channel, bit for bit the composite's broadcast passes.
void run_batch_norm_grad(const View& x, const View& g, const View& mean, const View* coef, const View& out);
// fused arange (index.cc): out (N,) contiguous, integer or real floating: out[i] = i * step +
// start in float64 (rounded once), or istart + i * istep in wrapping int64 for integers.
void run_arange(const View& out, double start, double step, int64_t istart, int64_t istep);
void run_clip(const View& x, const View& out, bool has_lo, double lo, bool has_hi, double hi);

// Shared helpers.
bool is_c_contiguous(const View& v);  // size-1 axes ignored; every empty view is contiguous
// Whether the bytes two views can touch intersect (never for a null or empty one).
bool overlap(const View& a, const View* b);
void require_same_shape(const char* fn, const View& a, const View& b);
void require_dtype(const char* fn, const char* what, const View& v, int dtype);
// A C-contiguous copy of `x` converted to `dtype` (x itself when nothing changes
// and it is already contiguous); `hold` owns the memory.
View contiguous_as(const View& x, int dtype, std::unique_ptr<char[]>& hold);

}  // namespace ndp
