// conv2d forward and backward over NCHW images: im2col (or col2im) of a chunk of images
// into one scratch matrix, then one OpenBLAS gemm per (chunk, group). With several threads
// and images, each thread takes a range of images (grad weight: into its own partial sum,
// added up at the end), so no two threads write the same element.
//   x (N, C, H, W), weight (O, C/G, KH, KW), g and out (N, O, OH, OW), all C-contiguous,
//   one dtype (float32 or float64); nothing strided.
// A 1x1 kernel with stride 1 and no padding reads x (and writes grad x) without the scratch.
// Stride and dilation 1 on AVX2 / AVX-512 take direct kernels instead: the forward pass, grad
// input and grad weight (below, "Direct forward").
#include "conv.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <new>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "blas.h"
#include "driver.h"

namespace ndp {
namespace {

struct Geo {
    int64_t N, C, H, W, O, KH, KW, OH, OW, G, Cg, Og, CK, L;
    ConvParams p;
    bool direct() const {  // the image itself is the im2col matrix
        return KH == 1 && KW == 1 && p.sh == 1 && p.sw == 1 && p.ph == 0 && p.pw == 0;
    }
};

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument("fused conv2d: " + what); }

void need_4d(const View& v, const char* what) {
    if (v.ndim != 4) bad(std::string(what) + " must be 4-D.");
}

int64_t out_len(int64_t in, int64_t k, int64_t s, int64_t pad, int64_t d) {
    return (in + 2 * pad - d * (k - 1) - 1) / s + 1;
}

// The geometry from the operands of the pass (see conv.h); checks shapes against it.
Geo geometry(const ConvParams& p, const View& a, const View* b, const View& out) {
    const View *x = nullptr, *w = nullptr, *g = nullptr;
    if (p.pass == CONV_FORWARD) x = &a, w = b, g = &out;
    if (p.pass == CONV_GRAD_INPUT) g = &a, w = b, x = &out;
    if (p.pass == CONV_GRAD_WEIGHT) x = &a, g = b, w = &out;
    if (p.pass == CONV_GRAD_BIAS) g = &a;
    if (!g || (p.pass != CONV_GRAD_BIAS && (!x || !w))) bad("missing operand.");
    need_4d(*g, "the output (gradient)");
    Geo q{};
    q.p = p;
    q.N = g->shape[0], q.O = g->shape[1], q.OH = g->shape[2], q.OW = g->shape[3];
    q.L = q.OH * q.OW;
    if (p.pass == CONV_GRAD_BIAS) {
        if (out.ndim != 1 || out.shape[0] != q.O) bad("grad bias must have shape (O,).");
        return q;
    }
    need_4d(*x, "x");
    need_4d(*w, "weight");
    q.C = x->shape[1], q.H = x->shape[2], q.W = x->shape[3];
    q.KH = w->shape[2], q.KW = w->shape[3];
    q.G = p.groups;
    if (p.sh < 1 || p.sw < 1 || p.dh < 1 || p.dw < 1 || p.ph < 0 || p.pw < 0 || q.G < 1)
        bad("stride and dilation must be >= 1, padding >= 0, groups >= 1.");
    if (x->shape[0] != q.N || w->shape[0] != q.O || q.C % q.G || q.O % q.G || w->shape[1] * q.G != q.C)
        bad("x, weight and output shapes do not agree with groups.");
    if (out_len(q.H, q.KH, p.sh, p.ph, p.dh) != q.OH || out_len(q.W, q.KW, p.sw, p.pw, p.dw) != q.OW)
        bad("the output shape does not match stride, padding and dilation.");
    q.Cg = q.C / q.G, q.Og = q.O / q.G, q.CK = q.Cg * q.KH * q.KW;
    return q;
}

// The range [o0, o1) of output columns whose input column o * s + off lies in [0, n).
void valid_range(int64_t off, int64_t s, int64_t n, int64_t count, int64_t& o0, int64_t& o1) {
    o0 = off >= 0 ? 0 : (-off + s - 1) / s;
    o1 = n - 1 - off < 0 ? 0 : std::min(count, (n - 1 - off) / s + 1);
    o1 = std::max(o0, o1);
}

// Rows of cols for channel c of one image's group: x points at the group's first channel
// (Cg, H, W); cols at the image's first column, rows `ld` apart.
// NOTE: rows narrower than SHORT_ROW elements (small images: 8x8 digits, 4x4 feature maps) take
// one select per element from a clamped index instead of a fill, a memcpy and a fill per row:
// at OW = 4 the three libc calls cost more than the row.
inline constexpr int64_t SHORT_ROW = 32;

// Output rows [oy0, oy1) only (a row block), from the block's first column on.
template <class T>
void im2col(const Geo& q, const T* x, int64_t c, T* cols, int64_t ld, int64_t oy0 = 0, int64_t oy1 = -1) {
    const ConvParams& p = q.p;
    const T* plane = x + c * q.H * q.W;
    if (oy1 < 0) oy1 = q.OH;
    for (int64_t i = 0; i < q.KH; ++i)
        for (int64_t j = 0; j < q.KW; ++j) {
            T* row = cols + ((c * q.KH + i) * q.KW + j) * ld;
            const int64_t off = j * p.dw - p.pw;
            int64_t o0, o1;
            valid_range(off, p.sw, q.W, q.OW, o0, o1);
            for (int64_t oy = oy0; oy < oy1; ++oy) {
                T* r = row + (oy - oy0) * q.OW;
                const int64_t iy = oy * p.sh - p.ph + i * p.dh;
                if (iy < 0 || iy >= q.H || o0 == o1) {
                    std::fill(r, r + q.OW, T(0));
                    continue;
                }
                const T* src = plane + iy * q.W;
                if (q.OW < SHORT_ROW) {
                    for (int64_t ox = 0; ox < q.OW; ++ox) {
                        const int64_t ix = std::clamp<int64_t>(ox * p.sw + off, 0, q.W - 1);
                        r[ox] = ox >= o0 && ox < o1 ? src[ix] : T(0);
                    }
                    continue;
                }
                std::fill(r, r + o0, T(0));
                std::fill(r + o1, r + q.OW, T(0));
                if (p.sw == 1)
                    std::memcpy(r + o0, src + off + o0, static_cast<size_t>(o1 - o0) * sizeof(T));
                else
                    for (int64_t ox = o0; ox < o1; ++ox) r[ox] = src[ox * p.sw + off];
            }
        }
}

// The adjoint of im2col for channel c: gx (Cg, H, W) gets, at each pixel, the sum of the
// entries of cols read from it.
template <class T> void col2im(const Geo& q, const T* cols, int64_t ld, int64_t c, T* gx) {
    const ConvParams& p = q.p;
    T* plane = gx + c * q.H * q.W;
    std::fill(plane, plane + q.H * q.W, T(0));
    for (int64_t i = 0; i < q.KH; ++i)
        for (int64_t j = 0; j < q.KW; ++j) {
            const T* row = cols + ((c * q.KH + i) * q.KW + j) * ld;
            const int64_t off = j * p.dw - p.pw;
            int64_t o0, o1;
            valid_range(off, p.sw, q.W, q.OW, o0, o1);
            for (int64_t oy = 0; oy < q.OH; ++oy) {
                const int64_t iy = oy * p.sh - p.ph + i * p.dh;
                if (iy < 0 || iy >= q.H) continue;
                const T* r = row + oy * q.OW;
                T* dst = plane + iy * q.W + off;
                for (int64_t ox = o0; ox < o1; ++ox) dst[ox * p.sw] += r[ox];
            }
        }
}

// Row-major C (M, N) = op(A) (M, K) @ op(B) (K, N) + beta * C.
template <class T>
void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const T* A, int64_t lda, const T* B, int64_t ldb,
          T beta, T* C, int64_t ldc) {
    const auto tA = ta ? CblasTrans : CblasNoTrans, tB = tb ? CblasTrans : CblasNoTrans;
    lda = std::max<int64_t>(1, lda), ldb = std::max<int64_t>(1, ldb), ldc = std::max<int64_t>(1, ldc);
    if constexpr (std::is_same_v<T, float>)
        scipy_cblas_sgemm(CblasRowMajor, tA, tB, int(M), int(N), int(K), 1.0f, A, int(lda), B, int(ldb), beta, C,
                          int(ldc));
    else
        scipy_cblas_dgemm(CblasRowMajor, tA, tB, int(M), int(N), int(K), 1.0, A, int(lda), B, int(ldb), beta, C,
                          int(ldc));
}

