// Device-side types and conversions: the dtype table, float16 computed in float,
// complex as cuda::std::complex, NumPy's astype for every pair of dtypes.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cuda/std/complex>
#include <cuda/std/cstdint>
#include <cuda/std/limits>
#include <cuda/std/type_traits>

#include "common.h"

namespace ndp {

using c64 = cuda::std::complex<float>;
using c128 = cuda::std::complex<double>;
using f16 = __half;

template <int D> struct dt_type;
template <> struct dt_type<BOOL> { using type = bool; };
template <> struct dt_type<I8> { using type = int8_t; };
template <> struct dt_type<I16> { using type = int16_t; };
template <> struct dt_type<I32> { using type = int32_t; };
template <> struct dt_type<I64> { using type = int64_t; };
template <> struct dt_type<U8> { using type = uint8_t; };
template <> struct dt_type<U16> { using type = uint16_t; };
template <> struct dt_type<U32> { using type = uint32_t; };
template <> struct dt_type<U64> { using type = uint64_t; };
template <> struct dt_type<F16> { using type = f16; };
template <> struct dt_type<F32> { using type = float; };
template <> struct dt_type<F64> { using type = double; };
template <> struct dt_type<C64> { using type = c64; };
template <> struct dt_type<C128> { using type = c128; };
template <int D> using dt_t = typename dt_type<D>::type;

template <class T> struct is_complex : cuda::std::false_type {};
template <class T> struct is_complex<cuda::std::complex<T>> : cuda::std::true_type {};
template <class T> inline constexpr bool is_complex_v = is_complex<T>::value;
template <class T> inline constexpr bool is_bool_v = cuda::std::is_same_v<T, bool>;
template <class T> inline constexpr bool is_f16_v = cuda::std::is_same_v<T, f16>;
template <class T> inline constexpr bool is_float_v = cuda::std::is_floating_point_v<T> || is_f16_v<T>;
template <class T> inline constexpr bool is_int_v = cuda::std::is_integral_v<T> && !is_bool_v<T>;

// The type float16 is computed in, and the way back.
template <class T> struct compute { using type = T; };
template <> struct compute<f16> { using type = float; };
template <class T> using compute_t = typename compute<T>::type;
template <class T> __device__ __forceinline__ compute_t<T> widen(T v) {
    if constexpr (is_f16_v<T>) return __half2float(v);
    else return v;
}

template <class T> struct real_of { using type = T; };
template <class T> struct real_of<cuda::std::complex<T>> { using type = T; };
template <class T> using real_t = typename real_of<T>::type;

// Signed overflow wraps, as in NumPy: through unsigned types at least as wide as int.
template <class T>
using wide_unsigned_t = cuda::std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, cuda::std::make_unsigned_t<T>>;
template <class T> __device__ __forceinline__ T wrap_add(T a, T b) {
    using U = wide_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <class T> __device__ __forceinline__ T wrap_sub(T a, T b) {
    using U = wide_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <class T> __device__ __forceinline__ T wrap_mul(T a, T b) {
    using U = wide_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

// Float -> integer as NumPy on x86-64: in-range values truncate, NaN and out-of-range
// values give the "integer indefinite" (the minimum of the 32- or 64-bit conversion).
template <class To> __device__ __forceinline__ To float_to_int(double d) {
    if constexpr (sizeof(To) == 8 && cuda::std::is_unsigned_v<To>) {
        if (d >= 0.0 && d < 18446744073709551616.0) return static_cast<To>(d);
        if (d >= -9223372036854775808.0 && d < 0.0) return static_cast<To>(static_cast<int64_t>(d));
        return static_cast<To>(uint64_t(1) << 63);
    } else if constexpr (sizeof(To) == 8 || (sizeof(To) == 4 && cuda::std::is_unsigned_v<To>)) {
        if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) return static_cast<To>(static_cast<int64_t>(d));
        return static_cast<To>(INT64_MIN);
    } else {
        if (d > -2147483649.0 && d < 2147483648.0) return static_cast<To>(static_cast<int32_t>(d));
        return static_cast<To>(INT32_MIN);
    }
}

// NumPy's astype for every pair of storage types (complex -> real drops the imaginary part).
template <class To, class From> __device__ __forceinline__ To convert(From v) {
    if constexpr (cuda::std::is_same_v<To, From>) {
        return v;
    } else if constexpr (is_f16_v<From>) {
        return convert<To>(__half2float(v));
    } else if constexpr (is_f16_v<To>) {
        if constexpr (is_complex_v<From>) return __double2half(static_cast<double>(v.real()));
        else if constexpr (cuda::std::is_same_v<From, float>) return __float2half_rn(v);
        else if constexpr (cuda::std::is_same_v<From, double>) return __double2half(v);
        else if constexpr (is_bool_v<From>) return __float2half_rn(v ? 1.0f : 0.0f);
        else return __double2half(static_cast<double>(v));  // rounds once, as NumPy
    } else if constexpr (is_complex_v<From>) {
        if constexpr (is_complex_v<To>) return To(static_cast<real_t<To>>(v.real()), static_cast<real_t<To>>(v.imag()));
        else if constexpr (is_bool_v<To>) return v.real() != 0 || v.imag() != 0;
        else return convert<To>(v.real());
    } else if constexpr (is_complex_v<To>) {
        return To(convert<real_t<To>>(v), real_t<To>(0));
    } else if constexpr (is_bool_v<To>) {
        return v != From(0);
    } else if constexpr (is_int_v<To> && cuda::std::is_floating_point_v<From>) {
        return float_to_int<To>(static_cast<double>(v));
    } else {
        return static_cast<To>(v);
    }
}

template <class T> __device__ __forceinline__ bool is_nan(T v) {
    if constexpr (is_complex_v<T>) return v.real() != v.real() || v.imag() != v.imag();
    else if constexpr (is_float_v<T>) return v != v;
    else return false;
}

// Truthiness (logical ops, any/all, where conditions): nonzero; NaN is true.
template <class T> __device__ __forceinline__ bool truthy(T v) {
    if constexpr (is_complex_v<T>) return v.real() != 0 || v.imag() != 0;
    else return v != T(0);
}

// An element moved as raw bits, by log2 of its item size (copy, fill, where, gathers).
struct alignas(16) Bytes16 {
    uint64_t lo, hi;
};
template <int L> using word_t = cuda::std::conditional_t<
    L == 0, uint8_t,
    cuda::std::conditional_t<L == 1, uint16_t, cuda::std::conditional_t<L == 2, uint32_t, cuda::std::conditional_t<L == 3, uint64_t, Bytes16>>>>;

// 16-byte (or narrower) aligned groups of V elements: one LDG/STG.128 per thread.
template <class T, int V> struct alignas(sizeof(T) * V) Pack {
    T v[V];
};

// Element offsets of linear index i in each of `nargs` operands of the plan.
template <int NARGS> __device__ __forceinline__ void offsets(const Plan& p, int64_t i, int64_t* off) {
#pragma unroll
    for (int a = 0; a < NARGS; ++a) off[a] = 0;
#pragma unroll
    for (int d = MAXDIM - 1; d >= 0; --d) {
        if (d < p.ndim) {
            const int64_t s = p.shape[d];
            const int64_t q = i / s;
            const int64_t r = i - q * s;
#pragma unroll
            for (int a = 0; a < NARGS; ++a) off[a] += r * p.strides[a][d];
            i = q;
        }
    }
}

inline constexpr int BLOCK = 256;

}  // namespace ndp
