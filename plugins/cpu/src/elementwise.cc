// Inner loops of the elementwise kernels, compiled once per ISA level
// (NDP_ISA names the namespace). One template per op family, instantiated for
// every dtype an op accepts through for_each_dtype.
#include "kernels.h"

#ifndef NDP_ISA
#define NDP_ISA baseline
#endif

namespace ndp::NDP_ISA {
namespace {

template <class T> inline T ld(const char* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}
template <class T> inline void st(char* p, T v) { std::memcpy(p, &v, sizeof(T)); }

// unary(x: strided T, o: strided R), n elements.
template <class Op, class T>
void unary_loop(const char* x, int64_t sx, char* o, int64_t so, int64_t n) {
    using R = decltype(ops::apply1<Op, T>(T{}));
    if (sx == sizeof(T) && so == sizeof(R)) {
        const T* X = reinterpret_cast<const T*>(x);
        R* O = reinterpret_cast<R*>(o);
        for (int64_t i = 0; i < n; ++i) O[i] = ops::apply1<Op, T>(X[i]);
    } else {
        for (int64_t i = 0; i < n; ++i) st<R>(o + i * so, ops::apply1<Op, T>(ld<T>(x + i * sx)));
    }
}

// binary(a: strided T, b: strided T, o: strided R); a zero stride is a broadcast
// operand (or a Python scalar) and gets its own vectorisable loop.
template <class Op, class T>
void binary_loop(const char* a, int64_t sa, const char* b, int64_t sb, char* o, int64_t so,
                 int64_t n) {
    using R = decltype(ops::apply2<Op, T>(T{}, T{}));
    const T* A = reinterpret_cast<const T*>(a);
    const T* Bp = reinterpret_cast<const T*>(b);
    R* O = reinterpret_cast<R*>(o);
    constexpr int64_t t = sizeof(T), r = sizeof(R);
    if (so == r) {
        if (sa == t && sb == t) {
            for (int64_t i = 0; i < n; ++i) O[i] = ops::apply2<Op, T>(A[i], Bp[i]);
            return;
        }
        if (sa == t && sb == 0) {
            const T bv = *Bp;
            for (int64_t i = 0; i < n; ++i) O[i] = ops::apply2<Op, T>(A[i], bv);
            return;
        }
        if (sa == 0 && sb == t) {
            const T av = *A;
            for (int64_t i = 0; i < n; ++i) O[i] = ops::apply2<Op, T>(av, Bp[i]);
            return;
        }
    }
    for (int64_t i = 0; i < n; ++i)
        st<R>(o + i * so, ops::apply2<Op, T>(ld<T>(a + i * sa), ld<T>(b + i * sb)));
}

template <class From, class To>
void cast_loop(const char* x, int64_t sx, char* o, int64_t so, int64_t n) {
    if (sx == sizeof(From) && so == sizeof(To)) {
        const From* X = reinterpret_cast<const From*>(x);
        To* O = reinterpret_cast<To*>(o);
        for (int64_t i = 0; i < n; ++i) O[i] = convert<To>(X[i]);
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
    } else if (so == sizeof(T)) {
        T* O = reinterpret_cast<T*>(o);
        for (int64_t i = 0; i < n; ++i) O[i] = ld<T>(x + i * sx);
    } else {
        for (int64_t i = 0; i < n; ++i) st<T>(o + i * so, ld<T>(x + i * sx));
    }
}

// where(c: strided bool, a, b: strided T, o: strided T); T is a same-size stand-in type.
template <class T>
void where_loop(const char* c, int64_t sc, const char* a, int64_t sa, const char* b, int64_t sb,
                char* o, int64_t so, int64_t n) {
    if (sc == 1 && sa == sizeof(T) && sb == sizeof(T) && so == sizeof(T)) {
        const T* A = reinterpret_cast<const T*>(a);
        const T* Bp = reinterpret_cast<const T*>(b);
        T* O = reinterpret_cast<T*>(o);
        for (int64_t i = 0; i < n; ++i) O[i] = c[i] ? A[i] : Bp[i];
        return;
    }
    for (int64_t i = 0; i < n; ++i)
        st<T>(o + i * so, ld<bool>(c + i * sc) ? ld<T>(a + i * sa) : ld<T>(b + i * sb));
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
        k.unary[ops::u_##name][D] = unary_loop<ops::name, T>;                          \
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
        k.binary[ops::b_##name][D] = binary_loop<ops::name, T>;                        \
        k.binary_out[ops::b_##name][D] =                                               \
            dtype_code<decltype(ops::apply2<ops::name, T>(T{}, T{}))>();                \
    } else {                                                                           \
        k.binary[ops::b_##name][D] = nullptr;                                          \
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
}

}  // namespace ndp::NDP_ISA