// Images go in chunks of B whose im2col matrices sit side by side, (CK, B * L), so that a
// small image still makes one large gemm. An image whose matrix alone is larger (B = 1) goes,
// where its images run one thread each (`blocks`), in blocks of R output rows, (CK, R * OW):
// each block's matrix is read by its gemm while it is still in the core's L2, where the
// whole image's (2.4 MB for 16 channels of 64 x 64, 3 x 3) went out to memory and back.
template <class T> struct Chunks {
    const Geo& q;
    int64_t B, R;
    std::unique_ptr<T[]> cols, tmp;  // (CK, B * L), (Og, B * L)
    Chunks(const Geo& g, int64_t images, bool blocks = false) : q(g) {
        B = std::clamp<int64_t>((int64_t(1) << 18) / std::max<int64_t>(1, q.CK * q.L), 1, std::max<int64_t>(1, images));
        R = B == 1 && blocks && !q.direct()
                ? std::clamp<int64_t>((int64_t(1) << 16) / std::max<int64_t>(1, q.CK * q.OW), 1, std::max<int64_t>(1, q.OH))
                : q.OH;
        cols.reset(new T[static_cast<size_t>(std::max<int64_t>(1, q.CK * B * (R < q.OH ? R * q.OW : q.L)))]);
        if (B > 1) tmp.reset(new T[static_cast<size_t>(std::max<int64_t>(1, q.Og * B * q.L))]);
    }
    bool row_blocks() const { return R < q.OH; }
    // fn(oy0, width, cols) over the row blocks of image n, group g: the block starts at output
    // row oy0 and its matrix `cols` is (CK, width), width = its rows times OW.
    template <class F> void each_block(const T* x, int64_t n, int64_t g, F&& fn) {
        const T* xg = x + (n * q.C + g * q.Cg) * q.H * q.W;
        for (int64_t oy0 = 0; oy0 < q.OH; oy0 += R) {
            const int64_t oy1 = std::min(q.OH, oy0 + R), width = (oy1 - oy0) * q.OW;
            for (int64_t c = 0; c < q.Cg; ++c) im2col(q, xg, c, cols.get(), width, oy0, oy1);
            fn(oy0, width, cols.get());
        }
    }
    // fn(b, r) for b in [0, nb) and r in [0, rows), over the pool; one item copies `work` elements.
    template <class F> static void each(int64_t nb, int64_t rows, int64_t work, F&& fn) {
        parallel_range(nb * rows, std::max<int64_t>(1, GRAIN / std::max<int64_t>(1, work)),
                       [&](int64_t a, int64_t e) {
                           for (int64_t t = a; t < e; ++t) fn(t / rows, t % rows);
                       });
    }
    void im2col_chunk(const T* x, int64_t n0, int64_t nb, int64_t g) {
        each(nb, q.Cg, q.KH * q.KW * q.L, [&](int64_t b, int64_t c) {
            im2col(q, x + ((n0 + b) * q.C + g * q.Cg) * q.H * q.W, c, cols.get() + b * q.L, nb * q.L);
        });
    }
    // g's rows of group g for images [n0, n0 + nb) as one (Og, nb * L) matrix (a view when nb is 1).
    const T* gather(const T* gy, int64_t n0, int64_t nb, int64_t g) {
        if (nb == 1) return gy + (n0 * q.O + g * q.Og) * q.L;
        each(nb, q.Og, q.L, [&](int64_t b, int64_t o) {
            const T* src = gy + ((n0 + b) * q.O + g * q.Og + o) * q.L;
            std::copy(src, src + q.L, tmp.get() + o * nb * q.L + b * q.L);
        });
        return tmp.get();
    }
};

