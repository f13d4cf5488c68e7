// Inner loops of the elementwise kernels, compiled once per ISA level
// (NDP_ISA names the namespace). One template per op family, instantiated for
// every dtype an op accepts through for_each_dtype.
#include "kernels.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <type_traits>

#include "half.h"

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#ifndef NDP_ISA
#define NDP_ISA baseline
#endif

namespace ndp::NDP_ISA {
namespace {

// NDP_WIDE_ATTR: 512-bit vectors for one function where the build targets AVX-512 (x86-64-v4).
// This file is compiled with 256-bit vectors there (CMakeLists.txt: 512-bit ones made float32
// mul and broadcast add 4-5 % slower), but a loop bound by libmvec's calls gains from its 16-wide
// variants (pow float32 1.6x faster on one thread): the loops of those ops (ops::math_bound) are
// the _wide copies below, the same inline body under GCC's prefer-vector-width attribute.
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
#define NDP_WIDE_ATTR __attribute__((target("prefer-vector-width=512")))
#else
#define NDP_WIDE_ATTR
#endif

// NOTE: a bool element is read as a byte compared with 0 (the same value): GCC 12 does not
// vectorise loops that load `bool`s (logical_not of 10^6 bools: 560 us, NumPy 22 us), but
// it does vectorise byte loads.
template <class T> [[gnu::always_inline]] inline T at(const T* p, int64_t i) {
    if constexpr (is_bool_v<T>) return reinterpret_cast<const uint8_t*>(p)[i] != 0;
    else return p[i];
}

// The elements of a block on the stack: the unary loops, float16's staging, the staged casts.
constexpr int64_t UNARY_BLOCK = 256;

// buf[i] = x[-i] for i < m: a reversed run (x[::-1], the FFT's conjugate mirror) staged forward.
// NOTE: GCC vectorises the reversal (vector loads and a lane permute) of numbers, not of
// std::complex's pairs: complex64 moves as 64-bit integers (may_alias: the buffer holds complex
// objects); a 16-byte element moves one at a time.
template <class T> [[gnu::always_inline]] inline void reversed_into(const T* x, T* buf, int64_t m) {
    if constexpr (!std::is_arithmetic_v<T> && sizeof(T) == 8) {
        using U [[gnu::may_alias]] = uint64_t;
        const U* xu = reinterpret_cast<const U*>(x);
        U* bu = reinterpret_cast<U*>(buf);
        for (int64_t i = 0; i < m; ++i) bu[i] = xu[-i];
    } else {
        for (int64_t i = 0; i < m; ++i) buf[i] = x[-i];
    }
}

// float16 operands of the elementwise ops go through float32 blocks: F16C widens 8 at a time,
// the float32 loop runs vectorised (libmvec for the transcendental functions), and the result
// rounds once to float16 -- what ops::apply1/apply2 compute for float16 element by element,
// where GCC 12 converted every _Float16 on its own (add of 10^6: 922 us, PyTorch's 157).
[[gnu::always_inline]] inline void halves_in(const char* p, int64_t s, int64_t m, float* buf) {
    if (s == int64_t(sizeof(f16))) {
        halves_to_floats(reinterpret_cast<const f16*>(p), buf, m);
    } else if (s == 0) {
        const float v = static_cast<float>(ld<f16>(p));
        for (int64_t i = 0; i < m; ++i) buf[i] = v;
    } else {
        for (int64_t i = 0; i < m; ++i) buf[i] = static_cast<float>(ld<f16>(p + i * s));
    }
}
template <class R> [[gnu::always_inline]] inline void results_out(const R* buf, char* o, int64_t so, int64_t m) {
    if constexpr (std::is_same_v<R, float>) {
        if (so == int64_t(sizeof(f16))) floats_to_halves(buf, reinterpret_cast<f16*>(o), m);
        else for (int64_t i = 0; i < m; ++i) st<f16>(o + i * so, static_cast<f16>(buf[i]));
    } else {
        for (int64_t i = 0; i < m; ++i) st<R>(o + i * so, buf[i]);
    }
}

// UNARY_BLOCK elements of o = op(x): a fixed trip count, a multiple of every vector width, so
// the vectorised loop has no scalar remainder.
template <class Op, class T, class R>
[[gnu::always_inline]] inline void unary_block(const T* x, R* o) {
    for (int64_t i = 0; i < UNARY_BLOCK; ++i) o[i] = ops::apply1<Op, T>(x[i]);
}

// unary(x: strided T, o: strided R), n elements.
// NOTE: real floating operands go through unary_block only, contiguous or not (a strided
// one gathered into a block on the stack, a partial block padded with zeros): GCC
// vectorises that loop with libmvec's variants of the transcendental functions (vmath.h),
// and no element ever reaches a scalar remainder loop, which would call glibc's scalar
// functions instead (their float32 tanh is 2.1 ulp from the exact result, the vector one
// 1.0; NumPy's tolerance is 2). So every layout gives the same results, bit for bit, and a
// transposed operand runs at vector speed too.
template <class Op, class T>
[[gnu::always_inline]] inline void unary_run(const char* x, int64_t sx, char* o, int64_t so, int64_t n) {
    using R = decltype(ops::apply1<Op, T>(T{}));
    if constexpr (is_f16_v<T>) {
        using RF = decltype(ops::apply1<Op, float>(0.0f));  // float, or bool for the predicates
        alignas(64) float xb[UNARY_BLOCK];
        alignas(64) RF ob[UNARY_BLOCK];
        for (int64_t i0 = 0; i0 < n; i0 += UNARY_BLOCK) {
            const int64_t m = std::min(UNARY_BLOCK, n - i0);
            halves_in(x + i0 * sx, sx, m, xb);
            for (int64_t i = m; i < UNARY_BLOCK; ++i) xb[i] = 0.0f;
            unary_block<Op>(xb, ob);
            results_out(ob, o + i0 * so, so, m);
        }
    } else if constexpr (is_float_v<T> && std::is_arithmetic_v<R>) {
        alignas(64) T xb[UNARY_BLOCK];
        alignas(64) R ob[UNARY_BLOCK];
        const bool cx = sx == sizeof(T), co = so == sizeof(R);
        for (int64_t i0 = 0; i0 < n; i0 += UNARY_BLOCK) {
            const int64_t m = std::min(UNARY_BLOCK, n - i0);
            const T* xp = reinterpret_cast<const T*>(x + i0 * sx);
            // NOTE: a partial block moves with memcpy where its run is contiguous (a row of 1000
            // spent a third of its time on the last 232 elements, one at a time)
            if (!cx || m < UNARY_BLOCK) {
                if (sx == -int64_t(sizeof(T))) reversed_into(xp, xb, m);
                else if (cx) std::memcpy(xb, xp, size_t(m) * sizeof(T));
                else for (int64_t i = 0; i < m; ++i) xb[i] = ld<T>(x + (i0 + i) * sx);
                for (int64_t i = m; i < UNARY_BLOCK; ++i) xb[i] = T(0);
                xp = xb;
            }
            if (co && m == UNARY_BLOCK) {
                unary_block<Op>(xp, reinterpret_cast<R*>(o + i0 * so));
            } else {
                unary_block<Op>(xp, ob);
                if (co) std::memcpy(o + i0 * so, ob, size_t(m) * sizeof(R));
                else for (int64_t i = 0; i < m; ++i) st<R>(o + (i0 + i) * so, ob[i]);
            }
        }
    } else if (sx == sizeof(T) && so == sizeof(R)) {
        const T* X = reinterpret_cast<const T*>(x);
        R* O = reinterpret_cast<R*>(o);
        for (int64_t i = 0; i < n; ++i) O[i] = ops::apply1<Op, T>(at(X, i));
    } else if (sx == -int64_t(sizeof(T)) && so == sizeof(R)) {
        // NOTE: a reversed run, staged forward by blocks: 2-3x the element-at-a-time loop below.
        // Raw bytes, not T[]: std::complex's constructor would zero the block at every call
        // (a call per row: the FFT's mirror of 1000 rows of 31 spent 3 ns an element on it).
        alignas(64) unsigned char raw[UNARY_BLOCK * sizeof(T)];
        T* xb = reinterpret_cast<T*>(raw);
        const T* X = reinterpret_cast<const T*>(x);
        R* O = reinterpret_cast<R*>(o);
        for (int64_t i0 = 0; i0 < n; i0 += UNARY_BLOCK) {
            const int64_t m = std::min(UNARY_BLOCK, n - i0);
            reversed_into(X - i0, xb, m);
            for (int64_t i = 0; i < m; ++i) O[i0 + i] = ops::apply1<Op, T>(at(xb, i));
        }
    } else {
        for (int64_t i = 0; i < n; ++i) st<R>(o + i * so, ops::apply1<Op, T>(ld<T>(x + i * sx)));
    }
}

// remainder and floor_divide of float32 / float64 (any strides), exact as NumPy's divmod:
// blocks of UNARY_BLOCK gathered on the stack, a vectorised pass through ops::fmod_fast and
// the divmod's selects (ops::fdivmod_of), then libm's fmod for the elements fmod_fast could
// not do (rare: NaN, infinities, b == 0, huge quotients). libm's fmod alone took 6-8 ns an
// element, this 0.6-0.9. NOTE: the check is a loop of its own: GCC 12 leaves the first loop
// scalar when it also reduces the flags (the quotient's selects and the reduction together).
template <class Op, class T>
[[gnu::always_inline]] inline void divmod_run(const char* a, int64_t sa, const char* b, int64_t sb, char* o,
                                              int64_t so, int64_t n) {
    alignas(64) T ab[UNARY_BLOCK], bb[UNARY_BLOCK], fb[UNARY_BLOCK], rb[UNARY_BLOCK];
    for (int64_t i0 = 0; i0 < n; i0 += UNARY_BLOCK) {
        const int64_t m = std::min(UNARY_BLOCK, n - i0);
        for (int64_t i = 0; i < m; ++i) {
            ab[i] = ld<T>(a + (i0 + i) * sa);
            bb[i] = ld<T>(b + (i0 + i) * sb);
        }
        for (int64_t i = 0; i < m; ++i) {
            T mod;
            const T fm = fb[i] = ops::fmod_fast(ab[i], bb[i]);
            const T q = ops::fdivmod_of(ab[i], bb[i], fm, mod);
            rb[i] = std::is_same_v<Op, ops::floor_divide> ? q : mod;
        }
        int redo_any = 0;
        for (int64_t i = 0; i < m; ++i) redo_any |= ops::fmod_inexact(ab[i], bb[i], fb[i]) ? 1 : 0;
        if (redo_any) {
            for (int64_t i = 0; i < m; ++i)
                if (ops::fmod_inexact(ab[i], bb[i], fb[i])) rb[i] = ops::apply2<Op, T>(ab[i], bb[i]);
        }
        for (int64_t i = 0; i < m; ++i) st<T>(o + (i0 + i) * so, rb[i]);
    }
}

// Integer floor_divide and remainder by one positive divisor (a broadcast scalar: x // 7, the
// modulo of Generator.integers) through ops::DivByConst's multiply instead of the hardware's
// divide (10-40 cycles an element). The remainder is a - q * d; d <= 0 stays on the generic loop.
template <class Op, class T> constexpr bool int_divmod_v =
    (std::is_same_v<Op, ops::floor_divide> || std::is_same_v<Op, ops::remainder>) && std::is_integral_v<T> &&
    !std::is_same_v<T, bool>;

// Whether the scalar-divisor path took the loop (contiguous a and out, a broadcast divisor > 0).
template <class Op, class T>
[[gnu::always_inline]] inline bool int_divmod_by_scalar(const T* A, int64_t sa, const T* Bp, int64_t sb, T* O,
                                                        int64_t so, int64_t n) {
    if (sb != 0 || sa != int64_t(sizeof(T)) || so != int64_t(sizeof(T)) || n < 64 || !(*Bp > T(0))) return false;
    const T d = *Bp;
    if (d == T(1)) {  // a // 1 = a, a % 1 = 0
        for (int64_t i = 0; i < n; ++i) O[i] = std::is_same_v<Op, ops::floor_divide> ? A[i] : T(0);
        return true;
    }
    const ops::DivByConst<T> div(d);
    for (int64_t i = 0; i < n; ++i) {
        const T q = div.quotient(A[i]);
        if constexpr (std::is_same_v<Op, ops::floor_divide>) O[i] = q;
        else O[i] = static_cast<T>(static_cast<std::make_unsigned_t<T>>(A[i]) -
                                   static_cast<std::make_unsigned_t<T>>(q) * static_cast<std::make_unsigned_t<T>>(d));
    }
    return true;
}

// x ** 2, x ** 0.5, x ** 3 as NumPy and PyTorch run them (ops.h, pow_square), on contiguous x and
// o; false for any other exponent.
template <class T> [[gnu::always_inline]] inline bool pow_by_scalar(const T* A, T bv, T* O, int64_t n) {
    if (bv == T(2)) {
        for (int64_t i = 0; i < n; ++i) O[i] = ops::pow_square(A[i]);
    } else if (bv == T(0.5)) {
        for (int64_t i = 0; i < n; ++i) O[i] = ops::pow_root(A[i]);
    } else if (bv == T(3)) {
        for (int64_t i = 0; i < n; ++i) O[i] = ops::pow_cube(A[i]);
    } else {
        return false;
    }
    return true;
}

#if defined(__FMA__)
// pow of float32 (any strides), blocks of UNARY_BLOCK: a check of the block, a vectorised pass
// through ops::powf_core on |a| (with pow's signs where the block has a negative base,
// ops::pow_signs), then libm's pow (ops::pow_real) for the elements powf_core refuses (rare:
// zeros, subnormals, infinities, NaN, |b| >= 2^40). Contiguous operands are read and written in
// place, others through the stack. NOTE: the check is a loop of its own, as in divmod_run.
[[gnu::always_inline]] inline void powf_run(const char* a, int64_t sa, const char* b, int64_t sb, char* o,
                                            int64_t so, int64_t n) {
    alignas(64) float ab[UNARY_BLOCK], bb[UNARY_BLOCK], rb[UNARY_BLOCK];
    constexpr int64_t t = sizeof(float);
    if (sa == 0) std::fill_n(ab, UNARY_BLOCK, ld<float>(a));  // a broadcast operand: once
    if (sb == 0) std::fill_n(bb, UNARY_BLOCK, ld<float>(b));
    for (int64_t i0 = 0; i0 < n; i0 += UNARY_BLOCK) {
        const int64_t m = std::min(UNARY_BLOCK, n - i0);
        const float* A = reinterpret_cast<const float*>(a + i0 * sa);
        const float* B = reinterpret_cast<const float*>(b + i0 * sb);
        if (sa != t) {
            if (sa != 0)
                for (int64_t i = 0; i < m; ++i) ab[i] = ld<float>(a + (i0 + i) * sa);
            A = ab;
        }
        if (sb != t) {
            if (sb != 0)
                for (int64_t i = 0; i < m; ++i) bb[i] = ld<float>(b + (i0 + i) * sb);
            B = bb;
        }
        // NOTE: the redo reads the operands after the results are written: an output over an
        // operand (x **= y) goes through the stack
        float* R = reinterpret_cast<float*>(o + i0 * so);
        const auto apart = [&](const float* p) { return R + m <= p || p + m <= R; };
        if (so != t || !apart(A) || !apart(B)) R = rb;
        uint32_t signs = 0, redo = 0;
        for (int64_t i = 0; i < m; ++i) {
            signs |= std::bit_cast<uint32_t>(A[i]);
            redo |= ops::powf_core_refuses(A[i], B[i]);
        }
        if (signs >> 31) {
            for (int64_t i = 0; i < m; ++i) R[i] = ops::pow_signs(A[i], B[i], ops::powf_core(std::fabs(A[i]), B[i]));
        } else {  // no negative base: pow's signs cost a fifth of the time
            for (int64_t i = 0; i < m; ++i) R[i] = ops::powf_core(A[i], B[i]);
        }
        if (redo) {
            for (int64_t i = 0; i < m; ++i)
                if (ops::powf_core_refuses(A[i], B[i])) R[i] = ops::pow_real(A[i], B[i]);
        }
        if (R == rb)
            for (int64_t i = 0; i < m; ++i) st<float>(o + (i0 + i) * so, rb[i]);
    }
}
#endif

// o = op(a, b) over n elements, each operand contiguous or, where a0 / b0, one element broadcast
// (not both): the vectorisable loops of binary_run, on its operands or on staged blocks.
template <class Op, class T, class R>
[[gnu::always_inline]] inline void binary_unit(const T* A, bool a0, const T* Bp, bool b0, R* O, int64_t n) {
    if (!a0 && !b0) {
        for (int64_t i = 0; i < n; ++i) O[i] = ops::apply2<Op, T>(at(A, i), at(Bp, i));
    } else if (b0) {
        const T bv = *Bp;
        if constexpr ((std::is_same_v<Op, ops::maximum> || std::is_same_v<Op, ops::minimum>) &&
                      std::is_floating_point_v<T>) {
            // NOTE: with a non-NaN scalar, maximum(a, b) is exactly (b > a) ? b : a (a NaN
            // a propagates, equal zeros keep a's sign): one maxps, not two compares and a blend.
            if (bv == bv) {
                if constexpr (std::is_same_v<Op, ops::maximum>)
                    for (int64_t i = 0; i < n; ++i) O[i] = bv > A[i] ? bv : A[i];
                else
                    for (int64_t i = 0; i < n; ++i) O[i] = bv < A[i] ? bv : A[i];
                return;
            }
        }
        if constexpr (std::is_same_v<Op, ops::pow> && std::is_floating_point_v<T>)
            if (pow_by_scalar(A, bv, O, n)) return;
        for (int64_t i = 0; i < n; ++i) O[i] = ops::apply2<Op, T>(at(A, i), bv);
    } else {
        const T av = *A;
        for (int64_t i = 0; i < n; ++i) O[i] = ops::apply2<Op, T>(av, at(Bp, i));
    }
}

// binary(a: strided T, b: strided T, o: strided R); a zero stride is a broadcast
// operand (or a Python scalar) and gets its own vectorisable loop.
template <class Op, class T>
[[gnu::always_inline]] inline void binary_run(const char* a, int64_t sa, const char* b, int64_t sb,
                                              char* o, int64_t so, int64_t n) {
    if constexpr (is_f16_v<T> && !requires { Op::half_native; }) {
        using RF = decltype(ops::apply2<Op, float>(0.0f, 0.0f));
        alignas(64) float ab[UNARY_BLOCK], bb[UNARY_BLOCK];
        alignas(64) RF rb[UNARY_BLOCK];
        for (int64_t i0 = 0; i0 < n; i0 += UNARY_BLOCK) {
            const int64_t m = std::min(UNARY_BLOCK, n - i0);
            halves_in(a + i0 * sa, sa, m, ab);
            halves_in(b + i0 * sb, sb, m, bb);
            for (int64_t i = 0; i < m; ++i) rb[i] = ops::apply2<Op, float>(ab[i], bb[i]);
            results_out(rb, o + i0 * so, so, m);
        }
        return;
    }
#if defined(__FMA__)
    if constexpr ((std::is_same_v<Op, ops::remainder> || std::is_same_v<Op, ops::floor_divide>) &&
                  (std::is_same_v<T, float> || std::is_same_v<T, double>))
        return divmod_run<Op, T>(a, sa, b, sb, o, so, n);
#endif
    using R = decltype(ops::apply2<Op, T>(T{}, T{}));
    const T* A = reinterpret_cast<const T*>(a);
    const T* Bp = reinterpret_cast<const T*>(b);
    R* O = reinterpret_cast<R*>(o);
    constexpr int64_t t = sizeof(T), r = sizeof(R);
#if defined(__FMA__)
    if constexpr (std::is_same_v<Op, ops::pow> && std::is_same_v<T, float>) {
        if (!(so == r && sa == t && sb == 0 && pow_by_scalar(A, *Bp, O, n))) powf_run(a, sa, b, sb, o, so, n);
        return;
    }
#endif
    if constexpr (int_divmod_v<Op, T>)
        if (int_divmod_by_scalar<Op, T>(A, sa, Bp, sb, O, so, n)) return;
    if (so == r && (sa == t || sa == 0) && (sb == t || sb == 0) && !(sa == 0 && sb == 0)) {
        binary_unit<Op, T>(A, sa == 0, Bp, sb == 0, O, n);
        return;
    }
    if constexpr (std::is_arithmetic_v<T>) {
        // A reversed real or integer operand (x + x[::-1]): staged forward by blocks as in
        // unary_run, then binary_unit's vectorised loops (float32 1000 x 1000: 3.1x -> 1.5x the
        // contiguous time, int32 7x -> 1.3x). NOTE: not complex: the loop below is as fast for
        // them (a complex add is memory-bound either way; staged measured 1.4-1.7x, unstaged 1.3x).
        const auto unit_or_0 = [](int64_t s) { return s == t || s == -t || s == 0; };
        if (so == r && (sa == -t || sb == -t) && unit_or_0(sa) && unit_or_0(sb)) {
            alignas(64) unsigned char raw_a[UNARY_BLOCK * sizeof(T)], raw_b[UNARY_BLOCK * sizeof(T)];
            T* ab = reinterpret_cast<T*>(raw_a);
            T* bb = reinterpret_cast<T*>(raw_b);
            for (int64_t i0 = 0; i0 < n; i0 += UNARY_BLOCK) {
                const int64_t m = std::min(UNARY_BLOCK, n - i0);
                const T* pa = sa == t ? A + i0 : A;
                const T* pb = sb == t ? Bp + i0 : Bp;
                if (sa == -t) {
                    reversed_into(A - i0, ab, m);
                    pa = ab;
                }
                if (sb == -t) {
                    reversed_into(Bp - i0, bb, m);
                    pb = bb;
                }
                binary_unit<Op, T>(pa, sa == 0, pb, sb == 0, O + i0, m);
            }
            return;
        }
    }
    for (int64_t i = 0; i < n; ++i)
        st<R>(o + i * so, ops::apply2<Op, T>(ld<T>(a + i * sa), ld<T>(b + i * sb)));
}

// The loops the kernel tables hold: one body each, the _wide copies for ops::math_bound ops.
template <class Op, class T>
void unary_loop(const char* x, int64_t sx, char* o, int64_t so, int64_t n) {
    unary_run<Op, T>(x, sx, o, so, n);
}
template <class Op, class T>
NDP_WIDE_ATTR void unary_loop_wide(const char* x, int64_t sx, char* o, int64_t so, int64_t n) {
    unary_run<Op, T>(x, sx, o, so, n);
}
template <class Op, class T>
void binary_loop(const char* a, int64_t sa, const char* b, int64_t sb, char* o, int64_t so, int64_t n) {
    binary_run<Op, T>(a, sa, b, sb, o, so, n);
}
template <class Op, class T>
NDP_WIDE_ATTR void binary_loop_wide(const char* a, int64_t sa, const char* b, int64_t sb, char* o, int64_t so,
                                    int64_t n) {
    binary_run<Op, T>(a, sa, b, sb, o, so, n);
}

// binary_rows(a, b, o: `rows` runs of n elements): run r starts at a + r * sa0 (and
// likewise b, o) with element strides sa, sb, so. A row-broadcast operand has sb0 == 0.
// NOTE: the inner loop is inlined, not called per row: a 1000 x 1000 broadcast add
// spent about a tenth of its time on the call and stride tests of 1000 calls.
template <class Op, class T>
[[gnu::always_inline]] inline void binary_rows_run(const char* a, int64_t sa0, int64_t sa, const char* b,
                                                   int64_t sb0, int64_t sb, char* o, int64_t so0, int64_t so,
                                                   int64_t rows, int64_t n) {
    for (int64_t r = 0; r < rows; ++r)
        binary_run<Op, T>(a + r * sa0, sa, b + r * sb0, sb, o + r * so0, so, n);
}
template <class Op, class T>
void binary_rows_loop(const char* a, int64_t sa0, int64_t sa, const char* b, int64_t sb0, int64_t sb,
                      char* o, int64_t so0, int64_t so, int64_t rows, int64_t n) {
    binary_rows_run<Op, T>(a, sa0, sa, b, sb0, sb, o, so0, so, rows, n);
}
template <class Op, class T>
NDP_WIDE_ATTR void binary_rows_loop_wide(const char* a, int64_t sa0, int64_t sa, const char* b, int64_t sb0,
                                         int64_t sb, char* o, int64_t so0, int64_t so, int64_t rows, int64_t n) {
    binary_rows_run<Op, T>(a, sa0, sa, b, sb0, sb, o, so0, so, rows, n);
}

// float64 -> float32 rounded to odd (an inexact result truncated toward zero with its last bit
// set): a float16 rounding of that is the correctly rounded float16 of the float64, where two
// nearest roundings are not (1 + 2^-11 + 2^-40 would become 1 + 2^-11, then 1.0, not 1 + 2^-10).
inline float round_to_odd(double d) {
    const float f = static_cast<float>(d);
    const double back = static_cast<double>(f);
    uint32_t b = std::bit_cast<uint32_t>(f);
    if (back != d && d == d) {
        if (std::fabs(back) > std::fabs(d)) b -= 1;
        b |= 1;
    }
    return std::bit_cast<float>(b);
}

// A cast GCC does not vectorise, through float32 blocks on the stack: every float16 cast (no
// precision is lost: float32 holds every float16, and an integer either fits float32's 24 bits
// exactly or is past float16's largest finite value either way), and bool -> float64 or complex
// (no widening of bytes to 8-byte lanes is vectorised: 1.9 ms for 10^6 bools to float64).
template <class From, class To>
inline constexpr bool staged_cast_v = !std::is_same_v<From, To> && (is_f16_v<From> || is_f16_v<To> ||
    (is_bool_v<From> && (std::is_same_v<To, double> || is_complex_v<To>)));

template <class From, class To> void cast_staged(const From* X, To* O, int64_t n) {
    alignas(64) float buf[UNARY_BLOCK];
    for (int64_t i0 = 0; i0 < n; i0 += UNARY_BLOCK) {
        const int64_t m = std::min(UNARY_BLOCK, n - i0);
        const From* x = X + i0;
        To* o = O + i0;
        if constexpr (is_f16_v<From>) {
            if constexpr (std::is_same_v<To, float>) {
                halves_to_floats(x, o, m);
                continue;
            }
            halves_to_floats(x, buf, m);
        } else if constexpr (is_bool_v<From>) {
            const uint8_t* xb = reinterpret_cast<const uint8_t*>(x);
            for (int64_t i = 0; i < m; ++i) buf[i] = xb[i] ? 1.0f : 0.0f;
        } else if constexpr (std::is_same_v<real_t<From>, double>) {
            for (int64_t i = 0; i < m; ++i) buf[i] = round_to_odd(convert<double>(x[i]));
        } else if constexpr (std::is_same_v<From, float>) {
            floats_to_halves(x, o, m);
            continue;
        } else {
            for (int64_t i = 0; i < m; ++i) buf[i] = convert<float>(x[i]);
        }
        if constexpr (is_f16_v<To>)
            floats_to_halves(buf, o, m);
        else
            for (int64_t i = 0; i < m; ++i) o[i] = convert<To>(buf[i]);
    }
}

template <class From, class To>
void cast_loop(const char* x, int64_t sx, char* o, int64_t so, int64_t n) {
    if (sx == sizeof(From) && so == sizeof(To)) {
        To* O = reinterpret_cast<To*>(o);
        if constexpr (staged_cast_v<From, To>) {
            cast_staged(reinterpret_cast<const From*>(x), O, n);
        } else if constexpr (is_bool_v<From> && !is_bool_v<To> && !is_complex_v<To>) {
            // NOTE: GCC 12 vectorises no loop that loads a bool and widens it (a mask cast to
            // float took 160 us for 10^6); the same bytes read as uint8_t and selected do.
            const uint8_t* X = reinterpret_cast<const uint8_t*>(x);
            for (int64_t i = 0; i < n; ++i) O[i] = X[i] ? To(1) : To(0);
        } else {
            const From* X = reinterpret_cast<const From*>(x);
            for (int64_t i = 0; i < n; ++i) O[i] = convert<To>(at(X, i));
        }
    } else {
        for (int64_t i = 0; i < n; ++i) st<To>(o + i * so, convert<To>(ld<From>(x + i * sx)));
    }
}

struct alignas(16) Bytes16 {
    uint64_t lo, hi;
};
template <int L> struct sized;
template <> struct sized<0> { using type = uint8_t; };
template <> struct sized<1> { using type = uint16_t; };
template <> struct sized<2> { using type = uint32_t; };
template <> struct sized<3> { using type = uint64_t; };
template <> struct sized<4> { using type = Bytes16; };

template <class T> void copy_loop(const char* x, int64_t sx, char* o, int64_t so, int64_t n) {
    if (sx == sizeof(T) && so == sizeof(T)) {
        std::memcpy(o, x, size_t(n) * sizeof(T));
    } else if (so == sizeof(T) && sx == -int64_t(sizeof(T))) {
        // a reversed row (flip): a loop of its own, which vectorises with lane reversals
        // where the general strided one gathers an element at a time (3x slower)
        T* O = reinterpret_cast<T*>(o);
        const char* last = x - (n - 1) * int64_t(sizeof(T));
        for (int64_t i = 0; i < n; ++i) O[i] = ld<T>(last + (n - 1 - i) * int64_t(sizeof(T)));
    } else if (so == sizeof(T)) {
        T* O = reinterpret_cast<T*>(o);
        for (int64_t i = 0; i < n; ++i) O[i] = ld<T>(x + i * sx);
    } else {
        for (int64_t i = 0; i < n; ++i) st<T>(o + i * so, ld<T>(x + i * sx));
    }
}

// transpose(o, so_row, x, sx_col, r0, r1, C): o (rows [r0, r1), C) with row stride
// so_row bytes and unit element stride; x(r, c) at x + r * sizeof(T) + c * sx_col,
// i.e. the source is contiguous along r (a transposed view). 32 x 32 tiles keep
// both sides in L1; inside a tile 8 x 8 (4-byte) or 4 x 4 (8-byte) blocks are
// transposed in registers, so every load and store is a full vector.
template <class T> struct Vec32 {
    typedef T type __attribute__((vector_size(32)));
};

template <class T> inline void transpose_block(char* o, int64_t so, const char* x, int64_t sx) {
    using V = typename Vec32<T>::type;
    if constexpr (sizeof(T) == 4) {
        V r[8], t[8], u[8];
        for (int k = 0; k < 8; ++k) r[k] = ld<V>(x + k * sx);
        for (int k = 0; k < 8; k += 2) {
            t[k] = __builtin_shufflevector(r[k], r[k + 1], 0, 8, 1, 9, 4, 12, 5, 13);
            t[k + 1] = __builtin_shufflevector(r[k], r[k + 1], 2, 10, 3, 11, 6, 14, 7, 15);
        }
        for (int k = 0; k < 8; k += 4)
            for (int h = 0; h < 2; ++h) {
                u[k + 2 * h] = __builtin_shufflevector(t[k + h], t[k + h + 2], 0, 1, 8, 9, 4, 5, 12, 13);
                u[k + 2 * h + 1] = __builtin_shufflevector(t[k + h], t[k + h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
            }
        for (int j = 0; j < 4; ++j) {
            st(o + j * so, __builtin_shufflevector(u[j], u[j + 4], 0, 1, 2, 3, 8, 9, 10, 11));
            st(o + (j + 4) * so, __builtin_shufflevector(u[j], u[j + 4], 4, 5, 6, 7, 12, 13, 14, 15));
        }
    } else {
        V r[4], t[4];
        for (int k = 0; k < 4; ++k) r[k] = ld<V>(x + k * sx);
        for (int k = 0; k < 4; k += 2) {
            t[k] = __builtin_shufflevector(r[k], r[k + 1], 0, 4, 2, 6);
            t[k + 1] = __builtin_shufflevector(r[k], r[k + 1], 1, 5, 3, 7);
        }
        for (int h = 0; h < 2; ++h) {
            st(o + h * so, __builtin_shufflevector(t[h], t[h + 2], 0, 1, 4, 5));
            st(o + (h + 2) * so, __builtin_shufflevector(t[h], t[h + 2], 2, 3, 6, 7));
        }
    }
}

template <class T>
void transpose_loop(char* o, int64_t so, const char* x, int64_t sx, int64_t r0, int64_t r1, int64_t C) {
    constexpr int64_t TILE = 32, B = sizeof(T) == 4 ? 8 : sizeof(T) == 8 ? 4 : 1;
    auto scalar = [&](int64_t ra, int64_t rb, int64_t ca, int64_t cb) {
        for (int64_t r = ra; r < rb; ++r)
            for (int64_t c = ca; c < cb; ++c) st<T>(o + r * so + c * sizeof(T), ld<T>(x + r * sizeof(T) + c * sx));
    };
    for (int64_t rt = r0; rt < r1; rt += TILE) {
        const int64_t re = std::min(r1, rt + TILE);
        for (int64_t ct = 0; ct < C; ct += TILE) {
            const int64_t ce = std::min(C, ct + TILE);
            if constexpr (B == 1) {
                scalar(rt, re, ct, ce);
                continue;
            } else {
                const int64_t rb = rt + (re - rt) / B * B, cb = ct + (ce - ct) / B * B;
                for (int64_t r = rt; r < rb; r += B)
                    for (int64_t c = ct; c < cb; c += B)
                        transpose_block<T>(o + r * so + c * int64_t(sizeof(T)), so, x + r * int64_t(sizeof(T)) + c * sx, sx);
                scalar(rt, rb, cb, ce);
                scalar(rb, re, ct, ce);
            }
        }
    }
}

// where over contiguous c and o, each of a and b contiguous or one broadcast value (AS, BS).
// NOTE: a bit select on the unsigned stand-in types, a mask of all ones or zeros from each
// condition byte: GCC vectorises it at every width. `c[i] ? a[i] : b[i]` stayed a branch
// (mispredicted on half of a random mask: x[x > 0] = 0 on 10^6 float32 took 1.6 ms) where
// it could not blend, as for 8-byte elements, and whenever one operand was a broadcast value.
template <class T, bool AS, bool BS>
[[gnu::always_inline]] inline void where_contig(const uint8_t* c, const T* A, const T* B, T* O, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        const T x = A[AS ? 0 : i], y = B[BS ? 0 : i];
        if constexpr (std::is_unsigned_v<T>) {
            const T m = T(0) - T(c[i] != 0);
            O[i] = T((x & m) | (y & T(~m)));
        } else {  // Bytes16: the same select on its two 8-byte halves
            const uint64_t m = uint64_t(0) - uint64_t(c[i] != 0);
            O[i] = T{(x.lo & m) | (y.lo & ~m), (x.hi & m) | (y.hi & ~m)};
        }
    }
}

// where(c: strided bool, a, b: strided T, o: strided T); T is a same-size stand-in type.
template <class T>
void where_loop(const char* c, int64_t sc, const char* a, int64_t sa, const char* b, int64_t sb,
                char* o, int64_t so, int64_t n) {
    constexpr int64_t S = sizeof(T);
    if (sc == 1 && so == S && (sa == S || sa == 0) && (sb == S || sb == 0)) {
        const auto* C = reinterpret_cast<const uint8_t*>(c);  // bools as bytes (see at())
        const T* A = reinterpret_cast<const T*>(a);
        const T* B = reinterpret_cast<const T*>(b);
        T* O = reinterpret_cast<T*>(o);
        if (sa == S && sb == S) where_contig<T, false, false>(C, A, B, O, n);
        else if (sa == S) where_contig<T, false, true>(C, A, B, O, n);
        else if (sb == S) where_contig<T, true, false>(C, A, B, O, n);
        else where_contig<T, true, true>(C, A, B, O, n);
        return;
    }
    for (int64_t i = 0; i < n; ++i) {
        const T x = ld<T>(a + i * sa), y = ld<T>(b + i * sb);
        st<T>(o + i * so, ld<uint8_t>(c + i * sc) ? x : y);
    }
}

template <class T> void fill_loop(char* o, int64_t so, int64_t n, const void* value) {
    const T v = ld<T>(static_cast<const char*>(value));
    if (so == sizeof(T)) {
        T* O = reinterpret_cast<T*>(o);
        for (int64_t i = 0; i < n; ++i) O[i] = v;
    } else {
        for (int64_t i = 0; i < n; ++i) st<T>(o + i * so, v);
    }
}

// Philox-4x32-10 (Salmon et al., SC 2011), the stream every backend draws: block i is the
// counter ctr + i (128 bits, wrapping) enciphered under `key` in ten rounds.
inline void philox_block(uint32_t k0, uint32_t k1, uint64_t lo, uint64_t hi, uint32_t* out) {
    uint32_t c0 = uint32_t(lo), c1 = uint32_t(lo >> 32), c2 = uint32_t(hi), c3 = uint32_t(hi >> 32);
    for (int r = 0; r < 10; ++r) {
        const uint64_t p0 = uint64_t(0xD2511F53u) * c0, p1 = uint64_t(0xCD9E8D57u) * c2;
        const uint32_t n0 = uint32_t(p1 >> 32) ^ c1 ^ k0, n2 = uint32_t(p0 >> 32) ^ c3 ^ k1;
        c1 = uint32_t(p1), c3 = uint32_t(p0), c0 = n0, c2 = n2;
        k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

#if defined(__AVX512F__) || defined(__AVX2__)
// philox::LANES blocks at once, one per 32-bit lane (16 with AVX-512, 8 with AVX2). NOTE: written
// with intrinsics: GCC vectorises the 32 x 32 -> 64-bit products of the plain loop with vpmullq
// (a full 64-bit multiply, 3 uops) and the lane inserts and interleaved stores around them,
// slower than scalar code (10^6 words, one thread, x86-64-v4: 1.0-1.6 ms against the scalar
// loop's 0.95; these take 0.57).
namespace philox {
#if defined(__AVX512F__)
constexpr int LANES = 16;
using Vec = __m512i;
inline Vec set1(uint32_t v) { return _mm512_set1_epi32(int(v)); }
inline Vec vxor(Vec a, Vec b) { return _mm512_xor_si512(a, b); }
inline void mulhilo(Vec a, Vec m, Vec& hi, Vec& lo) {
    const Vec even = _mm512_mul_epu32(a, m), odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m);
    hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
    lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
}
inline Vec iota_plus(uint32_t v) {
    return _mm512_add_epi32(set1(v), _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}
// out[4 l + j] = c_j[l]. After the unpacks, 128-bit lane q of w_k holds block 4 q + k; the
// shuffles gather blocks 4 t .. 4 t + 3 into the t-th store.
inline void store_blocks(Vec c0, Vec c1, Vec c2, Vec c3, uint32_t* out) {
    const Vec a = _mm512_unpacklo_epi32(c0, c1), b = _mm512_unpackhi_epi32(c0, c1);
    const Vec c = _mm512_unpacklo_epi32(c2, c3), d = _mm512_unpackhi_epi32(c2, c3);
    const Vec w0 = _mm512_unpacklo_epi64(a, c), w1 = _mm512_unpackhi_epi64(a, c);
    const Vec w2 = _mm512_unpacklo_epi64(b, d), w3 = _mm512_unpackhi_epi64(b, d);
    const Vec t0 = _mm512_shuffle_i32x4(w0, w1, 0x44), t1 = _mm512_shuffle_i32x4(w2, w3, 0x44);
    const Vec t2 = _mm512_shuffle_i32x4(w0, w1, 0xEE), t3 = _mm512_shuffle_i32x4(w2, w3, 0xEE);
    _mm512_storeu_si512(out, _mm512_shuffle_i32x4(t0, t1, 0x88));
    _mm512_storeu_si512(out + 16, _mm512_shuffle_i32x4(t0, t1, 0xDD));
    _mm512_storeu_si512(out + 32, _mm512_shuffle_i32x4(t2, t3, 0x88));
    _mm512_storeu_si512(out + 48, _mm512_shuffle_i32x4(t2, t3, 0xDD));
}
#else
constexpr int LANES = 8;
using Vec = __m256i;
inline Vec set1(uint32_t v) { return _mm256_set1_epi32(int(v)); }
inline Vec vxor(Vec a, Vec b) { return _mm256_xor_si256(a, b); }
inline void mulhilo(Vec a, Vec m, Vec& hi, Vec& lo) {
    const Vec even = _mm256_mul_epu32(a, m), odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
    hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
    lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}
inline Vec iota_plus(uint32_t v) { return _mm256_add_epi32(set1(v), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)); }
// out[4 l + j] = c_j[l]: 128-bit lane q of w_k holds block 4 q + k after the unpacks.
inline void store_blocks(Vec c0, Vec c1, Vec c2, Vec c3, uint32_t* out) {
    const Vec a = _mm256_unpacklo_epi32(c0, c1), b = _mm256_unpackhi_epi32(c0, c1);
    const Vec c = _mm256_unpacklo_epi32(c2, c3), d = _mm256_unpackhi_epi32(c2, c3);
    const Vec w0 = _mm256_unpacklo_epi64(a, c), w1 = _mm256_unpackhi_epi64(a, c);
    const Vec w2 = _mm256_unpacklo_epi64(b, d), w3 = _mm256_unpackhi_epi64(b, d);
    _mm256_storeu_si256(reinterpret_cast<Vec*>(out), _mm256_permute2x128_si256(w0, w1, 0x20));
    _mm256_storeu_si256(reinterpret_cast<Vec*>(out + 8), _mm256_permute2x128_si256(w2, w3, 0x20));
    _mm256_storeu_si256(reinterpret_cast<Vec*>(out + 16), _mm256_permute2x128_si256(w0, w1, 0x31));
    _mm256_storeu_si256(reinterpret_cast<Vec*>(out + 24), _mm256_permute2x128_si256(w2, w3, 0x31));
}
#endif

// LANES blocks from counter (hi, lo), whose counters differ in their first word only (the caller
// checked).
inline void lanes(uint32_t k0, uint32_t k1, uint64_t lo, uint64_t hi, uint32_t* out) {
    Vec c0 = iota_plus(uint32_t(lo)), c1 = set1(uint32_t(lo >> 32)), c2 = set1(uint32_t(hi)), c3 = set1(uint32_t(hi >> 32));
    const Vec m0 = set1(0xD2511F53u), m1 = set1(0xCD9E8D57u);  // mul_epu32 reads the even lanes
    for (int r = 0; r < 10; ++r) {
        Vec h0, l0, h1, l1;
        mulhilo(c0, m0, h0, l0);
        mulhilo(c2, m1, h1, l1);
        c0 = vxor(vxor(h1, c1), set1(k0));
        c2 = vxor(vxor(h0, c3), set1(k1));
        c1 = l1, c3 = l0;
        k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    }
    store_blocks(c0, c1, c2, c3, out);
}
}  // namespace philox
#endif

void philox_loop(uint64_t key, uint64_t ctr_lo, uint64_t ctr_hi, int64_t b, int64_t e, uint32_t* out) {
    const uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
    for (int64_t i = b; i < e;) {
        const uint64_t lo = ctr_lo + uint64_t(i), hi = ctr_hi + (lo < ctr_lo ? 1 : 0);
#if defined(__AVX512F__) || defined(__AVX2__)
        if (e - i >= philox::LANES && uint32_t(lo) <= UINT32_MAX - (philox::LANES - 1)) {
            philox::lanes(k0, k1, lo, hi, out + 4 * (i - b));
            i += philox::LANES;
            continue;
        }
#endif
        philox_block(k0, k1, lo, hi, out + 4 * (i - b));
        ++i;
    }
}

template <class T> int8_t dtype_code() {
    int8_t code = -1;
    for_each_dtype([&](auto d) {
        if constexpr (std::is_same_v<typename dt_type<decltype(d)::value>::type, T>)
            code = decltype(d)::value;
    });
    return code;
}

}  // namespace

void fill_elementwise(Kernels& k) {
    for_each_dtype([&](auto d) {
        constexpr int D = decltype(d)::value;
        using T = typename dt_type<D>::type;
#define X(name)                                                                        \
    if constexpr (ops::name::ok<T>) {                                                  \
        if constexpr (ops::math_bound<ops::name>)                                      \
            k.unary[ops::u_##name][D] = unary_loop_wide<ops::name, T>;                 \
        else                                                                           \
            k.unary[ops::u_##name][D] = unary_loop<ops::name, T>;                      \
        k.unary_out[ops::u_##name][D] =                                                \
            dtype_code<decltype(ops::apply1<ops::name, T>(T{}))>();                     \
    } else {                                                                           \
        k.unary[ops::u_##name][D] = nullptr;                                           \
        k.unary_out[ops::u_##name][D] = -1;                                            \
    }
        NDP_UNARY_OPS(X)
#undef X
#define X(name)                                                                        \
    if constexpr (ops::name::ok<T>) {                                                  \
        if constexpr (ops::math_bound<ops::name>) {                                    \
            k.binary[ops::b_##name][D] = binary_loop_wide<ops::name, T>;               \
            k.binary_rows[ops::b_##name][D] = binary_rows_loop_wide<ops::name, T>;     \
        } else {                                                                       \
            k.binary[ops::b_##name][D] = binary_loop<ops::name, T>;                    \
            k.binary_rows[ops::b_##name][D] = binary_rows_loop<ops::name, T>;          \
        }                                                                              \
        k.binary_out[ops::b_##name][D] =                                               \
            dtype_code<decltype(ops::apply2<ops::name, T>(T{}, T{}))>();                \
    } else {                                                                           \
        k.binary[ops::b_##name][D] = nullptr;                                          \
        k.binary_rows[ops::b_##name][D] = nullptr;                                     \
        k.binary_out[ops::b_##name][D] = -1;                                           \
    }
        NDP_BINARY_OPS(X)
#undef X
        for_each_dtype([&](auto e) {
            constexpr int E = decltype(e)::value;
            k.cast[D][E] = cast_loop<T, typename dt_type<E>::type>;
        });
    });
    k.copy[0] = copy_loop<uint8_t>;
    k.copy[1] = copy_loop<uint16_t>;
    k.copy[2] = copy_loop<uint32_t>;
    k.copy[3] = copy_loop<uint64_t>;
    k.copy[4] = copy_loop<Bytes16>;
    k.transpose[0] = transpose_loop<uint8_t>;
    k.transpose[1] = transpose_loop<uint16_t>;
    k.transpose[2] = transpose_loop<uint32_t>;
    k.transpose[3] = transpose_loop<uint64_t>;
    k.where[0] = where_loop<uint8_t>;
    k.where[1] = where_loop<uint16_t>;
    k.where[2] = where_loop<uint32_t>;
    k.where[3] = where_loop<uint64_t>;
    k.where[4] = where_loop<Bytes16>;
    k.fill[0] = fill_loop<uint8_t>;
    k.fill[1] = fill_loop<uint16_t>;
    k.fill[2] = fill_loop<uint32_t>;
    k.fill[3] = fill_loop<uint64_t>;
    k.fill[4] = fill_loop<Bytes16>;
    k.philox = philox_loop;
}

}  // namespace ndp::NDP_ISA
