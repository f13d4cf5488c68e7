// matmul(a (B, M, K), b (B, K, N), out (B, M, N) contiguous), one dtype.
// a and b may have any strides: row- or column-major matrices (unit stride on
// the last or the second-to-last axis) go to BLAS with a transpose flag and
// batch stride 0 is a broadcast; other layouts are compacted first.
// float32/float64/complex use OpenBLAS (scipy-openblas32); bool, integers and
// float16 use a blocked kernel (float16 accumulates in float32).
#include <cblas.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "driver.h"

namespace ndp {
namespace {

struct Mat {
    const char* data;
    int64_t rows, cols;
    int64_t rs, cs, bs;  // element strides: row, column, batch
};

// BLAS layout of one operand: NoTrans with ld = row stride, or Trans with ld = column stride.
bool blas_layout(const Mat& m, CBLAS_TRANSPOSE& trans, int64_t& ld) {
    if (m.cols == 1 || m.cs == 1) {
        if (m.rows == 1 || m.rs >= std::max<int64_t>(1, m.cols)) {
            trans = CblasNoTrans;
            ld = m.rows == 1 ? std::max<int64_t>(1, m.cols) : m.rs;
            return true;
        }
    }
    if (m.rows == 1 || m.rs == 1) {
        if (m.cols == 1 || m.cs >= std::max<int64_t>(1, m.rows)) {
            trans = CblasTrans;
            ld = m.cols == 1 ? std::max<int64_t>(1, m.rows) : m.cs;
            return true;
        }
    }
    return false;
}

template <class T>
void gemm_call(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, const T* A, int lda,
               const T* Bm, int ldb, T* Cm, int ldc) {
    if constexpr (std::is_same_v<T, float>) {
        scipy_cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, 1.0f, A, lda, Bm, ldb, 0.0f, Cm, ldc);
    } else if constexpr (std::is_same_v<T, double>) {
        scipy_cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, 1.0, A, lda, Bm, ldb, 0.0, Cm, ldc);
    } else if constexpr (std::is_same_v<T, c64>) {
        const c64 one(1, 0), zero(0, 0);
        scipy_cblas_cgemm(CblasRowMajor, ta, tb, M, N, K, &one, A, lda, Bm, ldb, &zero, Cm, ldc);
    } else {
        const c128 one(1, 0), zero(0, 0);
        scipy_cblas_zgemm(CblasRowMajor, ta, tb, M, N, K, &one, A, lda, Bm, ldb, &zero, Cm, ldc);
    }
}

constexpr int64_t BLAS_MAX = 0x7fffffff;

// Vector shapes go to BLAS level 1 and 2, as NumPy's matmul: OpenBLAS's gemm packs panels
// whatever the shape, so a (1, K) @ (K, 1) of 10^6 took 1.3 ms where its dot takes 0.05.
template <class T> T dot_call(int K, const T* x, int incx, const T* y, int incy) {
    if constexpr (std::is_same_v<T, float>) {
        return scipy_cblas_sdot(K, x, incx, y, incy);
    } else if constexpr (std::is_same_v<T, double>) {
        return scipy_cblas_ddot(K, x, incx, y, incy);
    } else {
        T r;
        if constexpr (std::is_same_v<T, c64>) scipy_cblas_cdotu_sub(K, x, incx, y, incy, &r);
        else scipy_cblas_zdotu_sub(K, x, incx, y, incy, &r);
        return r;
    }
}

// y = op(A) x with A (rows, cols) row-major at lda; y contiguous.
template <class T>
void gemv_call(CBLAS_TRANSPOSE t, int rows, int cols, const T* A, int lda, const T* x, int incx, T* y) {
    if constexpr (std::is_same_v<T, float>) {
        scipy_cblas_sgemv(CblasRowMajor, t, rows, cols, 1.0f, A, lda, x, incx, 0.0f, y, 1);
    } else if constexpr (std::is_same_v<T, double>) {
        scipy_cblas_dgemv(CblasRowMajor, t, rows, cols, 1.0, A, lda, x, incx, 0.0, y, 1);
    } else {
        const T one(1, 0), zero(0, 0);
        if constexpr (std::is_same_v<T, c64>) scipy_cblas_cgemv(CblasRowMajor, t, rows, cols, &one, A, lda, x, incx, &zero, y, 1);
        else scipy_cblas_zgemv(CblasRowMajor, t, rows, cols, &one, A, lda, x, incx, &zero, y, 1);
    }
}