template <class T>
void forward(const Geo& q, const T* x, const T* w, const T* bias, T* y, int64_t n1, int64_t n2, bool blocks) {
    Chunks<T> ch(q, n2 - n1, blocks);
    for (int64_t n0 = n1; n0 < n2; n0 += ch.B) {
        const int64_t nb = std::min(ch.B, n2 - n0), ld = nb * q.L;
        for (int64_t g = 0; g < q.G; ++g) {
            const T* wg = w + g * q.Og * q.CK;
            const T* bg = bias ? bias + g * q.Og : nullptr;
            T* yg = y + (n0 * q.O + g * q.Og) * q.L;
            if (ch.row_blocks()) {
                if (bg)
                    for (int64_t o = 0; o < q.Og; ++o) std::fill(yg + o * q.L, yg + (o + 1) * q.L, bg[o]);
                ch.each_block(x, n0, g, [&](int64_t oy0, int64_t width, const T* cols) {
                    gemm<T>(false, false, q.Og, width, q.CK, wg, q.CK, cols, width, T(bg ? 1 : 0), yg + oy0 * q.OW, q.L);
                });
                continue;
            }
            if (nb == 1 && q.direct()) {
                if (bg)
                    for (int64_t o = 0; o < q.Og; ++o) std::fill(yg + o * q.L, yg + (o + 1) * q.L, bg[o]);
                gemm<T>(false, false, q.Og, q.L, q.CK, wg, q.CK, x + (n0 * q.C + g * q.Cg) * q.H * q.W, q.L,
                        T(bg ? 1 : 0), yg, q.L);
                continue;
            }
            ch.im2col_chunk(x, n0, nb, g);
            T* dst = nb == 1 ? yg : ch.tmp.get();
            if (nb == 1 && bg)
                for (int64_t o = 0; o < q.Og; ++o) std::fill(dst + o * q.L, dst + (o + 1) * q.L, bg[o]);
            gemm<T>(false, false, q.Og, ld, q.CK, wg, q.CK, ch.cols.get(), ld, T(nb == 1 && bg ? 1 : 0), dst, ld);
            if (nb == 1) continue;
            Chunks<T>::each(nb, q.Og, q.L, [&](int64_t b, int64_t o) {
                const T* src = dst + o * ld + b * q.L;
                T* out = y + ((n0 + b) * q.O + g * q.Og + o) * q.L;
                const T add = bg ? bg[o] : T(0);
                for (int64_t l = 0; l < q.L; ++l) out[l] = src[l] + add;
            });
        }
    }
}

template <class T> void grad_input(const Geo& q, const T* gy, const T* w, T* gx, int64_t n1, int64_t n2) {
    Chunks<T> ch(q, n2 - n1);
    for (int64_t n0 = n1; n0 < n2; n0 += ch.B) {
        const int64_t nb = std::min(ch.B, n2 - n0), ld = nb * q.L;
        for (int64_t g = 0; g < q.G; ++g) {
            const T* wg = w + g * q.Og * q.CK;
            const T* src = ch.gather(gy, n0, nb, g);
            T* gxg = gx + (n0 * q.C + g * q.Cg) * q.H * q.W;
            if (nb == 1 && q.direct()) {
                gemm<T>(true, false, q.CK, q.L, q.Og, wg, q.CK, src, q.L, T(0), gxg, q.L);
                continue;
            }
            gemm<T>(true, false, q.CK, ld, q.Og, wg, q.CK, src, ld, T(0), ch.cols.get(), ld);
            Chunks<T>::each(nb, q.Cg, q.KH * q.KW * q.L, [&](int64_t b, int64_t c) {
                col2im(q, ch.cols.get() + b * q.L, ld, c, gx + ((n0 + b) * q.C + g * q.Cg) * q.H * q.W);
            });
        }
    }
}

