// An unstable quicksort of unsigned keys (uint32_t, uint64_t) with AVX-512F, for sort.cc's
// values-only rows. The partition reads whole vectors, compares them with the pivot and
// writes the keys below it to the left end and the others to the right end of the range
// (4-byte keys: vpcompress into a register, then a masked store, as on AMD Zen 4 a compress
// straight to memory is microcoded and many times slower; 8-byte keys: one permute from a
// table of lane orders, then whole stores). It works in place: the first and last vectors
// are held in registers, so the reads stay ahead of the writes on both ends, and the side
// with less room is read next. Ranges of at most LEAF keys are sorted in registers by
// bitonic networks (bitonic.h): each lane's keys between the vectors, a transpose, then
// merges. Pivots are medians of 16 or 64 evenly spaced keys; a range whose keys all equal
// its pivot is done after two partitions, and a range that still needs more than
// 2 log2(n) partitions is left to std::sort.
//
// available() says whether this CPU runs it; without GCC on x86-64 it never does (the
// functions then fall back to std::sort, never called by sort.cc).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "bitonic.h"
#include "common.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(NDP_NO_CLONES)
#define NDP_QUICKSORT 1
#include <immintrin.h>
#endif

namespace ndp::quick {

#if NDP_QUICKSORT

#define NDP_AVX512 __attribute__((target("avx512f,bmi,bmi2,popcnt")))
#define NDP_AVX512_INLINE __attribute__((target("avx512f,bmi,bmi2,popcnt"), always_inline)) inline

inline bool available() {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("bmi2") &&
           __builtin_cpu_supports("popcnt");
}

// One 512-bit vector of keys U and what the sort does with it.
template <class U> struct Vec {
    static constexpr int L = 64 / sizeof(U);  // lanes
    typedef U V __attribute__((vector_size(64)));
    using Mask = std::conditional_t<sizeof(U) == 4, __mmask16, __mmask8>;

    NDP_AVX512_INLINE static Mask low(int n) { return Mask((1u << n) - 1); }  // lanes [0, n)
    NDP_AVX512_INLINE static V load(const U* p) { return reinterpret_cast<V>(_mm512_loadu_si512(p)); }
    NDP_AVX512_INLINE static void store(U* p, V v) { _mm512_storeu_si512(p, reinterpret_cast<__m512i>(v)); }
    // Lanes [0, n) from p (0 <= n <= L), the rest all-ones keys; reads nothing past p + n.
    NDP_AVX512_INLINE static V load_part(const U* p, int n) {
        const __m512i ones = _mm512_set1_epi32(-1);
        if constexpr (sizeof(U) == 4) return reinterpret_cast<V>(_mm512_mask_loadu_epi32(ones, low(n), p));
        else return reinterpret_cast<V>(_mm512_mask_loadu_epi64(ones, low(n), p));
    }
    // Lanes [0, n) of v to p; writes nothing past p + n.
    NDP_AVX512_INLINE static void store_part(U* p, int n, V v) {
        if constexpr (sizeof(U) == 4) _mm512_mask_storeu_epi32(p, low(n), reinterpret_cast<__m512i>(v));
        else _mm512_mask_storeu_epi64(p, low(n), reinterpret_cast<__m512i>(v));
    }
    NDP_AVX512_INLINE static Mask less(V a, V b) {
        if constexpr (sizeof(U) == 4)
            return _mm512_cmplt_epu32_mask(reinterpret_cast<__m512i>(a), reinterpret_cast<__m512i>(b));
        else return _mm512_cmplt_epu64_mask(reinterpret_cast<__m512i>(a), reinterpret_cast<__m512i>(b));
    }
    // The lanes of m, packed to the low lanes (the others zero).
    NDP_AVX512_INLINE static V compress(Mask m, V v) {
        if constexpr (sizeof(U) == 4)
            return reinterpret_cast<V>(_mm512_maskz_compress_epi32(m, reinterpret_cast<__m512i>(v)));
        else return reinterpret_cast<V>(_mm512_maskz_compress_epi64(m, reinterpret_cast<__m512i>(v)));
    }
    NDP_AVX512_INLINE static V min(V a, V b) { return a < b ? a : b; }
    NDP_AVX512_INLINE static V max(V a, V b) { return a < b ? b : a; }
    // Lane i against lane i ^ X; the lanes with bit H set keep the larger key.
    template <int X, int H> NDP_AVX512_INLINE static V stage(V v) {
        V idx, hi;
        for (int i = 0; i < L; ++i) {
            idx[i] = U(i ^ X);
            hi[i] = (i & H) ? ONES : 0;
        }
        const V p = __builtin_shuffle(v, idx);
        return (hi != 0) ? max(v, p) : min(v, p);
    }
    static constexpr U ONES = U(~U(0));
    // A bitonic vector (or each bitonic block of 2 S lanes) sorted: half cleaners of strides
    // S, S / 2, ..., 1.
    template <int S = L / 2> NDP_AVX512_INLINE static V clean(V v) {
        v = stage<S, S>(v);
        if constexpr (S > 1) return clean<S / 2>(v);
        else return v;
    }
    // v sorted: the merges of sorted blocks of K / 2 lanes into blocks of K, K = 2 .. L.
    template <int K = 2> NDP_AVX512_INLINE static V sort(V v) {
        v = stage<K - 1, K / 2>(v);  // the mirror compare of the two halves of each block
        if constexpr (K > 2) v = clean<K / 4>(v);
        if constexpr (K < L) return sort<2 * K>(v);
        else return v;
    }
    NDP_AVX512_INLINE static V reverse(V v) {
        V idx;
        for (int i = 0; i < L; ++i) idx[i] = U(L - 1 - i);
        return __builtin_shuffle(v, idx);
    }
};

// NOTE: the loops over the K vectors of a leaf are compile-time recursions (a rolled loop
// indexes them at run time and puts them on the stack).
// The runs r[0, M) and r[M, 2M) (sorted) merged into r[0, 2M): the mirror compare, then the
// half cleaners of vector strides M / 2, ..., 1 and the lanes' own.
template <class U, int M, int I = 0> NDP_AVX512_INLINE void mirror(typename Vec<U>::V* r) {
    using X = Vec<U>;
    if constexpr (I < M) {
        const auto b = X::reverse(r[2 * M - 1 - I]);
        const auto lo = X::min(r[I], b), hi = X::max(r[I], b);
        r[I] = lo;
        r[2 * M - 1 - I] = X::reverse(hi);  // keeps the upper run in order: bitonic either way
        mirror<U, M, I + 1>(r);
    }
}
template <class U, int N, int S, int I = 0> NDP_AVX512_INLINE void cross(typename Vec<U>::V* r) {
    using X = Vec<U>;
    if constexpr (I < N / 2) {
        constexpr int i = I / S * 2 * S + I % S;  // the I-th vector with bit S clear
        const auto lo = X::min(r[i], r[i + S]), hi = X::max(r[i], r[i + S]);
        r[i] = lo;
        r[i + S] = hi;
        cross<U, N, S, I + 1>(r);
    }
}
template <class U, int N, int S> NDP_AVX512_INLINE void cleaners(typename Vec<U>::V* r) {
    if constexpr (S >= 1) {
        cross<U, N, S>(r);
        cleaners<U, N, S / 2>(r);
    }
}
template <class U, int N, int I = 0> NDP_AVX512_INLINE void each_clean(typename Vec<U>::V* r) {
    if constexpr (I < N) {
        r[I] = Vec<U>::clean(r[I]);
        each_clean<U, N, I + 1>(r);
    }
}
template <class U, int K, int M = 1> NDP_AVX512_INLINE void merge_runs(typename Vec<U>::V* r) {
    if constexpr (M < K) {
        for (int b = 0; b < K; b += 2 * M) mirror<U, M>(r + b);
        for (int b = 0; b < K; b += 2 * M) {
            cleaners<U, M, M / 2>(r + b);  // the lower run: vectors b .. b + M
            cleaners<U, M, M / 2>(r + b + M);
        }
        each_clean<U, K>(r);
        merge_runs<U, K, 2 * M>(r);
    }
}

// Sorts a[0, n), n <= K * L, in K vectors: each lane's K keys sorted by a network between
// the vectors (min / max, no shuffles), then L x L blocks transposed, so each vector's keys
// are one lane's (sorted: runs of K / L vectors when K > L, else of one), then merged.
template <class U, int K> NDP_AVX512 void sort_leaf(U* a, int64_t n) {
    using X = Vec<U>;
    using V = typename X::V;
    constexpr int L = X::L;
    V r[K];
#pragma GCC unroll 16
    for (int i = 0; i < K; ++i) {
        const int64_t left = n - int64_t(i) * L;
        r[i] = X::load_part(a + i * L, int(std::clamp<int64_t>(left, 0, L)));
    }
    if constexpr (K >= 8) {
        bitonic::sort_lanes<K, false>(r);
        if constexpr (K >= L) {
#pragma GCC unroll 4
            for (int h = 0; h < K; h += L) bitonic::transpose<V, L>(r + h);
            // block h's vector l: lane l's keys [h, h + L); lane l's run is vectors l, L + l, ...
            constexpr int G = K / L;
            V s[K];
#pragma GCC unroll 16
            for (int i = 0; i < K; ++i) s[i % L * G + i / L] = r[i];
            merge_runs<U, K, G>(s);
#pragma GCC unroll 16
            for (int i = 0; i < K; ++i) r[i] = s[i];
        } else {
            // K < L (4-byte keys, 8 vectors): each vector sorted in its lanes instead
#pragma GCC unroll 16
            for (int i = 0; i < K; ++i) r[i] = X::sort(r[i]);
            merge_runs<U, K>(r);
        }
    } else {
#pragma GCC unroll 16
        for (int i = 0; i < K; ++i) r[i] = X::sort(r[i]);
        merge_runs<U, K>(r);
    }
#pragma GCC unroll 16
    for (int i = 0; i < K; ++i) {
        const int64_t left = n - int64_t(i) * L;
        if (left >= L) X::store(a + i * L, r[i]);
        else if (left > 0) X::store_part(a + i * L, int(left), r[i]);
    }
}

// The largest range a leaf sorts.
template <class U> inline constexpr int64_t LEAF = 16 * Vec<U>::L;

template <class U> NDP_AVX512 void sort_small(U* a, int64_t n) {
    constexpr int L = Vec<U>::L;
    if (n <= L) sort_leaf<U, 1>(a, n);
    else if (n <= 2 * L) sort_leaf<U, 2>(a, n);
    else if (n <= 4 * L) sort_leaf<U, 4>(a, n);
    else if (n <= 8 * L) sort_leaf<U, 8>(a, n);
    else sort_leaf<U, 16>(a, n);
}

// The median of S keys evenly spaced over a[0, n) (n >= S).
template <class U> NDP_AVX512 U pivot_of(const U* a, int64_t n) {
    U s[64];
    const int S = n >= 8192 ? 64 : 16;
    for (int i = 0; i < S; ++i) s[i] = a[(2 * i + 1) * n / (2 * S)];
    if (S == 64) sort_leaf<U, 64 / Vec<U>::L>(s, S);
    else sort_leaf<U, 16 / Vec<U>::L>(s, S);
    return s[S / 2];
}

// Lane orders for 8-lane partitions: entry m lists the lanes set in m, then the others,
// one byte each.
struct Orders {
    uint64_t at[256];
    constexpr Orders() : at() {
        for (int m = 0; m < 256; ++m) {
            uint64_t e = 0;
            int k = 0;
            for (int pass = 0; pass < 2; ++pass)
                for (int i = 0; i < 8; ++i)
                    if (((m >> i) & 1) == (pass == 0)) e |= uint64_t(i) << (8 * k++);
            at[m] = e;
        }
    }
};
inline constexpr Orders ORDERS{};

// Partitions a[0, n) (n >= 8 L): the keys below p first; returns how many.
template <class U> NDP_AVX512 int64_t partition(U* a, int64_t n, U p) {
    using X = Vec<U>;
    using V = typename X::V;
    constexpr int L = X::L, R = 4;  // R vectors a step; R at each end held in registers
    const int64_t N = n - n % L;
    V held[2 * R];
    for (int r = 0; r < R; ++r) {
        held[r] = X::load(a + r * L);
        held[R + r] = X::load(a + N - (R - r) * L);
    }
    V P;
    for (int i = 0; i < L; ++i) P[i] = p;
    // [0, lw) holds keys below p, [rw, N) the others; [lr, rr) is not read yet. The room
    // (lr - lw) + (rw - rr) is 2 R L whenever a step starts; reading the side with less of
    // it leaves the other side at least R L, all a step can write there: room for a whole
    // vector at each end before each of the step's R writes (put_room). The last vectors
    // (the held ones) write exactly their keys (put).
    int64_t lw = 0, rw = N, lr = R * L, rr = N - R * L;
    auto put = [&](V v) __attribute__((target("avx512f,bmi,bmi2,popcnt"), always_inline)) {
        const auto m = X::less(v, P);
        const int c = __builtin_popcount(m);
        X::store_part(a + lw, c, X::compress(m, v));
        lw += c;
        rw -= L - c;
        X::store_part(a + rw, L - c, X::compress(static_cast<decltype(m)>(~m), v));
    };
    // NOTE: 8-byte keys: one permute (lane orders from a table of 256) and two whole stores
    // instead of two compresses and two masked stores: a partition of L2-resident keys
    // 0.26 -> 0.23 ns a key. 16 lanes would need a table of 2^16 entries.
    auto put_room = [&](V v) __attribute__((target("avx512f,bmi,bmi2,popcnt"), always_inline)) {
        if constexpr (sizeof(U) == 8) {
            const auto m = X::less(v, P);
            const int c = __builtin_popcount(m);
            const __m512i idx = _mm512_cvtepu8_epi64(_mm_cvtsi64_si128(int64_t(ORDERS.at[m])));
            const V w = reinterpret_cast<V>(_mm512_permutexvar_epi64(idx, reinterpret_cast<__m512i>(v)));
            X::store(a + lw, w);
            X::store(a + rw - L, w);
            lw += c;
            rw -= L - c;
        } else {
            put(v);
        }
    };
    // NOTE: a branch picks the side: a select without one makes each step's loads wait for
    // the previous step's stores (their counts), and was 20 % slower.
    while (rr - lr >= R * L) {
        const bool left = lr - lw <= rw - rr;
        const int64_t at = left ? lr : rr - R * L;
        lr += left ? R * L : 0;
        rr -= left ? 0 : R * L;
        V v[R];
        for (int r = 0; r < R; ++r) v[r] = X::load(a + at + r * L);
        for (int r = 0; r < R; ++r) put_room(v[r]);
    }
    while (rr > lr) {
        const bool left = lr - lw <= rw - rr;
        const int64_t at = left ? lr : rr - L;
        lr += left ? L : 0;
        rr -= left ? 0 : L;
        put(X::load(a + at));
    }
    for (int r = 0; r < 2 * R; ++r) put(held[r]);
    for (int64_t i = N; i < n; ++i) {  // the last n % L keys, one at a time
        const U k = a[i];
        if (k < p) {
            a[i] = a[lw];
            a[lw++] = k;
        }
    }
    return lw;
}

// One step on a[0, n) (n > LEAF): partitions it, and returns where the part that still
// needs sorting starts and ends, and where the other one (empty when its keys are all
// equal) starts and ends.
struct Split {
    int64_t b0, e0, b1, e1;
};
template <class U> NDP_AVX512 Split split(U* a, int64_t n) {
    const U p = pivot_of(a, n);
    int64_t m = partition(a, n, p);
    if (m == 0) {
        // p is the smallest key: the keys equal to it first; all of them: sorted.
        if (p == Vec<U>::ONES) return {0, 0, 0, 0};
        m = partition(a, n, U(p + 1));
        return {m, n, 0, 0};
    }
    return {0, m, m, n};
}

template <class U> NDP_AVX512 void sort_range(U* a, int64_t n, int budget) {
    while (n > LEAF<U>) {
        if (budget-- == 0) {
            std::sort(a, a + n);
            return;
        }
        const Split s = split(a, n);
        // the smaller part by recursion, the larger one by the loop: depth O(log n)
        int64_t b = s.b0, e = s.e0, b1 = s.b1, e1 = s.e1;
        if (e - b < e1 - b1) {
            std::swap(b, b1);
            std::swap(e, e1);
        }
        if (e1 > b1) sort_range(a + b1, e1 - b1, budget);
        a += b;
        n = e - b;
    }
    sort_small(a, n);
}

inline int depth_budget(int64_t n) { return 2 * (64 - __builtin_clzll(uint64_t(n) | 1)); }

template <class U> void sort(U* a, int64_t n) { sort_range(a, n, depth_budget(n)); }

// sort by all threads: ranges longer than `cut` are partitioned by whichever thread takes
// them from a shared stack, which gets one part back; shorter ones are sorted whole.
template <class U> void sort_parallel(U* a, int64_t n) {
    const int nt = num_threads();
    const int64_t cut = std::max<int64_t>(n / (8 * nt), 1 << 14);
    if (nt < 2 || n < 2 * cut) return sort(a, n);
    struct Range {
        U* a;
        int64_t n;
        int budget;
    };
    std::mutex mu;
    std::vector<Range> stack;
    stack.reserve(64);
    stack.push_back({a, n, depth_budget(n)});
    std::atomic<int64_t> done{0};
    std::atomic<bool> failed{false};
    parallel_range(nt, 1, [&](int64_t, int64_t) {
        try {
            while (done.load() < n && !failed.load()) {
                Range r;
                {
                    std::unique_lock<std::mutex> lk(mu);
                    if (stack.empty()) {
                        lk.unlock();
                        std::this_thread::yield();
                        continue;
                    }
                    r = stack.back();
                    stack.pop_back();
                }
                while (r.n > cut && r.budget > 0) {
                    --r.budget;
                    const Split s = split(r.a, r.n);
                    done += r.n - (s.e0 - s.b0) - (s.e1 - s.b1);  // the parts left sorted
                    if (s.e1 > s.b1) {
                        std::lock_guard<std::mutex> lk(mu);
                        stack.push_back({r.a + s.b1, s.e1 - s.b1, r.budget});
                    }
                    r = {r.a + s.b0, s.e0 - s.b0, r.budget};
                }
                sort_range(r.a, r.n, r.budget);
                done += r.n;
            }
        } catch (...) {
            failed = true;
        }
    });
    if (failed) throw std::bad_alloc();
}

#undef NDP_AVX512
#undef NDP_AVX512_INLINE

#else

inline bool available() { return false; }
template <class U> void sort(U* a, int64_t n) { std::sort(a, a + n); }
template <class U> void sort_parallel(U* a, int64_t n) { std::sort(a, a + n); }

#endif

}  // namespace ndp::quick