// a @ a.T (or a.T @ a) of one real operand: BLAS's syrk computes the upper triangle at half
// the flops of gemm (NumPy takes the same road for its x @ x.T), then the lower triangle is
// mirrored from it, so the result is exactly symmetric.
template <class T>
void syrk_call(CBLAS_TRANSPOSE ta, int N, int K, const T* A, int lda, T* C) {
    if constexpr (std::is_same_v<T, float>)
        scipy_cblas_ssyrk(CblasRowMajor, CblasUpper, ta, N, K, 1.0f, A, lda, 0.0f, C, N);
    else
        scipy_cblas_dsyrk(CblasRowMajor, CblasUpper, ta, N, K, 1.0, A, lda, 0.0, C, N);
    constexpr int64_t TB = 64;  // tiles of the upper triangle, copied transposed
    const int64_t tiles = (N + TB - 1) / TB;
    parallel_range(tiles, 1, [&](int64_t t0, int64_t t1) {
        for (int64_t bi = t0; bi < t1; ++bi)
            for (int64_t bj = bi; bj < tiles; ++bj)
                for (int64_t i = bi * TB; i < std::min<int64_t>(N, (bi + 1) * TB); ++i)
                    for (int64_t j = std::max(i + 1, bj * TB); j < std::min<int64_t>(N, (bj + 1) * TB); ++j)
                        C[j * N + i] = C[i * N + j];
    });
}

// Whether b is a's transpose in the same memory (x @ x.T, x.T @ x), with N = M.
bool is_self_transpose(const Mat& a, const Mat& b) {
    return a.data == b.data && a.bs == b.bs && a.rows == b.cols && a.cols == b.rows && a.rs == b.cs &&
           a.cs == b.rs && a.rows > 1;
}

// The vector element stride of a (1, K) row or (K, 1) column, when BLAS can take it.
bool vector_inc(int64_t K, int64_t stride, int& inc) {
    const int64_t s = K == 1 ? 1 : stride;
    if (s < 1 || s > BLAS_MAX) return false;
    inc = int(s);
    return true;
}

// a (1, K) or b (K, 1) a vector: dot or gemv per batch; false where the strides do not fit.
template <class T> bool blas_vector_matmul(const Mat& a, const Mat& b, T* out, int64_t B) {
    const int64_t M = a.rows, K = a.cols, N = b.cols;
    const T* A = reinterpret_cast<const T*>(a.data);
    const T* Bp = reinterpret_cast<const T*>(b.data);
    int ia, ib;
    CBLAS_TRANSPOSE t;
    int64_t ld;
    if (M == 1 && N == 1) {
        if (!vector_inc(K, a.cs, ia) || !vector_inc(K, b.rs, ib)) return false;
        for (int64_t i = 0; i < B; ++i) out[i] = dot_call<T>(int(K), A + i * a.bs, ia, Bp + i * b.bs, ib);
        return true;
    }
    if (M == 1) {  // out row = a row @ b: b's transpose times the vector
        if (!vector_inc(K, a.cs, ia) || !blas_layout(b, t, ld) || ld > BLAS_MAX) return false;
        const bool rowmajor = t == CblasNoTrans;  // b stored (K, N), else (N, K)
        for (int64_t i = 0; i < B; ++i)
            gemv_call<T>(rowmajor ? CblasTrans : CblasNoTrans, int(rowmajor ? K : N), int(rowmajor ? N : K),
                         Bp + i * b.bs, int(ld), A + i * a.bs, ia, out + i * N);
        return true;
    }
    if (!vector_inc(K, b.rs, ib) || !blas_layout(a, t, ld) || ld > BLAS_MAX) return false;  // N == 1
    const bool rowmajor = t == CblasNoTrans;  // a stored (M, K), else (K, M)
    for (int64_t i = 0; i < B; ++i)
        gemv_call<T>(rowmajor ? CblasNoTrans : CblasTrans, int(rowmajor ? M : K), int(rowmajor ? K : M),
                     A + i * a.bs, int(ld), Bp + i * b.bs, ib, out + i * M);
    return true;
}