template <class T>
void grad_weight(const Geo& q, const T* x, const T* gy, T* gw, int64_t n1, int64_t n2, bool blocks) {
    Chunks<T> ch(q, n2 - n1, blocks);
    std::fill(gw, gw + q.O * q.CK, T(0));
    for (int64_t n0 = n1; n0 < n2; n0 += ch.B) {
        const int64_t nb = std::min(ch.B, n2 - n0), ld = nb * q.L;
        for (int64_t g = 0; g < q.G; ++g) {
            if (ch.row_blocks()) {  // gw += g's columns of the block @ the block's cols^T
                const T* gyg = gy + (n0 * q.O + g * q.Og) * q.L;
                ch.each_block(x, n0, g, [&](int64_t oy0, int64_t width, const T* cols) {
                    gemm<T>(false, true, q.Og, q.CK, width, gyg + oy0 * q.OW, q.L, cols, width, T(1),
                            gw + g * q.Og * q.CK, q.CK);
                });
                continue;
            }
            const T* src = ch.gather(gy, n0, nb, g);
            const T* cols = x + (n0 * q.C + g * q.Cg) * q.H * q.W;
            if (!(nb == 1 && q.direct())) {
                ch.im2col_chunk(x, n0, nb, g);
                cols = ch.cols.get();
            }
            gemm<T>(false, true, q.Og, q.CK, ld, src, ld, cols, ld, T(1), gw + g * q.Og * q.CK, q.CK);
        }
    }
}

// Each channel's sum over images and pixels, in double for float32. Sixteen lanes take the
// elements in turn, then fold in a fixed order: the loop vectorises (a single accumulator runs at
// the add's latency: 64 x 8 x 8 x 8 took 23 us, PyTorch 9), and the result is the same on every
// run and thread count.
template <class T> void grad_bias(const Geo& q, const T* gy, T* gb) {
    using A = std::conditional_t<std::is_same_v<T, float>, double, T>;
    constexpr int LANES = 16;
    parallel_range(q.O, std::max<int64_t>(1, GRAIN / std::max<int64_t>(1, q.N * q.L)), [&](int64_t o0, int64_t o1) {
        for (int64_t o = o0; o < o1; ++o) {
            A lane[LANES] = {};
            A tail = 0;
            for (int64_t n = 0; n < q.N; ++n) {
                const T* r = gy + (n * q.O + o) * q.L;
                int64_t l = 0;
                for (; l + LANES <= q.L; l += LANES)
                    for (int k = 0; k < LANES; ++k) lane[k] += A(r[l + k]);
                for (; l < q.L; ++l) tail += A(r[l]);
            }
            for (int w = LANES / 2; w > 0; w /= 2)
                for (int k = 0; k < w; ++k) lane[k] += lane[k + w];
            gb[o] = T(lane[0] + tail);
        }
    });
}

// ---------------------------------------------------------------------------
// Direct forward for stride 1 and dilation 1 (any padding, groups, kernel size), on x86-64
// with AVX2 + FMA or AVX-512: no im2col matrix and no gemm. A tile is OB output channels at V
// adjacent output columns of one row, held in OB vector registers; per input channel and tap,
// one unaligned load of V inputs and OB fused multiply-adds by the tap's weights (broadcast from
// a copy of the weights that holds each block of OB output channels as (Cg KH KW, OB), Og
// rounded up to OB with zeros, so no tile branches). The inputs come from a zero-padded window
// of a block of rows (Cg, R + KH - 1, Wp), so no read leaves the window and the borders need
// no branch. 16 x 64 x 64 images, 16 output channels, 3 x 3, one thread on a Zen 4: 103 GFLOP/s
// (the im2col + OpenBLAS path 56). The gradient of the input runs on it too
// (direct_grad_input), and the gradient of the weights on a kernel of the same shape
// (direct_gw_block).
// ---------------------------------------------------------------------------
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NDP_CONV_DIRECT 1
#define NDP_CONV_INLINE inline __attribute__((always_inline))

struct DirectArgs {
    // tile width and height (output channels), rows per block, window row length, channels padded
    int64_t V, OB, R, Wp, Ogp;
};

// The zero-padded window of image n, group g for output rows [oy0, oy1): (Cg, rows, Wp), row r
// holding input row oy0 - ph + r from column pw on.
template <class T>
NDP_CONV_INLINE void fill_window(const Geo& q, const DirectArgs& d, const T* x, int64_t n, int64_t g, int64_t oy0,
                                 int64_t oy1, T* win) {
    const int64_t rows = oy1 - oy0 + q.KH - 1;
    const T* xg = x + (n * q.C + g * q.Cg) * q.H * q.W;
    std::fill(win, win + q.Cg * rows * d.Wp, T(0));
    for (int64_t c = 0; c < q.Cg; ++c)
        for (int64_t r = 0; r < rows; ++r) {
            const int64_t iy = oy0 - q.p.ph + r;
            if (iy >= 0 && iy < q.H)
                std::memcpy(win + (c * rows + r) * d.Wp + q.p.pw, xg + (c * q.H + iy) * q.W, size_t(q.W) * sizeof(T));
        }
}

