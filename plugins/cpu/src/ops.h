// Scalar semantics of every unary and binary op, matching NumPy's loops.
//
// Each op is a struct with `template <class T> static constexpr bool ok`
// (the dtypes it accepts) and `static auto f(...)` written for bool, the
// integers, float, double and std::complex. float16 never reaches `f`: the
// kernels compute it in float and round back (as NumPy does), except for ops
// that declare `half_native` (nextafter works on the float16 bit pattern).
#pragma once

#include <bit>
#include <type_traits>

#include "common.h"
#include "vmath.h"

namespace ndp::ops {

// X-macros: names in the order of the op tables; the Python names are the
// Array API names.
#define NDP_UNARY_OPS(X)                                                                     \
    X(abs) X(acos) X(acosh) X(asin) X(asinh) X(atan) X(atanh) X(bitwise_invert) X(ceil)      \
    X(conj) X(cos) X(cosh) X(erf) X(exp) X(expm1) X(floor) X(gelu) X(imag) X(isfinite)      \
    X(isinf) X(isnan) X(log) X(log1p) X(log2) X(log10) X(logical_not) X(negative) X(real)     \
    X(reciprocal) X(round) X(sigmoid) X(sign) X(signbit) X(silu) X(sin) X(sinh) X(sqrt)       \
    X(square) X(tan) X(tanh) X(trunc)

#define NDP_BINARY_OPS(X)                                                                    \
    X(add) X(atan2) X(bce_with_logits) X(bitwise_and) X(bitwise_left_shift) X(bitwise_or) X(bitwise_right_shift) \
    X(bitwise_xor) X(copysign) X(divide) X(equal) X(floor_divide) X(greater) X(greater_equal) \
    X(hypot) X(less) X(less_equal) X(logaddexp) X(logaddexp2) X(logical_and) X(logical_or)     \
    X(logical_xor) X(maximum) X(minimum) X(multiply) X(nextafter) X(not_equal) X(pow)         \
    X(remainder) X(subtract)

enum Unary : int {
#define X(n) u_##n,
    NDP_UNARY_OPS(X)
#undef X
    NUNARY
};
enum Binary : int {
#define X(n) b_##n,
    NDP_BINARY_OPS(X)
#undef X
    NBINARY
};

// dtype categories
template <class T> inline constexpr bool B = is_bool_v<T>;
template <class T> inline constexpr bool I = is_int_v<T>;
template <class T> inline constexpr bool F = is_float_v<T>;
template <class T> inline constexpr bool C = is_complex_v<T>;
template <class T> inline constexpr bool ANY = true;

// ---------------------------------------------------------------------------
// complex helpers written as NumPy writes them (npymath / loops)
// ---------------------------------------------------------------------------
template <class R> inline std::complex<R> cmul(std::complex<R> a, std::complex<R> b) {
    return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}
template <class R> inline std::complex<R> cdiv(std::complex<R> a, std::complex<R> b) {
    R ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
    R abr = std::fabs(br), abi = std::fabs(bi);
    if (abr >= abi) {
        if (abr == 0 && abi == 0) return {ar / abr, ai / abr};
        R rat = bi / br, scl = R(1) / (br + bi * rat);
        return {(ar + ai * rat) * scl, (ai - ar * rat) * scl};
    }
    R rat = br / bi, scl = R(1) / (bi + br * rat);
    return {(ar * rat + ai) * scl, (ai * rat - ar) * scl};
}
// Lexicographic order with NaN handling, as NumPy's complex comparisons.
template <class R> inline bool clt(std::complex<R> a, std::complex<R> b) {
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
}
template <class R> inline bool cle(std::complex<R> a, std::complex<R> b) {
    return a.real() < b.real() || (a.real() == b.real() && a.imag() <= b.imag());
}
template <class R> inline std::complex<R> cpow(std::complex<R> a, std::complex<R> b) {
    using Cx = std::complex<R>;
    R br = b.real(), bi = b.imag();
    if (br == 0 && bi == 0) return Cx(1, 0);
    if (a.real() == 0 && a.imag() == 0) {
        if (br > 0) return Cx(0, 0);  // NumPy 2: any exponent with positive real part
        R nan = std::numeric_limits<R>::quiet_NaN();
        return Cx(nan, nan);
    }
    if (bi == 0 && br >= -100 && br <= 100 && br == std::trunc(br)) {
        int n = static_cast<int>(br);
        if (n == 1) return a;
        if (n == 2) return cmul(a, a);
        if (n == 3) return cmul(cmul(a, a), a);
        int mask = 1, m = n < 0 ? -n : n;
        Cx aa(1, 0), p = a;
        for (;;) {
            if (m & mask) aa = cmul(aa, p);
            mask <<= 1;
            if (m < mask || mask <= 0) break;
            p = cmul(p, p);
        }
        return n < 0 ? cdiv(Cx(1, 0), aa) : aa;
    }
    return vm::pow(a, b);
}

// pow of a real base as pow(|a|, b) with the signs of C99 Annex F: a negative finite base
// gives NaN unless b is an integer, and minus pow(|a|, b) when b is odd (-0 and -inf too).
// NOTE: libmvec's vector pow hands every vector holding a negative base to the scalar pow,
// lane by lane (x ** 2 of normal data: 17 ns an element, NumPy's square 0.2). No early
// return, no fmod, no signbit, so the loop stays vectorised: an integral b is odd when b / 2
// is not integral (every float from 2^53, or 2^24, up to inf is even, and so is its half).
template <class R> inline R pow_signs(R a, R b, R p) {  // p = pow(|a|, b)
    const R half = b * R(0.5);
    const bool integral = b == std::trunc(b);
    const bool odd = integral && half != std::trunc(half);
    const bool domain = a < 0 && a > -std::numeric_limits<R>::infinity() && !integral;
    const R r = odd ? std::copysign(p, a) : p;  // NOTE: signbit(a) ? -p : p stayed scalar (GCC 12)
    return domain ? std::numeric_limits<R>::quiet_NaN() : r;
}
template <class R> inline R pow_real(R a, R b) { return pow_signs(a, b, vm::pow(std::fabs(a), b)); }

#if defined(__FMA__)
// pow(x, y) of float32 for x positive and normal and |y| < 2^40 (else powf_core_refuses), as 2^t with
// t = y log2(x) in float64: within 0.56 ulp, 1.1 ns an element with AVX-512 on one thread
// (libmvec's powf: 0.62 ulp measured, 1.9 ns; elementwise.cc's powf_run calls this). x = 2^k m, m in
// [sqrt(1/2), sqrt(2)), log2(m) = s Q(s^2) with s = (m - 1) / (m + 1): the division in float32
// (16 lanes a vector) and one correction step in float64 (s within 2^-47), no table and no
// float64 division; t = n + f with |f| <= 1/2, 2^f = 1 + f R(f), 2^n added to the exponent
// bits. Q and R are tools/fit_powf.py's (log2(m) within 2^-37.8, 2^f within 2^-28.8). No
// branch, so GCC vectorises it: |t| < 2^51 (|y| < 2^40) keeps n exact in the 2^52 shift, and n
// is clamped to [-300, 300], where the float32 result is already 0 or inf.
inline float powf_core(float x, float y) {
    const uint32_t ix = std::bit_cast<uint32_t>(x);
    const int32_t k = int32_t(ix - 0x3f3504f3u) >> 23;  // 0x3f3504f3: sqrt(1/2) rounded
    const float m = std::bit_cast<float>(ix - (uint32_t(k) << 23));
    const float rf = 1.0f / (m + 1.0f);
    const double md = m, num = md - 1.0, den = md + 1.0, r = rf;  // num and den exact
    const double s0 = num * r;
    const double s = std::fma(std::fma(-s0, den, num), r, s0);
    const double z = s * s;
    double q = 0x1.5ce4e42c9f105p-2;
    q = std::fma(q, z, 0x1.a58dbcac33cd6p-2);
    q = std::fma(q, z, 0x1.27777f6e27386p-1);
    q = std::fma(q, z, 0x1.ec709d138845ep-1);
    q = std::fma(q, z, 0x1.71547652bed48p+1);
    const double t = double(y) * std::fma(s, q, double(k));
    constexpr double shift = 0x1.8p52;  // t + shift rounds t to an integer n in its low bits
    const double kd = t + shift;
    const double f = t - (kd - shift);
    int64_t n = int64_t(std::bit_cast<uint64_t>(kd) - std::bit_cast<uint64_t>(shift));
    n = n < 300 ? n : 300;
    n = n > -300 ? n : -300;
    double p = 0x1.425874b5382b8p-13;
    p = std::fma(p, f, 0x1.5f4498da9c689p-10);
    p = std::fma(p, f, 0x1.3b2cc3977aedcp-7);
    p = std::fma(p, f, 0x1.c6aed6d48f6dap-5);
    p = std::fma(p, f, 0x1.ebfbdcf8d12d1p-3);
    p = std::fma(p, f, 0x1.62e430c5aaa1bp-1);
    p = std::fma(p, f, 1.0);
    return float(std::bit_cast<double>(std::bit_cast<uint64_t>(p) + (uint64_t(n) << 52)));
}
// Whether powf_core cannot take (x, y), from the bits, for either sign of x: |x| not normal or
// finite (0, subnormal, inf, NaN), |y| >= 2^40 or NaN. An unsigned int, so that a loop ORs it
// into one word and GCC vectorises the loop.
inline uint32_t powf_core_refuses(float x, float y) {
    const uint32_t ax = std::bit_cast<uint32_t>(x) & 0x7fffffffu, ay = std::bit_cast<uint32_t>(y) & 0x7fffffffu;
    return uint32_t(ax - 0x00800000u >= 0x7f000000u) | uint32_t(ay >= 0x53800000u);  // 2^-126, 2^40
}
#endif

// pow by a Python scalar b of 2, 0.5 or 3: loops of their own in elementwise.cc, as NumPy's
// and PyTorch's x ** 2 and x ** 0.5. a * a is the correctly rounded square (with pow's special
// values); sqrt the correctly rounded root, with pow's +0 for -0 (-0 + 0 = +0) and +inf for
// -inf; the cube (GELU's, a skewness's) is a * a carried in two parts, s + e = a * a exactly,
// then one rounding of s * a + e * a: within 1 ulp of the exact cube, most often exact
// (PyTorch rounds twice; libm's pow of an integral exponent took 10-15 ns an element).
// Elsewhere (an exponent array, strided operands) pow_real serves, within its ulp bound.
template <class R> inline R pow_square(R a) { return a * a; }
template <class R> inline R pow_root(R a) {
    return a == -std::numeric_limits<R>::infinity() ? std::numeric_limits<R>::infinity() : std::sqrt(a) + R(0);
}
template <class R> inline R pow_cube(R a) {
    const R s = a * a;
    const R c = std::fma(s, a, std::fma(a, a, -s) * a);
    return std::isfinite(s) ? c : s * a;
}

// NumPy's npy_divmod for floats, from fm = fmod(a, b) and b != 0: returns the floor
// quotient, sets `mod`. NOTE: selects and `&` only (no branch, no short circuit): a loop of
// it vectorises (elementwise.cc, divmod_run: remainder and floor_divide).
template <class R> inline R fdivmod_of(R a, R b, R fm, R& mod) {
    const bool adj = (fm != R(0)) & ((b < R(0)) != (fm < R(0)));  // NaN fm: as npy_divmod
    const R div = adj ? (a - fm) / b - R(1) : (a - fm) / b;
    mod = fm == R(0) ? std::copysign(R(0), b) : adj ? fm + b : fm;
    const R fl = std::floor(div);
    const R rounded = div - fl > R(0.5) ? fl + R(1) : fl;
    return div == R(0) ? std::copysign(R(0), a / b) : rounded;
}
template <class R> inline R fdivmod(R a, R b, R& mod) {
    const R fm = std::fmod(a, b);
    if (!b) {
        mod = fm;
        return a / b;
    }
    return fdivmod_of(a, b, fm, mod);
}

// fmod(a, b) without libm, where it can be had exactly: with q = trunc(a / b), a - q * b in
// one fused multiply-add is exact whenever q is the true quotient (the remainder is
// representable). A wrong q (a rounded quotient next to an integer, or past 2^53) leaves a
// result of the wrong sign or not below |b|, and NaN, infinities and b == 0 give NaN:
// fmod_inexact says so, and the caller takes libm's fmod there. Only where the FMA is an
// instruction (x86-64-v3 and up): elsewhere std::fma is a slow software call.
template <class R> inline R fmod_fast(R a, R b) {
    const R r = std::fma(-std::trunc(a / b), b, a);
    return r == R(0) ? std::copysign(R(0), a) : r;
}
template <class R> inline bool fmod_inexact(R a, R b, R fm) {
    return !(std::fabs(fm) < std::fabs(b)) | ((fm != R(0)) & ((fm < R(0)) != (a < R(0))));
}

// ---------------------------------------------------------------------------
// unary ops
// ---------------------------------------------------------------------------
#define NDP_OP(name, cond) \
    struct name {          \
        template <class T> static constexpr bool ok = cond;
#define NDP_END };

NDP_OP(abs, ANY<T>)
template <class T> static auto f(T x) {
    if constexpr (C<T>) return vm::hypot(x.real(), x.imag());
    else if constexpr (B<T> || std::is_unsigned_v<T>) return x;
    else if constexpr (I<T>) return x < 0 ? wrap_sub(T(0), x) : x;
    else return std::fabs(x);
}
NDP_END

#define NDP_MATH(name, expr)                    \
    NDP_OP(name, F<T> || C<T>)                  \
    template <class T> static T f(T x) { return expr; } \
    NDP_END
NDP_MATH(acos, vm::acos(x))
NDP_MATH(acosh, vm::acosh(x))
NDP_MATH(asin, vm::asin(x))
NDP_MATH(asinh, vm::asinh(x))
NDP_MATH(atan, vm::atan(x))
NDP_MATH(atanh, vm::atanh(x))
NDP_MATH(cos, vm::cos(x))
NDP_MATH(cosh, vm::cosh(x))
NDP_MATH(exp, vm::exp(x))
NDP_MATH(log, vm::log(x))
NDP_MATH(sin, vm::sin(x))
NDP_MATH(sinh, vm::sinh(x))
NDP_MATH(sqrt, std::sqrt(x))
NDP_MATH(tan, vm::tan(x))
NDP_MATH(tanh, vm::tanh(x))
#undef NDP_MATH

NDP_OP(expm1, F<T> || C<T>)
template <class T> static T f(T x) {
    if constexpr (C<T>) {
        auto a = vm::sin(x.imag() / 2);
        return T(vm::expm1(x.real()) * vm::cos(x.imag()) - 2 * a * a,
                 vm::exp(x.real()) * vm::sin(x.imag()));
    } else {
        return vm::expm1(x);
    }
}
NDP_END

// 1 / (1 + exp(-x)) for x >= 0, e / (1 + e) with e = exp(x) below: both are e = exp(-|x|)
// (never overflows), so the loop calls one vector exp and one divide per element, the
// numerator selected branch-free.
// NaN fails x >= 0 and gives NaN / NaN; -0 gives 1 / 2; +-inf give 1 and 0.
NDP_OP(sigmoid, F<T>)
template <class T> static T f(T x) {
    const T e = vm::exp(-std::fabs(x));
    return (x >= T(0) ? T(1) : e) / (T(1) + e);
}
NDP_END

// x * sigmoid(x) as x / (1 + exp(-x)): the exp's error (libmvec's expf: up to 2.6 ulp) and two
// roundings, 3.9 ulp at worst over every float32 input (x * e / (1 + e) of e = exp(-|x|), the
// rounded sigmoid's formula, reached 4.9). Far left exp(-x) overflows (from -88.7 in float32)
// while the result is still normal (to -91.6, subnormal to -104): below x = -K / 2 the kernel
// takes x * exp(x + K) * e^-K instead (1 / (1 + exp(x)) is 1 there to 2^-40 in float32, 2^-62
// in float64; the sum is exact, and e^-K within 0.05 ulp of its dtype's rounding), so the left
// tail keeps its relative accuracy. The exp's argument is min(-x, x + K), which is x + K exactly
// where x < -K / 2: one exp call per vector (a select on x < -K / 2 before the exp and another
// after it, GCC threads into two vector exp calls). x = -inf gives -inf * 0 = NaN, as
// x * sigmoid(x) does; +inf gives inf.
template <class T> struct SiluShift;  // K and e^-K
template <> struct SiluShift<float> {
    static constexpr float k = 61, scale = 3.22134028599251608900124777585E-27f;
};
template <> struct SiluShift<double> {
    static constexpr double k = 86, scale = 4.47377930618112073462765583917E-38;
};
NDP_OP(silu, F<T>)
template <class T> static T f(T x) {
    using S = SiluShift<T>;
    const T a = -x, b = x + S::k;
    const T e = vm::exp(b < a ? b : a);
    return x < -S::k / 2 ? x * e * S::scale : x / (T(1) + e);
}
NDP_END

NDP_OP(erf, F<T>)
template <class T> static T f(T x) { return vm::erf(x); }
NDP_END

// x * c - p exactly, for p = x * c rounded: one FMA, else Dekker's product of Veltkamp's halves
// (overflows to NaN past 2^115 in float32 or 2^996 in float64; callers select it away there).
template <class T> inline T product_error(T x, T c, T p) {
#if defined(__FMA__)
    return std::fma(x, c, -p);
#else
    constexpr T split = std::is_same_v<T, float> ? T(4097) : T(134217729);
    const T tx = x * split, xh = tx - (tx - x), xl = x - xh;
    const T tc = c * split, ch = tc - (tc - c), cl = c - ch;
    return ((xh * ch - p) + xh * cl + xl * ch) + xl * cl;
#endif
}

#if defined(__FMA__)
// erfc(z) in float32 for gelu, with D = -erfc'(z) / erfc(z) for the correction of its argument.
// libmvec's erfcf costs three of its expf (0.69 against 0.22 ns an element with AVX-512); this
// costs about one: erfc(a) = exp(-a^2) t S(u) for a = |z|, t = 1 / (1 + a), u = ALPHA t + BETA,
// S a polynomial of degree 12 that tools/fit_erfc.py fits and prints (t S within 3.7 x 2^-24 of
// erfc(a) exp(a^2) in float32 arithmetic); exp(-a^2) with a^2's rounding (FMA) folded into
// the reduced argument r, e^r by Taylor's degree 7 on |r| <= ln 2 / 2, and 2^k as two powers
// of two, the second applied by the caller after its own factors, so that a subnormal result
// rounds once; erfc(-a) = 2 - erfc(a).
struct ErfcF32 {
    float erfc, scale, d;  // erfc(z) = erfc * scale: a power of two the caller applies last
};
inline ErfcF32 erfc_f32(float z) {
    constexpr float ALPHA = 2.1980198f, BETA = -1.1980198f;
    // S's coefficients, u^0 first (tools/fit_erfc.py --k 1.0 --degree 12)
    constexpr float S0 = 0.875795732f, S1 = 0.200358471f, S2 = -0.0812612069f, S3 = -0.00417445751f,
                    S4 = 0.0144121069f, S5 = -0.00603960489f, S6 = 0.000356562232f, S7 = 0.00114284078f,
                    S8 = -0.000879359926f, S9 = 0.000300147654f, S10 = 7.10374182e-05f,
                    S11 = -0.000114602594f, S12 = 3.23332261e-05f;
    const float a0 = std::fabs(z);
    const bool tail = !(a0 < 10.5f);  // erfc is 0 (or 2) in float32 past 10.06; NaN here too
    const float a = tail ? 10.5f : a0;  // keeps 2^k normal
    const float p = a * a;
    const float pl = std::fma(a, a, -p);                          // a^2 = p + pl exactly
    const float kf = (p * -1.44269504f + 12582912.f) - 12582912.f;  // round(-p / ln 2)
    float r = std::fma(kf, -0.693147182f, -p);                    // exact (|r| < 1, both on 2^-24)
    r = std::fma(kf, 1.90465421e-09f, r) - pl;                    // ln 2's float rounding, then pl
    float e = std::fma(std::fma(std::fma(1.f / 5040, r, 1.f / 720), r, 1.f / 120), r, 1.f / 24);
    e = std::fma(std::fma(std::fma(std::fma(e, r, 1.f / 6), r, 0.5f), r, 1.f), r, 1.f);
    const int k = static_cast<int>(kf), k1 = k >> 1, k2 = k - k1;
    e = e * std::bit_cast<float>((k1 + 127) << 23);  // times `scale` = 2^k2 (k1, k2 >= -80)
    const float scale = tail ? 0.f : std::bit_cast<float>((k2 + 127) << 23);
    const float t = 1.f / (1.f + a);
    const float u = std::fma(t, ALPHA, BETA);
    float s = std::fma(std::fma(std::fma(std::fma(S12, u, S11), u, S10), u, S9), u, S8);
    s = std::fma(std::fma(std::fma(std::fma(s, u, S7), u, S6), u, S5), u, S4);
    s = std::fma(std::fma(std::fma(std::fma(s, u, S3), u, S2), u, S1), u, S0);
    const float pos = e * (t * s);
    const bool right = z >= 0.f;
    const float erfc = right ? pos : 2.f - pos * scale;
    // D = 2 / sqrt(pi) exp(-z^2) / erfc(z), for a correction of the order of z^2 ulp: 6 %
    // is enough, with no division: 2a + t (1 + 0.128 t) on the right (2a + 1 / a at large a,
    // 2 / sqrt(pi) at 0), 1 / sqrt(pi) exp(-z^2) (1 + 2 - erfc) on the left (to 12 %).
    const float d = right ? std::fma(t, std::fma(0.128379167f, t, 1.f), 2.f * a)
                          : 0.564189584f * e * scale * (3.f - erfc);
    return {erfc, right ? scale : 1.f, d};
}
#endif

// x * Phi(x) with Phi(x) = erfc(z) / 2, z = -x / sqrt 2: erfc keeps its relative accuracy in
// the left tail, where 1 + erf(x / sqrt 2) (PyTorch's formula) cancels to 0 from x = -8.3
// (float64) or -5.5 (float32) while the true value is still a normal number. z is not exact:
// its rounding zl (the product's, product_error, and the constant's) changes erfc by a factor
// 1 - D(z) zl, D = -erfc' / erfc, which grows like 2z -- up to 180 ulp in float32 at x = -13
// without it. float32 takes erfc_f32 and its D; float64 libmvec's erfc with D from the bound
// erfc(z) exp(z^2) <= 2 / (sqrt pi (z + sqrt(z^2 + 4 / pi))) on the right (exact at 0, 2z +
// 0.64 / z against 2z + 1 / z at large z), and no factor on the left, where D zl is below
// 0.5 ulp (D < 1.13 exp(-z^2)). No factor where erfc is 0 or 2 (at +-inf and NaN zl is NaN).
NDP_OP(gelu, F<T>)
template <class T> static T f(T x) {
    constexpr T c = T(-0.70710678118654752440L);
    constexpr T c_lo = T(-0.70710678118654752440L - static_cast<long double>(c));
    const T z = x * c;
    const T zl = product_error(x, c, z) + x * c_lo;
#if defined(__FMA__)
    if constexpr (std::is_same_v<T, float>) {
        const ErfcF32 e = erfc_f32(z);
        // erfc is 0 or 2 past 16; the scale last, so a subnormal result rounds once
        return x * 0.5f * e.erfc * (std::fabs(z) < 16.f ? 1.f - e.d * zl : 1.f) * e.scale;
    }
#endif
    const T zc = z < T(30) ? z : T(30);  // erfc is 0 past 27
    const T d = zc + std::sqrt(zc * zc + T(1.27323954473516268615L));
    const T fix = (z > T(0)) & (z < T(30)) ? T(1) - d * zl : T(1);
    return x * T(0.5) * vm::erfc(z) * fix;
}
NDP_END

NDP_OP(log1p, F<T> || C<T>)
template <class T> static T f(T x) {
    if constexpr (C<T>) {
        auto l = vm::hypot(x.real() + 1, x.imag());
        return T(vm::log(l), vm::atan2(x.imag(), x.real() + 1));
    } else {
        return vm::log1p(x);
    }
}
NDP_END

NDP_OP(log2, F<T> || C<T>)
template <class T> static T f(T x) {
    if constexpr (C<T>) {
        using R = real_t<T>;
        T r = vm::log(x);
        return T(r.real() * R(1.442695040888963407359924681001892137),
                 r.imag() * R(1.442695040888963407359924681001892137));
    } else {
        return vm::log2(x);
    }
}
NDP_END

NDP_OP(log10, F<T> || C<T>)
template <class T> static T f(T x) {
    if constexpr (C<T>) {
        using R = real_t<T>;
        T r = vm::log(x);
        return T(r.real() * R(0.434294481903251827651128918916605082),
                 r.imag() * R(0.434294481903251827651128918916605082));
    } else {
        return vm::log10(x);
    }
}
NDP_END

NDP_OP(bitwise_invert, B<T> || I<T>)
template <class T> static T f(T x) {
    if constexpr (B<T>) return !x;
    else return static_cast<T>(~x);
}
NDP_END

#define NDP_ROUNDING(name, fn)                                \
    NDP_OP(name, I<T> || F<T>)                                \
    template <class T> static T f(T x) {                      \
        if constexpr (I<T>) return x;                         \
        else return std::fn(x);                               \
    }                                                         \
    NDP_END
NDP_ROUNDING(ceil, ceil)
NDP_ROUNDING(floor, floor)
NDP_ROUNDING(trunc, trunc)
#undef NDP_ROUNDING

NDP_OP(round, I<T> || F<T> || C<T>)
template <class T> static T f(T x) {
    if constexpr (I<T>) return x;
    else if constexpr (C<T>) return T(std::nearbyint(x.real()), std::nearbyint(x.imag()));
    else return std::nearbyint(x);  // half to even, like np.round
}
NDP_END

NDP_OP(conj, ANY<T>)
template <class T> static T f(T x) {
    if constexpr (C<T>) return T(x.real(), -x.imag());
    else return x;
}
NDP_END

NDP_OP(real, ANY<T>)
template <class T> static auto f(T x) {
    if constexpr (C<T>) return x.real();
    else return x;
}
NDP_END

NDP_OP(imag, ANY<T>)
template <class T> static auto f(T x) {
    if constexpr (C<T>) return x.imag();
    else return T(0);
}
NDP_END

NDP_OP(isfinite, ANY<T>)
template <class T> static bool f(T x) {
    if constexpr (C<T>) return std::isfinite(x.real()) && std::isfinite(x.imag());
    else if constexpr (F<T>) return std::isfinite(x);
    else return true;
}
NDP_END

NDP_OP(isinf, ANY<T>)
template <class T> static bool f(T x) {
    if constexpr (C<T>) return std::isinf(x.real()) || std::isinf(x.imag());
    else if constexpr (F<T>) return std::isinf(x);
    else return false;
}
NDP_END

NDP_OP(isnan, ANY<T>)
template <class T> static bool f(T x) { return is_nan(x); }
NDP_END

NDP_OP(logical_not, ANY<T>)
template <class T> static bool f(T x) { return !truthy(x); }
NDP_END

NDP_OP(negative, I<T> || F<T> || C<T>)
template <class T> static T f(T x) {
    if constexpr (I<T>) return wrap_sub(T(0), x);
    else return -x;
}
NDP_END

NDP_OP(reciprocal, F<T> || C<T>)
template <class T> static T f(T x) {
    if constexpr (C<T>) return cdiv(T(1, 0), x);  // the reference divides 1 by x
    else return T(1) / x;
}
NDP_END

NDP_OP(sign, I<T> || F<T> || C<T>)
template <class T> static T f(T x) {
    if constexpr (C<T>) {
        auto mag = vm::hypot(x.real(), x.imag());
        return cdiv(x, T(mag == 0 ? 1 : mag, 0));
    } else if constexpr (std::is_unsigned_v<T>) {
        return x > 0 ? 1 : 0;
    } else if constexpr (I<T>) {
        return static_cast<T>((x > 0) - (x < 0));
    } else {
        return x > 0 ? T(1) : (x < 0 ? T(-1) : (x == 0 ? T(0) : x));
    }
}
NDP_END

NDP_OP(signbit, I<T> || F<T>)
template <class T> static bool f(T x) {
    // NOTE: std::signbit of a double stayed scalar (GCC 12), 4x NumPy's time; its top bit does not.
    if constexpr (F<T> && sizeof(T) == 8) return (std::bit_cast<uint64_t>(x) >> 63) != 0;
    else if constexpr (F<T>) return std::signbit(x);
    else if constexpr (std::is_signed_v<T>) return x < 0;
    else return false;
}
NDP_END

NDP_OP(square, I<T> || F<T> || C<T>)
template <class T> static T f(T x) {
    if constexpr (I<T>) return wrap_mul(x, x);
    else if constexpr (C<T>) return cmul(x, x);
    else return x * x;
}
NDP_END

// ---------------------------------------------------------------------------
// binary ops
// ---------------------------------------------------------------------------
NDP_OP(add, ANY<T>)
template <class T> static T f(T a, T b) {
    if constexpr (B<T>) return a | b;
    else if constexpr (I<T>) return wrap_add(a, b);
    else return a + b;
}
NDP_END

NDP_OP(subtract, I<T> || F<T> || C<T>)
template <class T> static T f(T a, T b) {
    if constexpr (I<T>) return wrap_sub(a, b);
    else return a - b;
}
NDP_END

NDP_OP(multiply, ANY<T>)
template <class T> static T f(T a, T b) {
    if constexpr (B<T>) return a & b;
    else if constexpr (I<T>) return wrap_mul(a, b);
    else if constexpr (C<T>) return cmul(a, b);
    else return a * b;
}
NDP_END

NDP_OP(divide, F<T> || C<T>)
template <class T> static T f(T a, T b) {
    if constexpr (C<T>) return cdiv(a, b);
    else return a / b;
}
NDP_END

NDP_OP(atan2, F<T>)
template <class T> static T f(T a, T b) { return vm::atan2(a, b); }
NDP_END
NDP_OP(copysign, F<T>)
template <class T> static T f(T a, T b) { return std::copysign(a, b); }
NDP_END
NDP_OP(hypot, F<T>)
template <class T> static T f(T a, T b) { return vm::hypot(a, b); }
NDP_END

// max(a, b) + log1p(exp(-|a - b|)), branch-free so the loop calls one vector exp and
// one vector log1p per element (with a branch per sign of a - b, GCC computed both sides).
// A NaN operand makes -|a - b| NaN; a == b (equal infinities too) is max + log(2).
NDP_OP(logaddexp, F<T>)
template <class T> static T f(T a, T b) {
    const T m = a > b ? a : b, d = a > b ? b - a : a - b;
    const T r = m + vm::log1p(vm::exp(d));
    return a == b ? a + T(0.693147180559945309417232121458176568) : r;
}
NDP_END

NDP_OP(logaddexp2, F<T>)
template <class T> static T f(T a, T b) {
    const T inv_ln2 = T(1.442695040888963407359924681001892137);
    const T m = a > b ? a : b, d = a > b ? b - a : a - b;
    const T r = m + vm::log1p(vm::exp2(d)) * inv_ln2;
    return a == b ? a + T(1) : r;
}
NDP_END

// Binary cross entropy of target t given logit x: (1 - t) x + log1p(exp(-x)) for x >= 0 and
// -t x + log1p(exp(x)) below, so that for t in [0, 1] no two terms cancel (max(x, 0) - x t
// loses x's ulp where t nears 1; 1 - t is exact there). Branch-free: one vector exp and one
// vector log1p per element. NaN propagates; x = +-inf with t = 1 or 0 gives 0 * inf = NaN, as
// the formula does.
NDP_OP(bce_with_logits, F<T>)
template <class T> static T f(T x, T t) {
    const T c = x >= T(0) ? T(1) - t : -t;
    return c * x + vm::log1p(vm::exp(-std::fabs(x)));
}
NDP_END

NDP_OP(nextafter, F<T>)
static constexpr bool half_native = true;
template <class T> static T f(T a, T b) {
    if constexpr (is_f16_v<T>) {
        uint16_t x, y, r;
        std::memcpy(&x, &a, 2);
        std::memcpy(&y, &b, 2);
        if (a != a || b != b) {
            r = 0x7e00;
        } else if (a == b) {
            r = x;
        } else if ((x & 0x7fff) == 0) {
            r = static_cast<uint16_t>((y & 0x8000) + 1);
        } else if (!(x & 0x8000)) {
            r = static_cast<int16_t>(x) > static_cast<int16_t>(y) ? x - 1 : x + 1;
        } else {
            r = (!(y & 0x8000) || (x & 0x7fff) > (y & 0x7fff)) ? x - 1 : x + 1;
        }
        T out;
        std::memcpy(&out, &r, 2);
        return out;
    } else {
        // NOTE: on the bit pattern with selects only, so the loop vectorises (libm's
        // nextafter took 4.4 ns an element): a step of one unit away from zero when b lies
        // beyond a, toward zero otherwise; from a zero, the smallest subnormal of b's sign.
        using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
        constexpr U top = U(1) << (8 * sizeof(T) - 1);
        U x, y;
        std::memcpy(&x, &a, sizeof(T));
        std::memcpy(&y, &b, sizeof(T));
        const U away = (a < b) == (a > T(0)) ? x + 1 : x - 1;
        U r = (x & ~top) == 0 ? (y & top) | 1 : away;
        r = a == b ? y : r;
        T out;
        std::memcpy(&out, &r, sizeof(T));
        return (a != a || b != b) ? a + b : out;
    }
}
NDP_END

#define NDP_BITWISE(name, op)                              \
    NDP_OP(name, B<T> || I<T>)                             \
    template <class T> static T f(T a, T b) { return static_cast<T>(a op b); } \
    NDP_END
NDP_BITWISE(bitwise_and, &)
NDP_BITWISE(bitwise_or, |)
NDP_BITWISE(bitwise_xor, ^)
#undef NDP_BITWISE

NDP_OP(bitwise_left_shift, I<T>)
template <class T> static T f(T a, T b) {
    using U = wide_unsigned_t<T>;
    uint64_t s = static_cast<uint64_t>(static_cast<int64_t>(b));
    if constexpr (std::is_unsigned_v<T>) s = static_cast<uint64_t>(b);
    return s < sizeof(T) * 8 ? static_cast<T>(static_cast<U>(a) << s) : T(0);
}
NDP_END

NDP_OP(bitwise_right_shift, I<T>)
template <class T> static T f(T a, T b) {
    uint64_t s = static_cast<uint64_t>(static_cast<int64_t>(b));
    if constexpr (std::is_unsigned_v<T>) s = static_cast<uint64_t>(b);
    if (s < sizeof(T) * 8) return static_cast<T>(a >> s);
    if constexpr (std::is_signed_v<T>) return a < 0 ? T(-1) : T(0);
    else return T(0);
}
NDP_END

#define NDP_COMPARE(name, expr, cexpr)                   \
    NDP_OP(name, ANY<T>)                                 \
    template <class T> static bool f(T a, T b) {         \
        if constexpr (C<T>) return cexpr;                \
        else return expr;                                \
    }                                                    \
    NDP_END
NDP_COMPARE(equal, a == b, a == b)
NDP_COMPARE(not_equal, a != b, a != b)
NDP_COMPARE(less, a < b, clt(a, b))
NDP_COMPARE(less_equal, a <= b, cle(a, b))
NDP_COMPARE(greater, a > b, clt(b, a))
NDP_COMPARE(greater_equal, a >= b, cle(b, a))
#undef NDP_COMPARE

// NOTE: `&` and `|`, never `&&` and `||` (here and in the bool cases above): the
// short-circuit forms are branches that GCC does not vectorise, and on random bools they
// mispredict (logical_and of 10^6 bools took 4.5 ms; NumPy takes 30 us).
NDP_OP(logical_and, ANY<T>)
template <class T> static bool f(T a, T b) { return truthy(a) & truthy(b); }
NDP_END
NDP_OP(logical_or, ANY<T>)
template <class T> static bool f(T a, T b) { return truthy(a) | truthy(b); }
NDP_END
NDP_OP(logical_xor, ANY<T>)
template <class T> static bool f(T a, T b) { return truthy(a) != truthy(b); }
NDP_END

NDP_OP(maximum, ANY<T>)
template <class T> static T f(T a, T b) {
    if constexpr (B<T>) return a | b;
    else if constexpr (C<T>) return (is_nan(a) || cle(b, a)) ? a : b;
    else if constexpr (F<T>) return ((a >= b) | (a != a)) ? a : b;
    else return a >= b ? a : b;
}
NDP_END

NDP_OP(minimum, ANY<T>)
template <class T> static T f(T a, T b) {
    if constexpr (B<T>) return a & b;
    else if constexpr (C<T>) return (is_nan(a) || cle(a, b)) ? a : b;
    else if constexpr (F<T>) return ((a <= b) | (a != a)) ? a : b;
    else return a <= b ? a : b;
}
NDP_END

NDP_OP(floor_divide, I<T> || F<T>)
template <class T> static T f(T a, T b) {
    if constexpr (F<T>) {
        T mod;
        if (!b) return a / b;
        return fdivmod(a, b, mod);
    } else {
        if (b == 0) return 0;
        if constexpr (std::is_signed_v<T>) {
            if (b == T(-1)) return wrap_sub(T(0), a);  // MIN // -1 wraps to MIN, as NumPy
            T q = static_cast<T>(a / b);
            if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
            return q;
        } else {
            return static_cast<T>(a / b);
        }
    }
}
NDP_END

NDP_OP(remainder, I<T> || F<T>)
template <class T> static T f(T a, T b) {
    if constexpr (F<T>) {
        T mod;
        if (!b) return std::fmod(a, b);
        fdivmod(a, b, mod);
        return mod;
    } else {
        if (b == 0) return 0;
        if constexpr (std::is_signed_v<T>) {
            if (b == T(-1)) return 0;
            T r = static_cast<T>(a % b);
            if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
            return r;
        } else {
            return static_cast<T>(a % b);
        }
    }
}
NDP_END

NDP_OP(pow, I<T> || F<T> || C<T>)
template <class T> static T f(T a, T b) {
    if constexpr (C<T>) {
        return cpow(a, b);
    } else if constexpr (F<T>) {
        return pow_real(a, b);
    } else {
        if constexpr (std::is_signed_v<T>) {
            if (b < 0) {  // 1/a**|b| truncated, as the reference kernel
                if (a == 1) return 1;
                if (a == -1) return (b % 2 == 0) ? T(1) : T(-1);
                return 0;
            }
        }
        T r = 1, base = a;
        auto e = static_cast<std::make_unsigned_t<T>>(b);
        while (e) {
            if (e & 1) r = wrap_mul(r, base);
            e >>= 1;
            if (e) base = wrap_mul(base, base);
        }
        return r;
    }
}
NDP_END

#undef NDP_OP
#undef NDP_END

// The ops whose float loops are bound by libmvec's calls, not by memory: the x86-64-v4 build runs
// their loops with 512-bit vectors (libmvec's 16-wide float variants), the rest with 256-bit ones
// (elementwise.cc says why).
#define NDP_MATH_BOUND_OPS(X)                                                                \
    X(acos) X(acosh) X(asin) X(asinh) X(atan) X(atanh) X(cos) X(cosh) X(erf) X(exp) X(expm1)  \
    X(gelu) X(log) X(log1p) X(log2) X(log10) X(sigmoid) X(silu) X(sin) X(sinh) X(tan) X(tanh) \
    X(atan2) X(bce_with_logits) X(hypot) X(logaddexp) X(logaddexp2) X(pow)
template <class Op> constexpr bool math_bound = false;
#define X(name) template <> constexpr bool math_bound<name> = true;
NDP_MATH_BOUND_OPS(X)
#undef X

// Work per element of an op, against a memory-bound one (an add): driver.cc divides the thread
// grain by it, so a region of exp wakes a thread per quarter of the elements an add needs. Measured
// on 2^20 float32, one thread, libmvec v4 build: the math functions 3.4-26x an add's time per
// element, float floor_divide 27x, remainder 18x; 4 is the low end (too high a cost would wake
// threads for less work than a wake-up costs).
template <class Op> constexpr int cost = math_bound<Op> ? 4 : 1;
template <> constexpr int cost<floor_divide> = 4;
template <> constexpr int cost<remainder> = 4;
#define X(name) cost<name>,
inline constexpr int UNARY_COST[NUNARY] = {NDP_UNARY_OPS(X)};
inline constexpr int BINARY_COST[NBINARY] = {NDP_BINARY_OPS(X)};
#undef X

// Applies Op to storage values, computing float16 in float.
template <class Op, class T> inline auto apply1(T x) {
    if constexpr (is_f16_v<T>) {
        auto r = Op::f(static_cast<float>(x));
        if constexpr (std::is_same_v<decltype(r), float>) return static_cast<f16>(r);
        else return r;
    } else {
        return Op::f(x);
    }
}
template <class Op, class T> inline auto apply2(T a, T b) {
    if constexpr (is_f16_v<T> && !requires { Op::half_native; }) {
        auto r = Op::f(static_cast<float>(a), static_cast<float>(b));
        if constexpr (std::is_same_v<decltype(r), float>) return static_cast<f16>(r);
        else return r;
    } else {
        return Op::f(a, b);
    }
}

// Division by one divisor d >= 2 known at run time, by a multiply (Granlund and Montgomery's
// round-up method, Hacker's Delight 10-8): with l = ceil(log2 d) and m = floor(2^N (2^l - d) / d)
// + 1 (N the work width, 32 or 64), floor(a / d) = (t + ((a - t) >> 1)) >> (l - 1), t = the high
// half of m * a, exact for every unsigned a of N bits. A signed a < 0 takes floor(a / d) =
// ~floor(~a / d) (~a = -a - 1 >= 0). Used by floor_divide/remainder by a scalar (elementwise.cc,
// whose remainder fused integers calls too).
template <class T> struct DivByConst {
    using U = std::make_unsigned_t<T>;
    using M = std::conditional_t<(sizeof(T) < 8), uint32_t, uint64_t>;  // the work width
    using W = std::conditional_t<(sizeof(T) < 8), uint64_t, unsigned __int128>;  // holds M * M
    static constexpr int N = int(8 * sizeof(M));
    M d, m;
    int shift;
    explicit DivByConst(T dv) : d(static_cast<M>(dv)) {
        int l = 0;
        while ((W(1) << l) < W(d)) ++l;
        m = static_cast<M>(((W((W(1) << l) - d) << N) / d) + 1);
        shift = l - 1;
    }
    M udiv(M a) const {
        const M t = static_cast<M>((W(m) * a) >> N);
        return (t + ((a - t) >> 1)) >> shift;
    }
    T quotient(T a) const {
        if constexpr (std::is_signed_v<T>) {
            const M ua = static_cast<M>(static_cast<U>(a < 0 ? ~a : a));
            const M q = udiv(ua);
            return a < 0 ? static_cast<T>(~q) : static_cast<T>(q);
        } else {
            return static_cast<T>(udiv(static_cast<M>(a)));
        }
    }
};

}  // namespace ndp::ops
