// Scalar semantics of every unary and binary op on the device, matching NumPy's loops
// (and so the cpu backend's ops.h). Each op: `ok<T>` (the storage dtypes it accepts) and
// `f` written for bool, the integers, float, double and complex; float16 reaches `f` as
// float (see apply1/apply2) except for ops that declare `half_native`.
#pragma once

#include "device.cuh"

namespace ndp::ops {

#define NDP_UNARY_OPS(X)                                                                     \
    X(abs) X(acos) X(acosh) X(asin) X(asinh) X(atan) X(atanh) X(bitwise_invert) X(ceil)      \
    X(conj) X(cos) X(cosh) X(erf) X(exp) X(expm1) X(floor) X(gelu) X(imag) X(isfinite)      \
    X(isinf) X(isnan) X(log) X(log1p) X(log2) X(log10) X(logical_not) X(negative) X(real)     \
    X(reciprocal) X(round) X(sigmoid) X(sign) X(signbit) X(silu) X(sin) X(sinh) X(sqrt)       \
    X(square) X(tan) X(tanh) X(trunc)

#define NDP_BINARY_OPS(X)                                                                \
    X(add) X(atan2) X(bce_with_logits) X(bitwise_and) X(bitwise_left_shift)              \
    X(bitwise_or) X(bitwise_right_shift) X(bitwise_xor) X(copysign) X(divide) X(equal)   \
    X(floor_divide) X(greater) X(greater_equal) X(hypot) X(less) X(less_equal)           \
    X(logaddexp) X(logaddexp2) X(logical_and) X(logical_or) X(logical_xor) X(maximum)    \
    X(minimum) X(multiply) X(nextafter) X(not_equal) X(pow)                              \
    X(remainder) X(subtract)

enum Unary : int {
#define X(n) u_##n,
    NDP_UNARY_OPS(X)
#undef X
    NUNARY_
};
enum Binary : int {
#define X(n) b_##n,
    NDP_BINARY_OPS(X)
#undef X
    NBINARY_
};
static_assert(NUNARY_ <= MAXOPS && NBINARY_ <= MAXOPS, "raise MAXOPS in kernels.h");

template <class T> inline constexpr bool B = is_bool_v<T>;
template <class T> inline constexpr bool I = is_int_v<T>;
template <class T> inline constexpr bool F = is_float_v<T>;
template <class T> inline constexpr bool C = is_complex_v<T>;
template <class T> inline constexpr bool ANY = true;

#define NDP_D __device__ __forceinline__

// complex arithmetic as NumPy writes it (the naive product, Smith's quotient)
template <class R> NDP_D cuda::std::complex<R> cmul(cuda::std::complex<R> a, cuda::std::complex<R> b) {
    return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}
template <class R> NDP_D cuda::std::complex<R> cdiv(cuda::std::complex<R> a, cuda::std::complex<R> b) {
    R ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
    R abr = ::fabs(br), abi = ::fabs(bi);
    if (abr >= abi) {
        if (abr == 0 && abi == 0) return {ar / abr, ai / abr};
        R rat = bi / br, scl = R(1) / (br + bi * rat);
        return {(ar + ai * rat) * scl, (ai - ar * rat) * scl};
    }
    R rat = br / bi, scl = R(1) / (bi + br * rat);
    return {(ar * rat + ai) * scl, (ai * rat - ar) * scl};
}
template <class R> NDP_D bool clt(cuda::std::complex<R> a, cuda::std::complex<R> b) {
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
}
template <class R> NDP_D bool cle(cuda::std::complex<R> a, cuda::std::complex<R> b) {
    return a.real() < b.real() || (a.real() == b.real() && a.imag() <= b.imag());
}
template <class R> NDP_D cuda::std::complex<R> cpow(cuda::std::complex<R> a, cuda::std::complex<R> b) {
    using Cx = cuda::std::complex<R>;
    R br = b.real(), bi = b.imag();
    if (br == 0 && bi == 0) return Cx(1, 0);
    if (a.real() == 0 && a.imag() == 0) {
        if (br > 0) return Cx(0, 0);
        R nan = cuda::std::numeric_limits<R>::quiet_NaN();
        return Cx(nan, nan);
    }
    if (bi == 0 && br >= -100 && br <= 100 && br == ::trunc(br)) {
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
    return cuda::std::pow(a, b);
}
// NumPy's npy_divmod for floats: returns the floor quotient, sets `mod`.
template <class R> NDP_D R fdivmod(R a, R b, R& mod) {
    mod = ::fmod(a, b);
    if (!b) return a / b;
    R div = (a - mod) / b;
    if (mod) {
        if ((b < 0) != (mod < 0)) {
            mod += b;
            div -= R(1);
        }
    } else {
        mod = ::copysign(R(0), b);
    }
    R fl;
    if (div) {
        fl = ::floor(div);
        if (div - fl > R(0.5)) fl += R(1);
    } else {
        fl = ::copysign(R(0), a / b);
    }
    return fl;
}

#define NDP_OP(name, cond) \
    struct name {          \
        template <class T> static constexpr bool ok = cond;
#define NDP_END };

// ---------------------------------------------------------------------------
// unary
// ---------------------------------------------------------------------------
NDP_OP(abs, ANY<T>)
template <class T> NDP_D static auto f(T x) {
    if constexpr (C<T>) return ::hypot(x.real(), x.imag());
    else if constexpr (B<T> || cuda::std::is_unsigned_v<T>) return x;
    else if constexpr (I<T>) return x < 0 ? wrap_sub(T(0), x) : x;
    else return ::fabs(x);
}
NDP_END

#define NDP_MATH(name)                                            \
    NDP_OP(name, F<T> || C<T>)                                    \
    template <class T> NDP_D static T f(T x) {                    \
        if constexpr (C<T>) return cuda::std::name(x);            \
        else return ::name(x);                                    \
    }                                                             \
    NDP_END
NDP_MATH(acos)
NDP_MATH(acosh)
NDP_MATH(asin)
NDP_MATH(asinh)
NDP_MATH(atan)
NDP_MATH(atanh)
NDP_MATH(cos)
NDP_MATH(cosh)
NDP_MATH(exp)
NDP_MATH(log)
NDP_MATH(sin)
NDP_MATH(sinh)
NDP_MATH(sqrt)
NDP_MATH(tan)
NDP_MATH(tanh)
#undef NDP_MATH

NDP_OP(expm1, F<T> || C<T>)
template <class T> NDP_D static T f(T x) {
    if constexpr (C<T>) {
        auto a = ::sin(x.imag() / 2);
        return T(::expm1(x.real()) * ::cos(x.imag()) - 2 * a * a, ::exp(x.real()) * ::sin(x.imag()));
    } else {
        return ::expm1(x);
    }
}
NDP_END

// 1 / (1 + exp(-x)) for x >= 0, e / (1 + e) with e = exp(x) below: both from e = exp(-|x|),
// which never overflows (the cpu backend's formula). NaN fails x >= 0: NaN / NaN.
NDP_OP(sigmoid, F<T>)
template <class T> NDP_D static T f(T x) {
    const T e = ::exp(-::fabs(x));
    return (x >= T(0) ? T(1) : e) / (T(1) + e);
}
NDP_END

// x * sigmoid(x) as x / (1 + exp(-x)), and below x = -K / 2, where exp(-x) nears overflow,
// x * exp(x + K) * e^-K (the cpu backend's formula and constants, ops.h: K = 61 for float32, 86
// for float64). x = -inf gives NaN, as x * sigmoid(x) does.
NDP_OP(silu, F<T>)
template <class T> NDP_D static T f(T x) {
    constexpr bool single = cuda::std::is_same_v<T, float>;
    constexpr T k = single ? T(61) : T(86);
    constexpr T scale = single ? T(3.22134028599251608900124777585E-27) : T(4.47377930618112073462765583917E-38);
    const T e = ::exp(::fmin(-x, x + k));
    return x < -k / 2 ? x * e * scale : x / (T(1) + e);
}
NDP_END

NDP_OP(erf, F<T>)
template <class T> NDP_D static T f(T x) { return ::erf(x); }
NDP_END

// x * Phi(x) with Phi(x) = erfc(-x / sqrt 2) / 2, accurate in the left tail (the cpu backend's
// formula).
NDP_OP(gelu, F<T>)
template <class T> NDP_D static T f(T x) { return x * T(0.5) * ::erfc(x * T(-0.70710678118654752440)); }
NDP_END

NDP_OP(log1p, F<T> || C<T>)
template <class T> NDP_D static T f(T x) {
    if constexpr (C<T>) return T(::log(::hypot(x.real() + 1, x.imag())), ::atan2(x.imag(), x.real() + 1));
    else return ::log1p(x);
}
NDP_END

NDP_OP(log2, F<T> || C<T>)
template <class T> NDP_D static T f(T x) {
    if constexpr (C<T>) {
        using R = real_t<T>;
        T r = cuda::std::log(x);
        return T(r.real() * R(1.442695040888963407359924681001892137), r.imag() * R(1.442695040888963407359924681001892137));
    } else {
        return ::log2(x);
    }
}
NDP_END

NDP_OP(log10, F<T> || C<T>)
template <class T> NDP_D static T f(T x) {
    if constexpr (C<T>) {
        using R = real_t<T>;
        T r = cuda::std::log(x);
        return T(r.real() * R(0.434294481903251827651128918916605082), r.imag() * R(0.434294481903251827651128918916605082));
    } else {
        return ::log10(x);
    }
}
NDP_END

NDP_OP(bitwise_invert, B<T> || I<T>)
template <class T> NDP_D static T f(T x) {
    if constexpr (B<T>) return !x;
    else return static_cast<T>(~x);
}
NDP_END

#define NDP_ROUNDING(name)                          \
    NDP_OP(name, I<T> || F<T>)                      \
    template <class T> NDP_D static T f(T x) {      \
        if constexpr (I<T>) return x;               \
        else return ::name(x);                      \
    }                                               \
    NDP_END
NDP_ROUNDING(ceil)
NDP_ROUNDING(floor)
NDP_ROUNDING(trunc)
#undef NDP_ROUNDING

NDP_OP(round, I<T> || F<T> || C<T>)
template <class T> NDP_D static T f(T x) {
    if constexpr (I<T>) return x;
    else if constexpr (C<T>) return T(::rint(x.real()), ::rint(x.imag()));
    else return ::rint(x);  // half to even, like np.round
}
NDP_END

NDP_OP(conj, ANY<T>)
template <class T> NDP_D static T f(T x) {
    if constexpr (C<T>) return T(x.real(), -x.imag());
    else return x;
}
NDP_END

NDP_OP(real, ANY<T>)
template <class T> NDP_D static auto f(T x) {
    if constexpr (C<T>) return x.real();
    else return x;
}
NDP_END

NDP_OP(imag, ANY<T>)
template <class T> NDP_D static auto f(T x) {
    if constexpr (C<T>) return x.imag();
    else return T(0);
}
NDP_END

NDP_OP(isfinite, ANY<T>)
template <class T> NDP_D static bool f(T x) {
    if constexpr (C<T>) return ::isfinite(x.real()) && ::isfinite(x.imag());
    else if constexpr (F<T>) return ::isfinite(x);
    else return true;
}
NDP_END

NDP_OP(isinf, ANY<T>)
template <class T> NDP_D static bool f(T x) {
    if constexpr (C<T>) return ::isinf(x.real()) || ::isinf(x.imag());
    else if constexpr (F<T>) return ::isinf(x);
    else return false;
}
NDP_END

NDP_OP(isnan, ANY<T>)
template <class T> NDP_D static bool f(T x) { return is_nan(x); }
NDP_END

NDP_OP(logical_not, ANY<T>)
template <class T> NDP_D static bool f(T x) { return !truthy(x); }
NDP_END

NDP_OP(negative, I<T> || F<T> || C<T>)
template <class T> NDP_D static T f(T x) {
    if constexpr (I<T>) return wrap_sub(T(0), x);
    else return -x;
}
NDP_END

NDP_OP(reciprocal, F<T> || C<T>)
template <class T> NDP_D static T f(T x) {
    if constexpr (C<T>) return cdiv(T(1, 0), x);
    else return T(1) / x;
}
NDP_END

NDP_OP(sign, I<T> || F<T> || C<T>)
template <class T> NDP_D static T f(T x) {
    if constexpr (C<T>) {
        auto mag = ::hypot(x.real(), x.imag());
        return cdiv(x, T(mag == 0 ? 1 : mag, 0));
    } else if constexpr (cuda::std::is_unsigned_v<T>) {
        return x > 0 ? 1 : 0;
    } else if constexpr (I<T>) {
        return static_cast<T>((x > 0) - (x < 0));
    } else {
        return x > 0 ? T(1) : (x < 0 ? T(-1) : (x == 0 ? T(0) : x));
    }
}
NDP_END

NDP_OP(signbit, I<T> || F<T>)
template <class T> NDP_D static bool f(T x) {
    if constexpr (F<T>) return ::signbit(x);
    else if constexpr (cuda::std::is_signed_v<T>) return x < 0;
    else return false;
}
NDP_END

NDP_OP(square, I<T> || F<T> || C<T>)
template <class T> NDP_D static T f(T x) {
    if constexpr (I<T>) return wrap_mul(x, x);
    else if constexpr (C<T>) return cmul(x, x);
    else return x * x;
}
NDP_END

// ---------------------------------------------------------------------------
// binary
// ---------------------------------------------------------------------------
NDP_OP(add, ANY<T>)
template <class T> NDP_D static T f(T a, T b) {
    if constexpr (B<T>) return a || b;
    else if constexpr (I<T>) return wrap_add(a, b);
    else return a + b;
}
NDP_END

NDP_OP(subtract, I<T> || F<T> || C<T>)
template <class T> NDP_D static T f(T a, T b) {
    if constexpr (I<T>) return wrap_sub(a, b);
    else return a - b;
}
NDP_END

NDP_OP(multiply, ANY<T>)
template <class T> NDP_D static T f(T a, T b) {
    if constexpr (B<T>) return a && b;
    else if constexpr (I<T>) return wrap_mul(a, b);
    else if constexpr (C<T>) return cmul(a, b);
    else return a * b;
}
NDP_END

NDP_OP(divide, F<T> || C<T>)
template <class T> NDP_D static T f(T a, T b) {
    if constexpr (C<T>) return cdiv(a, b);
    else return a / b;
}
NDP_END

NDP_OP(atan2, F<T>)
template <class T> NDP_D static T f(T a, T b) { return ::atan2(a, b); }
NDP_END
NDP_OP(copysign, F<T>)
template <class T> NDP_D static T f(T a, T b) { return ::copysign(a, b); }
NDP_END
NDP_OP(hypot, F<T>)
template <class T> NDP_D static T f(T a, T b) { return ::hypot(a, b); }
NDP_END

// Binary cross entropy of target t given logit x, per sign of x as the cpu backend's ops.h:
// (1 - t) x + log1p(exp(-x)) for x >= 0, -t x + log1p(exp(x)) below (no two terms cancel for t
// in [0, 1]); NaN propagates, 0 * inf gives NaN.
NDP_OP(bce_with_logits, F<T>)
template <class T> NDP_D static T f(T x, T t) {
    const T c = x >= T(0) ? T(1) - t : -t;
    return c * x + ::log1p(::exp(-::fabs(x)));
}
NDP_END

NDP_OP(logaddexp, F<T>)
template <class T> NDP_D static T f(T a, T b) {
    if (a == b) return a + T(0.693147180559945309417232121458176568);  // handles infinities
    T d = a - b;
    if (d > 0) return a + ::log1p(::exp(-d));
    if (d <= 0) return b + ::log1p(::exp(d));
    return d;  // NaN
}
NDP_END

NDP_OP(logaddexp2, F<T>)
template <class T> NDP_D static T f(T a, T b) {
    const T inv_ln2 = T(1.442695040888963407359924681001892137);
    if (a == b) return a + T(1);
    T d = a - b;
    if (d > 0) return a + ::log1p(::exp2(-d)) * inv_ln2;
    if (d <= 0) return b + ::log1p(::exp2(d)) * inv_ln2;
    return d;
}
NDP_END

NDP_OP(nextafter, F<T>)
static constexpr bool half_native = true;
template <class T> NDP_D static T f(T a, T b) {
    if constexpr (is_f16_v<T>) {
        const float fa = __half2float(a), fb = __half2float(b);
        unsigned short x = __half_as_ushort(a), y = __half_as_ushort(b), r;
        if (fa != fa || fb != fb) r = 0x7e00;
        else if (fa == fb) r = x;
        else if ((x & 0x7fff) == 0) r = static_cast<unsigned short>((y & 0x8000) + 1);
        else if (!(x & 0x8000)) r = static_cast<short>(x) > static_cast<short>(y) ? x - 1 : x + 1;
        else r = (!(y & 0x8000) || (x & 0x7fff) > (y & 0x7fff)) ? x - 1 : x + 1;
        return __ushort_as_half(r);
    } else {
        return ::nextafter(a, b);
    }
}
NDP_END

#define NDP_BITWISE(name, op)                                                          \
    NDP_OP(name, B<T> || I<T>)                                                         \
    template <class T> NDP_D static T f(T a, T b) { return static_cast<T>(a op b); }   \
    NDP_END
NDP_BITWISE(bitwise_and, &)
NDP_BITWISE(bitwise_or, |)
NDP_BITWISE(bitwise_xor, ^)
#undef NDP_BITWISE

NDP_OP(bitwise_left_shift, I<T>)
template <class T> NDP_D static T f(T a, T b) {
    using U = wide_unsigned_t<T>;
    uint64_t s = cuda::std::is_unsigned_v<T> ? static_cast<uint64_t>(b) : static_cast<uint64_t>(static_cast<int64_t>(b));
    return s < sizeof(T) * 8 ? static_cast<T>(static_cast<U>(a) << s) : T(0);
}
NDP_END

NDP_OP(bitwise_right_shift, I<T>)
template <class T> NDP_D static T f(T a, T b) {
    uint64_t s = cuda::std::is_unsigned_v<T> ? static_cast<uint64_t>(b) : static_cast<uint64_t>(static_cast<int64_t>(b));
    if (s < sizeof(T) * 8) return static_cast<T>(a >> s);
    if constexpr (cuda::std::is_signed_v<T>) return a < 0 ? T(-1) : T(0);
    else return T(0);
}
NDP_END

#define NDP_COMPARE(name, expr, cexpr)               \
    NDP_OP(name, ANY<T>)                             \
    template <class T> NDP_D static bool f(T a, T b) { \
        if constexpr (C<T>) return cexpr;            \
        else return expr;                            \
    }                                                \
    NDP_END
NDP_COMPARE(equal, a == b, a == b)
NDP_COMPARE(not_equal, a != b, a != b)
NDP_COMPARE(less, a < b, clt(a, b))
NDP_COMPARE(less_equal, a <= b, cle(a, b))
NDP_COMPARE(greater, a > b, clt(b, a))
NDP_COMPARE(greater_equal, a >= b, cle(b, a))
#undef NDP_COMPARE

NDP_OP(logical_and, ANY<T>)
template <class T> NDP_D static bool f(T a, T b) { return truthy(a) && truthy(b); }
NDP_END
NDP_OP(logical_or, ANY<T>)
template <class T> NDP_D static bool f(T a, T b) { return truthy(a) || truthy(b); }
NDP_END
NDP_OP(logical_xor, ANY<T>)
template <class T> NDP_D static bool f(T a, T b) { return truthy(a) != truthy(b); }
NDP_END

NDP_OP(maximum, ANY<T>)
template <class T> NDP_D static T f(T a, T b) {
    if constexpr (B<T>) return a || b;
    else if constexpr (C<T>) return (is_nan(a) || cle(b, a)) ? a : b;
    else if constexpr (F<T>) return (a >= b || a != a) ? a : b;
    else return a >= b ? a : b;
}
NDP_END

NDP_OP(minimum, ANY<T>)
template <class T> NDP_D static T f(T a, T b) {
    if constexpr (B<T>) return a && b;
    else if constexpr (C<T>) return (is_nan(a) || cle(a, b)) ? a : b;
    else if constexpr (F<T>) return (a <= b || a != a) ? a : b;
    else return a <= b ? a : b;
}
NDP_END

NDP_OP(floor_divide, I<T> || F<T>)
template <class T> NDP_D static T f(T a, T b) {
    if constexpr (F<T>) {
        T mod;
        if (!b) return a / b;
        return fdivmod(a, b, mod);
    } else {
        if (b == 0) return 0;
        if constexpr (cuda::std::is_signed_v<T>) {
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
template <class T> NDP_D static T f(T a, T b) {
    if constexpr (F<T>) {
        T mod;
        if (!b) return ::fmod(a, b);
        fdivmod(a, b, mod);
        return mod;
    } else {
        if (b == 0) return 0;
        if constexpr (cuda::std::is_signed_v<T>) {
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

// 1 / sqrt(a) for finite a > 0, to about 2^-104 before its one rounding (so correctly rounded
// but in vanishingly rare near-ties): the quotient's error removed by one Newton step whose
// residual 1 - a r^2 is computed with fma (r^2 = t + h exactly).
NDP_D double rsqrt_rn(double a) {
    double scale = 1.0;
    if (a < 0x1p-900) {
        a *= 0x1p1000;
        scale = 0x1p500;
    } else if (a > 0x1p900) {
        a *= 0x1p-1000;
        scale = 0x1p-500;
    }
    const double r = 1.0 / ::sqrt(a);
    const double t = r * r, h = ::fma(r, r, -t);
    const double e = ::fma(-a, t, 1.0) - a * h;
    return ::fma(0.5 * r, e, r) * scale;
}

// Real pow as NumPy's (glibc's, correctly rounded in practice) where CUDA's pow (up to 2 ulp)
// would differ at the points programs test: x**0.5 and x**-0.5 through sqrt, x**2 as x*x;
// float32 (and float16) through double and one rounding. Every special case (x <= 0, inf,
// NaN) goes to ::pow, which follows C99 -- the Array API's (-0)**0.5 = +0, (-inf)**0.5 = +inf.
template <class T> NDP_D T real_pow(T a, T b) {
    if constexpr (cuda::std::is_same_v<T, float>) {
        return static_cast<float>(real_pow<double>(a, b));
    } else {
        if (b == 2.0) return a * a;
        if (a > 0.0 && a < cuda::std::numeric_limits<double>::infinity()) {
            if (b == 0.5) return ::sqrt(a);
            if (b == -0.5) return rsqrt_rn(a);
        }
        return ::pow(a, b);
    }
}

NDP_OP(pow, I<T> || F<T> || C<T>)
template <class T> NDP_D static T f(T a, T b) {
    if constexpr (C<T>) {
        return cpow(a, b);
    } else if constexpr (F<T>) {
        return real_pow(a, b);
    } else {
        if constexpr (cuda::std::is_signed_v<T>) {
            if (b < 0) {  // 1/a**|b| truncated, as the reference kernel
                if (a == 1) return 1;
                if (a == -1) return (b % 2 == 0) ? T(1) : T(-1);
                return 0;
            }
        }
        T r = 1, base = a;
        auto e = static_cast<cuda::std::make_unsigned_t<T>>(b);
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

// The storage type of each op's result (the host needs it, so it cannot come from the
// device functions' deduced types; UnaryFn/BinaryFn check the two agree).
template <class Op, class T> struct result1 { using type = T; };
template <class T> struct result1<isfinite, T> { using type = bool; };
template <class T> struct result1<isinf, T> { using type = bool; };
template <class T> struct result1<isnan, T> { using type = bool; };
template <class T> struct result1<logical_not, T> { using type = bool; };
template <class T> struct result1<signbit, T> { using type = bool; };
template <class T> struct result1<abs, T> { using type = real_t<T>; };
template <class T> struct result1<real, T> { using type = real_t<T>; };
template <class T> struct result1<imag, T> { using type = real_t<T>; };
template <class Op, class T> struct result2 { using type = T; };
#define NDP_BOOL_RESULT(n) template <class T> struct result2<n, T> { using type = bool; };
NDP_BOOL_RESULT(equal) NDP_BOOL_RESULT(not_equal) NDP_BOOL_RESULT(less) NDP_BOOL_RESULT(less_equal)
NDP_BOOL_RESULT(greater) NDP_BOOL_RESULT(greater_equal) NDP_BOOL_RESULT(logical_and)
NDP_BOOL_RESULT(logical_or) NDP_BOOL_RESULT(logical_xor)
#undef NDP_BOOL_RESULT

// Storage value in, storage value out: float16 computed in float and rounded back.
template <class Op, class T> NDP_D auto apply1(T x) {
    if constexpr (is_f16_v<T>) {
        auto r = Op::f(__half2float(x));
        if constexpr (cuda::std::is_same_v<decltype(r), float>) return __float2half_rn(r);
        else return r;
    } else {
        return Op::f(x);
    }
}
template <class Op, class T> NDP_D auto apply2(T a, T b) {
    if constexpr (is_f16_v<T> && !requires { Op::half_native; }) {
        auto r = Op::f(__half2float(a), __half2float(b));
        if constexpr (cuda::std::is_same_v<decltype(r), float>) return __float2half_rn(r);
        else return r;
    } else {
        return Op::f(a, b);
    }
}

#undef NDP_D

}  // namespace ndp::ops