// Output rows [oy0, oy1) of image n, group g: the window, then every tile.
template <class T, int V, int OB>
NDP_CONV_INLINE void direct_block(const Geo& q, const DirectArgs& d, const T* x, const T* wr, const T* bias, T* y,
                                  int64_t n, int64_t g, int64_t oy0, int64_t oy1, T* win) {
    typedef T vec __attribute__((vector_size(V * sizeof(T))));
    const int64_t rows = oy1 - oy0 + q.KH - 1, Wp = d.Wp, Ogp = d.Ogp;
    fill_window(q, d, x, n, g, oy0, oy1, win);
    const T* wg = wr + g * q.CK * Ogp;
    T* yg = y + (n * q.O + g * q.Og) * q.L;
    // NOTE: the tiles of one block of output channels in turn, so that its weights (CK * OB,
    // contiguous) stay in the core's cache while the block's rows pass over them.
    for (int64_t o0 = 0; o0 < q.Og; o0 += OB)
        for (int64_t oy = oy0; oy < oy1; ++oy)
            for (int64_t ox = 0; ox < q.OW; ox += V) {
                vec acc[OB];
                for (int o = 0; o < OB; ++o) acc[o] = vec{} + (bias && o0 + o < q.Og ? bias[g * q.Og + o0 + o] : T(0));
                const T* wb = wg + o0 * q.CK;  // (CK, OB): the block's weights, tap by tap
                for (int64_t c = 0; c < q.Cg; ++c)
                    for (int64_t ky = 0; ky < q.KH; ++ky) {
                        const T* in = win + (c * rows + oy - oy0 + ky) * Wp + ox;
                        const T* wk = wb + (c * q.KH + ky) * q.KW * OB;
                        for (int64_t kx = 0; kx < q.KW; ++kx) {
                            vec v;
                            std::memcpy(&v, in + kx, sizeof(vec));
                            const T* wo = wk + kx * OB;
                            for (int o = 0; o < OB; ++o) acc[o] += wo[o] * v;
                        }
                    }
                const int64_t m = std::min<int64_t>(V, q.OW - ox), no = std::min<int64_t>(OB, q.Og - o0);
                for (int64_t o = 0; o < no; ++o) {
                    T* dst = yg + (o0 + o) * q.L + oy * q.OW + ox;
                    if (m == V)
                        std::memcpy(dst, &acc[o], sizeof(vec));
                    else
                        for (int64_t i = 0; i < m; ++i) dst[i] = acc[o][i];
                }
            }
}

// Blocks [b, e) of the N * G * ceil(OH / R) blocks, with one window for them all; false when
// the window could not be allocated (the caller raises; nothing may throw on the pool).
template <class T, int V, int OB>
NDP_CONV_INLINE bool direct_blocks(const Geo& q, const DirectArgs& d, const T* x, const T* wr, const T* bias, T* y,
                                   int64_t b, int64_t e) {
    std::unique_ptr<T[]> win(new (std::nothrow) T[size_t(q.Cg * (d.R + q.KH - 1) * d.Wp)]);
    if (!win) return false;
    const int64_t per = (q.OH + d.R - 1) / d.R;
    for (int64_t i = b; i < e; ++i) {
        const int64_t ng = i / per, oy0 = (i % per) * d.R;
        direct_block<T, V, OB>(q, d, x, wr, bias, y, ng / q.G, ng % q.G, oy0, std::min(q.OH, oy0 + d.R), win.get());
    }
    return true;
}

// The AVX-512 and AVX2 versions: what they call is inlined into each and compiled for its ISA.
// Grad weight over output rows [oy0, oy1) of image n, group g, added into gw (G * Og, CK): a
// gemm (Og, P) x (P, CK) over the block's P output pixels, written as the forward kernel's
// mirror. g is copied pixel-major, (P, Ogv) with Ogv = Og rounded up to V and zeros past Og,
// so a tile of TB taps at V output channels holds TB vector sums: per pixel, one load of V
// channels of g and TB fused multiply-adds by the taps' inputs there (broadcast from the
// window). No sum runs across lanes. A last tile of fewer taps repeats tap 0 (its sums unused).
template <class T, int V, int TB>
NDP_CONV_INLINE void direct_gw_block(const Geo& q, const DirectArgs& d, const T* x, const T* gy, T* gw, int64_t n,
                                     int64_t g, int64_t oy0, int64_t oy1, T* win, T* gt) {
    typedef T vec __attribute__((vector_size(V * sizeof(T))));
    const int64_t rows = oy1 - oy0 + q.KH - 1, P = (oy1 - oy0) * q.OW, Ogv = (q.Og + V - 1) / V * V;
    fill_window(q, d, x, n, g, oy0, oy1, win);
    std::fill(gt, gt + P * Ogv, T(0));
    const T* gg = gy + (n * q.O + g * q.Og) * q.L + oy0 * q.OW;
    for (int64_t o = 0; o < q.Og; ++o)
        for (int64_t i = 0; i < P; ++i) gt[i * Ogv + o] = gg[o * q.L + i];
    for (int64_t t0 = 0; t0 < q.CK; t0 += TB) {
        int64_t at[TB];  // each tap's first input in the window
        for (int t = 0; t < TB; ++t) {
            const int64_t k = t0 + t < q.CK ? t0 + t : 0, c = k / (q.KH * q.KW), ky = k / q.KW % q.KH, kx = k % q.KW;
            at[t] = (c * rows + ky) * d.Wp + kx;
        }
        for (int64_t o0 = 0; o0 < Ogv; o0 += V) {
            vec acc[TB];
            for (int t = 0; t < TB; ++t) acc[t] = vec{};
            const T* gp = gt + o0;
            for (int64_t r = 0; r < oy1 - oy0; ++r) {
                const T* in = win + r * d.Wp;
                for (int64_t ox = 0; ox < q.OW; ++ox, gp += Ogv) {
                    vec u;
                    std::memcpy(&u, gp, sizeof(vec));
                    for (int t = 0; t < TB; ++t) acc[t] += u * in[at[t] + ox];
                }
            }
            const int64_t nt = std::min<int64_t>(TB, q.CK - t0), no = std::min<int64_t>(V, q.Og - o0);
            for (int64_t t = 0; t < nt; ++t)
                for (int64_t o = 0; o < no; ++o) gw[(g * q.Og + o0 + o) * q.CK + t0 + t] += acc[t][o];
        }
    }
}

