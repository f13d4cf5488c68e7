// Shared definitions of the ndplane cpu kernels: the dtype table, float16,
// complex helpers, array views and the strided iteration plan.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if !defined(__FLT16_MAX__)
#error "ndplane-cpu needs a compiler with _Float16 (GCC >= 12 or Clang >= 15 on x86-64/aarch64)"
#endif

namespace ndp {

template <class T> struct is_complex : std::false_type {};
template <class T> struct is_complex<std::complex<T>> : std::true_type {};
template <class T> inline constexpr bool is_complex_v = is_complex<T>::value;

// Loads / stores a T (a scalar or a GCC vector) at any address: strided and unaligned data.
template <class T> inline T ld(const void* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}
template <class T> inline void st(void* p, T v) {
    if constexpr (is_complex_v<T>) {
        // NOTE: the two parts stored one by one. A std::complex result lives in two registers;
        // one memcpy of it made GCC spill both parts to the stack and reload them as one wider
        // value, a store-forwarding stall of about 3 ns per element: every strided complex
        // loop (negative(x) of a reversed or stepped complex64 view) ran 30x slower than the
        // contiguous one.
        using R = typename T::value_type;
        const R re = v.real(), im = v.imag();
        std::memcpy(p, &re, sizeof(R));
        std::memcpy(static_cast<char*>(p) + sizeof(R), &im, sizeof(R));
    } else {
        std::memcpy(p, &v, sizeof(T));
    }
}

using f16 = _Float16;
using c64 = std::complex<float>;
using c128 = std::complex<double>;

// Dtype codes follow ndplane.ALL_DTYPES order.
enum DT : int {
    BOOL, I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, C64, C128, NDT
};

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

inline constexpr int ITEMSIZE[NDT] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 8, 16};
inline constexpr const char* DT_NAME[NDT] = {
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128"};

// Calls f(std::integral_constant<int, D>{}) for every dtype code D.
template <class F, int... D>
inline void for_each_dtype_impl(F&& f, std::integer_sequence<int, D...>) {
    (f(std::integral_constant<int, D>{}), ...);
}
template <class F> inline void for_each_dtype(F&& f) {
    for_each_dtype_impl(f, std::make_integer_sequence<int, NDT>{});
}

// Calls f(T{}) with the C++ type T of the dtype code `dtype` (`if constexpr` inside f picks the
// types it takes).
template <class F> inline void dispatch(int dtype, F&& f) {
    for_each_dtype([&](auto d) {
        if (decltype(d)::value == dtype) f(typename dt_type<decltype(d)::value>::type{});
    });
}

template <class T> inline constexpr bool is_bool_v = std::is_same_v<T, bool>;
template <class T> inline constexpr bool is_f16_v = std::is_same_v<T, f16>;
template <class T>
inline constexpr bool is_float_v = std::is_floating_point_v<T> || is_f16_v<T>;
template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !is_bool_v<T>;
template <class T> inline constexpr bool is_sint_v = is_int_v<T> && std::is_signed_v<T>;
template <class T> inline constexpr bool is_uint_v = is_int_v<T> && std::is_unsigned_v<T>;

// The type float16 is computed in.
template <class T> struct compute { using type = T; };
template <> struct compute<f16> { using type = float; };
template <class T> using compute_t = typename compute<T>::type;

// Real part type of a complex (identity otherwise).
template <class T> struct real_of { using type = T; };
template <class T> struct real_of<std::complex<T>> { using type = T; };
template <class T> using real_t = typename real_of<T>::type;

// NOTE: signed overflow is UB in C++; integer arithmetic wraps through unsigned
// types at least as wide as int (uint16*uint16 would promote to signed int).
template <class T>
using wide_unsigned_t =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
template <class T> inline T wrap_add(T a, T b) {
    using U = wide_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <class T> inline T wrap_sub(T a, T b) {
    using U = wide_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <class T> inline T wrap_mul(T a, T b) {
    using U = wide_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

// Float -> integer conversion without UB, matching NumPy on x86-64 for in-range
// values; NaN and out-of-range values give the "integer indefinite" result.
template <class To, class From> inline To float_to_int(From v) {
    double d = static_cast<double>(v);
    if constexpr (sizeof(To) == 8 && std::is_unsigned_v<To>) {
        if (d >= 0.0 && d < 18446744073709551616.0) return static_cast<To>(d);
        if (d >= -9223372036854775808.0 && d < 0.0)
            return static_cast<To>(static_cast<int64_t>(d));
        return static_cast<To>(uint64_t(1) << 63);
    } else if constexpr (sizeof(To) == 8 || (sizeof(To) == 4 && std::is_unsigned_v<To>)) {
        if (d >= -9223372036854775808.0 && d < 9223372036854775808.0)
            return static_cast<To>(static_cast<int64_t>(d));
        return static_cast<To>(std::numeric_limits<int64_t>::min());
    } else {
        if (d > -2147483649.0 && d < 2147483648.0) return static_cast<To>(static_cast<int32_t>(d));
        return static_cast<To>(std::numeric_limits<int32_t>::min());
    }
}

// NumPy's astype for every pair of dtypes (complex -> real drops the imaginary part).
template <class To, class From> inline To convert(From v) {
    if constexpr (std::is_same_v<To, From>) {
        return v;
    } else if constexpr (is_complex_v<From>) {
        if constexpr (is_complex_v<To>)
            return To(static_cast<typename To::value_type>(v.real()),
                      static_cast<typename To::value_type>(v.imag()));
        else if constexpr (is_bool_v<To>)
            return v.real() != 0 || v.imag() != 0;
        else
            return convert<To>(v.real());
    } else if constexpr (is_complex_v<To>) {
        return To(convert<typename To::value_type>(v), 0);
    } else if constexpr (is_bool_v<To>) {
        return v != From(0);
    } else if constexpr (is_int_v<To> && is_float_v<From>) {
        return float_to_int<To>(v);
    } else {
        return static_cast<To>(v);
    }
}

template <class T> inline bool is_nan(T v) {
    if constexpr (is_complex_v<T>) return std::isnan(v.real()) || std::isnan(v.imag());
    else if constexpr (is_float_v<T>) return v != v;
    else return false;
}

// Truthiness (logical ops, any/all, where conditions): nonzero, NaN is true.
template <class T> inline bool truthy(T v) {
    if constexpr (is_complex_v<T>) return v.real() != 0 || v.imag() != 0;
    else return v != T(0);
}

// The truthiness of p[i]. NOTE: bools are read as bytes (elementwise.cc says why); truthiness is
// then a byte test, which vectorises.
template <class T> [[gnu::always_inline]] inline bool truth_at(const T* p, int64_t i) {
    if constexpr (is_bool_v<T>) return reinterpret_cast<const uint8_t*>(p)[i] != 0;
    else return truthy(p[i]);
}

// ---------------------------------------------------------------------------
// Array views and errors
// ---------------------------------------------------------------------------
inline constexpr int MAXDIM = 64;

struct View {
    char* data = nullptr;  // address of element 0 (buffer + offset)
    int dtype = 0;
    int ndim = 0;
    int64_t size = 1;
    int64_t shape[MAXDIM];
    int64_t strides[MAXDIM];  // in elements
    int itemsize() const { return ITEMSIZE[dtype]; }
};

struct type_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};
struct index_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------------------
// Iteration plan: the shared shape of up to 4 operands with their byte
// strides, size-1 axes dropped and contiguous-compatible axes merged.
// ---------------------------------------------------------------------------
struct Plan {
    int nd = 0;
    int nops = 0;
    int64_t size = 0;
    int64_t shape[MAXDIM];
    int64_t st[4][MAXDIM];  // byte strides per operand
    char* base[4];
};

// views[k] must all have the shape of views[0]; `reorder` sorts axes by the
// first operand's strides (for copies into arbitrary views).
Plan make_plan(const View* const* views, int nops, bool reorder = false);

// Calls f(ptrs, n) for consecutive runs along the innermost axis covering the
// linear (C-order) element range [begin, end). Inner byte strides are p.st[k][p.nd-1].
template <int N, class F>
inline void run_range(const Plan& p, int64_t begin, int64_t end, F&& f) {
    const int nd = p.nd;
    int64_t idx[MAXDIM];
    int64_t rem = begin;
    char* ptr[N];
    for (int k = 0; k < N; ++k) ptr[k] = p.base[k];
    for (int d = nd - 1; d >= 0; --d) {
        idx[d] = rem % p.shape[d];
        rem /= p.shape[d];
        for (int k = 0; k < N; ++k) ptr[k] += idx[d] * p.st[k][d];
    }
    int64_t left = end - begin;
    const int in = nd - 1;
    while (left > 0) {
        int64_t n = p.shape[in] - idx[in];
        if (n > left) n = left;
        f(ptr, n);
        left -= n;
        if (left == 0) break;
        for (int k = 0; k < N; ++k) ptr[k] += n * p.st[k][in];
        idx[in] += n;
        for (int d = in; d > 0 && idx[d] == p.shape[d]; --d) {
            idx[d] = 0;
            ++idx[d - 1];
            for (int k = 0; k < N; ++k) ptr[k] += p.st[k][d - 1] - p.shape[d] * p.st[k][d];
        }
    }
}

// ---------------------------------------------------------------------------
// Threads: a small pool, used only above a size threshold.
// ---------------------------------------------------------------------------
int num_threads();
void set_num_threads(int n);
// Runs fn(begin, end) over [0, n) on one thread per `grain` elements, up to the thread count
// (serially below 2 * grain), in chunks of a quarter grain or more (the last may be less); fn must
// not throw.
void parallel_for(int64_t n, int64_t grain, void (*fn)(void*, int64_t, int64_t), void* ctx);
// The chunk bounds parallel_for cuts [0, n) into on `threads` threads ({0, n}: serial); for tests.
std::vector<int64_t> chunk_bounds(int64_t n, int64_t grain, int threads);

template <class F> inline void parallel_range(int64_t n, int64_t grain, F&& f) {
    if (n < 2 * grain || num_threads() < 2) {
        if (n > 0) f(int64_t(0), n);
        return;
    }
    using FF = std::remove_reference_t<F>;
    parallel_for(
        n, grain, [](void* c, int64_t b, int64_t e) { (*static_cast<FF*>(c))(b, e); },
        const_cast<void*>(static_cast<const void*>(&f)));
}

// Elements processed per thread chunk for cheap elementwise work.
inline constexpr int64_t GRAIN = 1 << 15;

}  // namespace ndp
