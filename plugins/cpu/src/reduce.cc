// Reductions and scans over the last axis, compiled once per ISA level.
//
// reduce(op, x, out): x (M, K) with any element strides, out (M,) contiguous:
//   sum/prod/max/min of x's dtype (the driver casts x first when out is wider),
//   argmax/argmin as int64, any/all as bool.
// Rows are reduced in place when K is the unit-stride axis ("horizontal", NumPy's
// pairwise summation); when M is the unit-stride axis (a transposed view, i.e. a
// reduction over axis 0) whole rows are accumulated "vertically" into a vector
// of M accumulators, with blocks of rows summed pairwise.
// scan(op, x, out): x (M, K) any strides, out (M, K) contiguous of x's dtype.
#include <algorithm>
#include <bit>
#include <memory>
#include <vector>

#include "half.h"
#include "kernels.h"

#ifndef NDP_ISA
#define NDP_ISA baseline
#endif

namespace ndp::NDP_ISA {
namespace {

template <class A, class T> inline A load_acc(const char* p) {
    if constexpr (std::is_same_v<A, T>) return ld<T>(p);
    else return static_cast<A>(ld<T>(p));
}

// Eight lanes of A in one GCC vector (one AVX register for float, split on
// narrower ISAs), for the fused softmax's running maximum below.
template <class A> struct lanes8;
template <> struct lanes8<float> { typedef float type __attribute__((vector_size(32))); };
template <> struct lanes8<double> { typedef double type __attribute__((vector_size(64))); };
template <class A> using V8 = typename lanes8<A>::type;

// The sum leaf's vector: 32 bytes (8 floats or 4 doubles) on every ISA. NOTE: 64-byte
// vectors on x86-64-v4 measured 5-15 % slower on this loop (AMD EPYC, single thread, the
// same buffer), float and double alike; 32 bytes also fit AVX2's sixteen registers.
template <class A> struct sumvec { typedef A type __attribute__((vector_size(32))); };
template <class A> using SumV = typename sumvec<A>::type;

// Pairwise summation of a contiguous float/double run, with leaves of up to 1024 L
// elements (L lanes per vector: 8192 floats, 4096 doubles) summed as a two-level cascade
// without calls or horizontal adds inside: blocks of 64 L are summed by 4 L independent
// lanes (four vectors, so the adds pipeline; each lane adds 16 values, the depth of
// NumPy's leaves of 128 over 8 lanes), and up to 16 block sums are added per lane. The
// error bound is NumPy's plus one level of 16; the order differs; the speed is memory's
// (one horizontal reduction per leaf: a row of 4096 floats is one straight loop).
// The identity, and (x - c)^2 (fused sumsq): what the pairwise sums apply to each element as it
// is loaded, to scalars and to GCC vectors alike (a vector minus a scalar broadcasts it).
struct Plain {
    template <class U> U operator()(U v) const { return v; }
};
template <class A> struct CentredSquare {
    A c;
    template <class U> U operator()(U v) const {
        const U d = v - c;
        return d * d;
    }
};

template <class A, class Map = Plain> A pairwise_sum_vec(const A* P, int64_t n, Map map = {}) {
    using V = SumV<A>;
    constexpr int64_t L = sizeof(V) / sizeof(A), S = 4 * L, BLOCK = 16 * S, LEAF = 16 * BLOCK;
    if (n <= LEAF) {
        V a0 = {}, a1 = {}, a2 = {}, a3 = {};
        int64_t i = 0;
        for (; i + BLOCK <= n; i += BLOCK) {
            V r0 = {}, r1 = {}, r2 = {}, r3 = {};
            for (int64_t j = i; j < i + BLOCK; j += S) {
                r0 += map(ld<V>(P + j));
                r1 += map(ld<V>(P + j + L));
                r2 += map(ld<V>(P + j + 2 * L));
                r3 += map(ld<V>(P + j + 3 * L));
            }
            a0 += r0;
            a1 += r1;
            a2 += r2;
            a3 += r3;
        }
        V r0 = {}, r1 = {}, r2 = {}, r3 = {};
        for (; i + S <= n; i += S) {
            r0 += map(ld<V>(P + i));
            r1 += map(ld<V>(P + i + L));
            r2 += map(ld<V>(P + i + 2 * L));
            r3 += map(ld<V>(P + i + 3 * L));
        }
        for (; i + L <= n; i += L) r0 += map(ld<V>(P + i));
        const V r = ((a0 + r0) + (a1 + r1)) + ((a2 + r2) + (a3 + r3));
        A lane[L];
        std::memcpy(lane, &r, sizeof(r));
        for (int64_t w = L / 2; w > 0; w /= 2)  // a pairwise tree over the lanes
            for (int64_t j = 0; j < w; ++j) lane[j] += lane[j + w];
        A res = lane[0];
        for (; i < n; ++i) res += map(P[i]);
        return res;
    }
    int64_t n2 = n / 2;
    n2 -= n2 % BLOCK;
    return pairwise_sum_vec(P, n2, map) + pairwise_sum_vec(P + n2, n - n2, map);
}

// float16 rows and columns are reduced through float32 chunks on the stack (half.h): widened
// 8 at a time, then the float32 loops, vectorised. The values are those of reducing each
// element converted on its own (compute_t<f16> is float), only faster: a sum of 10^6 float16
// took 246 us where PyTorch's took 32.
constexpr int64_t HALF_CHUNK = 2048;

// A contiguous float16 run summed pairwise in float32: leaves of HALF_CHUNK widened on the
// stack, each summed by pairwise_sum_vec.
template <class Map> float pairwise_sum_halves(const f16* P, int64_t n, Map map) {
    if (n <= HALF_CHUNK) {
        alignas(64) float buf[HALF_CHUNK];
        halves_to_floats(P, buf, n);
        return pairwise_sum_vec(static_cast<const float*>(buf), n, map);
    }
    // NOTE: halves rounded down to whole leaves, and at least one (n / 2 < HALF_CHUNK for n
    // in (HALF_CHUNK, 2 HALF_CHUNK)).
    const int64_t n2 = std::max(HALF_CHUNK, n / 2 - n / 2 % HALF_CHUNK);
    return pairwise_sum_halves(P, n2, map) + pairwise_sum_halves(P + n2, n - n2, map);
}

// NumPy's pairwise summation: 8 accumulators over blocks of at most 128; `map` applies to each
// element, loaded as A (floats only).
template <class A, class T, class Map = Plain> A pairwise_sum(const char* p, int64_t n, int64_t s, Map map = {}) {
    if constexpr (std::is_same_v<A, T> && (std::is_same_v<A, float> || std::is_same_v<A, double>)) {
        if (s == sizeof(T)) return pairwise_sum_vec(reinterpret_cast<const T*>(p), n, map);
    }
    if constexpr (is_f16_v<T>) {
        if (s == sizeof(T)) return pairwise_sum_halves(reinterpret_cast<const f16*>(p), n, map);
    }
    const auto load = [&](int64_t i) { return map(load_acc<A, T>(p + i * s)); };
    if constexpr (!is_float_v<A> && !is_complex_v<A>) {
        // NOTE: integer sums are exact (wrapping), so order does not matter; and GCC 12
        // -O3 miscompiles the 8-accumulator loop below for int8.
        A r = A(0);
        if (s == sizeof(T)) {
            const T* P = reinterpret_cast<const T*>(p);
            for (int64_t i = 0; i < n; ++i) r = ops::add::f(r, static_cast<A>(P[i]));
        } else {
            for (int64_t i = 0; i < n; ++i) r = ops::add::f(r, load_acc<A, T>(p + i * s));
        }
        return r;
    }
    if (n < 8) {
        A r = A(0);
        for (int64_t i = 0; i < n; ++i) r = ops::add::f(r, load(i));
        return r;
    }
    if (n <= 128) {
        A r[8];
        for (int j = 0; j < 8; ++j) r[j] = load(j);
        int64_t i = 8;
        if (s == sizeof(T)) {
            const T* P = reinterpret_cast<const T*>(p);
            for (; i + 8 <= n; i += 8)
                for (int j = 0; j < 8; ++j) r[j] = ops::add::f(r[j], map(static_cast<A>(P[i + j])));
        } else {
            for (; i + 8 <= n; i += 8)
                for (int j = 0; j < 8; ++j) r[j] = ops::add::f(r[j], load(i + j));
        }
        using ops::add;
        A res = add::f(add::f(add::f(r[0], r[1]), add::f(r[2], r[3])),
                       add::f(add::f(r[4], r[5]), add::f(r[6], r[7])));
        for (; i < n; ++i) res = ops::add::f(res, load(i));
        return res;
    }
    int64_t n2 = n / 2;
    n2 -= n2 % 8;
    return ops::add::f(pairwise_sum<A, T>(p, n2, s, map), pairwise_sum<A, T>(p + n2 * s, n - n2, s, map));
}

// NOTE: not std::vector, whose bool specialisation has no data() and proxy references.
template <class A> struct Buf {
    std::unique_ptr<A[]> p;
    explicit Buf(int64_t n) : p(new A[static_cast<size_t>(n > 0 ? n : 1)]) {}
    A* data() { return p.get(); }
    A& operator[](int64_t i) { return p[i]; }
};

// f(buf, m, i0) for the chunks [i0, i0 + m) of a contiguous float16 row, widened into buf;
// f returns false to stop.
template <class F> void half_chunks(const char* p, int64_t n, F&& f) {
    alignas(64) float buf[HALF_CHUNK];
    for (int64_t i0 = 0; i0 < n; i0 += HALF_CHUNK) {
        const int64_t m = std::min(HALF_CHUNK, n - i0);
        halves_to_floats(reinterpret_cast<const f16*>(p) + i0, buf, m);
        if (!f(static_cast<const float*>(buf), m, i0)) return;
    }
}

// A row of a column strip of w elements (unit stride) as something indexable by A: the row
// itself, or float16's widened into `buf` (room for w floats: strip_buf, empty for the other
// dtypes, which allocates nothing).
template <class T> [[gnu::always_inline]] inline auto strip(const T* r, int64_t w, float* buf) {
    if constexpr (is_f16_v<T>) {
        halves_to_floats(r, buf, w);
        return static_cast<const float*>(buf);
    } else {
        (void)w, (void)buf;
        return r;
    }
}
template <class T> inline std::vector<float> strip_buf(int64_t w) { return std::vector<float>(size_t(is_f16_v<T> ? w : 0)); }

template <class A> inline bool nan_of(A v) { return is_nan(v); }
template <class A> inline bool greater(A a, A b) {
    if constexpr (is_complex_v<A>) return ops::clt(b, a);
    else return a > b;
}

// Sequential fold of one row with a binary op (prod, max, min).
template <class Op, class A, class T> A fold(const char* p, int64_t n, int64_t s, A init) {
    A r = init;
    for (int64_t i = 0; i < n; ++i) r = Op::f(r, load_acc<A, T>(p + i * s));
    return r;
}

// First index of the extreme; NaN counts as the extreme. Returns (index, value).
template <bool Max, class A, class T>
std::pair<int64_t, A> arg_extreme_scalar(const char* p, int64_t n, int64_t s) {
    A best = load_acc<A, T>(p);
    int64_t bi = 0;
    if (nan_of(best)) return {0, best};
    for (int64_t i = 1; i < n; ++i) {
        A v = load_acc<A, T>(p + i * s);
        if (nan_of(v)) return {i, v};
        if (Max ? greater(v, best) : greater(best, v)) {
            best = v;
            bi = i;
        }
    }
    return {bi, best};
}

template <bool Max, class A, class T> A extreme(const char* p, int64_t n, int64_t s);

// A contiguous float or integer row in blocks of 1024: each block's extreme in vectors (extreme()
// below), kept when strictly better than the best so far (or NaN, which ends the scan), then
// the first element of the kept block equal to it (or NaN) in vectorised runs of 64. NOTE:
// the scalar compare-and-branch chain ran at about 1 ns an element, 5-13x NumPy's argmax.
template <bool Max, class A, class T>
std::pair<int64_t, A> arg_extreme(const char* p, int64_t n, int64_t s) {
    constexpr bool vec = std::is_same_v<A, T> && (is_int_v<T> || std::is_same_v<T, float> ||
                                                   std::is_same_v<T, double>);
    if constexpr (vec) {
        constexpr int64_t BLK = 1024;
        constexpr bool Nan = is_float_v<T>;
        if (s == int64_t(sizeof(T)) && n >= 4 * 32 / int64_t(sizeof(T))) {
            const T* P = reinterpret_cast<const T*>(p);
            T best = extreme<Max, T, T>(p, std::min(BLK, n), s);
            int64_t blk = 0;
            if (!(Nan && best != best)) {
                for (int64_t b0 = BLK; b0 < n; b0 += BLK) {
                    const int64_t len = std::min(BLK, n - b0);
                    const T v = extreme<Max, T, T>(p + b0 * s, len, s);
                    if ((Max ? v > best : v < best) || (Nan && v != v)) {
                        best = v;
                        blk = b0;
                        if (Nan && v != v) break;
                    }
                }
            }
            const bool nan = Nan && best != best;
            const int64_t e = std::min(n, blk + BLK);
            for (int64_t j0 = blk; j0 < e; j0 += 64) {
                const int64_t j1 = std::min(e, j0 + 64);
                uint8_t hit = 0;
                for (int64_t j = j0; j < j1; ++j) hit |= uint8_t(nan ? P[j] != P[j] : P[j] == best);
                if (hit)
                    for (int64_t j = j0; j < j1; ++j)
                        if (nan ? P[j] != P[j] : P[j] == best) return {j, P[j]};
            }
        }
    }
    if constexpr (is_f16_v<T>) {
        if (s == int64_t(sizeof(T))) {
            std::pair<int64_t, float> best{0, 0.0f};
            half_chunks(p, n, [&](const float* buf, int64_t m, int64_t i0) {
                auto [j, v] = arg_extreme<Max, float, float>(reinterpret_cast<const char*>(buf), m, sizeof(float));
                if (i0 == 0 || nan_of(v) || (Max ? greater(v, best.second) : greater(best.second, v)))
                    best = {i0 + j, v};
                return !nan_of(best.second);  // a NaN is the answer
            });
            return best;
        }
    }
    return arg_extreme_scalar<Max, A, T>(p, n, s);
}

// any/all of a row: a contiguous one in blocks of 1024 with no exit inside a block, so the
// block's loop vectorises (an exit per element ran at one element per cycle).
template <bool Any, class T> bool any_all_row(const char* p, int64_t n, int64_t s) {
    if (s == int64_t(sizeof(T)) && !is_complex_v<T>) {
        const T* P = reinterpret_cast<const T*>(p);
        for (int64_t i = 0; i < n; i += 1024) {
            const int64_t e = std::min(n, i + 1024);
            uint8_t hit = 0;
            for (int64_t j = i; j < e; ++j) hit |= uint8_t(truth_at(P, j) == Any);
            if (hit) return Any;
        }
        return !Any;
    }
    for (int64_t i = 0; i < n; ++i)
        if (truthy(ld<T>(p + i * s)) == Any) return Any;
    return !Any;
}
template <class T> bool any_row(const char* p, int64_t n, int64_t s) {
    return any_all_row<true, T>(p, n, s);
}
template <class T> bool all_row(const char* p, int64_t n, int64_t s) {
    return any_all_row<false, T>(p, n, s);
}

// The number of truthy elements of a row (R_COUNT).
template <class T> int64_t count_row(const char* p, int64_t n, int64_t s) {
    int64_t c = 0;
    if (s == int64_t(sizeof(T))) {
        const T* P = reinterpret_cast<const T*>(p);
        // NOTE: 32-bit partial counts in blocks: an int64 counter per byte lane halves the
        // vector width of the loop.
        for (int64_t i = 0; i < n; i += 1 << 20) {
            const int64_t e = std::min(n, i + (int64_t(1) << 20));
            uint32_t b = 0;
            for (int64_t j = i; j < e; ++j) b += truth_at(P, j);
            c += b;
        }
        return c;
    }
    for (int64_t i = 0; i < n; ++i) c += truthy(ld<T>(p + i * s));
    return c;
}

// A contiguous row of n >= 8 L elements folded by step (an associative op, callable on T and
// on vectors of T) in eight vectors of lanes: a scalar chain runs at the op's latency (about
// 1 ns an element for a select, 0.35 for a multiply). The lanes are folded in a fixed order.
template <class T, class Step> T lanes_fold(const T* P, int64_t n, Step step) {
    using V = SumV<T>;  // NOTE: an alias `T __attribute__((vector_size(32)))` drops it
    constexpr int64_t L = 32 / sizeof(T);
    // NOTE: eight chains, not four: a step is a compare and a blend (about 5 cycles' latency),
    // so four chains left the loop bound by latency (max along rows of 1000 float64, 10^6 in
    // all, 70 -> 61 us on 2 threads; float32 within the noise). Then whole vectors into m0.
    V m0 = ld<V>(P), m1 = ld<V>(P + L), m2 = ld<V>(P + 2 * L), m3 = ld<V>(P + 3 * L);
    V m4 = ld<V>(P + 4 * L), m5 = ld<V>(P + 5 * L), m6 = ld<V>(P + 6 * L), m7 = ld<V>(P + 7 * L);
    int64_t i = 8 * L;
    for (; i + 8 * L <= n; i += 8 * L) {
        m0 = step(m0, ld<V>(P + i));
        m1 = step(m1, ld<V>(P + i + L));
        m2 = step(m2, ld<V>(P + i + 2 * L));
        m3 = step(m3, ld<V>(P + i + 3 * L));
        m4 = step(m4, ld<V>(P + i + 4 * L));
        m5 = step(m5, ld<V>(P + i + 5 * L));
        m6 = step(m6, ld<V>(P + i + 6 * L));
        m7 = step(m7, ld<V>(P + i + 7 * L));
    }
    for (; i + L <= n; i += L) m0 = step(m0, ld<V>(P + i));
    const V m = step(step(step(m0, m1), step(m2, m3)), step(step(m4, m5), step(m6, m7)));
    T r = m[0];
    for (int64_t j = 1; j < L; ++j) r = step(r, T(m[j]));
    for (; i < n; ++i) r = step(r, P[i]);
    return r;
}
template <class T> inline bool lanes_fold_fits(int64_t n, int64_t s) {
    return s == int64_t(sizeof(T)) && n >= 8 * (32 / int64_t(sizeof(T)));
}

// The maximum (Max) or minimum of a row, NaN first: a contiguous float or integer row by
// lanes_fold (the extreme is exact, so lane order changes at most the sign of a zero result).
// (V: T or a vector of T; Nan: T is floating.)
template <bool Max, bool Nan, class V> inline V extreme_step(V m, V v) {
    if constexpr (Nan) return ((Max ? v > m : v < m) | (v != v)) ? v : m;
    else return (Max ? v > m : v < m) ? v : m;
}
template <bool Max, class A, class T> A extreme(const char* p, int64_t n, int64_t s) {
    constexpr bool vec = std::is_same_v<A, T> && (is_int_v<T> || std::is_same_v<T, float> ||
                                                   std::is_same_v<T, double>);
    if constexpr (vec) {
        if (lanes_fold_fits<T>(n, s))
            return lanes_fold(reinterpret_cast<const T*>(p), n,
                              [](auto m, auto v) { return extreme_step<Max, is_float_v<T>>(m, v); });
    }
    using Op = std::conditional_t<Max, ops::maximum, ops::minimum>;
    if constexpr (is_f16_v<T>) {
        if (s == int64_t(sizeof(T))) {
            float r = 0.0f;
            half_chunks(p, n, [&](const float* buf, int64_t m, int64_t i0) {
                const float v = extreme<Max, float, float>(reinterpret_cast<const char*>(buf), m, sizeof(float));
                r = i0 == 0 ? v : Op::f(r, v);
                return true;
            });
            return r;
        }
    }
    return fold<Op, A, T>(p + s, n - 1, s, load_acc<A, T>(p));
}

// The product of a row: a contiguous float32 or float64 row by lanes_fold. The result
// changes in its last bits with the order, as NumPy's and PyTorch's vectorised products do
// (integers keep the fold: signed vector products may not overflow).
template <class A, class T> A product(const char* p, int64_t n, int64_t s) {
    constexpr bool vec = std::is_same_v<A, T> && (std::is_same_v<T, float> || std::is_same_v<T, double>);
    if constexpr (vec) {
        if (lanes_fold_fits<T>(n, s))
            return lanes_fold(reinterpret_cast<const T*>(p), n, [](auto a, auto b) { return a * b; });
    }
    if constexpr (is_f16_v<T>) {
        if (s == int64_t(sizeof(T))) {
            float r = 1.0f;
            half_chunks(p, n, [&](const float* buf, int64_t m, int64_t) {
                r *= product<float, float>(reinterpret_cast<const char*>(buf), m, sizeof(float));
                return true;
            });
            return r;
        }
    }
    return fold<ops::multiply, A, T>(p, n, s, A(1));
}

template <class A, class T> inline void store(char* out, int64_t m, A v) {
    reinterpret_cast<T*>(out)[m] = static_cast<T>(v);
}

// Horizontal: one row [k0, k1) at a time.
template <class T>
void reduce_rows(int op, const char* base, int64_t m0, int64_t m1, int64_t K, int64_t sm,
                 int64_t sk, char* out) {
    using A = compute_t<T>;
    for (int64_t m = m0; m < m1; ++m) {
        const char* p = base + m * sm;
        switch (op) {
            case R_SUM: store<A, T>(out, m, pairwise_sum<A, T>(p, K, sk)); break;
            case R_PROD: store<A, T>(out, m, product<A, T>(p, K, sk)); break;
            case R_MAX: store<A, T>(out, m, extreme<true, A, T>(p, K, sk)); break;
            case R_MIN: store<A, T>(out, m, extreme<false, A, T>(p, K, sk)); break;
            case R_ARGMAX:
                reinterpret_cast<int64_t*>(out)[m] = arg_extreme<true, A, T>(p, K, sk).first;
                break;
            case R_ARGMIN:
                reinterpret_cast<int64_t*>(out)[m] = arg_extreme<false, A, T>(p, K, sk).first;
                break;
            case R_ANY: reinterpret_cast<bool*>(out)[m] = any_row<T>(p, K, sk); break;
            case R_ALL: reinterpret_cast<bool*>(out)[m] = all_row<T>(p, K, sk); break;
            case R_COUNT: reinterpret_cast<int64_t*>(out)[m] = count_row<T>(p, K, sk); break;
        }
    }
}

// Vertical: columns [m0, m1) of rows [k0, k1) accumulated into acc (unit stride on M); with
// `centre` (fused sumsq: centre[j] for column m0 + j), the squares of the deviations.
template <class T>
void sum_vertical(const char* base, int64_t m0, int64_t m1, int64_t k0, int64_t k1, int64_t sk,
                  compute_t<T>* acc, const compute_t<T>* centre = nullptr) {
    using A = compute_t<T>;
    const int64_t w = m1 - m0;
    if (k1 - k0 <= 64) {
        for (int64_t j = 0; j < w; ++j) acc[j] = A(0);
        std::vector<float> sb = strip_buf<T>(w);
        for (int64_t k = k0; k < k1; ++k) {
            const auto row = strip(reinterpret_cast<const T*>(base + k * sk) + m0, w, sb.data());
            if (centre)
                for (int64_t j = 0; j < w; ++j) acc[j] = ops::add::f(acc[j], CentredSquare<A>{centre[j]}(static_cast<A>(row[j])));
            else
                for (int64_t j = 0; j < w; ++j) acc[j] = ops::add::f(acc[j], static_cast<A>(row[j]));
        }
        return;
    }
    int64_t mid = k0 + (k1 - k0) / 2;
    Buf<A> tmp(w);
    sum_vertical<T>(base, m0, m1, k0, mid, sk, acc, centre);
    sum_vertical<T>(base, m0, m1, mid, k1, sk, tmp.data(), centre);
    for (int64_t j = 0; j < w; ++j) acc[j] = ops::add::f(acc[j], tmp[j]);
}

template <class T>
void reduce_vertical(int op, const char* base, int64_t m0, int64_t m1, int64_t K, int64_t sk,
                     char* out) {
    using A = compute_t<T>;
    const int64_t w = m1 - m0;
    Buf<A> acc(w);
    std::vector<float> sb = strip_buf<T>(w);
    // NOTE: row(k) may reuse one buffer (float16): each row is read before the next is asked for.
    auto row = [&](int64_t k) { return strip(reinterpret_cast<const T*>(base + k * sk) + m0, w, sb.data()); };
    switch (op) {
        case R_SUM: sum_vertical<T>(base, m0, m1, 0, K, sk, acc.data()); break;
        case R_PROD:
            for (int64_t j = 0; j < w; ++j) acc[j] = A(1);
            for (int64_t k = 0; k < K; ++k) {
                const auto r = row(k);
                for (int64_t j = 0; j < w; ++j)
                    acc[j] = ops::multiply::f(acc[j], static_cast<A>(r[j]));
            }
            break;
        case R_MAX:
        case R_MIN: {
            const auto first = row(0);
            for (int64_t j = 0; j < w; ++j) acc[j] = static_cast<A>(first[j]);
            for (int64_t k = 1; k < K; ++k) {
                const auto r = row(k);
                if (op == R_MAX)
                    for (int64_t j = 0; j < w; ++j)
                        acc[j] = ops::maximum::f(acc[j], static_cast<A>(r[j]));
                else
                    for (int64_t j = 0; j < w; ++j)
                        acc[j] = ops::minimum::f(acc[j], static_cast<A>(r[j]));
            }
            break;
        }
        case R_ARGMAX:
        case R_ARGMIN: {
            int64_t* idx = reinterpret_cast<int64_t*>(out) + m0;
            const auto first = row(0);
            for (int64_t j = 0; j < w; ++j) {
                acc[j] = static_cast<A>(first[j]);
                idx[j] = 0;
            }
            for (int64_t k = 1; k < K; ++k) {
                const auto r = row(k);
                for (int64_t j = 0; j < w; ++j) {
                    A v = static_cast<A>(r[j]);
                    bool take = !nan_of(acc[j]) &&
                                (nan_of(v) || (op == R_ARGMAX ? greater(v, acc[j])
                                                              : greater(acc[j], v)));
                    if (take) {
                        acc[j] = v;
                        idx[j] = k;
                    }
                }
            }
            return;
        }
        case R_ANY:
        case R_ALL: {
            uint8_t* o = reinterpret_cast<uint8_t*>(out) + m0;  // bools as bytes, as truth_at
            const uint8_t init = op == R_ALL;
            for (int64_t j = 0; j < w; ++j) o[j] = init;
            for (int64_t k = 0; k < K; ++k) {
                const auto r = row(k);
                if (op == R_ANY)
                    for (int64_t j = 0; j < w; ++j) o[j] |= uint8_t(truth_at(r, j));
                else
                    for (int64_t j = 0; j < w; ++j) o[j] &= uint8_t(truth_at(r, j));
            }
            return;
        }
        case R_COUNT: {
            int64_t* o = reinterpret_cast<int64_t*>(out) + m0;
            for (int64_t j = 0; j < w; ++j) o[j] = 0;
            for (int64_t k = 0; k < K; ++k) {
                const auto r = row(k);
                for (int64_t j = 0; j < w; ++j) o[j] += truth_at(r, j);
            }
            return;
        }
    }
    for (int64_t j = 0; j < w; ++j) store<A, T>(out, m0 + j, acc[j]);
}

// The row blocks of a vertical split of x (M, K) with partial rows of `item` bytes: up to 8 per
// thread, 64 rows or more each, the P partial rows within 8 MiB; a multiple of the thread count
// when there are more blocks than threads, so that every thread sums as many rows (a 1000^2
// column sum on 8 threads: 15 blocks leave the longest thread 2/15 of the rows, 8 blocks 1/8).
inline int64_t vertical_parts(int64_t M, int64_t K, int64_t item) {
    const int64_t nt = num_threads();
    const int64_t cap = std::max<int64_t>(1, (int64_t(8) << 20) / (M * item));
    const int64_t P = std::min({K / 64, nt * 8, cap});
    return P > nt ? P / nt * nt : P;
}

// A vertical sum split over rows instead of columns: part q sums rows
// [K q / P, K (q + 1) / P) of all M columns, each part streaming whole rows
// (columns strips of a few hundred bytes per row defeat the prefetchers);
// the P partial rows are then added pairwise. False when it does not pay.
template <class T> bool sum_vertical_split(const char* base, int64_t M, int64_t K, int64_t sk, char* out) {
    using A = compute_t<T>;
    const int64_t P = vertical_parts(M, K, int64_t(sizeof(A)));
    if (num_threads() < 2 || P < 2 || M * K < 2 * GRAIN) return false;
    Buf<A> part(P * M);
    parallel_range(P, 1, [&](int64_t b, int64_t e) {
        for (int64_t q = b; q < e; ++q)
            sum_vertical<T>(base, 0, M, K * q / P, K * (q + 1) / P, sk, part.data() + q * M);
    });
    for (int64_t step = 1; step < P; step *= 2)
        for (int64_t q = 0; q + step < P; q += 2 * step) {
            A* dst = part.data() + q * M;
            const A* src = part.data() + (q + step) * M;
            for (int64_t j = 0; j < M; ++j) dst[j] = ops::add::f(dst[j], src[j]);
        }
    for (int64_t j = 0; j < M; ++j) store<A, T>(out, j, part[j]);
    return true;
}

// max/min/any/all/count over axis 0 split over rows as the sum above (and for its reason):
// part q reduces rows [K q / P, K (q + 1) / P) of all M columns into its own out row, and
// the P rows are then combined. A column split (each thread a strip of every row) ran
// 3-4x slower than this on 3000 x 3000 float32.
template <class T>
bool vertical_split(int op, const char* base, int64_t M, int64_t K, int64_t sk, char* out) {
    using A = compute_t<T>;
    const int64_t isz = op == R_COUNT ? 8 : (op == R_ANY || op == R_ALL) ? 1 : int64_t(sizeof(T));
    const int64_t P = vertical_parts(M, K, isz);
    if (num_threads() < 2 || P < 2 || M * K < 2 * GRAIN) return false;
    Buf<char> part(P * M * isz);
    parallel_range(P, 1, [&](int64_t b, int64_t e) {
        for (int64_t q = b; q < e; ++q) {
            const int64_t k0 = K * q / P, k1 = K * (q + 1) / P;
            reduce_vertical<T>(op, base + k0 * sk, 0, M, k1 - k0, sk, part.data() + q * M * isz);
        }
    });
    char* acc = part.data();
    for (int64_t q = 1; q < P; ++q) {
        const char* src = part.data() + q * M * isz;
        if (op == R_COUNT) {
            int64_t* a = reinterpret_cast<int64_t*>(acc);
            const int64_t* v = reinterpret_cast<const int64_t*>(src);
            for (int64_t j = 0; j < M; ++j) a[j] += v[j];
        } else if (op == R_ANY || op == R_ALL) {
            for (int64_t j = 0; j < M; ++j)
                acc[j] = op == R_ANY ? char(acc[j] | src[j]) : char(acc[j] & src[j]);
        } else {
            for (int64_t j = 0; j < M; ++j) {
                const A a = load_acc<A, T>(acc + j * isz), v = load_acc<A, T>(src + j * isz);
                store<A, T>(acc, j, op == R_MAX ? ops::maximum::f(a, v) : ops::minimum::f(a, v));
            }
        }
    }
    std::memcpy(out, acc, size_t(M * isz));
    return true;
}

// The roads of a reduction of x (M, K): "vertical" when M is the unit-stride axis (a reduction
// over axis 0), "few long rows" when each row is split across the threads; else rows.
inline bool vertical_layout(int64_t M, int64_t K, int64_t sm, int64_t sk, int64_t item) {
    return M > 1 && K > 1 && sm == item && sk != item;
}
inline bool few_long_rows(int64_t M, int64_t K) { return K >= 4 * GRAIN && M < num_threads() && num_threads() > 1; }

// Few long rows: a row cut into `parts` parts, part(q, k0, k1) called for each in parallel.
inline int64_t row_parts(int64_t K) { return std::min<int64_t>(int64_t(num_threads()) * 4, K / GRAIN + 1); }
template <class F> void for_row_parts(int64_t K, int64_t parts, F&& part) {
    parallel_range(parts, 1, [&](int64_t b, int64_t e) {
        for (int64_t q = b; q < e; ++q) part(q, K * q / parts, K * (q + 1) / parts);
    });
}

// Few long rows: split each row into parts reduced in parallel, then combine.
template <class T>
void reduce_split(int op, const char* p, int64_t K, int64_t sk, char* out, int64_t m) {
    using A = compute_t<T>;
    const int64_t parts = row_parts(K);
    Buf<A> val(parts);
    std::vector<int64_t> idx(static_cast<size_t>(parts));
    for_row_parts(K, parts, [&](int64_t q, int64_t k0, int64_t k1) {
        const char* s = p + k0 * sk;
        const int64_t n = k1 - k0;
        switch (op) {
            case R_SUM: val[q] = pairwise_sum<A, T>(s, n, sk); break;
            case R_PROD: val[q] = product<A, T>(s, n, sk); break;
            case R_MAX: val[q] = extreme<true, A, T>(s, n, sk); break;
            case R_MIN: val[q] = extreme<false, A, T>(s, n, sk); break;
            case R_ARGMAX:
            case R_ARGMIN: {
                auto r = op == R_ARGMAX ? arg_extreme<true, A, T>(s, n, sk)
                                        : arg_extreme<false, A, T>(s, n, sk);
                idx[q] = r.first + k0;
                val[q] = r.second;
                break;
            }
            case R_ANY: idx[q] = any_row<T>(s, n, sk); break;
            case R_ALL: idx[q] = all_row<T>(s, n, sk); break;
            case R_COUNT: idx[q] = count_row<T>(s, n, sk); break;
        }
    });
    // NOTE: any, all and count leave val unwritten (their results are in idx): not read then
    // (an unwritten bool is undefined behaviour, which UBSan reports).
    const bool in_idx = op == R_ANY || op == R_ALL || op == R_COUNT;
    A r = in_idx ? A{} : val[0];
    int64_t ri = idx[0];
    for (int64_t q = 1; q < parts; ++q) {
        switch (op) {
            case R_SUM: r = ops::add::f(r, val[q]); break;
            case R_PROD: r = ops::multiply::f(r, val[q]); break;
            case R_MAX: r = ops::maximum::f(r, val[q]); break;
            case R_MIN: r = ops::minimum::f(r, val[q]); break;
            case R_ARGMAX:
            case R_ARGMIN:
                if (!nan_of(r) && (nan_of(val[q]) ||
                                   (op == R_ARGMAX ? greater(val[q], r) : greater(r, val[q])))) {
                    r = val[q];
                    ri = idx[q];
                }
                break;
            case R_ANY: ri = ri || idx[q]; break;
            case R_ALL: ri = ri && idx[q]; break;
            case R_COUNT: ri += idx[q]; break;
        }
    }
    if (op == R_ARGMAX || op == R_ARGMIN || op == R_COUNT) reinterpret_cast<int64_t*>(out)[m] = ri;
    else if (op == R_ANY || op == R_ALL) reinterpret_cast<bool*>(out)[m] = ri != 0;
    else store<A, T>(out, m, r);
}

template <class T> void reduce_t(int op, const View& x, char* out) {
    const int64_t M = x.shape[0], K = x.shape[1];
    const int64_t sm = x.strides[0] * int64_t(sizeof(T)), sk = x.strides[1] * int64_t(sizeof(T));
    if (M == 0) return;
    if (K == 0) {
        for (int64_t m = 0; m < M; ++m) {
            if (op == R_SUM) store<compute_t<T>, T>(out, m, compute_t<T>(0));
            else if (op == R_PROD) store<compute_t<T>, T>(out, m, compute_t<T>(1));
            else if (op == R_COUNT) reinterpret_cast<int64_t*>(out)[m] = 0;
            else reinterpret_cast<bool*>(out)[m] = op == R_ALL;  // any/all
        }
        return;
    }
    const int64_t total = M * K;
    const bool vertical = vertical_layout(M, K, sm, sk, int64_t(sizeof(T)));
    if (vertical && op == R_SUM && sum_vertical_split<T>(x.data, M, K, sk, out)) return;
    if (vertical && op != R_SUM && op != R_PROD && op != R_ARGMAX && op != R_ARGMIN &&
        vertical_split<T>(op, x.data, M, K, sk, out))
        return;
    if (vertical) {
        const int64_t grain = total >= 2 * GRAIN ? std::max<int64_t>(16, GRAIN / K) : M;
        parallel_range(M, grain,
                       [&](int64_t b, int64_t e) { reduce_vertical<T>(op, x.data, b, e, K, sk, out); });
        return;
    }
    if (few_long_rows(M, K)) {
        for (int64_t m = 0; m < M; ++m) reduce_split<T>(op, x.data + m * sm, K, sk, out, m);
        return;
    }
    const int64_t grain = std::max<int64_t>(1, GRAIN / K);
    parallel_range(M, grain,
                   [&](int64_t b, int64_t e) { reduce_rows<T>(op, x.data, b, e, K, sm, sk, out); });
}

// fused sumsq: out[m] = the sum over k of (x[m, k] - c[m])^2 (c = 0 without centres), summed
// pairwise as `sum` sums (the same leaves and order: the square of each element taken as it
// is loaded), in compute_t<T>; rows split across threads as reduce_t splits them.
template <class T> void sumsq_t(const View& x, const char* centre, char* out) {
    using A = compute_t<T>;
    const int64_t M = x.shape[0], K = x.shape[1];
    const int64_t sm = x.strides[0] * int64_t(sizeof(T)), sk = x.strides[1] * int64_t(sizeof(T));
    const auto map = [&](int64_t m) { return CentredSquare<A>{centre ? load_acc<A, T>(centre + m * sizeof(T)) : A(0)}; };
    if (vertical_layout(M, K, sm, sk, int64_t(sizeof(T)))) {
        Buf<A> c(M);
        for (int64_t m = 0; m < M; ++m) c[m] = map(m).c;
        parallel_range(M, M * K >= 2 * GRAIN ? std::max<int64_t>(16, GRAIN / K) : M, [&](int64_t b, int64_t e) {
            Buf<A> acc(e - b);
            sum_vertical<T>(x.data, b, e, 0, K, sk, acc.data(), c.data() + b);
            for (int64_t m = b; m < e; ++m) store<A, T>(out, m, acc[m - b]);
        });
        return;
    }
    if (few_long_rows(M, K)) {
        const int64_t parts = row_parts(K);
        Buf<A> val(parts);
        for (int64_t m = 0; m < M; ++m) {
            const char* p = x.data + m * sm;
            for_row_parts(K, parts, [&](int64_t q, int64_t k0, int64_t k1) {
                val[q] = pairwise_sum<A, T>(p + k0 * sk, k1 - k0, sk, map(m));
            });
            A r = val[0];
            for (int64_t q = 1; q < parts; ++q) r = ops::add::f(r, val[q]);
            store<A, T>(out, m, r);
        }
        return;
    }
    parallel_range(M, std::max<int64_t>(1, GRAIN / std::max<int64_t>(K, 1)), [&](int64_t b, int64_t e) {
        for (int64_t m = b; m < e; ++m) store<A, T>(out, m, pairwise_sum<A, T>(x.data + m * sm, K, sk, map(m)));
    });
}

// Inclusive scans, rounding to T after every step as NumPy's accumulate does.
template <class T> void scan_t(int op, const View& x, char* out) {
    const int64_t M = x.shape[0], K = x.shape[1];
    const int64_t sm = x.strides[0] * int64_t(sizeof(T)), sk = x.strides[1] * int64_t(sizeof(T));
    if (M == 0 || K == 0) return;
    auto rows = [&](int64_t b, int64_t e) {
        for (int64_t m = b; m < e; ++m) {
            const char* p = x.data + m * sm;
            T* o = reinterpret_cast<T*>(out) + m * K;
            T acc = ld<T>(p);
            o[0] = acc;
            if (op == S_CUMSUM)
                for (int64_t k = 1; k < K; ++k) o[k] = acc = ops::apply2<ops::add, T>(acc, ld<T>(p + k * sk));
            else
                for (int64_t k = 1; k < K; ++k)
                    o[k] = acc = ops::apply2<ops::multiply, T>(acc, ld<T>(p + k * sk));
        }
    };
    parallel_range(M, std::max<int64_t>(1, GRAIN / K), rows);
}

// ---------------------------------------------------------------------------
// Fused row kernels: softmax, log_softmax, logsumexp, layer_norm over contiguous
// rows of float16/32/64, computed in float (double for float64).
// ---------------------------------------------------------------------------

// exp for float that the compiler vectorises: Cephes' polynomial after
// x = n ln2 + r, |r| <= ln2 / 2; within 2 ulp of expf on normal results;
// results below FLT_MIN flush to 0 (negligible next to a row's maximum term).
// NonPos: x <= 0 or NaN only (x - max of a row), so no upper clamp: the fused
// rows are bound by this loop's instruction count, and that drops two compares
// and two blends of about thirty.
// NOTE: explicit fused multiply-adds where the ISA has them (x86-64-v3 and up):
// an approximation either way, and a third fewer instructions than mul + add.
inline float fma_f(float a, float b, float c) {
#if defined(__FMA__)
    return __builtin_fmaf(a, b, c);
#else
    return a * b + c;
#endif
}
template <bool NonPos> inline float exp_vec(float x) {
    const float lo = -87.33f > x ? -87.33f : x;  // one maxps; NaN passes through
    const float xc = NonPos ? lo : (lo > 88.72f ? 88.72f : lo);
    // fnm = 1.5 * 2^23 + n with n = round(x / ln2): n sits in fnm's low mantissa bits.
    const float fnm = fma_f(xc, 1.44269504088896341f, 12582912.f);
    const float fn = fnm - 12582912.f;
    const float r = fma_f(fn, 2.12194440e-4f, fma_f(fn, -0.693359375f, xc));
    float p = 1.9875691500e-4f;
    p = fma_f(p, r, 1.3981999507e-3f);
    p = fma_f(p, r, 8.3334519073e-3f);
    p = fma_f(p, r, 4.1665795894e-2f);
    p = fma_f(p, r, 1.6666665459e-1f);
    p = fma_f(p, r, 5.0000001201e-1f);
    const float q = fma_f(p * r, r, r);  // exp(r) - 1
    // 2^n: shifting fnm's bits left by 23 keeps exactly n's low 9 bits, in the exponent.
    const float scale = std::bit_cast<float>((std::bit_cast<uint32_t>(fnm) << 23) + 0x3f800000u);
    const float e = fma_f(q, scale, scale);  // (q + 1) * 2^n, one rounding fewer
    if constexpr (NonPos) return x < -87.33f ? 0.0f : e;
    else return x < -87.33f ? 0.0f : (x > 88.72f ? std::numeric_limits<float>::infinity() : e);
}

// e[k] = exp(t[k] - mx); nonpos: mx is t's maximum (so t[k] - mx <= 0, or NaN).
template <class A> void exp_shifted(const A* t, A mx, bool nonpos, A* e, int64_t K) {
    if constexpr (std::is_same_v<A, float>) {
        if (nonpos)
            for (int64_t k = 0; k < K; ++k) e[k] = exp_vec<true>(t[k] - mx);
        else
            for (int64_t k = 0; k < K; ++k) e[k] = exp_vec<false>(t[k] - mx);
    } else {
        // NOTE: libmvec's exp (vmath.h), which GCC vectorises: std::exp left the float64
        // softmax at twice PyTorch's time
        for (int64_t k = 0; k < K; ++k) e[k] = vm::exp(t[k] - mx);
    }
}

template <class A> inline A nanmax_step(A m, A v) { return (v > m || v != v) ? v : m; }
template <class A> inline V8<A> nanmax_step(V8<A> m, V8<A> v) { return (v > m || v != v) ? v : m; }

// The NaN-propagating maximum of t[0..K), K >= 1, over four vectors of eight lanes
// (one accumulator is a chain of compare-and-blend latencies, as a scalar select
// chain is; the maximum is exact, so the lanes change nothing).
template <class A> A row_max(const A* t, int64_t K) {
    A mx = t[0];
    int64_t k = 1;
    if (K >= 32) {
        V8<A> m0 = ld<V8<A>>(t), m1 = ld<V8<A>>(t + 8), m2 = ld<V8<A>>(t + 16), m3 = ld<V8<A>>(t + 24);
        for (k = 32; k + 32 <= K; k += 32) {
            m0 = nanmax_step(m0, ld<V8<A>>(t + k));
            m1 = nanmax_step(m1, ld<V8<A>>(t + k + 8));
            m2 = nanmax_step(m2, ld<V8<A>>(t + k + 16));
            m3 = nanmax_step(m3, ld<V8<A>>(t + k + 24));
        }
        for (; k + 8 <= K; k += 8) m0 = nanmax_step(m0, ld<V8<A>>(t + k));
        const V8<A> m = nanmax_step(nanmax_step(m0, m1), nanmax_step(m2, m3));
        mx = m[0];
        for (int j = 1; j < 8; ++j) mx = nanmax_step(mx, m[j]);
    }
    for (; k < K; ++k) mx = nanmax_step(mx, t[k]);
    return mx;
}

template <class T>
void fused_t(int op, const View& x, const char* weight, const char* bias, double eps, char* out) {
    using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const int64_t M = x.shape[0], K = x.shape[1];
    if (M == 0) return;
    auto rows = [&](int64_t b, int64_t e) {
        Buf<A> tmp(K), tmp2(K);
        A* u = tmp2.data();
        for (int64_t m = b; m < e; ++m) {
            const T* X = reinterpret_cast<const T*>(x.data) + m * K;
            // NOTE: float32/float64 rows are read in place; float16 ones widened into tmp.
            const A* t = tmp.data();
            if constexpr (std::is_same_v<T, A>)
                t = X;
            else
                for (int64_t k = 0; k < K; ++k) tmp[k] = static_cast<A>(X[k]);
            if (op == FU_LAYER_NORM) {
                // Three passes over the row, none writing a temporary: the mean, the sum of the
                // squared deviations (each squared as it is loaded; the same sums, in the same
                // order, as squaring into a row first), then the normalised row.
                const A mean = pairwise_sum_vec(t, K) / A(K);
                const A var = pairwise_sum_vec(t, K, CentredSquare<A>{mean});
                const A rstd = A(1) / std::sqrt(var / A(K) + A(eps));
                T* O = reinterpret_cast<T*>(out) + m * K;
                const T* W = reinterpret_cast<const T*>(weight);
                const T* Bi = reinterpret_cast<const T*>(bias);
                if (W && Bi)  // the usual case, one loop GCC vectorises
                    for (int64_t k = 0; k < K; ++k)
                        O[k] = static_cast<T>((t[k] - mean) * rstd * static_cast<A>(W[k]) + static_cast<A>(Bi[k]));
                else
                    for (int64_t k = 0; k < K; ++k) {
                        A v = (t[k] - mean) * rstd;
                        if (W) v = v * static_cast<A>(W[k]);
                        if (Bi) v = v + static_cast<A>(Bi[k]);
                        O[k] = static_cast<T>(v);
                    }
                continue;
            }
            A mx = K ? row_max(t, K) : -std::numeric_limits<A>::infinity();
            const bool reset = op == FU_LOGSUMEXP && !std::isfinite(mx);
            if (reset) mx = A(0);  // as the generic algorithm
            A* e = u;  // exp(t - max): straight into a float32/float64 softmax's output row
            if constexpr (std::is_same_v<T, A>) {
                if (op == FU_SOFTMAX) e = reinterpret_cast<T*>(out) + m * K;
            }
            exp_shifted(t, mx, !reset, e, K);
            const A sum = pairwise_sum_vec(static_cast<const A*>(e), K);
            if (op == FU_SOFTMAX) {
                const A inv = A(1) / sum;
                T* O = reinterpret_cast<T*>(out) + m * K;
                for (int64_t k = 0; k < K; ++k) O[k] = static_cast<T>(e[k] * inv);
            } else if (op == FU_LOGSUMEXP) {
                reinterpret_cast<T*>(out)[m] = static_cast<T>(std::log(sum) + mx);
            } else {
                const A lse = std::log(sum);
                T* O = reinterpret_cast<T*>(out) + m * K;
                for (int64_t k = 0; k < K; ++k) O[k] = static_cast<T>((t[k] - mx) - lse);
            }
        }
    };
    parallel_range(M, std::max<int64_t>(1, GRAIN / 8 / std::max<int64_t>(K, 1)), rows);
}

}  // namespace

void fill_reduce(Kernels& k) {
    for_each_dtype([&](auto d) {
        constexpr int D = decltype(d)::value;
        using T = typename dt_type<D>::type;
        k.reduce[D] = reduce_t<T>;
        k.scan[D] = scan_t<T>;
        if constexpr (is_float_v<T>) {
            k.fused[D] = fused_t<T>;
            k.sumsq[D] = sumsq_t<T>;
        } else {
            k.fused[D] = nullptr;
            k.sumsq[D] = nullptr;
        }
    });
}

}  // namespace ndp::NDP_ISA