// Blocks [b, e) into gw (zeroed by the caller); false where a window could not be allocated.
template <class T, int V, int OB>
NDP_CONV_INLINE bool direct_gw_blocks(const Geo& q, const DirectArgs& d, const T* x, const T* gy, T* gw, int64_t b,
                                      int64_t e) {
    std::unique_ptr<T[]> win(new (std::nothrow) T[size_t(q.Cg * (d.R + q.KH - 1) * d.Wp)]);
    const int64_t Ogv = (q.Og + V - 1) / V * V;
    std::unique_ptr<T[]> gt(new (std::nothrow) T[size_t(d.R * q.OW * Ogv)]);
    if (!win || !gt) return false;
    const int64_t per = (q.OH + d.R - 1) / d.R;
    for (int64_t i = b; i < e; ++i) {
        const int64_t ng = i / per, oy0 = (i % per) * d.R;
        direct_gw_block<T, V, OB>(q, d, x, gy, gw, ng / q.G, ng % q.G, oy0, std::min(q.OH, oy0 + d.R), win.get(),
                                  gt.get());
    }
    return true;
}

// The vector of a tile: the widest of 64 (AVX-512 only), 32 and 16 bytes whose lanes the output
// rows fill (8 x 8 and 4 x 4 images take 32- and 16-byte tiles).
int64_t direct_width(const Geo& q, int level, size_t item) {
    for (size_t bytes : {size_t(64), size_t(32), size_t(16)})
        if ((bytes < 64 || level == 4) && q.OW >= int64_t(bytes / item)) return int64_t(bytes / item);
    return 0;
}

template <class T, int V, int OB>
NDP_CONV_INLINE bool direct_run(bool weight, const Geo& q, const DirectArgs& d, const T* x, const T* wr, const T* bias,
                                T* y, int64_t b, int64_t e) {
    // forward: x, weights wr, bias, out y; grad weight: x, g (as wr), out gw (as y), its lanes
    // over output channels (V of them) and 12 taps to a tile
    return weight ? direct_gw_blocks<T, V, 12>(q, d, x, wr, y, b, e)
                  : direct_blocks<T, V, OB>(q, d, x, wr, bias, y, b, e);
}

template <class T>
__attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma"))) bool direct_v4(
    bool weight, const Geo& q, const DirectArgs& d, const T* x, const T* wr, const T* bias, T* y, int64_t b, int64_t e) {
    constexpr int W = 64 / sizeof(T);
    const bool ob16 = d.OB == 16;
    if (d.V == W)
        return ob16 ? direct_run<T, W, 16>(weight, q, d, x, wr, bias, y, b, e)
                    : direct_run<T, W, 8>(weight, q, d, x, wr, bias, y, b, e);
    if (d.V == W / 2)
        return ob16 ? direct_run<T, W / 2, 16>(weight, q, d, x, wr, bias, y, b, e)
                    : direct_run<T, W / 2, 8>(weight, q, d, x, wr, bias, y, b, e);
    return ob16 ? direct_run<T, W / 4, 16>(weight, q, d, x, wr, bias, y, b, e)
                : direct_run<T, W / 4, 8>(weight, q, d, x, wr, bias, y, b, e);
}
template <class T>
__attribute__((target("avx2,fma"))) bool direct_v3(bool weight, const Geo& q, const DirectArgs& d, const T* x, const T* wr,
                                                    const T* bias, T* y, int64_t b, int64_t e) {
    constexpr int W = 32 / sizeof(T);
    return d.V == W ? direct_run<T, W, 8>(weight, q, d, x, wr, bias, y, b, e)
                    : direct_run<T, W / 2, 8>(weight, q, d, x, wr, bias, y, b, e);
}

// 4: AVX-512, 3: AVX2 + FMA, 0: neither (the gemm path) -- the ISA the elementwise kernels took
// (NDPLANE_CPU_ISA may lower it), or what the CPU has in a build without them (sanitizers).
int direct_level() {
#if defined(NDP_MULTI_ISA)
    const std::string isa = kernels().isa;
    return isa == "x86-64-v4" ? 4 : isa == "x86-64-v3" ? 3 : 0;
#else
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma"))
        return 4;
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 3 : 0;
#endif
}

