// One-dimensional discrete Fourier transforms along the last axis.
//
// fft(op, x (M, N) C-contiguous, out (M, K) C-contiguous, norm), one template
// over the real type R (float: float32/complex64, double: float64/complex128).
// A power-of-two length runs an iterative radix-2 FFT with exactly rounded
// twiddles; any other length runs Bluestein's chirp-z algorithm on a
// power-of-two FFT of length >= 2n - 1. Every op is a forward complex FFT:
//   the +i exponent (ifft, irfft, ihfft) is conj(FFT(conj(x)));
//   real input (rfft, ihfft) of even length packs pairs into a complex FFT of
//   length n / 2 (odd lengths are widened to complex);
//   real output (irfft, hfft) of even length inverts that packing; odd lengths
//   transform the Hermitian extension of x and keep the real part. Both drop the
//   imaginary parts of x[0] and x[n/2], as NumPy does.
#include <cmath>
#include <memory>
#include <vector>

#include "driver.h"
#include "linalg.h"

namespace ndp {
namespace {

// Complex data as split real and imaginary arrays, so each butterfly stage is
// a unit-stride loop the compiler vectorises.
template <class R> struct FftPlan {
    int64_t n = 0;
    // power of two: stage h (butterflies of span h) uses twiddles [h, 2h) = exp(-i pi j / h).
    std::vector<R> twr, twi;
    std::vector<uint32_t> rev;
    // Bluestein: chirp[k] = exp(-i pi k^2 / n); filt = FFT(conj chirp, wrapped) / m.
    std::unique_ptr<FftPlan> sub;
    std::vector<R> cr, ci, fr, fi;

    explicit FftPlan(int64_t n_) : n(n_) {
        if ((n & (n - 1)) == 0) {
            init_pow2();
            return;
        }
        int64_t m = 1;
        while (m < 2 * n - 1) m <<= 1;
        sub = std::make_unique<FftPlan>(m);
        cr.resize(size_t(n));
        ci.resize(size_t(n));
        for (int64_t k = 0; k < n; ++k) {
            // NOTE: k^2 mod 2n in integers keeps the angle exact for large k.
            const uint64_t q = (uint64_t(k) * uint64_t(k)) % uint64_t(2 * n);
            const double ang = M_PI * double(q) / double(n);
            cr[size_t(k)] = R(std::cos(ang));
            ci[size_t(k)] = R(-std::sin(ang));
        }
        fr.assign(size_t(m), R(0));
        fi.assign(size_t(m), R(0));
        for (int64_t k = 0; k < n; ++k) {  // conj(chirp), wrapped around
            fr[size_t(k)] = cr[size_t(k)];
            fi[size_t(k)] = -ci[size_t(k)];
            if (k) fr[size_t(m - k)] = fr[size_t(k)], fi[size_t(m - k)] = fi[size_t(k)];
        }
        std::vector<R> scratch(size_t(sub->scratch_size()));
        sub->forward(fr.data(), fi.data(), scratch.data());
        const R inv_m = R(1.0 / double(m));
        for (int64_t k = 0; k < m; ++k) fr[size_t(k)] *= inv_m, fi[size_t(k)] *= inv_m;
    }

    void init_pow2() {
        twr.assign(size_t(std::max<int64_t>(n, 1)), R(0));
        twi.assign(size_t(std::max<int64_t>(n, 1)), R(0));
        for (int64_t h = 1; h < n; h <<= 1)
            for (int64_t j = 0; j < h; ++j) {
                const double ang = M_PI * double(j) / double(h);
                twr[size_t(h + j)] = R(std::cos(ang));
                twi[size_t(h + j)] = R(-std::sin(ang));
            }
        rev.resize(size_t(n));
        int bits = 0;
        while ((int64_t(1) << bits) < n) ++bits;
        for (int64_t i = 0; i < n; ++i) {
            uint32_t r = 0;
            for (int b = 0; b < bits; ++b) r |= uint32_t((i >> b) & 1) << (bits - 1 - b);
            rev[size_t(i)] = r;
        }
    }

    // Scratch elements forward() needs besides the data (two arrays of sub->n).
    int64_t scratch_size() const { return sub ? 2 * sub->n + sub->scratch_size() : 0; }

    // In place: (re + i im)[k] = sum_j (re + i im)[j] exp(-2 pi i j k / n).
    void forward(R* re, R* im, R* scratch) const {
        if (sub) return bluestein(re, im, scratch);
        for (int64_t i = 0; i < n; ++i) {
            const int64_t j = rev[size_t(i)];
            if (i < j) std::swap(re[i], re[j]), std::swap(im[i], im[j]);
        }
        for (int64_t i = 0; i + 1 < n; i += 2) {
            const R ar = re[i], ai = im[i], br = re[i + 1], bi = im[i + 1];
            re[i] = ar + br, im[i] = ai + bi, re[i + 1] = ar - br, im[i + 1] = ai - bi;
        }
        for (int64_t i = 0; n >= 4 && i < n; i += 4) {  // span 2: twiddles 1 and -i
            const R ar = re[i], ai = im[i], br = re[i + 2], bi = im[i + 2];
            re[i] = ar + br, im[i] = ai + bi, re[i + 2] = ar - br, im[i + 2] = ai - bi;
            const R cr_ = re[i + 1], ci_ = im[i + 1], dr = im[i + 3], di = -re[i + 3];
            re[i + 1] = cr_ + dr, im[i + 1] = ci_ + di, re[i + 3] = cr_ - dr, im[i + 3] = ci_ - di;
        }
        for (int64_t h = 4; h < n; h <<= 1) {
            const R* __restrict wr = twr.data() + h;
            const R* __restrict wi = twi.data() + h;
            for (int64_t i = 0; i < n; i += 2 * h) {
                R* __restrict xr = re + i;
                R* __restrict xi = im + i;
                R* __restrict yr = re + i + h;
                R* __restrict yi = im + i + h;
                for (int64_t j = 0; j < h; ++j) {
                    const R vr = yr[j] * wr[j] - yi[j] * wi[j], vi = yr[j] * wi[j] + yi[j] * wr[j];
                    const R ur = xr[j], ui = xi[j];
                    xr[j] = ur + vr, xi[j] = ui + vi;
                    yr[j] = ur - vr, yi[j] = ui - vi;
                }
            }
        }
    }

    // X[k] = chirp[k] * sum_j (x[j] chirp[j]) conj(chirp[k - j]): a convolution of length m.
    void bluestein(R* re, R* im, R* scratch) const {
        const int64_t m = sub->n;
        R* sr = scratch;
        R* si = scratch + m;
        for (int64_t k = 0; k < n; ++k) {
            sr[k] = re[k] * cr[size_t(k)] - im[k] * ci[size_t(k)];
            si[k] = re[k] * ci[size_t(k)] + im[k] * cr[size_t(k)];
        }
        std::fill(sr + n, sr + m, R(0));
        std::fill(si + n, si + m, R(0));
        sub->forward(sr, si, scratch + 2 * m);
        for (int64_t k = 0; k < m; ++k) {  // times filt, conjugated for the inverse below
            const R a = sr[k] * fr[size_t(k)] - si[k] * fi[size_t(k)];
            const R b = sr[k] * fi[size_t(k)] + si[k] * fr[size_t(k)];
            sr[k] = a, si[k] = -b;
        }
        sub->forward(sr, si, scratch + 2 * m);  // conj(FFT(conj(.))) is the inverse (1/m is in filt)
        for (int64_t k = 0; k < n; ++k) {
            const R a = sr[k], b = -si[k];
            re[k] = a * cr[size_t(k)] - b * ci[size_t(k)];
            im[k] = a * ci[size_t(k)] + b * cr[size_t(k)];
        }
    }
};

// Real transforms of even length n through a complex FFT of length n / 2:
// z[j] = x[2j] + i x[2j+1]; X[k] = E[k] + w^k O[k] with w = exp(-2 pi i / n),
// E and O the (Hermitian-separable) transforms of the even and odd samples.
template <class R> struct RealPlan {
    int64_t n;
    FftPlan<R> half;
    std::vector<R> wr, wi;  // w^k, k <= n / 2
    explicit RealPlan(int64_t n_) : n(n_), half(n_ / 2) {
        wr.resize(size_t(n / 2 + 1));
        wi.resize(size_t(n / 2 + 1));
        for (int64_t k = 0; k <= n / 2; ++k) {
            const double ang = 2 * M_PI * double(k) / double(n);
            wr[size_t(k)] = R(std::cos(ang));
            wi[size_t(k)] = R(-std::sin(ang));
        }
    }
    // x (n real) -> (xr, xi)[0..n/2] (n/2 + 1 each); zr/zi/scratch: n/2 and half's scratch.
    void r2c(const R* x, R* outr, R* outi, R* zr, R* zi, R* scratch) const {
        const int64_t h = n / 2;
        for (int64_t j = 0; j < h; ++j) zr[j] = x[2 * j], zi[j] = x[2 * j + 1];
        half.forward(zr, zi, scratch);
        for (int64_t k = 0; k <= h; ++k) {
            const int64_t a = k == h ? 0 : k, b = k == 0 ? 0 : h - k;
            const R pr = zr[a], pi = zi[a], qr = zr[b], qi = -zi[b];  // Z[k], conj Z[h - k]
            const R er = R(0.5) * (pr + qr), ei = R(0.5) * (pi + qi);
            const R dr = R(0.5) * (pr - qr), di = R(0.5) * (pi - qi);  // O = d / i = (di, -dr)
            const R orr = di, oi = -dr;
            outr[k] = er + (wr[size_t(k)] * orr - wi[size_t(k)] * oi);
            outi[k] = ei + (wr[size_t(k)] * oi + wi[size_t(k)] * orr);
        }
        outi[0] = R(0), outi[h] = R(0);
    }
    // Hermitian Y[0..n/2] (imaginary parts of Y[0], Y[n/2] ignored) -> sum_k Y[k] w^{jk} (real, n).
    void c2r(const R* yr, const R* yi, R* out, R* zr, R* zi, R* scratch) const {
        const int64_t h = n / 2;
        for (int64_t k = 0; k < h; ++k) {
            // Y[k + h] = conj(Y[h - k]) (Y[h] itself for k = 0).
            const R ar = yr[k], ai = k == 0 ? R(0) : yi[k];
            const R br = yr[h - k], bi = k == 0 ? R(0) : -yi[h - k];
            const R sr = ar + br, si = ai + bi;              // A = Y[k] + Y[k + h]
            const R dr = ar - br, di = ai - bi;              // (Y[k] - Y[k + h]) w^k = B
            const R Br = dr * wr[size_t(k)] - di * wi[size_t(k)], Bi = dr * wi[size_t(k)] + di * wr[size_t(k)];
            zr[k] = sr - Bi, zi[k] = si + Br;                // Z = A + i B
        }
        half.forward(zr, zi, scratch);
        for (int64_t j = 0; j < h; ++j) out[2 * j] = zr[j], out[2 * j + 1] = zi[j];
    }
};

struct OpInfo {
    bool complex_in, complex_out, inverse;  // inverse: +i exponent and 1/n under "backward"
};
constexpr OpInfo OPS[NFFT] = {
    {true, true, false},  {true, true, true},   // fft, ifft
    {false, true, false}, {true, false, true},  // rfft, irfft
    {true, false, false}, {false, true, true},  // hfft, ihfft
};
const char* const FFT_NAMES[NFFT] = {"fft", "ifft", "rfft", "irfft", "hfft", "ihfft"};

template <class R> void transform(int op, const View& x, const View& out, int norm) {
    const OpInfo info = OPS[op];
    const int64_t M = x.shape[0], N = x.shape[1], K = out.shape[1];
    const int64_t n = info.complex_out ? N : K;
    const double scale_d = norm == N_ORTHO ? 1.0 / std::sqrt(double(n))
                           : (norm == N_FORWARD) != info.inverse ? 1.0 / double(n) : 1.0;
    const R scale = R(scale_d);
    // NOTE: the + exponent is conj(FFT(conj x)): conj_in flips x's imaginary parts on the
    // way in (ifft, irfft), conj_out the result's on the way out (ifft, ihfft).
    const R sin_ = info.complex_in && info.inverse ? R(-1) : R(1);
    const R sout = info.complex_out && info.inverse ? R(-1) : R(1);
    const bool real_path = (!info.complex_in || !info.complex_out) && n % 2 == 0 && n >= 2;
    std::unique_ptr<FftPlan<R>> plan;
    std::unique_ptr<RealPlan<R>> rplan;
    if (real_path) rplan = std::make_unique<RealPlan<R>>(n);
    else plan = std::make_unique<FftPlan<R>>(n);
    const int64_t scratch = real_path ? rplan->half.scratch_size() : plan->scratch_size();
    const int64_t grain = std::max<int64_t>(1, GRAIN / (4 * n));
    parallel_range(M, grain, [&](int64_t b, int64_t e) {
        std::vector<R> buf(size_t(4 * n + 4 + scratch));
        R* re = buf.data();
        R* im = re + n + 1;
        R* zr = im + n + 1;
        R* zi = zr + n / 2 + 1;
        R* s = zi + n / 2 + 1;
        for (int64_t row = b; row < e; ++row) {
            if (info.complex_in) {  // split x, conjugated for the + exponent
                const R* xc = reinterpret_cast<const R*>(x.data) + 2 * row * N;
                for (int64_t k = 0; k < N; ++k) re[k] = xc[2 * k], im[k] = sin_ * xc[2 * k + 1];
            }
            if (!info.complex_out) {  // Hermitian x (N = n / 2 + 1) -> n real
                R* o = reinterpret_cast<R*>(out.data) + row * K;
                if (real_path) {
                    rplan->c2r(re, im, o, zr, zi, s);
                } else {
                    for (int64_t k = N; k < n; ++k) re[k] = re[n - k], im[k] = -im[n - k];
                    plan->forward(re, im, s);
                    std::copy(re, re + n, o);
                }
                for (int64_t k = 0; k < K; ++k) o[k] *= scale;
                continue;
            }
            if (!info.complex_in) {  // n real -> n / 2 + 1 complex
                const R* xr = reinterpret_cast<const R*>(x.data) + row * N;
                if (real_path) {
                    rplan->r2c(xr, re, im, zr, zi, s);
                } else {
                    std::copy(xr, xr + n, re);
                    std::fill(im, im + n, R(0));
                    plan->forward(re, im, s);
                    im[0] = R(0);  // real input: DC is real, exactly
                }
            } else {
                plan->forward(re, im, s);
            }
            R* o = reinterpret_cast<R*>(out.data) + 2 * row * K;
            for (int64_t k = 0; k < K; ++k) o[2 * k] = re[k] * scale, o[2 * k + 1] = sout * im[k] * scale;
        }
    });
}

}  // namespace

void run_fft(int op, const View& x, const View& out, int norm) {
    if (op < 0 || op >= NFFT) throw std::invalid_argument("fft: unknown op.");
    if (norm < N_BACKWARD || norm > N_FORWARD) throw std::invalid_argument("fft: unknown norm.");
    const std::string name = std::string("fft.") + FFT_NAMES[op];
    if (x.ndim != 2 || out.ndim != 2 || !is_c_contiguous(x) || !is_c_contiguous(out))
        throw std::invalid_argument(name + ": expected C-contiguous x (M, N) and out (M, K).");
    const OpInfo info = OPS[op];
    const bool single = x.dtype == F32 || x.dtype == C64;
    if (x.dtype != (info.complex_in ? (single ? C64 : C128) : (single ? F32 : F64)) ||
        (x.dtype != F32 && x.dtype != F64 && x.dtype != C64 && x.dtype != C128))
        throw type_error(name + ": x must be " + (info.complex_in ? "complex64 or complex128" : "float32 or float64") +
                         "; got " + DT_NAME[x.dtype] + ".");
    const int want = info.complex_out ? (single ? C64 : C128) : (single ? F32 : F64);
    if (out.dtype != want)
        throw type_error(name + ": out must be " + DT_NAME[want] + " for x of " + DT_NAME[x.dtype] + "; got " +
                         DT_NAME[out.dtype] + ".");
    const int64_t M = x.shape[0], N = x.shape[1], K = out.shape[1];
    const bool ok = out.shape[0] == M && (op == F_FFT || op == F_IFFT ? K == N
                                          : info.complex_out         ? K == N / 2 + 1
                                                                     : N == K / 2 + 1);
    if (!ok)
        throw std::invalid_argument(name + ": x (" + std::to_string(M) + ", " + std::to_string(N) + ") and out (" +
                                    std::to_string(out.shape[0]) + ", " + std::to_string(K) +
                                    ") do not match the transform's shapes.");
    if (M == 0 || N == 0 || K == 0) return;
    if ((info.complex_out ? N : K) > (int64_t(1) << 30))
        throw std::invalid_argument(name + ": transform lengths above 2**30 are not supported.");
    if (single) transform<float>(op, x, out, norm);
    else transform<double>(op, x, out, norm);
}

}  // namespace ndp
