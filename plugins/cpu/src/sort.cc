// Sort along the last axis (run_sort). Bool, integer and real floating rows go through a
// stable LSD radix sort on order-preserving unsigned keys (values only: many short rows
// through a bitonic network on the same keys, and keys of 3 radix digits or more through an
// AVX-512 quicksort, quicksort.h); complex rows (and rows of 2^32 elements or more) through
// a stable comparison sort of (value, position) pairs. Every road gives the stable order,
// `stable` or not (values only, equal keys are equal values, but for the blocks
// patch_values restores): it is the fastest one here.
//
// Keys: integers flip the sign bit (unsigned and bool stay as they are); floats read -0.0
// as +0.0 and every NaN as the largest key, then flip the sign bit of positives and every
// bit of negatives. So -0.0 == 0.0 and NaNs sort last, ties in input order, as NumPy's
// stable sort. Descending sorts the complemented keys ascending: ties (NaNs, now first)
// keep input order, which is what the reference's reverse-argsort-reverse gives. The
// values written are the input's own: keys are inverted, and the two blocks where that
// loses bits (NaN payloads; zeros once a -0.0 was seen) are read from the input again.
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <numeric>
#include <utility>
#include <vector>

#include <sys/mman.h>

#include "bitonic.h"
#include "driver.h"
#include "quicksort.h"

