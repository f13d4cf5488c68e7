// Vectorised transcendental functions: glibc's libmvec.
//
// The elementwise loops call the scalar functions of <cmath> (ops.h) and GCC
// vectorises them. A loop that calls expf can only vectorise if the compiler
// knows a vector variant exists: glibc's <math.h> declares its libmvec variants
// (`_ZGVdN8v_expf`, the AVX2 expf on 8 floats, ...) only under -ffast-math,
// which would also change the semantics of every other op. Declaring the same
// `simd` attribute here, and nothing else, gives the loops the vector variants
// while every other op keeps exact IEEE semantics (-ffp-contract=off, no
// fast-math). Each ISA build calls its own variants: baseline the SSE ones
// (`_ZGVb`, which pick SSE4.1 code at load time where it exists), x86-64-v3 the
// AVX2 ones (`_ZGVd`), x86-64-v4 the AVX-512 ones (`_ZGVe`).
//
// NOTE: why libmvec rather than SLEEF, Highway or our own polynomials (measured
// in docs/performance.md): it is part of glibc (2.35 added all but exp, log,
// sin, cos, pow), so it adds no dependency to build or to ship: auditwheel
// lists libmvec.so.1 among the system libraries a manylinux wheel may use,
// and a source build needs nothing beyond the C library. Its vector variants
// come from Intel's SVML, 1 to 4 ulp, special values through the scalar
// libm. SLEEF's Debian package has no static library (the wheel would carry a
// copy), Highway's contrib/math lacks tan, cosh, pow and hypot, and our own
// kernels would be a second libm to keep correct. Where CMake finds no libmvec
// (musl, macOS, non-x86 or an older glibc), NDP_LIBMVEC is off and the same
// loops call the scalar functions: slower, with identical semantics.
#pragma once

#include <cmath>

// Every libm function the ops call, unary (U) and binary (B): the one list of them (the
// declarations below and the ndp::vm overloads are both made from it).
#define NDP_VMATH_FUNCTIONS(U, B)                                                        \
    U(acos) U(acosh) U(asin) U(asinh) U(atan) U(atanh) U(cos) U(cosh) U(erf) U(erfc)      \
    U(exp) U(exp2) U(expm1) U(log) U(log10) U(log1p) U(log2) U(sin) U(sinh) U(tan) U(tanh) \
    B(atan2) B(hypot) B(pow)

#if defined(NDP_LIBMVEC)
#define NDP_SIMD __attribute__((simd("notinbranch")))
extern "C" {
// float and double of each.
#define NDP_VMATH_1(fn) NDP_SIMD float fn##f(float); NDP_SIMD double fn(double);
#define NDP_VMATH_2(fn) NDP_SIMD float fn##f(float, float); NDP_SIMD double fn(double, double);
NDP_VMATH_FUNCTIONS(NDP_VMATH_1, NDP_VMATH_2)
#undef NDP_VMATH_1
#undef NDP_VMATH_2
}
#undef NDP_SIMD
#endif

namespace ndp::vm {
// The functions ops.h calls. float goes to the `f`-suffixed C function by name: libstdc++'s
// std::exp(float) is __builtin_expf, which does not carry the attribute above and stays
// scalar; double is the C function itself; complex (and anything else) goes to std::.
#define NDP_VMATH_1(fn)                                                    \
    inline float fn(float x) { return ::fn##f(x); }                       \
    inline double fn(double x) { return ::fn(x); }                        \
    template <class T> inline auto fn(const T& x) { return std::fn(x); }
#define NDP_VMATH_2(fn)                                                    \
    inline float fn(float x, float y) { return ::fn##f(x, y); }           \
    inline double fn(double x, double y) { return ::fn(x, y); }           \
    template <class T> inline auto fn(const T& x, const T& y) { return std::fn(x, y); }
NDP_VMATH_FUNCTIONS(NDP_VMATH_1, NDP_VMATH_2)
#undef NDP_VMATH_1
#undef NDP_VMATH_2
}  // namespace ndp::vm