// Whether the forward pass goes direct: stride and dilation 1, rows of at least a 16-byte vector.
bool use_direct(const Geo& q, int level, size_t item) {
    return level && q.p.sh == 1 && q.p.sw == 1 && q.p.dh == 1 && q.p.dw == 1 && direct_width(q, level, item) &&
           !q.direct();
}

DirectArgs direct_args(const Geo& q, int level, size_t item) {
    const int64_t V = direct_width(q, level, item);
    DirectArgs d{};
    d.V = V;
    d.OB = level == 4 && q.Og > 8 ? 16 : 8;  // AVX2 has 16 registers, AVX-512 32
    d.Ogp = (q.Og + d.OB - 1) / d.OB * d.OB;
    d.Wp = (q.OW + V - 1) / V * V + q.KW - 1;  // >= W + 2 pw, and the last tile's loads fit
    // Blocks of rows whose window holds about 2^17 elements, and enough blocks for the threads.
    const int64_t threads = num_threads(), images = q.N * q.G;
    d.R = std::clamp<int64_t>((int64_t(1) << 17) / std::max<int64_t>(1, q.Cg * d.Wp) - (q.KH - 1), 1, q.OH);
    if (images < 2 * threads) d.R = std::min(d.R, std::max<int64_t>(1, q.OH * images / (2 * threads)));
    return d;
}

template <class T> void direct_forward(const Geo& q, int level, const T* x, const T* w, const T* bias, T* y) {
    const DirectArgs d = direct_args(q, level, sizeof(T));
    const int64_t images = q.N * q.G;
    // The weights as (G, Ogp / OB, CK, OB): each block of OB output channels tap by tap, zero past Og.
    const int64_t OB = d.OB;
    std::unique_ptr<T[]> wr(new T[size_t(q.G * q.CK * d.Ogp)]());
    for (int64_t g = 0; g < q.G; ++g)
        for (int64_t o = 0; o < q.Og; ++o)
            for (int64_t k = 0; k < q.CK; ++k)
                wr[((g * (d.Ogp / OB) + o / OB) * q.CK + k) * OB + o % OB] = w[(g * q.Og + o) * q.CK + k];
    const int64_t blocks = images * ((q.OH + d.R - 1) / d.R);
    std::atomic<bool> failed{false};
    parallel_range(blocks, 1, [&](int64_t b, int64_t e) {
        const bool ok = level == 4 ? direct_v4<T>(false, q, d, x, wr.get(), bias, y, b, e)
                                   : direct_v3<T>(false, q, d, x, wr.get(), bias, y, b, e);
        if (!ok) failed = true;
    });
    if (failed) throw std::bad_alloc();
}

// Grad weight (stride and dilation 1): the blocks in as many shares as threads, each summed into
// its own partial gradient, the partials added in a fixed order (the same result on every run
// with the same thread count).
template <class T> void direct_grad_weight(const Geo& q, int level, const T* x, const T* gy, T* gw) {
    const DirectArgs d = direct_args(q, level, sizeof(T));
    const int64_t blocks = q.N * q.G * ((q.OH + d.R - 1) / d.R), size = q.O * q.CK;
    if (blocks == 0) return std::fill(gw, gw + size, T(0));  // an empty batch
    const int64_t parts = std::clamp<int64_t>(num_threads(), 1, blocks);
    std::unique_ptr<T[]> partial(new T[size_t(parts * size)]());
    std::atomic<bool> failed{false};
    parallel_range(parts, 1, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
            const int64_t b = blocks * t / parts, e = blocks * (t + 1) / parts;
            T* part = partial.get() + t * size;
            const bool ok = level == 4 ? direct_v4<T>(true, q, d, x, gy, nullptr, part, b, e)
                                       : direct_v3<T>(true, q, d, x, gy, nullptr, part, b, e);
            if (!ok) failed = true;
        }
    });
    if (failed) throw std::bad_alloc();
    std::copy(partial.get(), partial.get() + size, gw);
    for (int64_t t = 1; t < parts; ++t)
        for (int64_t i = 0; i < size; ++i) gw[i] += partial[size_t(t * size + i)];
}

// Grad input of a stride 1, dilation 1 convolution as a direct forward one: the "full"
// correlation of g (N, O, OH, OW) with the weights flipped in both axes and transposed per group,
// (C, Og, KH, KW), padded by K - 1 - p, gives (N, C, H, W). Where p > K - 1 (unusual) the
// padding would be negative: the gemm road.
bool use_direct_grad_input(const Geo& q, int level, size_t item) {
    Geo t = q;
    t.OW = q.W;  // the width of the transposed convolution's output rows
    return use_direct(t, level, item) && q.p.ph <= q.KH - 1 && q.p.pw <= q.KW - 1;
}