template <class T> void blas_matmul(Mat a, Mat b, T* out, int64_t B, std::unique_ptr<char[]>* hold) {
    const int64_t M = a.rows, K = a.cols, N = b.cols;
    if ((M == 1 || N == 1) && K > 0 && blas_vector_matmul<T>(a, b, out, B)) return;
    CBLAS_TRANSPOSE ta, tb;
    int64_t lda, ldb;
    // Compact an operand BLAS cannot read (or whose strides overflow BLAS's int).
    auto compact = [&](Mat& m, std::unique_ptr<char[]>& h) {
        h.reset(new char[static_cast<size_t>(std::max<int64_t>(1, B * m.rows * m.cols) * sizeof(T))]);
        T* dst = reinterpret_cast<T*>(h.get());
        for (int64_t i = 0; i < B; ++i)
            for (int64_t r = 0; r < m.rows; ++r)
                for (int64_t c = 0; c < m.cols; ++c)
                    dst[(i * m.rows + r) * m.cols + c] =
                        reinterpret_cast<const T*>(m.data)[i * m.bs + r * m.rs + c * m.cs];
        m = Mat{h.get(), m.rows, m.cols, m.cols, 1, m.rows * m.cols};
    };
    if (!blas_layout(a, ta, lda) || lda > BLAS_MAX) {
        compact(a, hold[0]);
        blas_layout(a, ta, lda);
    }
    if constexpr (std::is_floating_point_v<T>) {
        if (is_self_transpose(a, b) && blas_layout(a, ta, lda) && lda <= BLAS_MAX) {
            for (int64_t i = 0; i < B; ++i)
                syrk_call<T>(ta, int(M), int(K), reinterpret_cast<const T*>(a.data) + i * a.bs, int(lda),
                             out + i * M * M);
            return;
        }
    }
    if (!blas_layout(b, tb, ldb) || ldb > BLAS_MAX) {
        compact(b, hold[1]);
        blas_layout(b, tb, ldb);
    }
    for (int64_t i = 0; i < B; ++i)
        gemm_call<T>(ta, tb, int(M), int(N), int(K), reinterpret_cast<const T*>(a.data) + i * a.bs,
                     int(lda), reinterpret_cast<const T*>(b.data) + i * b.bs, int(ldb),
                     out + i * M * N, int(std::max<int64_t>(1, N)));
}

template <class T, class = void> struct acc_type { using type = T; };  // bool
template <> struct acc_type<f16> { using type = float; };
template <class T> struct acc_type<T, std::enable_if_t<is_int_v<T>>> {
    using type = wide_unsigned_t<T>;  // wraps like NumPy's integer matmul
};

