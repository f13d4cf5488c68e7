// max_pool2d / avg_pool2d over NCHW images, forward and input gradient (the "fused:max_pool2d"
// and "fused:avg_pool2d" capabilities): windows of (KH, KW) at strides (SH, SW), no padding.
//
//   forward:     x (N, C, H, W) -> out (N, C, OH, OW), OH = (H - KH) / SH + 1 (the same for W)
//   grad input:  max: (g (N, C, OH, OW), x (N, C, H, W)) -> out (N, C, H, W)
//                avg: (g,) -> out (N, C, H, W)
// Every View C-contiguous, one float dtype (float32 or float64). The arithmetic is the
// composite's (nn.functional's unfold2d + max/mean and their VJPs): the maximum propagates NaN;
// the mean is the window's sum (in window order) divided by KH * KW; the max's gradient goes
// to every element equal to the maximum, (g * hit) / count; windows that overlap add up.
#include <algorithm>

#include "driver.h"
#include "pool.h"

namespace ndp {
namespace {

struct Geo {
    int64_t planes, H, W, OH, OW, kh, kw, sh, sw;
};

template <class T> inline T max_step(T m, T v) { return (v > m || v != v) ? v : m; }

// One plane: out (OH, OW) from x (H, W). The window is folded one kernel offset at a time over
// a whole output row (the loop over ow has stride SW on x and vectorises).
template <class T, bool Max> void forward_plane(const Geo& q, const T* X, T* O) {
    const T n = T(q.kh * q.kw);
    for (int64_t oh = 0; oh < q.OH; ++oh) {
        T* o = O + oh * q.OW;
        const T* r0 = X + oh * q.sh * q.W;
        for (int64_t ow = 0; ow < q.OW; ++ow) o[ow] = r0[ow * q.sw];
        for (int64_t i = 0; i < q.kh; ++i) {
            const T* r = r0 + i * q.W;
            for (int64_t j = (i == 0); j < q.kw; ++j)
                for (int64_t ow = 0; ow < q.OW; ++ow) {
                    const T v = r[ow * q.sw + j];
                    o[ow] = Max ? max_step(o[ow], v) : o[ow] + v;
                }
        }
        if (!Max)
            for (int64_t ow = 0; ow < q.OW; ++ow) o[ow] = o[ow] / n;
    }
}

// One plane of the input gradient: gx (H, W) from g (OH, OW) (and x for the max).
template <class T, bool Max> void backward_plane(const Geo& q, const T* G, const T* X, T* GX) {
    std::fill(GX, GX + q.H * q.W, T(0));
    const T n = T(q.kh * q.kw);
    for (int64_t oh = 0; oh < q.OH; ++oh) {
        const int64_t base = oh * q.sh * q.W;
        for (int64_t ow = 0; ow < q.OW; ++ow) {
            const int64_t b = base + ow * q.sw;
            const T g = G[oh * q.OW + ow];
            if constexpr (!Max) {
                const T v = g / n;
                for (int64_t i = 0; i < q.kh; ++i)
                    for (int64_t j = 0; j < q.kw; ++j) GX[b + i * q.W + j] += v;
            } else {
                T m = X[b];
                for (int64_t i = 0; i < q.kh; ++i)
                    for (int64_t j = 0; j < q.kw; ++j) m = max_step(m, X[b + i * q.W + j]);
                T count = 0;
                for (int64_t i = 0; i < q.kh; ++i)
                    for (int64_t j = 0; j < q.kw; ++j) count += T(X[b + i * q.W + j] == m);
                for (int64_t i = 0; i < q.kh; ++i)
                    for (int64_t j = 0; j < q.kw; ++j)
                        GX[b + i * q.W + j] += g * T(X[b + i * q.W + j] == m) / count;
            }
        }
    }
}

template <class T>
void run_typed(const PoolParams& p, const Geo& q, const View& a, const View* b, const View& out) {
    const T* A = reinterpret_cast<const T*>(a.data);
    const T* B = b ? reinterpret_cast<const T*>(b->data) : nullptr;
    T* O = reinterpret_cast<T*>(out.data);
    const int64_t in = q.H * q.W, on = q.OH * q.OW;
    const int64_t grain = std::max<int64_t>(1, GRAIN / std::max<int64_t>(1, in));
    parallel_range(q.planes, grain, [&](int64_t s, int64_t e) {
        for (int64_t c = s; c < e; ++c) {
            if (!p.grad) {
                if (p.max) forward_plane<T, true>(q, A + c * in, O + c * on);
                else forward_plane<T, false>(q, A + c * in, O + c * on);
            } else if (p.max) {
                backward_plane<T, true>(q, A + c * on, B + c * in, O + c * in);
            } else {
                backward_plane<T, false>(q, A + c * on, nullptr, O + c * in);
            }
        }
    });
}

[[noreturn]] void bad(const char* fn, const std::string& what) {
    throw std::invalid_argument(std::string(fn) + ": " + what);
}

}  // namespace

void run_pool2d(const PoolParams& p, const View& a, const View* b, const View& out) {
    const char* fn = p.max ? "fused max_pool2d" : "fused avg_pool2d";
    if (a.dtype != F32 && a.dtype != F64) throw type_error(std::string(fn) + ": only float32 and float64 are supported.");
    if (p.kh < 1 || p.kw < 1 || p.sh < 1 || p.sw < 1) bad(fn, "kernel and stride must be positive.");
    if (p.grad && p.max && !b) bad(fn, "the input gradient needs (g, x).");
    for (const View* v : {&a, b, &out}) {
        if (!v) continue;
        require_dtype(fn, "every operand", *v, a.dtype);
        if (v->ndim != 4) bad(fn, "every operand must be 4-D (N, C, H, W).");
        if (!is_c_contiguous(*v)) bad(fn, "every operand must be C-contiguous.");
    }
    const View& img = p.grad ? out : a;  // (N, C, H, W)
    const View& pooled = p.grad ? a : out;  // (N, C, OH, OW)
    Geo q{img.shape[0] * img.shape[1], img.shape[2], img.shape[3], 0, 0, p.kh, p.kw, p.sh, p.sw};
    if (q.H < q.kh || q.W < q.kw) bad(fn, "the kernel is larger than the input.");
    q.OH = (q.H - q.kh) / q.sh + 1;
    q.OW = (q.W - q.kw) / q.sw + 1;
    if (pooled.shape[0] != img.shape[0] || pooled.shape[1] != img.shape[1] || pooled.shape[2] != q.OH ||
        pooled.shape[3] != q.OW)
        bad(fn, "the pooled operand must have shape (N, C, OH, OW).");
    if (b) {
        for (int d = 0; d < 4; ++d)
            if (b->shape[d] != img.shape[d]) bad(fn, "x must have the gradient's shape (N, C, H, W).");
    }
    if (out.size == 0) return;
    if (a.dtype == F32) run_typed<float>(p, q, a, b, out);
    else run_typed<double>(p, q, a, b, out);
}

}  // namespace ndp