template <class T> void direct_grad_input(const Geo& q, int level, const T* gy, const T* w, T* gx) {
    Geo t = q;
    t.C = q.O, t.H = q.OH, t.W = q.OW, t.O = q.C, t.OH = q.H, t.OW = q.W;
    t.Cg = q.Og, t.Og = q.Cg, t.CK = q.Og * q.KH * q.KW, t.L = q.H * q.W;
    t.p.ph = q.KH - 1 - q.p.ph, t.p.pw = q.KW - 1 - q.p.pw;
    std::unique_ptr<T[]> wt(new T[size_t(q.O * q.CK)]);
    for (int64_t g = 0; g < q.G; ++g)
        for (int64_t c = 0; c < q.Cg; ++c)
            for (int64_t o = 0; o < q.Og; ++o)
                for (int64_t ky = 0; ky < q.KH; ++ky)
                    for (int64_t kx = 0; kx < q.KW; ++kx)
                        wt[(((g * q.Cg + c) * q.Og + o) * q.KH + ky) * q.KW + kx] =
                            w[(((g * q.Og + o) * q.Cg + c) * q.KH + (q.KH - 1 - ky)) * q.KW + (q.KW - 1 - kx)];
    direct_forward<T>(t, level, gy, wt.get(), nullptr, gx);
}
#endif

// Whether over_images runs each image on one thread (the pool's, or the only one): then an
// image's gemms are small enough to go block by block (Chunks::R).
bool one_thread_each(const Geo& q) { return num_threads() < 2 || q.N >= 2; }

// fn(n1, n2) over ranges of images: on the pool when there are several threads and images,
// else on the calling thread (one image: OpenBLAS's own threads share the gemm).
template <class F> void over_images(const Geo& q, F&& fn) {
    if (num_threads() < 2 || q.N < 2) return fn(int64_t(0), q.N);
    one_blas_thread([&] { parallel_range(q.N, 1, fn); });
}

template <class T> void run_typed(const Geo& q, const View& a, const View* b, const View* c, const View& out) {
    auto ptr = [](const View& v) { return reinterpret_cast<T*>(v.data); };
    switch (q.p.pass) {
        case CONV_FORWARD:
#if defined(NDP_CONV_DIRECT)
            if (const int level = direct_level(); use_direct(q, level, sizeof(T)))
                return direct_forward<T>(q, level, ptr(a), ptr(*b), c ? ptr(*c) : nullptr, ptr(out));
#endif
            return over_images(q, [&](int64_t n1, int64_t n2) {
                forward<T>(q, ptr(a), ptr(*b), c ? ptr(*c) : nullptr, ptr(out), n1, n2, one_thread_each(q));
            });
        case CONV_GRAD_INPUT:
#if defined(NDP_CONV_DIRECT)
            if (const int level = direct_level(); use_direct_grad_input(q, level, sizeof(T)))
                return direct_grad_input<T>(q, level, ptr(a), ptr(*b), ptr(out));
#endif
            return over_images(q, [&](int64_t n1, int64_t n2) { grad_input<T>(q, ptr(a), ptr(*b), ptr(out), n1, n2); });
        case CONV_GRAD_WEIGHT: {
#if defined(NDP_CONV_DIRECT)
            if (const int level = direct_level(); use_direct(q, level, sizeof(T)))
                return direct_grad_weight<T>(q, level, ptr(a), ptr(*b), ptr(out));
#endif
            // one partial sum per range of images, added up at the end
            const int64_t parts = q.N > 1 ? std::min<int64_t>(q.N, num_threads()) : 1, size = q.O * q.CK;
            if (parts == 1) return grad_weight<T>(q, ptr(a), ptr(*b), ptr(out), 0, q.N, one_thread_each(q));
            std::unique_ptr<T[]> partial(new T[static_cast<size_t>(std::max<int64_t>(1, (parts - 1) * size))]);
            one_blas_thread([&] {
                parallel_range(parts, 1, [&](int64_t t0, int64_t t1) {
                    for (int64_t t = t0; t < t1; ++t)
                        grad_weight<T>(q, ptr(a), ptr(*b), t ? partial.get() + (t - 1) * size : ptr(out),
                                       q.N * t / parts, q.N * (t + 1) / parts, one_thread_each(q));
                });
            });
            T* gw = ptr(out);
            for (int64_t t = 1; t < parts; ++t)
                for (int64_t i = 0; i < size; ++i) gw[i] += partial[(t - 1) * size + i];
            return;
        }
        default: return grad_bias<T>(q, ptr(a), ptr(out));
    }
}

}  // namespace

void run_conv2d(const ConvParams& p, const View& a, const View* b, const View* c, const View& out) {
    if (a.dtype != F32 && a.dtype != F64) throw type_error("fused conv2d: only float32 and float64 are supported.");
    for (const View* v : {&a, b, c, &out}) {
        if (!v) continue;
        require_dtype("fused conv2d", "every operand", *v, a.dtype);
        if (!is_c_contiguous(*v)) bad("every operand must be C-contiguous.");
    }
    if ((p.pass == CONV_FORWARD || p.pass == CONV_GRAD_INPUT || p.pass == CONV_GRAD_WEIGHT) && !b)
        bad("missing operand.");
    if (c && (c->ndim != 1 || (b && c->shape[0] != b->shape[0]))) bad("bias must have shape (O,).");
    const Geo q = geometry(p, a, b, out);
    if (out.size == 0) return;
    if (a.dtype == F32)
        run_typed<float>(q, a, b, c, out);
    else
        run_typed<double>(q, a, b, c, out);
}

}  // namespace ndp