// Blocked kernel: b is packed per batch into a contiguous (K, N) panel of the
// accumulator type; each output row accumulates rank-1 updates over a column
// block, so the inner loop is a unit-stride multiply-add.
template <class T> void own_matmul(const Mat& a, const Mat& b, T* out, int64_t B) {
    using A = typename acc_type<T>::type;
    const int64_t M = a.rows, K = a.cols, N = b.cols;
    const T* Ap = reinterpret_cast<const T*>(a.data);
    const T* Bp = reinterpret_cast<const T*>(b.data);
    std::unique_ptr<A[]> panel(new A[static_cast<size_t>(K * N)]);
    constexpr int64_t NB = 256;
    for (int64_t i = 0; i < B; ++i) {
        if (i == 0 || b.bs != 0)
            for (int64_t k = 0; k < K; ++k)
                for (int64_t n = 0; n < N; ++n)
                    panel[k * N + n] = static_cast<A>(Bp[i * b.bs + k * b.rs + n * b.cs]);
        parallel_range(M, std::max<int64_t>(1, GRAIN / std::max<int64_t>(1, K * N / 16)),
                       [&](int64_t m0, int64_t m1) {
            A acc[NB];
            for (int64_t m = m0; m < m1; ++m) {
                const T* arow = Ap + i * a.bs + m * a.rs;
                T* orow = out + (i * M + m) * N;
                for (int64_t n0 = 0; n0 < N; n0 += NB) {
                    const int64_t w = std::min(NB, N - n0);
                    for (int64_t j = 0; j < w; ++j) acc[j] = A(0);
                    for (int64_t k = 0; k < K; ++k) {
                        const A av = static_cast<A>(arow[k * a.cs]);
                        const A* prow = panel.get() + k * N + n0;
                        if constexpr (is_bool_v<T>) {
                            if (av)
                                for (int64_t j = 0; j < w; ++j) acc[j] = acc[j] || prow[j];
                        } else {
                            for (int64_t j = 0; j < w; ++j) acc[j] += av * prow[j];
                        }
                    }
                    for (int64_t j = 0; j < w; ++j) orow[n0 + j] = static_cast<T>(acc[j]);
                }
            }
        });
    }
}

}  // namespace

void run_matmul(const View& a, const View& b, const View& out) {
    if (a.ndim != 3 || b.ndim != 3 || out.ndim != 3)
        throw std::invalid_argument("matmul: expected a (B, M, K), b (B, K, N) and out (B, M, N).");
    const int64_t Bn = out.shape[0], M = a.shape[1], K = a.shape[2], N = b.shape[2];
    if (a.shape[0] != Bn || b.shape[0] != Bn || b.shape[1] != K || out.shape[1] != M ||
        out.shape[2] != N)
        throw std::invalid_argument("matmul: shapes do not match (B, M, K) @ (B, K, N) -> (B, M, N).");
    require_dtype("matmul", "b", b, a.dtype);
    require_dtype("matmul", "out", out, a.dtype);
    if (!(out.strides[2] == 1 || N <= 1) || !(out.strides[1] == N || M <= 1) ||
        !(out.strides[0] == M * N || Bn <= 1))
        throw std::invalid_argument("matmul: out must be contiguous.");
    if (out.size == 0) return;
    if (K == 0) {
        std::memset(out.data, 0, static_cast<size_t>(out.size * out.itemsize()));
        return;
    }
    Mat ma{a.data, M, K, a.strides[1], a.strides[2], a.strides[0]};
    Mat mb{b.data, K, N, b.strides[1], b.strides[2], b.strides[0]};
    if (M > BLAS_MAX || N > BLAS_MAX || K > BLAS_MAX)
        throw std::invalid_argument("matmul: a dimension exceeds 2**31 - 1.");
    std::unique_ptr<char[]> hold[2];
    switch (a.dtype) {
        case F32: return blas_matmul<float>(ma, mb, reinterpret_cast<float*>(out.data), Bn, hold);
        case F64: return blas_matmul<double>(ma, mb, reinterpret_cast<double*>(out.data), Bn, hold);
        case C64: return blas_matmul<c64>(ma, mb, reinterpret_cast<c64*>(out.data), Bn, hold);
        case C128: return blas_matmul<c128>(ma, mb, reinterpret_cast<c128*>(out.data), Bn, hold);
        default: break;
    }
    for_each_dtype([&](auto d) {
        constexpr int D = decltype(d)::value;
        using T = typename dt_type<D>::type;
        if constexpr (!is_complex_v<T> && !std::is_floating_point_v<T>)
            if (D == a.dtype) own_matmul<T>(ma, mb, reinterpret_cast<T*>(out.data), Bn);
    });
}

}  // namespace ndp
