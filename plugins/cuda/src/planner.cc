// The launch planner (axis merging, splitting) and the cuBLAS operand mapping: host code
// with no CUDA dependency, tested on machines without a GPU (tests/test_host.py).
#include <cstdlib>

#include "common.h"

namespace ndp {

Merged coalesce(int ndim, const int64_t* shape, int nargs, const int64_t* const* strides) {
    Merged m;
    m.nargs = nargs;
    for (int d = 0; d < ndim; ++d) {
        if (shape[d] == 0) {
            m.n = 0;
            m.ndim = 0;
            return m;
        }
        m.n *= shape[d];
    }
    // Outermost first; size-1 axes carry no step.
    for (int d = 0; d < ndim; ++d) {
        if (shape[d] == 1) continue;
        const int j = m.ndim;
        if (j > 0) {
            // Merge axis d into the previous kept axis when, for every operand, one step of
            // the previous axis equals shape[d] steps of this one.
            bool merge = true;
            for (int a = 0; a < nargs && merge; ++a)
                merge = strides[a][d] * shape[d] == m.strides[a][j - 1];
            if (merge) {
                m.shape[j - 1] *= shape[d];
                for (int a = 0; a < nargs; ++a) m.strides[a][j - 1] = strides[a][d];
                continue;
            }
        }
        m.shape[j] = shape[d];
        for (int a = 0; a < nargs; ++a) m.strides[a][j] = strides[a][d];
        m.ndim = j + 1;
    }
    return m;
}

static void fill_plan(Plan& p, const Merged& m, int first) {
    p.ndim = m.ndim - first;
    p.nargs = m.nargs;
    p.n = 1;
    for (int d = 0; d < p.ndim; ++d) {
        p.shape[d] = m.shape[first + d];
        p.n *= p.shape[d];
        for (int a = 0; a < m.nargs; ++a) p.strides[a][d] = m.strides[a][first + d];
    }
    p.contiguous = p.ndim <= 1;
    for (int a = 0; a < m.nargs && p.contiguous; ++a)
        p.contiguous = p.ndim == 0 || p.strides[a][0] == 1;
}

void split(const Merged& m, void (*launch)(const Plan&, const int64_t*, void*), void* ctx) {
    if (m.n == 0) return;
    Plan p{};
    const int lead = m.ndim > MAXDIM ? m.ndim - MAXDIM : 0;
    fill_plan(p, m, lead);
    int64_t idx[64] = {};
    for (;;) {
        int64_t base[MAXARGS] = {};
        for (int a = 0; a < m.nargs; ++a)
            for (int d = 0; d < lead; ++d) base[a] += idx[d] * m.strides[a][d];
        launch(p, base, ctx);
        int d = lead - 1;
        while (d >= 0 && ++idx[d] == m.shape[d]) idx[d--] = 0;
        if (d < 0) return;
    }
}

// One matrix of a product: its rows, columns, strides of those two axes.
struct Mat {
    bool trans;
    int64_t ld;
};
// The column-major matrix cuBLAS sees for a row-major (r, c) matrix with strides (s_r, s_c):
// its transpose (c, r) with op N when rows are contiguous, or itself with op T when columns are.
static bool as_colmajor(int64_t r, int64_t c, int64_t s_r, int64_t s_c, Mat& out) {
    if ((c == 1 || s_c == 1) && (r == 1 || s_r >= c)) {
        out = {false, r == 1 ? (c > 1 ? c : 1) : s_r};
        return true;
    }
    if ((r == 1 || s_r == 1) && (c == 1 || s_c >= r)) {
        out = {true, c == 1 ? (r > 1 ? r : 1) : s_c};
        return true;
    }
    return false;
}

GemmPlan plan_gemm(const View& a, const View& b, const View& out) {
    if (a.ndim != 3 || b.ndim != 3 || out.ndim != 3)
        throw std::invalid_argument("matmul: operands must be 3-D (batch, rows, columns).");
    const int64_t B = out.shape[0], M = a.shape[1], K = a.shape[2], N = b.shape[2];
    if (b.shape[1] != K || out.shape[1] != M || out.shape[2] != N || (a.shape[0] != B && a.shape[0] != 1) ||
        (b.shape[0] != B && b.shape[0] != 1))
        throw std::invalid_argument("matmul: operand shapes do not match.");
    Mat ma{}, mb{};
    if (!as_colmajor(K, N, b.strides[1], b.strides[2], mb) || !as_colmajor(M, K, a.strides[1], a.strides[2], ma))
        throw std::invalid_argument("matmul: each matrix must be row- or column-major (unit stride on one of its last two axes).");
    if (out.strides[2] != 1 && N > 1)
        throw std::invalid_argument("matmul: out must be C-contiguous.");
    GemmPlan g{};
    g.trans_a = mb.trans;  // cuBLAS's A is our b: (N, K) column-major
    g.trans_b = ma.trans;  // cuBLAS's B is our a: (K, M) column-major
    g.m = N;
    g.n = M;
    g.k = K;
    g.lda = mb.ld;
    g.ldb = ma.ld;
    g.ldc = N > 1 ? N : 1;
    g.stride_a = b.shape[0] == 1 ? 0 : b.strides[0];
    g.stride_b = a.shape[0] == 1 ? 0 : a.strides[0];
    g.stride_c = M * N;
    g.batch = B;
    return g;
}

}  // namespace ndp