namespace ndp {
namespace {

// Rows shorter than this take std::sort on the keys (with positions: a strict order,
// so the stable one); longer ones the radix sort. Measured in docs/performance.md.
constexpr int64_t RADIX_MIN = 64;
// Rows this long take radix_sort_big (all threads on one row when there are too few rows
// to give each thread its own).
constexpr int64_t BIG_ROW = 1 << 16;
// Values only, at least 64 / sizeof(key) rows of 4- or 8-byte keys at most this long: the
// bitonic network below.
constexpr int64_t NETWORK_MAX = 4096;

// NOTE: what an NDP_CLONES function calls is inlined into each of its versions.
#define NDP_INLINE inline __attribute__((always_inline))

// NOTE: NDP_CLONES functions (the bitonic network's groups of rows, the passes over a row's
// keys, the searches) are compiled for AVX-512 and AVX2 beside the baseline and picked at
// load (an ifunc). The network is vector min / max and shuffles only. It pays for 4-byte
// keys from AVX2 on (docs/performance.md, "The worst rows, reworked": rows of 512 float32
// 3.8x faster than through the radix sort), for 8-byte ones only with AVX-512; elsewhere
// the radix sort runs. NDP_NO_CLONES builds the version the compiler flags give.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(NDP_NO_CLONES)
#define NDP_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
template <class U> bool network_pays() {
    return __builtin_cpu_supports(sizeof(U) == 4 ? "avx2" : "avx512f");
}
#else
#define NDP_CLONES
template <class U> bool network_pays() { return false; }
#endif

// ---------------------------------------------------------------------------
// Keys
// ---------------------------------------------------------------------------
template <size_t N> struct uint_of;
template <> struct uint_of<1> { using type = uint8_t; };
template <> struct uint_of<2> { using type = uint16_t; };
template <> struct uint_of<4> { using type = uint32_t; };
template <> struct uint_of<8> { using type = uint64_t; };
template <class T> using sort_key_t = typename uint_of<sizeof(T)>::type;

template <class U> inline constexpr U TOP = U(U(1) << (8 * sizeof(U) - 1));
template <class U> inline constexpr U ONES = U(~U(0));

// The bits of +inf: a larger magnitude is a NaN.
template <class U> constexpr U inf_bits() {
    if constexpr (sizeof(U) == 2) return 0x7C00;
    else if constexpr (sizeof(U) == 4) return 0x7F800000u;
    else return 0x7FF0000000000000ull;
}

// The key of v: unsigned order of keys is NumPy's sort order of values (see the top).
// NOTE: branch-free and with signed compares only, so make_keys vectorises even for SSE2.
template <class T> inline sort_key_t<T> to_key(T v) {
    using U = sort_key_t<T>;
    using S = std::make_signed_t<U>;
    const U u = ld<U>(&v);
    if constexpr (is_float_v<T>) {
        const U mag = U(u & ~TOP<U>);
        const U k = U(u ^ (U(S(u) >> (8 * sizeof(U) - 1)) | TOP<U>));
        return S(mag) > S(inf_bits<U>()) ? ONES<U> : mag == 0 ? TOP<U> : k;
    } else if constexpr (is_sint_v<T>) {
        return U(u ^ TOP<U>);
    } else {
        return u;
    }
}

// The value of a key; NaN's key gives one NaN, a zero's +0.0 (see patch_values).
template <class T> inline T from_key(sort_key_t<T> k) {
    using U = sort_key_t<T>;
    using S = std::make_signed_t<U>;
    U u = k;
    if constexpr (is_float_v<T>) u = U(k ^ (U(~(S(k) >> (8 * sizeof(U) - 1))) | TOP<U>));
    else if constexpr (is_sint_v<T>) u = U(k ^ TOP<U>);
    return ld<T>(&u);
}

// What the sort moves: the key alone (values only) or the key and its position.
template <class U> struct Keyed {
    U key;
    uint32_t pos;
};
template <class Item> inline constexpr bool keyed_v = !std::is_integral_v<Item>;
template <class Item> inline auto key_of(const Item& v) {
    if constexpr (keyed_v<Item>) return v.key;
    else return v;
}
template <class Item> using item_key_t = decltype(key_of(std::declval<Item>()));
template <class Item> inline bool item_less(const Item& a, const Item& b) {
    if constexpr (keyed_v<Item>) return a.key < b.key || (a.key == b.key && a.pos < b.pos);
    else return a < b;
}

template <class U> struct KeyStats {
    U any = 0, all = ONES<U>;  // OR and AND of the keys: the bits that vary
    U lo = ONES<U>, hi = 0;    // the smallest and the largest key
    bool neg_zero = false;     // a -0.0 was seen
    void merge(const KeyStats& o) {
        any |= o.any;
        all &= o.all;
        lo = std::min(lo, o.lo);
        hi = std::max(hi, o.hi);
        neg_zero |= o.neg_zero;
    }
};

// Fills a[b, e) with the keys of x[b * s], ..., x[(e - 1) * s] xor `flip` (all ones when
// descending), with their positions for Keyed items; folds their stats into st.
template <class T, class Item>
NDP_INLINE void make_keys(const T* x, int64_t s, int64_t b, int64_t e, sort_key_t<T> flip,
                          Item* a, KeyStats<sort_key_t<T>>& st) {
    using U = sort_key_t<T>;
    U any = 0, all = ONES<U>, lo = ONES<U>, hi = 0, negz = 0;
    auto one = [&](int64_t i, T v) {
        const U k = U(to_key(v) ^ flip);
        any |= k;
        all &= k;
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
        if constexpr (is_float_v<T>) negz |= U(ld<U>(&v) == TOP<U>);
        if constexpr (keyed_v<Item>) a[i] = Item{k, uint32_t(i)};
        else a[i] = k;
    };
    if (s == 1)
        for (int64_t i = b; i < e; ++i) one(i, x[i]);
    else
        for (int64_t i = b; i < e; ++i) one(i, x[i * s]);
    st.merge({any, all, lo, hi, negz != 0});
}

// ---------------------------------------------------------------------------
// LSD radix sort
// ---------------------------------------------------------------------------
template <class U, int B> struct Digits {
    static constexpr int bits = std::min<int>(B, 8 * sizeof(U));
    static constexpr int radix = 1 << bits;
    static constexpr int passes = (8 * int(sizeof(U)) + bits - 1) / bits;
};

// The digits a radix sort moves by: windows of B bits of (key - base), lowest first. Each
// starts B - 1 bits below the highest varying bit not yet covered (at bit 0 at the lowest:
// windows may overlap, which keeps the order of the keys), so the highest one splits the
// keys into 2^B buckets over their actual spread, and bits that never vary are skipped.
template <class U, int B> struct DigitPlan {
    using D = Digits<U, B>;
    U base = 0;
    int nd = 0;
    int shift[D::passes];
    NDP_INLINE unsigned digit(U key, int j) const { return unsigned(U(key - base) >> shift[j]) & (D::radix - 1); }
    // The plan of the lower digits alone (the buckets of the highest one).
    DigitPlan lower() const {
        DigitPlan p = *this;
        --p.nd;
        return p;
    }
};

template <int B, class U> DigitPlan<U, B> digits_of(U base, U vary) {
    constexpr int bits = Digits<U, B>::bits;
    DigitPlan<U, B> p;
    p.base = base;
    int top[Digits<U, B>::passes];
    while (vary) {
        const int h = 8 * int(sizeof(U)) - 1 - std::countl_zero(vary);
        const int s = std::max(0, h - bits + 1);
        top[p.nd++] = s;
        vary = s ? U(vary & U((U(1) << s) - 1)) : U(0);
    }
    for (int j = 0; j < p.nd; ++j) p.shift[j] = top[p.nd - 1 - j];
    return p;
}

// The better of two plans: the keys as they are, windows over the bits that vary (OR ^ AND);
// or the keys less the smallest, windows over the bits of the spread. NOTE: the second wins
// for small signed integers, whose keys straddle the sign bit: all 32 bits vary, yet the
// spread of [-2^15, 2^15) is 17 bits, 3 digits instead of 4, and the top one splits evenly.
template <int B, class U> DigitPlan<U, B> plan_digits(const KeyStats<U>& st) {
    const DigitPlan<U, B> as_is = digits_of<B>(U(0), U(st.any ^ st.all));
    if (st.hi <= st.lo) return as_is;
    const U spread = U(st.hi - st.lo);
    const DigitPlan<U, B> shifted =
        digits_of<B>(st.lo, U(ONES<U> >> std::countl_zero(spread)));
    return shifted.nd <= as_is.nd ? shifted : as_is;
}

// Adds the counts of the digits of plan (all nd) of a[b, e) to h (nd tables of radix).
template <int B, class Item>
void histogram(const Item* a, int64_t b, int64_t e, const DigitPlan<item_key_t<Item>, B>& plan, int nd,
               uint32_t* h) {
    constexpr int R = Digits<item_key_t<Item>, B>::radix;
    for (int64_t i = b; i < e; ++i) {
        const auto k = key_of(a[i]);
        for (int j = 0; j < nd; ++j) ++h[j * R + plan.digit(k, j)];
    }
}

// Moves src[b, e) to dst by digit j, stably: off[d] is the next slot of d.
template <int B, class Item>
void scatter(const Item* src, Item* dst, int64_t b, int64_t e, const DigitPlan<item_key_t<Item>, B>& plan,
             int j, uint32_t* off) {
    for (int64_t i = b; i < e; ++i) {
        const Item v = src[i];
        dst[off[plan.digit(key_of(v), j)]++] = v;
    }
}

// Sorts a[0, n) (n < 2^32) with `tmp` of n items beside it and `hist` of passes * radix
// counts; returns the buffer that holds the result (a or tmp). A digit with one value
// here (the plan says over the row, the count over a) moves nothing and is skipped.
template <int B, class Item>
Item* radix_sort(Item* a, Item* tmp, int64_t n, const DigitPlan<item_key_t<Item>, B>& plan, uint32_t* hist) {
    constexpr int R = Digits<item_key_t<Item>, B>::radix;
    const int nd = plan.nd;
    std::fill(hist, hist + nd * R, 0u);
    histogram<B>(a, 0, n, plan, nd, hist);
    for (int j = 0; j < nd; ++j) {
        uint32_t* h = hist + j * R;
        if (h[plan.digit(key_of(a[0]), j)] == n) continue;  // one value here
        uint32_t sum = 0;
        for (int r = 0; r < R; ++r) {
            const uint32_t c = h[r];
            h[r] = sum;
            sum += c;
        }
        scatter<B>(a, tmp, 0, n, plan, j, h);
        std::swap(a, tmp);
    }
    return a;
}

// Sorts a[0, n) by plan with `tmp` of n items beside it and `hist` as radix_sort's; returns
// the buffer that holds the result. LSD passes where the two buffers fit in cache (or two
// digits at most are left); else one pass by the highest digit, then each bucket alike.
// NOTE: the keys of floats of both signs straddle the sign bit, so their highest digit has a
// handful of values (a few exponents): 10^6 float32 in [-10, 10) left 4 buckets of 2.5 * 10^5
// items, sorted by three LSD passes each out of cache.
template <int B, class Item>
Item* bucket_sort(Item* a, Item* tmp, int64_t n, const DigitPlan<item_key_t<Item>, B>& plan, uint32_t* hist) {
    constexpr int R = Digits<item_key_t<Item>, B>::radix;
    constexpr int64_t IN_CACHE = (256 << 10) / int64_t(sizeof(Item));
    if (n < RADIX_MIN) {
        std::sort(a, a + n, item_less<Item>);
        return a;
    }
    if (n <= IN_CACHE || plan.nd <= 2) return radix_sort<B>(a, tmp, n, plan, hist);
    const int top = plan.nd - 1;
    uint32_t start[R + 1] = {};
    for (int64_t i = 0; i < n; ++i) ++start[plan.digit(key_of(a[i]), top) + 1];
    if (start[plan.digit(key_of(a[0]), top) + 1] == n) return bucket_sort<B>(a, tmp, n, plan.lower(), hist);
    for (int r = 0; r < R; ++r) start[r + 1] += start[r];
    uint32_t off[R];
    std::copy(start, start + R, off);
    scatter<B>(a, tmp, 0, n, plan, top, off);
    const DigitPlan<item_key_t<Item>, B> low = plan.lower();
    for (int r = 0; r < R; ++r) {
        Item *b = tmp + start[r], *out = bucket_sort<B>(b, a + start[r], start[r + 1] - start[r], low, hist);
        if (out != b) std::copy(out, out + (start[r + 1] - start[r]), b);
    }
    return tmp;
}

// parallel_range for a body that may fail to allocate: a body must not throw, so the
// failure is raised after the region.
template <class F> void parallel_alloc(int64_t n, int64_t grain, F&& f) {
    std::atomic<bool> failed{false};
    parallel_range(n, grain, [&](int64_t b, int64_t e) {
        try {
            f(b, e);
        } catch (...) {
            failed = true;
        }
    });
    if (failed) throw std::bad_alloc();
}

// radix_sort for long rows, by all threads where nb > 1. One pass by the highest digit that
// varies: a[0, n) is cut into nb blocks, each counts its digits, then scatters after the
// slots of lower digits and of earlier blocks. That leaves 2^B buckets, each sorted on the
// lower digits by bucket_sort (in cache, or split again), a bucket per thread at a time (25 %
// faster than LSD passes over all of a 10^6 int64 argsort). Returns the buffer of the result.
template <int B, class Item>
Item* radix_sort_big(Item* a, Item* tmp, int64_t n, const DigitPlan<item_key_t<Item>, B>& plan, int64_t nb) {
    using U = item_key_t<Item>;
    using D = Digits<U, B>;
    constexpr int R = D::radix;
    const int nd = plan.nd;
    if (nd == 0) return a;
    DigitPlan<U, B> top = plan;  // the highest digit alone, as digit 0
    top.shift[0] = plan.shift[nd - 1];
    top.nd = 1;
    std::vector<uint32_t> hist(static_cast<size_t>(nb * R)), start(R + 1);
    auto lo = [&](int64_t c) { return n * c / nb; };
    parallel_range(nb, 1, [&](int64_t cb, int64_t ce) {
        for (int64_t c = cb; c < ce; ++c) {
            std::fill(&hist[c * R], &hist[c * R] + R, 0u);
            histogram<B>(a, lo(c), lo(c + 1), top, 1, &hist[c * R]);
        }
    });
    uint32_t sum = 0;
    for (int r = 0; r < R; ++r) {
        start[r] = sum;
        for (int64_t c = 0; c < nb; ++c) {
            const uint32_t cnt = hist[c * R + r];
            hist[c * R + r] = sum;
            sum += cnt;
        }
    }
    start[R] = sum;
    parallel_range(nb, 1, [&](int64_t cb, int64_t ce) {
        for (int64_t c = cb; c < ce; ++c) scatter<B>(a, tmp, lo(c), lo(c + 1), top, 0, &hist[c * R]);
    });
    if (nd == 1) return tmp;
    const DigitPlan<U, B> low = plan.lower();
    // NOTE: the buckets largest first, each claimed by the next free thread: keys bunch in a
    // few buckets (10^6 floats in [0, 1) fill two, both in one thread's half of a split by
    // bucket number, which took twice as long as when the two halves had one each).
    std::array<uint16_t, R> order;
    std::iota(order.begin(), order.end(), uint16_t(0));
    std::sort(order.begin(), order.end(),
              [&](int x, int y) { return start[x + 1] - start[x] > start[y + 1] - start[y]; });
    std::atomic<int> next{0};
    parallel_alloc(std::min<int64_t>(num_threads(), R), 1, [&](int64_t, int64_t) {
        std::unique_ptr<uint32_t[]> h(new uint32_t[D::passes * R]);
        for (int i = next++; i < R && start[order[i] + 1] > start[order[i]]; i = next++) {
            const int r = order[i];
            Item *b = tmp + start[r], *e = tmp + start[r + 1];
            Item* out = bucket_sort<B>(b, a + start[r], e - b, low, h.get());
            if (out != a + start[r]) std::copy(out, out + (e - b), a + start[r]);
        }
    });
    return a;
}

// ---------------------------------------------------------------------------
// Rows: keys in, sorted values and positions out
// ---------------------------------------------------------------------------
// The operands of run_sort; strides in elements, v / ix null when not asked for.
template <class T> struct Job {
    const T* x;
    int64_t xs0, xs;
    T* v;
    int64_t vs0, vs;
    char* ix;
    int idt;
    int64_t is0, is;
    int64_t K;
    uint64_t flip;  // all ones when descending (keys are cut to their width where used)
    const T* xrow(int64_t m) const { return x + m * xs0; }
};

// Row m's positions [b, e) of the index dtype: pos(i), wrapping as a cast does.
template <class T, class F>
void write_positions(const Job<T>& j, int64_t m, int64_t b, int64_t e, F&& pos) {
    dispatch(j.idt, [&](auto t) {
        using I = decltype(t);
        if constexpr (is_int_v<I>) {
            I* O = reinterpret_cast<I*>(j.ix) + m * j.is0;
            for (int64_t i = b; i < e; ++i) O[i * j.is] = static_cast<I>(pos(i));
        }
    });
}

// Writes row m's outputs [b, e) from the sorted items r: the values (see the top) and the
// positions.
template <class T, class Item>
NDP_INLINE void write_row(const Job<T>& j, int64_t m, const Item* r, int64_t b, int64_t e,
                          bool neg_zero) {
    using U = sort_key_t<T>;
    if (j.v) {
        const T* X = j.xrow(m);
        T* V = j.v + m * j.vs0;
        auto value = [&](int64_t i) {
            const U k = U(key_of(r[i]) ^ j.flip);
            T val = from_key<T>(k);
            if constexpr (keyed_v<Item> && is_float_v<T>)
                if (k == ONES<U> || (neg_zero && k == TOP<U>)) val = X[int64_t(r[i].pos) * j.xs];
            return val;
        };
        if (j.vs == 1)
            for (int64_t i = b; i < e; ++i) V[i] = value(i);
        else
            for (int64_t i = b; i < e; ++i) V[i * j.vs] = value(i);
    }
    if constexpr (keyed_v<Item>)
        if (j.ix) write_positions(j, m, b, e, [&](int64_t i) { return r[i].pos; });
}

// Values only: the block of key `key` in the sorted keys r gets the input's own values of
// that key, in input order (the stable order).
template <class T, class U>
void patch_block(const Job<T>& j, int64_t m, const U* r, U key) {
    const auto [lo, hi] = std::equal_range(r, r + j.K, U(key ^ j.flip));
    const T* X = j.xrow(m);
    T* V = j.v + m * j.vs0;
    for (int64_t i = 0, out = lo - r; out < hi - r; ++i) {
        const T val = X[i * j.xs];
        if (to_key(val) == key) V[out++ * j.vs] = val;
    }
}

template <class T, class Item>
void patch_values(const Job<T>& j, int64_t m, const Item* r, bool neg_zero) {
    using U = sort_key_t<T>;
    if constexpr (is_float_v<T> && !keyed_v<Item>) {
        patch_block(j, m, r, ONES<U>);
        if (neg_zero) patch_block(j, m, r, TOP<U>);
    }
}

// make_keys and write_row on rows [b, e) of row m, compiled per ISA (NDP_CLONES): x86-64's
// baseline has no 64-bit compares, so there the keys of 8-byte values were made one at a
// time with branches. 10^6 float64 on 1 thread (docs/performance.md, 2026-12-05): the whole
// sort 16.3 -> 10.6 ms with the new leaves and partitions, of which these two passes ~8 % each.
template <class T, class Item>
NDP_CLONES void keys_part(const Job<T>& j, int64_t m, int64_t b, int64_t e, Item* a,
                          KeyStats<sort_key_t<T>>& st) {
    make_keys(j.xrow(m), j.xs, b, e, sort_key_t<T>(j.flip), a, st);
}
template <class T, class Item>
NDP_CLONES void write_part(const Job<T>& j, int64_t m, const Item* r, int64_t b, int64_t e,
                           bool neg_zero) {
    write_row(j, m, r, b, e, neg_zero);
}

// Values only, 4- and 8-byte keys that need at least this many radix passes: the AVX-512
// quicksort (quicksort.h) where the CPU has it. Measured in docs/performance.md: 10^6
// random float32 or int32 with 3 digits or more 1.5-2x faster than the radix sort; keys of
// 2 digits (int32 in [-2^15, 2^15)) 1.4x slower.
constexpr int QUICK_DIGITS = 3;

// Sorts a[0, n) by the quicksort where the row and the CPU qualify (above); says whether.
template <class Item, class Plan> bool quick_sorted(Item* a, int64_t n, const Plan& plan, bool all_threads) {
    if constexpr (keyed_v<Item> || sizeof(Item) < 4) {
        return false;
    } else {
        static const bool cpu = quick::available();
        if (plan.nd < QUICK_DIGITS || !cpu) return false;
        if (all_threads) quick::sort_parallel(a, n);
        else quick::sort(a, n);
        return true;
    }
}

template <int B, class T, class Item>
void sort_row(const Job<T>& j, int64_t m, Item* a, Item* tmp, uint32_t* hist) {
    const int64_t n = j.K;
    KeyStats<sort_key_t<T>> st;
    keys_part(j, m, 0, n, a, st);
    const auto plan = plan_digits<B>(st);
    Item* r = a;  // where the sorted items end up
    if (!quick_sorted(a, n, plan, false)) {
        if (n < RADIX_MIN) std::sort(a, a + n, item_less<Item>);
        else if (n < BIG_ROW) r = radix_sort<B>(a, tmp, n, plan, hist);
        else r = radix_sort_big<B>(a, tmp, n, plan, 1);
    }
    write_part(j, m, r, 0, n, st.neg_zero);
    if (j.v) patch_values(j, m, r, st.neg_zero);
}

// sort_row for a long row, by all threads.
template <int B, class T, class Item>
void sort_row_parallel(const Job<T>& j, int64_t m, Item* a, Item* tmp) {
    const int64_t n = j.K, nb = std::min<int64_t>(64, 4 * num_threads());
    auto lo = [&](int64_t c) { return n * c / nb; };
    std::vector<KeyStats<sort_key_t<T>>> part(static_cast<size_t>(nb));
    parallel_range(nb, 1, [&](int64_t cb, int64_t ce) {
        for (int64_t c = cb; c < ce; ++c)
            keys_part(j, m, lo(c), lo(c + 1), a, part[c]);
    });
    KeyStats<sort_key_t<T>> st;
    for (const auto& p : part) st.merge(p);
    const auto plan = plan_digits<B>(st);
    Item* r = a;
    if (!quick_sorted(a, n, plan, true)) r = radix_sort_big<B>(a, tmp, n, plan, nb);
    parallel_range(nb, 1, [&](int64_t cb, int64_t ce) {
        for (int64_t c = cb; c < ce; ++c) write_part(j, m, r, lo(c), lo(c + 1), st.neg_zero);
    });
    if (j.v) patch_values(j, m, r, st.neg_zero);
}

// ---------------------------------------------------------------------------
// Bitonic network: values only, 4- and 8-byte keys, rows of at most NETWORK_MAX
// ---------------------------------------------------------------------------
// L = 64 / sizeof(key) rows at a time, one per vector lane: the rows' keys (padded with
// all-ones keys to P, a power of two) are transposed in L x L blocks into P vectors, so
// vector i holds the i-th key of every row, and one bitonic network sorts all L columns
// with vector min / max. Blocks of 16 vectors go through registers: the first 4 stages of
// each merge and the 16-sorts at the start; larger strides take up to 4 stages per pass.
typedef uint32_t v16u32 __attribute__((vector_size(64)));
typedef uint64_t v8u64 __attribute__((vector_size(64)));

// NOTE: the vectors of the network are 64-byte aligned (the scratch is): GCC keeps the
// alignment of a vector type given as a template argument whatever its typedef says.
// G stages (strides off[1 << (G - 1)], ..., off[1]) on the 2^G vectors p[off[s]].
template <int G, bool Desc, class V> NDP_INLINE void stages(V* p, const int64_t* off) {
    V r[1 << G];
#pragma GCC unroll 16
    for (int s = 0; s < (1 << G); ++s) r[s] = p[off[s]];
    bitonic::cascade<1 << G, (1 << G) / 2, 0, Desc>(r);
#pragma GCC unroll 16
    for (int s = 0; s < (1 << G); ++s) p[off[s]] = r[s];
}

// The stages of strides 2^top, ..., 2^(top - G + 1) of the merge of blocks of 2^kb
// (descending where bit kb of the position is set).
template <int G, class V> NDP_INLINE void merge_pass(V* p, int64_t P, int top, int kb) {
    int64_t off[1 << G], mask = 0;
    for (int s = 0; s < (1 << G); ++s) {
        off[s] = 0;
        for (int g = 0; g < G; ++g)
            if (s & (1 << g)) off[s] |= int64_t(1) << (top - G + 1 + g);
    }
    for (int g = 0; g < G; ++g) mask |= int64_t(1) << (top - G + 1 + g);
    for (int64_t b = 0; b < P; ++b) {
        if (b & mask) continue;
        if ((b >> kb) & 1) stages<G, true>(p + b, off);
        else stages<G, false>(p + b, off);
    }
}

// The merges of blocks of 32 .. P; the last one's stages of strides 8 .. 1 are left to the
// caller (network, on its way out).
template <class V> NDP_INLINE void merges(V* p, int64_t P) {
    const int logp = __builtin_ctzll(uint64_t(P));
    for (int kb = 5; kb <= logp; ++kb) {
        for (int top = kb - 1; top >= 4;) {
            const int g = std::min(4, top - 3);
            if (g == 4) merge_pass<4>(p, P, top, kb);
            else if (g == 3) merge_pass<3>(p, P, top, kb);
            else if (g == 2) merge_pass<2>(p, P, top, kb);
            else merge_pass<1>(p, P, top, kb);
            top -= g;
        }
        if (kb < logp) merge_pass<4>(p, P, 3, kb);
    }
}

// Sorts the L rows keys[l * P, (l + 1) * P) ascending (P a power of two >= 16) through
// `vecs`, P vectors. Each 16 vectors are sorted (alternately up and down) on their way in
// and get the last 4 stages on their way out.
template <class V, class U> NDP_INLINE void network(U* keys, int64_t P, V* vecs) {
    constexpr int L = 64 / sizeof(U);
    static_assert(16 % L == 0);
    for (int64_t c = 0; c < P; c += 16) {
        V r[16];
        for (int h = 0; h < 16; h += L) {
            for (int l = 0; l < L; ++l) std::memcpy(&r[h + l], keys + l * P + c + h, 64);
            bitonic::transpose<V, L>(r + h);
        }
        if (c & 16) bitonic::sort_lanes<16, true>(r);
        else bitonic::sort_lanes<16, false>(r);
        for (int i = 0; i < 16; ++i) vecs[c + i] = r[i];
    }
    merges(vecs, P);
    for (int64_t c = 0; c < P; c += 16) {
        V r[16];
        for (int i = 0; i < 16; ++i) r[i] = vecs[c + i];
        if (P > 16) bitonic::cascade<16, 8, 0, false>(r);
        for (int h = 0; h < 16; h += L) {
            bitonic::transpose<V, L>(r + h);
            for (int l = 0; l < L; ++l) std::memcpy(keys + l * P + c + h, &r[h + l], 64);
        }
    }
}

// Rows [L * g, L * (g + 1)) of j through the network, with `keys` of L * P and `vecs` of
// P vectors (64-byte aligned).
template <class T>
NDP_CLONES void network_group(const Job<T>& j, int64_t g, sort_key_t<T>* keys, int64_t P,
                              void* vecs) {
    using U = sort_key_t<T>;
    using V = std::conditional_t<sizeof(U) == 4, v16u32, v8u64>;
    constexpr int L = 64 / sizeof(U);
    KeyStats<U> st[L];
    for (int l = 0; l < L; ++l) {
        make_keys(j.xrow(g * L + l), j.xs, 0, j.K, U(j.flip), keys + l * P, st[l]);
        std::fill(keys + l * P + j.K, keys + (l + 1) * P, ONES<U>);
    }
    network(keys, P, static_cast<V*>(vecs));
    for (int l = 0; l < L; ++l) {
        write_row(j, g * L + l, keys + l * P, 0, j.K, st[l].neg_zero);
        patch_values(j, g * L + l, keys + l * P, st[l].neg_zero);
    }
}

// Groups [gb, ge) of L rows of j through network_group.
template <class T> void network_rows(const Job<T>& j, int64_t gb, int64_t ge) {
    using U = sort_key_t<T>;
    constexpr int L = 64 / sizeof(U);
    int64_t P = 16;
    while (P < j.K) P *= 2;
    std::unique_ptr<U[]> keys(new U[L * P]);
    std::unique_ptr<char[]> raw(new char[P * 64 + 64]);
    void* vecs = raw.get() + (64 - reinterpret_cast<uintptr_t>(raw.get()) % 64);
    for (int64_t g = gb; g < ge; ++g) network_group(j, g, keys.get(), P, vecs);
}

// ---------------------------------------------------------------------------
// searchsorted (fused): binary searches on the keys
// ---------------------------------------------------------------------------
// NOTE: G searches in lockstep: every search of n keys takes the same steps (the range
// halves whatever the compares say), so G independent loads are in flight at once where one
// search waits for each, and the AVX-512 / AVX2 versions gather them.
constexpr int SEARCH_LOCKSTEP = 16;

// out[i] for i in [b, e): how many of keys[0, n) (ascending, n >= 1) are below v[i * vs]'s key
// (right: not above it).
template <class T>
NDP_CLONES void search_block(const sort_key_t<T>* keys, int64_t n, const T* v, int64_t vs, int64_t b,
                             int64_t e, bool right, int64_t* out) {
    using U = sort_key_t<T>;
    constexpr int G = SEARCH_LOCKSTEP;
    for (int64_t i = b; i < e; i += G) {
        const int g = int(std::min<int64_t>(G, e - i));
        U k[G];
        int64_t at[G], top[G];
        for (int t = 0; t < G; ++t) {
            const U key = to_key(v[(i + std::min(t, g - 1)) * vs]);
            // keys not above key = keys below key + 1, but for the largest key: all of them
            top[t] = right && key == ONES<U> ? n : -1;
            k[t] = right ? U(key + 1) : key;
            at[t] = 0;
        }
        // the answer lies in [at, at + len]; at len 1 one compare settles it
        for (int64_t len = n; len > 1;) {
            const int64_t half = len / 2;
            for (int t = 0; t < G; ++t) at[t] += keys[at[t] + half] < k[t] ? half : 0;
            len -= half;
        }
        for (int t = 0; t < g; ++t) out[i + t] = top[t] >= 0 ? top[t] : at[t] + (keys[at[t]] < k[t]);
    }
}

}  // namespace

// Scratch memory (driver.h). NOTE: blocks of 1 MiB and more are 2 MiB-aligned and advised as
// huge pages (as memory.cc's buffers), and the two last freed of at most KEEP_MAX bytes each
// are kept for the next call: fresh pages cost a fault and a zeroing each, a fifth of the time
// of an argsort of 10^6 int64 (two blocks of 16 MB). KEEP_MAX is 32 MiB, the largest freed
// block glibc's malloc itself keeps in its heap (its dynamic mmap threshold), so at most
// 64 MiB nobody asked for is held; release_sort_scratch() (the backend's empty_cache) and a
// failed allocation give it back. Larger blocks pay the faults: beside the work they serve
// they are a tenth or less.
namespace {
constexpr size_t HUGE_PAGE = size_t(2) << 20, KEEP_MAX = size_t(32) << 20;
std::mutex g_kept_mutex;
struct Kept {
    void* p;
    size_t cap;
} g_kept[2];
}  // namespace

void FreeBlock::operator()(void* p) const {
    Kept out{p, cap};
    if (cap && cap <= KEEP_MAX) {
        std::lock_guard<std::mutex> lk(g_kept_mutex);
        Kept& slot = g_kept[g_kept[1].cap < g_kept[0].cap];  // the smaller one
        if (cap > slot.cap) std::swap(out, slot);
    }
    std::free(out.p);
}

Block take_block(size_t bytes) {
    if (bytes < (size_t(1) << 20)) {
        void* p = std::malloc(std::max<size_t>(bytes, 1));
        if (!p) throw std::bad_alloc();
        return Block(p, FreeBlock{0});
    }
    {
        std::lock_guard<std::mutex> lk(g_kept_mutex);
        for (Kept& slot : g_kept)
            if (slot.p && slot.cap >= bytes) {
                Block b(slot.p, FreeBlock{slot.cap});
                slot = Kept{nullptr, 0};
                return b;
            }
    }
    const size_t cap = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    void* p = std::aligned_alloc(HUGE_PAGE, cap);
    if (!p) {
        release_sort_scratch();
        p = std::aligned_alloc(HUGE_PAGE, cap);
        if (!p) throw std::bad_alloc();
    }
#if defined(MADV_HUGEPAGE)
    madvise(p, cap, MADV_HUGEPAGE);  // advice only: failure is fine
#endif
    return Block(p, FreeBlock{cap});
}

namespace {

template <class Item> struct Scratch {
    Block a_, tmp_, hist_;
    Scratch(int64_t K, int64_t nhist)
        : a_(take_block(sizeof(Item) * K)), tmp_(take_block(sizeof(Item) * K)),
          hist_(take_block(sizeof(uint32_t) * nhist)) {}
    Item* a() const { return static_cast<Item*>(a_.get()); }
    Item* tmp() const { return static_cast<Item*>(tmp_.get()); }
    uint32_t* hist() const { return static_cast<uint32_t*>(hist_.get()); }
};

// Every row of j: long ones one at a time by all threads; else rows in parallel, L at a
// time through the network where it pays, the others through sort_row.
template <class T, class Item> void real_rows(const Job<T>& j, int64_t M) {
    constexpr int B = 8;
    using U = sort_key_t<T>;
    using D = Digits<U, B>;
    const int64_t K = j.K;
    const int nt = num_threads();
    if (K >= BIG_ROW && M < 2 * nt) {
        Scratch<Item> s(K, 1);
        for (int64_t m = 0; m < M; ++m) sort_row_parallel<B>(j, m, s.a(), s.tmp());
        return;
    }
    int64_t done = 0;
    if constexpr (!keyed_v<Item> && (sizeof(U) == 4 || sizeof(U) == 8)) {
        constexpr int L = 64 / sizeof(U);
        if (K <= NETWORK_MAX && M >= L && network_pays<U>()) {
            parallel_alloc(M / L, std::max<int64_t>(1, GRAIN / 8 / (L * K)),
                           [&](int64_t b, int64_t e) { network_rows(j, b, e); });
            done = M / L * L;
        }
    }
    parallel_alloc(M - done, std::max<int64_t>(1, GRAIN / 8 / K), [&](int64_t b, int64_t e) {
        Scratch<Item> s(K, D::passes * D::radix);
        for (int64_t m = done + b; m < done + e; ++m) sort_row<B>(j, m, s.a(), s.tmp(), s.hist());
    });
}

// ---------------------------------------------------------------------------
// Comparison sort: complex dtypes
// ---------------------------------------------------------------------------
// NumPy's sort order: NaNs last; complex lexicographic with NaN parts last.
template <class T> inline bool sort_less(T a, T b) {
    if constexpr (is_complex_v<T>) {
        auto ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
        if (ar < br) return ai == ai || bi != bi;
        if (ar > br) return bi != bi && ai == ai;
        if (ar == br || (ar != ar && br != br)) return ai < bi || (bi != bi && ai == ai);
        return br != br;
    } else if constexpr (is_f16_v<T>) {
        float fa = static_cast<float>(a), fb = static_cast<float>(b);
        return fa < fb || (fb != fb && fa == fa);
    } else if constexpr (is_float_v<T>) {
        return a < b || (b != b && a == a);
    } else {
        return a < b;
    }
}

template <class T> void compare_rows(const Job<T>& j, int64_t M, bool descending, bool stable) {
    using Pair = std::pair<T, int64_t>;
    // NOTE: descending with a stable "greater" keeps ties in input order, exactly what the
    // reference's reverse-argsort-reverse gives; NaNs come first.
    auto lt = [&](const Pair& p, const Pair& q) {
        return descending ? sort_less(q.first, p.first) : sort_less(p.first, q.first);
    };
    const int64_t K = j.K;
    const int64_t grain = std::max<int64_t>(1, GRAIN / 4 / std::max<int64_t>(K, 1));
    parallel_alloc(M, grain, [&](int64_t b, int64_t e) {
        std::vector<Pair> row(static_cast<size_t>(K));
        for (int64_t m = b; m < e; ++m) {
            for (int64_t k = 0; k < K; ++k) row[k] = {j.xrow(m)[k * j.xs], k};
            if (stable || j.ix) std::stable_sort(row.begin(), row.end(), lt);
            else std::sort(row.begin(), row.end(), lt);
            if (j.v)
                for (int64_t k = 0; k < K; ++k) j.v[m * j.vs0 + k * j.vs] = row[k].first;
            if (j.ix) write_positions(j, m, 0, K, [&](int64_t k) { return row[k].second; });
        }
    });
}

}  // namespace

void release_sort_scratch() {
    Kept kept[2] = {{nullptr, 0}, {nullptr, 0}};
    {
        std::lock_guard<std::mutex> lk(g_kept_mutex);
        std::swap(kept, g_kept);
    }
    for (Kept& k : kept) std::free(k.p);
}

void run_searchsorted(const View& a, const View& v, const View& out, bool right) {
    if (a.ndim != 2 || a.shape[0] != 1 || v.ndim != 2 || v.shape[0] != 1 || out.ndim != 1 ||
        out.shape[0] != v.shape[1])
        throw std::invalid_argument("fused searchsorted: expected a (1, N), v (1, K) and out (K,).");
    require_dtype("fused searchsorted", "v", v, a.dtype);
    require_dtype("fused searchsorted", "out", out, I64);
    if (out.strides[0] != 1 && out.shape[0] > 1)
        throw std::invalid_argument("fused searchsorted: out must be contiguous.");
    if (a.dtype == C64 || a.dtype == C128)
        throw type_error(std::string("fused searchsorted: expected a real dtype; got ") + DT_NAME[a.dtype] + ".");
    int64_t* o = reinterpret_cast<int64_t*>(out.data);
    const int64_t n = a.shape[1], K = v.shape[1];
    if (n == 0) {
        std::fill(o, o + K, int64_t(0));
        return;
    }
    dispatch(a.dtype, [&](auto t) {
        using T = decltype(t);
        if constexpr (!is_complex_v<T>) {
            using U = sort_key_t<T>;
            std::vector<U> keys(static_cast<size_t>(n));
            const T* pa = reinterpret_cast<const T*>(a.data);
            for (int64_t i = 0; i < n; ++i) keys[i] = to_key(pa[i * a.strides[1]]);
            const T* pv = reinterpret_cast<const T*>(v.data);
            const int64_t vs = v.strides[1];
            // a search costs about log2(n) loads: grains of about GRAIN loads
            const int64_t grain = std::max<int64_t>(SEARCH_LOCKSTEP, GRAIN / (64 - __builtin_clzll(uint64_t(n))));
            parallel_range(K, grain, [&](int64_t b, int64_t e) {
                search_block(keys.data(), n, pv, vs, b, e, right, o);
            });
        }
    });
}

void run_sort(const View& x, const View* values, const View* indices, bool descending,
              bool stable) {
    if (x.ndim != 2) throw std::invalid_argument("sort: expected x of shape (M, K).");
    if (values) {
        require_same_shape("sort", x, *values);
        require_dtype("sort", "values_out", *values, x.dtype);
    }
    if (indices) {
        require_same_shape("sort", x, *indices);
        if (indices->dtype < I8 || indices->dtype > U64)
            throw type_error("sort: indices_out must have an integer dtype; got " +
                             std::string(DT_NAME[indices->dtype]) + ".");
    }
    if ((!values && !indices) || x.size == 0) return;
    // NOTE: the outputs are written while the input is read again (patch_values, write_row):
    // an output overlapping the input gets a contiguous copy of it first.
    std::unique_ptr<char[]> hold;
    View src = x;
    if (overlap(x, values) || overlap(x, indices)) {
        hold.reset(new char[static_cast<size_t>(x.size * x.itemsize())]);
        src.data = hold.get();
        src.strides[0] = x.shape[1];
        src.strides[1] = 1;
        run_copy(x, src);
    }
    dispatch(x.dtype, [&](auto t) {
        using T = decltype(t);
        Job<T> j{reinterpret_cast<const T*>(src.data), src.strides[0], src.strides[1],
                 values ? reinterpret_cast<T*>(values->data) : nullptr,
                 values ? values->strides[0] : 0, values ? values->strides[1] : 0,
                 indices ? indices->data : nullptr, indices ? indices->dtype : 0,
                 indices ? indices->strides[0] : 0, indices ? indices->strides[1] : 0,
                 x.shape[1], descending ? ~uint64_t(0) : 0};
        const int64_t M = x.shape[0];
        if constexpr (is_complex_v<T>) {
            compare_rows(j, M, descending, stable);
        } else {
            if (j.K >= (int64_t(1) << 32)) compare_rows(j, M, descending, stable);
            else if (indices) real_rows<T, Keyed<sort_key_t<T>>>(j, M);
            else real_rows<T, sort_key_t<T>>(j, M);
        }
    });
}

}  // namespace ndp
