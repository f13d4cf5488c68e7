// Batched linear algebra through the LAPACK inside scipy-openblas32 (symbols
// prefixed scipy_, 32-bit integers). One template per op over T in {float,
// double, c64, c128}; the Lapack<T> table maps each routine to s/d/c/z.
//
// Arguments: inputs and outputs are C-contiguous (B, ...) Views (checked here).
// LAPACK is column-major: a row-major (R, C) buffer read column-major is the
// transpose, so most ops call LAPACK on the row-major buffer directly and fix
// the transpose with an identity (A^T = conj(A) for Hermitian A; LU of A^T
// solves A x = b with trans='T'; SVD of A^T swaps U and V^T).
#define LAPACK_GLOBAL(lcname, UCNAME) scipy_##lcname##_
#include <complex>
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapack.h>

#include <algorithm>
#include <climits>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <vector>

#include "blas.h"
#include "driver.h"
#include "linalg.h"

namespace ndp {
namespace {

using li = lapack_int;

// ---------------------------------------------------------------------------
// The dtype table: Lapack<T>::routine -> s/d/c/z routine. Real and complex
// signatures differ (rwork); the wrappers take rwork and drop it for reals.
// NOTE: lapack.h names routines with character arguments scipy_LAPACK_x (a
// macro appending the hidden Fortran string lengths) and the others LAPACK_x.
// ---------------------------------------------------------------------------
template <class T> struct Lapack;

#define NDP_LAPACK_COMMON(p, T)                                                                  \
    static void potrf(li n, T* a, li& info) { char u = 'U'; li ld = std::max<li>(1, n); scipy_LAPACK_##p##potrf(&u, &n, a, &ld, &info); } \
    static void geqrf(li m, li n, T* a, li lda, T* tau, T* w, li lw, li& info) { LAPACK_##p##geqrf(&m, &n, a, &lda, tau, w, &lw, &info); } \
    static void getrf(li n, T* a, li* ipiv, li& info) { li ld = std::max<li>(1, n); LAPACK_##p##getrf(&n, &n, a, &ld, ipiv, &info); } \
    static void getrs(li n, li k, const T* a, const li* ipiv, T* b, li& info) { char t = 'T'; li ld = std::max<li>(1, n); scipy_LAPACK_##p##getrs(&t, &n, &k, a, &ld, ipiv, b, &ld, &info); } \
    static void getri(li n, T* a, const li* ipiv, T* w, li lw, li& info) { li ld = std::max<li>(1, n); LAPACK_##p##getri(&n, a, &ld, ipiv, w, &lw, &info); }

#define NDP_LAPACK_REAL(p, T)                                                                    \
    template <> struct Lapack<T> {                                                               \
        using R = T;                                                                             \
        NDP_LAPACK_COMMON(p, T)                                                                  \
        static void orgqr(li m, li n, li k, T* a, li lda, const T* tau, T* w, li lw, li& info) { LAPACK_##p##orgqr(&m, &n, &k, a, &lda, tau, w, &lw, &info); } \
        static void gesdd(char job, li m, li n, T* a, li lda, R* s, T* u, li ldu, T* vt, li ldvt, T* w, li lw, R*, li* iw, li& info) { scipy_LAPACK_##p##gesdd(&job, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, w, &lw, iw, &info); } \
        static void heevd(char job, li n, T* a, R* wv, T* w, li lw, R*, li, li* iw, li liw, li& info) { char u = 'U'; li ld = std::max<li>(1, n); scipy_LAPACK_##p##syevd(&job, &u, &n, a, &ld, wv, w, &lw, iw, &liw, &info); } \
    };

#define NDP_LAPACK_COMPLEX(p, T)                                                                 \
    template <> struct Lapack<T> {                                                               \
        using R = T::value_type;                                                                 \
        NDP_LAPACK_COMMON(p, T)                                                                  \
        static void orgqr(li m, li n, li k, T* a, li lda, const T* tau, T* w, li lw, li& info) { LAPACK_##p##ungqr(&m, &n, &k, a, &lda, tau, w, &lw, &info); } \
        static void gesdd(char job, li m, li n, T* a, li lda, R* s, T* u, li ldu, T* vt, li ldvt, T* w, li lw, R* rw, li* iw, li& info) { scipy_LAPACK_##p##gesdd(&job, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, w, &lw, rw, iw, &info); } \
        static void heevd(char job, li n, T* a, R* wv, T* w, li lw, R* rw, li lrw, li* iw, li liw, li& info) { char u = 'U'; li ld = std::max<li>(1, n); scipy_LAPACK_##p##heevd(&job, &u, &n, a, &ld, wv, w, &lw, rw, &lrw, iw, &liw, &info); } \
    };

NDP_LAPACK_REAL(s, float)
NDP_LAPACK_REAL(d, double)
NDP_LAPACK_COMPLEX(c, c64)
NDP_LAPACK_COMPLEX(z, c128)
#undef NDP_LAPACK_REAL
#undef NDP_LAPACK_COMPLEX
#undef NDP_LAPACK_COMMON

template <class T> inline T conj_of(T v) {
    if constexpr (is_complex_v<T>) return std::conj(v);
    else return v;
}

// The optimal lwork LAPACK returns in a workspace query (rounded up).
template <class T> li lwork_of(const T& w) {
    double v = std::real(w);
    return v >= double(INT_MAX) ? INT_MAX : std::max<li>(1, li(v) + 1);
}

template <class T> bool all_finite(const T* a, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
        if constexpr (is_complex_v<T>) {
            if (!std::isfinite(a[i].real()) || !std::isfinite(a[i].imag())) return false;
        } else if (!std::isfinite(a[i])) {
            return false;
        }
    return true;
}

// The shapes of one call: A (M, N) per matrix; K = min(M, N) or the rhs count.
struct Dims {
    int64_t B, M, N;
};

// ---------------------------------------------------------------------------
// One matrix per call. Each op is a struct: ctor (workspace query, once per
// call), Work (per thread), run(i, w) -> 0 or a LAPACK failure code, and
// `panel_bound` (run_batch says what it means).
// ---------------------------------------------------------------------------
template <class T> struct Cholesky {
    static constexpr bool panel_bound = false;
    const T* a;
    T* l;
    li n;
    struct Work {
        explicit Work(const Cholesky&) {}
    };
    int run(int64_t i, Work&) const {
        T* L = l + i * int64_t(n) * n;
        std::memcpy(L, a + i * int64_t(n) * n, sizeof(T) * n * n);
        li info = 0;
        Lapack<T>::potrf(n, L, info);  // 'U' of the column-major view = lower of A
        for (li r = 0; r < n; ++r)
            for (li c = r + 1; c < n; ++c) L[int64_t(r) * n + c] = T(0);
        return info;
    }
};

template <class T> struct QR {
    static constexpr bool panel_bound = true;
    const T* a;
    T *q, *r;
    li M, N, K, KQ;  // KQ: columns of q (K reduced, M complete)
    li lwork = 1;
    QR(const T* a_, T* q_, T* r_, li M_, li N_, li KQ_) : a(a_), q(q_), r(r_), M(M_), N(N_), K(std::min(M_, N_)), KQ(KQ_) {
        T w1(0), w2(0);
        li info = 0, ld = std::max<li>(1, M);
        Lapack<T>::geqrf(M, N, nullptr, ld, nullptr, &w1, -1, info);
        Lapack<T>::orgqr(M, KQ, K, nullptr, ld, nullptr, &w2, -1, info);
        lwork = std::max(lwork_of(w1), lwork_of(w2));
    }
    struct Work {
        std::vector<T> ac, tau, work;
        explicit Work(const QR& o)
            : ac(size_t(std::max<int64_t>(1, int64_t(o.M) * std::max(o.N, o.KQ)))),
              tau(size_t(std::max<li>(1, o.K))), work(size_t(o.lwork)) {}
    };
    int run(int64_t i, Work& w) const {
        const T* A = a + i * int64_t(M) * N;
        T* Ac = w.ac.data();  // column-major (M, max(N, KQ)), ld M
        for (li c = 0; c < N; ++c)
            for (li rr = 0; rr < M; ++rr) Ac[int64_t(c) * M + rr] = A[int64_t(rr) * N + c];
        li info = 0, ld = std::max<li>(1, M);
        Lapack<T>::geqrf(M, N, Ac, ld, w.tau.data(), w.work.data(), lwork, info);
        if (info) return info;
        T* Rm = r + i * int64_t(KQ) * N;
        for (li rr = 0; rr < KQ; ++rr)
            for (li c = 0; c < N; ++c)
                Rm[int64_t(rr) * N + c] = (c >= rr && rr < K) ? Ac[int64_t(c) * M + rr] : T(0);
        Lapack<T>::orgqr(M, KQ, K, Ac, ld, w.tau.data(), w.work.data(), lwork, info);
        T* Q = q + i * int64_t(M) * KQ;
        for (li rr = 0; rr < M; ++rr)
            for (li c = 0; c < KQ; ++c) Q[int64_t(rr) * KQ + c] = Ac[int64_t(c) * M + rr];
        return info;
    }
};

// SVD of the row-major A (M, N) as the column-major A^T (N, M) = U' S V'^T:
// then A = V'^T^T S U'^T, so u (M, J) is V'^T's buffer and vh (J', N) is U''s.
template <class T> struct SVD {
    static constexpr bool panel_bound = true;
    using R = typename Lapack<T>::R;
    const T* a;
    T *u, *vh;  // null for svdvals
    R* s;
    li M, N, K;
    bool full;
    char job;
    li lwork = 1;
    SVD(const T* a_, T* u_, R* s_, T* vh_, li M_, li N_, bool full_)
        : a(a_), u(u_), vh(vh_), s(s_), M(M_), N(N_), K(std::min(M_, N_)), full(full_) {
        job = !u ? 'N' : full ? 'A' : 'S';
        if (K == 0) return;
        T w(0);
        li info = 0, iw = 0;
        R rw = 0;
        Lapack<T>::gesdd(job, N, M, nullptr, N, nullptr, nullptr, ldu(), nullptr, ldvt(), &w, -1, &rw, &iw, info);
        lwork = lwork_of(w);
    }
    li ldu() const { return std::max<li>(1, N); }
    li ldvt() const { return std::max<li>(1, job == 'A' ? M : K); }
    li ju() const { return job == 'A' ? M : K; }   // columns of u
    li jv() const { return job == 'A' ? N : K; }   // rows of vh
    int64_t lrwork() const {
        const int64_t mn = K, mx = std::max(M, N);
        if (!is_complex_v<T>) return 1;
        return job == 'N' ? 7 * mn : std::max(5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn);
    }
    struct Work {
        std::vector<T> ac, work;
        std::vector<R> rwork;
        std::vector<li> iwork;
        explicit Work(const SVD& o)
            : ac(size_t(std::max<int64_t>(1, int64_t(o.M) * o.N))), work(size_t(o.lwork)),
              rwork(size_t(std::max<int64_t>(1, o.lrwork()))), iwork(size_t(std::max<li>(1, 8 * o.K))) {}
    };
    int run(int64_t i, Work& w) const {
        R* S = s + i * int64_t(K);
        T* U = u ? u + i * int64_t(M) * ju() : nullptr;
        T* V = vh ? vh + i * int64_t(jv()) * N : nullptr;
        if (K == 0) {  // full_matrices: the identity bases NumPy returns
            if (U) std::fill(U, U + int64_t(M) * ju(), T(0));
            if (V) std::fill(V, V + int64_t(jv()) * N, T(0));
            for (li d = 0; job == 'A' && d < M; ++d) U[int64_t(d) * M + d] = T(1);
            for (li d = 0; job == 'A' && d < N; ++d) V[int64_t(d) * N + d] = T(1);
            return 0;
        }
        const T* A = a + i * int64_t(M) * N;
        // NOTE: a non-finite input makes some LAPACK builds loop for long; give NaNs instead.
        if (!all_finite(A, int64_t(M) * N)) {
            nan_fill(S, K);
            if (U) nan_fill(U, int64_t(M) * ju());
            if (V) nan_fill(V, int64_t(jv()) * N);
            return 0;
        }
        std::memcpy(w.ac.data(), A, sizeof(T) * M * N);
        li info = 0;
        Lapack<T>::gesdd(job, N, M, w.ac.data(), std::max<li>(1, N), S, V, ldu(), U, ldvt(),
                         w.work.data(), lwork, w.rwork.data(), w.iwork.data(), info);
        return info;
    }
    template <class X> static void nan_fill(X* p, int64_t n) {
        std::fill(p, p + n, X(std::numeric_limits<R>::quiet_NaN()));
    }
};

// eigh of Hermitian A: the column-major view of A's buffer is conj(A) (same
// eigenvalues, conjugate eigenvectors), and its upper triangle is A's lower.
template <class T> struct Eigh {
    static constexpr bool panel_bound = false;
    using R = typename Lapack<T>::R;
    const T* a;
    R* wv;
    T* v;  // null for eigvalsh
    li n;
    li lwork = 1, lrwork = 1, liwork = 1;
    Eigh(const T* a_, R* w_, T* v_, li n_) : a(a_), wv(w_), v(v_), n(n_) {
        T w(0);
        R rw = 0;
        li iw = 0, info = 0;
        Lapack<T>::heevd(v ? 'V' : 'N', n, nullptr, nullptr, &w, -1, &rw, -1, &iw, -1, info);
        lwork = lwork_of(w);
        lrwork = lwork_of(rw);
        liwork = std::max<li>(1, iw);
    }
    struct Work {
        std::vector<T> ac, work;
        std::vector<R> rwork;
        std::vector<li> iwork;
        explicit Work(const Eigh& o)
            : ac(size_t(std::max<int64_t>(1, int64_t(o.n) * o.n))), work(size_t(o.lwork)),
              rwork(size_t(o.lrwork)), iwork(size_t(o.liwork)) {}
    };
    int run(int64_t i, Work& w) const {
        const int64_t nn = int64_t(n) * n;
        const T* A = a + i * nn;
        R* W = wv + i * int64_t(n);
        T* V = v ? v + i * nn : nullptr;
        if (!all_finite(A, nn)) {  // see SVD
            std::fill(W, W + n, std::numeric_limits<R>::quiet_NaN());
            if (V) std::fill(V, V + nn, T(std::numeric_limits<R>::quiet_NaN()));
            return 0;
        }
        T* Z = w.ac.data();
        std::memcpy(Z, A, sizeof(T) * nn);
        li info = 0;
        Lapack<T>::heevd(V ? 'V' : 'N', n, Z, W, w.work.data(), lwork, w.rwork.data(), lrwork,
                         w.iwork.data(), liwork, info);
        if (info || !V) return info;
        // Z's column j (column-major) is eigenvector j of conj(A): v[:, j] = conj(Z[:, j]).
        for (li r = 0; r < n; ++r)
            for (li c = 0; c < n; ++c) V[int64_t(r) * n + c] = conj_of(Z[int64_t(c) * n + r]);
        return 0;
    }
};

// solve: LU of the buffer (= A^T) then getrs with trans='T' solves A X = B.
template <class T> struct Solve {
    static constexpr bool panel_bound = true;
    const T *a, *b;
    T* x;
    li n, k;
    struct Work {
        std::vector<T> lu, bc;
        std::vector<li> ipiv;
        explicit Work(const Solve& o)
            : lu(size_t(std::max<int64_t>(1, int64_t(o.n) * o.n))),
              bc(size_t(std::max<int64_t>(1, int64_t(o.n) * o.k))), ipiv(size_t(std::max<li>(1, o.n))) {}
    };
    int run(int64_t i, Work& w) const {
        const int64_t nn = int64_t(n) * n, nk = int64_t(n) * k;
        std::memcpy(w.lu.data(), a + i * nn, sizeof(T) * nn);
        li info = 0;
        Lapack<T>::getrf(n, w.lu.data(), w.ipiv.data(), info);
        if (info) return info;
        const T* Bm = b + i * nk;
        T* X = x + i * nk;
        T* Bc = w.bc.data();  // column-major (n, k)
        for (li r = 0; r < n; ++r)
            for (li c = 0; c < k; ++c) Bc[int64_t(c) * n + r] = Bm[int64_t(r) * k + c];
        Lapack<T>::getrs(n, k, w.lu.data(), w.ipiv.data(), Bc, info);
        for (li r = 0; r < n; ++r)
            for (li c = 0; c < k; ++c) X[int64_t(r) * k + c] = Bc[int64_t(c) * n + r];
        return info;
    }
};

// inv: getri on the buffer (= A^T) leaves (A^T)^-1 column-major = A^-1 row-major.
template <class T> struct Inv {
    static constexpr bool panel_bound = false;
    const T* a;
    T* out;
    li n;
    li lwork = 1;
    Inv(const T* a_, T* o_, li n_) : a(a_), out(o_), n(n_) {
        T w(0);
        li info = 0;
        Lapack<T>::getri(n, nullptr, nullptr, &w, -1, info);
        lwork = lwork_of(w);
    }
    struct Work {
        std::vector<T> work;
        std::vector<li> ipiv;
        explicit Work(const Inv& o) : work(size_t(o.lwork)), ipiv(size_t(std::max<li>(1, o.n))) {}
    };
    int run(int64_t i, Work& w) const {
        const int64_t nn = int64_t(n) * n;
        T* O = out + i * nn;
        std::memcpy(O, a + i * nn, sizeof(T) * nn);
        li info = 0;
        Lapack<T>::getrf(n, O, w.ipiv.data(), info);
        if (info) return info;
        Lapack<T>::getri(n, O, w.ipiv.data(), w.work.data(), lwork, info);
        return info;
    }
};

// det and slogdet from the LU factors (det(A^T) = det(A)); a singular matrix
// gives det 0, sign 0 and logabsdet -inf like NumPy. Accumulates in double.
template <class T> struct Det {
    static constexpr bool panel_bound = true;
    using R = typename Lapack<T>::R;
    using W = std::conditional_t<is_complex_v<T>, c128, double>;
    const T* a;
    T* det;       // det (B,) or sign (B,)
    R* logabs;    // null for det
    li n;
    struct Work {
        std::vector<T> lu;
        std::vector<li> ipiv;
        explicit Work(const Det& o)
            : lu(size_t(std::max<int64_t>(1, int64_t(o.n) * o.n))), ipiv(size_t(std::max<li>(1, o.n))) {}
    };
    int run(int64_t i, Work& w) const {
        const int64_t nn = int64_t(n) * n;
        std::memcpy(w.lu.data(), a + i * nn, sizeof(T) * nn);
        li info = 0;
        if (n > 0) Lapack<T>::getrf(n, w.lu.data(), w.ipiv.data(), info);
        W sign(1), mant(1);  // det = mant * 2**exp2, renormalised so it never overflows early
        int exp2 = 0;
        double logsum = 0;
        bool zero = false;
        for (li d = 0; d < n; ++d) {
            const W u = W(w.lu[int64_t(d) * n + d]);
            if (w.ipiv[d] != d + 1) sign = -sign, mant = -mant;
            const double m = std::abs(u);
            zero = zero || m == 0;
            if constexpr (is_complex_v<T>) sign *= m != 0 ? u / m : W(1);
            else if (u < 0) sign = -sign;
            logsum += std::log(m);
            mant *= u;
            const double am = std::abs(mant);
            if (am != 0 && std::isfinite(am)) {
                int e;
                std::frexp(am, &e);
                mant = scale(mant, -e);
                exp2 += e;
            }
        }
        if (logabs) {
            det[i] = zero ? T(0) : T(sign);
            logabs[i] = zero ? -std::numeric_limits<R>::infinity() : R(logsum);
        } else {
            det[i] = zero ? T(0) : T(scale(mant, exp2));
        }
        return 0;
    }
    static W scale(W v, int e) {
        if constexpr (is_complex_v<W>) return W(std::ldexp(v.real(), e), std::ldexp(v.imag(), e));
        else return std::ldexp(v, e);
    }
};

// ---------------------------------------------------------------------------
// The batch driver: small matrices spread over the pool (each chunk with its
// own workspace), on a one-thread OpenBLAS; large ones run one at a time with
// OpenBLAS's own threads.
// ---------------------------------------------------------------------------
// "Small": up to 64, or up to 256 for the panel-bound ops (QR, SVD, and LU for solve and det):
// there LAPACK's panels are BLAS-2 steps too small to split, and one OpenBLAS thread ran them
// faster than two (float32, 2 threads, one matrix: qr 128^2 576 -> 389 us, svdvals 813 -> 627,
// svd 1454 -> 1233, qr 192^2 907 -> 709, solve 256^2 383 -> 341); Cholesky, eigh and inv lost
// from 192 or 256 on (inv 256^2 743 -> 999), and every op measured the same on both up to 64.
constexpr int64_t SMALL_MATRIX = 64, SMALL_PANEL_BOUND = 256;

template <class Op> void run_batch(const char* name, const Op& op, int64_t B, int64_t n, const char* failure) {
    std::mutex m;
    int64_t bad = B;  // the first failing matrix, under m
    int code = 0;
    const int64_t cost = std::max<int64_t>(1, n * n * n);
    const bool small = n <= (Op::panel_bound ? SMALL_PANEL_BOUND : SMALL_MATRIX);
    const auto matrices = [&](int64_t b, int64_t e) {
        typename Op::Work w(op);
        for (int64_t i = b; i < e; ++i) {
            if (int info = op.run(i, w)) {
                std::lock_guard<std::mutex> lk(m);
                if (i < bad) bad = i, code = info;
                return;
            }
        }
    };
    if (small)
        one_blas_thread([&] { parallel_range(B, std::max<int64_t>(1, (GRAIN * 4) / cost), matrices); });
    else
        parallel_range(B, B, matrices);
    if (bad == B) return;
    std::string msg = std::string("linalg.") + name + ": ";
    if (code < 0)
        msg += "LAPACK rejected argument " + std::to_string(-code) + " (an ndplane-cpu bug)";
    else
        msg += failure;
    if (B > 1) msg += " (matrix " + std::to_string(bad) + " of the batch)";
    throw linalg_error(msg + ".");
}

const char* const LINALG_NAMES[NLINALG] = {"cholesky", "qr",    "svd", "svdvals", "eigh",
                                           "eigvalsh", "solve", "inv", "det",     "slogdet"};
const int NIN[NLINALG] = {1, 1, 1, 1, 1, 1, 2, 1, 1, 1};
const int NOUT[NLINALG] = {1, 2, 3, 1, 2, 1, 1, 1, 1, 2};

[[noreturn]] void bad_shape(const char* name, const std::string& what) {
    throw std::invalid_argument(std::string("linalg.") + name + ": " + what + ".");
}

void check(const char* name, const View& v, int ndim, std::initializer_list<int64_t> shape, int dtype,
           const char* what) {  // fmt: skip
    if (v.dtype != dtype)
        throw type_error(std::string("linalg.") + name + ": " + what + " must have dtype " +
                         DT_NAME[dtype] + "; got " + DT_NAME[v.dtype] + ".");
    bool ok = v.ndim == ndim;
    int d = 0;
    for (int64_t s : shape) ok = ok && v.shape[d++] == s;
    if (!ok) bad_shape(name, std::string(what) + " has the wrong shape");
    if (!is_c_contiguous(v)) bad_shape(name, std::string(what) + " must be C-contiguous");
}

template <class T> void dispatch(int op, const View* in, const View* out) {
    using R = typename Lapack<T>::R;
    const char* name = LINALG_NAMES[op];
    const View& a = in[0];
    const int D = a.dtype, RD = D == C64 ? F32 : D == C128 ? F64 : D;
    if (a.ndim != 3) bad_shape(name, "expected a batch of matrices (B, M, N)");
    const int64_t B = a.shape[0], M = a.shape[1], N = a.shape[2];
    if (M > INT_MAX / std::max<int64_t>(1, N) || N > INT_MAX / std::max<int64_t>(1, M))
        bad_shape(name, "a matrix of more than 2**31 - 1 elements is beyond LAPACK's 32-bit indices");
    check(name, a, 3, {B, M, N}, D, "a");
    const bool square = op != L_QR && op != L_SVD && op != L_SVDVALS;
    if (square && M != N) bad_shape(name, "expected square matrices");
    T* A = reinterpret_cast<T*>(a.data);
    auto ptr = [&](int k) { return reinterpret_cast<T*>(out[k].data); };
    auto rptr = [&](int k) { return reinterpret_cast<R*>(out[k].data); };
    const li m = li(M), n = li(N), k = li(std::min(M, N));
    switch (op) {
        case L_CHOLESKY:
            check(name, out[0], 3, {B, N, N}, D, "L");
            return run_batch(name, Cholesky<T>{A, ptr(0), n}, B, N, "the matrix is not positive definite");
        case L_QR: {
            const int64_t kq = out[0].ndim == 3 ? out[0].shape[2] : -1;
            if (kq != k && kq != M) bad_shape(name, "q must have K = min(M, N) or M columns");
            check(name, out[0], 3, {B, M, kq}, D, "q");
            check(name, out[1], 3, {B, kq, N}, D, "r");
            return run_batch(name, QR<T>(A, ptr(0), ptr(1), m, n, li(kq)), B, std::max(M, N), "QR failed");
        }
        case L_SVD:
        case L_SVDVALS: {
            bool full = false;
            if (op == L_SVD) {
                full = out[0].ndim == 3 && out[0].shape[2] == M && out[2].ndim == 3 && out[2].shape[1] == N;
                const int64_t ju = full ? M : k, jv = full ? N : k;
                check(name, out[0], 3, {B, M, ju}, D, "u");
                check(name, out[1], 2, {B, k}, RD, "s");
                check(name, out[2], 3, {B, jv, N}, D, "vh");
                return run_batch(name, SVD<T>(A, ptr(0), rptr(1), ptr(2), m, n, full), B, std::max(M, N),
                                 "the SVD did not converge");
            }
            check(name, out[0], 2, {B, k}, RD, "s");
            return run_batch(name, SVD<T>(A, nullptr, rptr(0), nullptr, m, n, false), B, std::max(M, N),
                             "the SVD did not converge");
        }
        case L_EIGH:
        case L_EIGVALSH: {
            check(name, out[0], 2, {B, N}, RD, "w");
            T* V = nullptr;
            if (op == L_EIGH) check(name, out[1], 3, {B, N, N}, D, "v"), V = ptr(1);
            return run_batch(name, Eigh<T>(A, rptr(0), V, n), B, N, "the eigenvalues did not converge");
        }
        case L_SOLVE: {
            const View& b = in[1];
            if (b.ndim != 3) bad_shape(name, "expected b of shape (B, N, K)");
            const int64_t K = b.shape[2];
            if (K > INT_MAX / std::max<int64_t>(1, N)) bad_shape(name, "b is beyond LAPACK's 32-bit indices");
            check(name, b, 3, {B, N, K}, D, "b");
            check(name, out[0], 3, {B, N, K}, D, "x");
            if (K == 0) return;
            return run_batch(name, Solve<T>{A, reinterpret_cast<T*>(b.data), ptr(0), n, li(K)}, B, N,
                             "the matrix is singular");
        }
        case L_INV:
            check(name, out[0], 3, {B, N, N}, D, "inverse");
            return run_batch(name, Inv<T>(A, ptr(0), n), B, N, "the matrix is singular");
        case L_DET:
            check(name, out[0], 1, {B}, D, "det");
            return run_batch(name, Det<T>{A, ptr(0), nullptr, n}, B, N, "");
        case L_SLOGDET:
            check(name, out[0], 1, {B}, D, "sign");
            check(name, out[1], 1, {B}, RD, "logabsdet");
            return run_batch(name, Det<T>{A, ptr(0), rptr(1), n}, B, N, "");
        default:
            throw std::invalid_argument("linalg: unknown op.");
    }
}

}  // namespace

const char* linalg_name(int op) { return LINALG_NAMES[op]; }

void run_linalg(int op, const View* in, int nin, const View* out, int nout) {
    if (op < 0 || op >= NLINALG) throw std::invalid_argument("linalg: unknown op.");
    if (nin != NIN[op] || nout != NOUT[op])
        throw std::invalid_argument(std::string("linalg.") + LINALG_NAMES[op] + ": expected " +
                                    std::to_string(NIN[op]) + " inputs and " + std::to_string(NOUT[op]) +
                                    " outputs; got " + std::to_string(nin) + " and " + std::to_string(nout) + ".");
    for (int i = 1; i < nin; ++i)
        if (in[i].dtype != in[0].dtype)
            throw type_error(std::string("linalg.") + LINALG_NAMES[op] + ": inputs must share one dtype.");
    switch (in[0].dtype) {
        case F32: return dispatch<float>(op, in, out);
        case F64: return dispatch<double>(op, in, out);
        case C64: return dispatch<c64>(op, in, out);
        case C128: return dispatch<c128>(op, in, out);
        default:
            throw type_error(std::string("linalg.") + LINALG_NAMES[op] +
                             ": only float32, float64, complex64 and complex128 are supported; got " +
                             DT_NAME[in[0].dtype] + ".");
    }
}

}  // namespace ndp
