// Gather and scatter-add along the last axis, and random bits (sort.cc sorts).
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <unordered_set>
#include <vector>

#include "driver.h"

namespace ndp {
namespace {

// The 1-D integer `indices` (any stride) as int64, each checked to be in [0, n). NOTE:
// contiguous int64 indices (what the core passes) are read in place unless `copy`, checked in one
// vectorised pass: a copy, its zeroing and a per-element branch took longer than the
// gather itself. `hold` keeps a converted copy alive.
const int64_t* checked_indices(const char* fn, const View& indices, int64_t n,
                               std::vector<int64_t>& hold, bool copy = false) {
    if (indices.ndim != 1) throw std::invalid_argument(std::string(fn) + ": indices must be 1-D.");
    if (indices.dtype < I8 || indices.dtype > U64)
        throw type_error(std::string(fn) + ": indices must have an integer dtype; got " +
                         DT_NAME[indices.dtype] + ".");
    const int64_t K = indices.shape[0];
    const int64_t* idx = reinterpret_cast<const int64_t*>(indices.data);
    if (copy || indices.dtype != I64 || (indices.strides[0] != 1 && K > 1)) {
        hold.resize(static_cast<size_t>(K));
        View tmp = indices;
        tmp.dtype = I64;
        tmp.data = reinterpret_cast<char*>(hold.data());
        tmp.strides[0] = 1;
        if (indices.dtype == U64) {
            // NOTE: uint64 above 2**63 would wrap to negative and pass as "in range" for no one.
            for (int64_t k = 0; k < K; ++k) {
                uint64_t v = ld<uint64_t>(indices.data + k * indices.strides[0] * 8);
                hold[k] = v > uint64_t(INT64_MAX) ? -1 : int64_t(v);
            }
        } else {
            run_cast(indices, tmp);
        }
        idx = hold.data();
    }
    std::atomic<bool> bad{false};
    parallel_range(K, GRAIN * 4, [&](int64_t b, int64_t e) {
        uint64_t out = 0;  // NOTE: an unsigned compare catches the negatives too
        for (int64_t k = b; k < e; ++k) out |= uint64_t(uint64_t(idx[k]) >= uint64_t(n));
        if (out) bad = true;
    });
    if (bad) {
        for (int64_t k = 0; k < K; ++k)
            if (idx[k] < 0 || idx[k] >= n)
                throw index_error(std::string(fn) + ": index " + std::to_string(idx[k]) +
                                  " is out of bounds for an axis of size " + std::to_string(n) + ".");
    }
    return idx;
}

// f(T{}) with T an unsigned integer of dtype's itemsize (c128 for 16 bytes): for kernels that
// only move elements.
template <class F> void dispatch_bits(int dtype, F&& f) {
    switch (log2_itemsize(dtype)) {
        case 0: return f(uint8_t{});
        case 1: return f(uint16_t{});
        case 2: return f(uint32_t{});
        case 3: return f(uint64_t{});
        default: return f(c128{});
    }
}

// out[m, k] = x[m, idx[k]]. Three layouts: one row (threads over k); x's rows adjacent
// (sm == 1: a take along axis 0 of a row-major array, moved last), in 64 x 16 tiles so
// that the reads run along x's rows and the writes fill cache lines of out; else rows.
template <class T>
void gather(const View& x, const int64_t* idx, const View& out) {
    const int64_t M = x.shape[0], K = out.shape[1];
    const int64_t sm = x.strides[0], sn = x.strides[1];
    const T* X = reinterpret_cast<const T*>(x.data);
    T* O = reinterpret_cast<T*>(out.data);
    const int64_t so = out.strides[0], sk = out.strides[1];
    if (M == 1) {
        parallel_range(K, GRAIN, [&](int64_t b, int64_t e) {
            if (sk == 1 && sn == 1)
                for (int64_t k = b; k < e; ++k) O[k] = X[idx[k]];
            else
                for (int64_t k = b; k < e; ++k) O[k * sk] = X[idx[k] * sn];
        });
        return;
    }
    if (sm == 1 && sk == 1 && M >= 64) {
        constexpr int64_t TM = 64, TK = 16;
        parallel_range((M + TM - 1) / TM, std::max<int64_t>(1, GRAIN / TM / std::max<int64_t>(K, 1)),
                       [&](int64_t b, int64_t e) {
            for (int64_t m0 = b * TM; m0 < std::min(M, e * TM); m0 += TM) {
                const int64_t m1 = std::min(M, m0 + TM);
                for (int64_t k0 = 0; k0 < K; k0 += TK) {
                    const int64_t k1 = std::min(K, k0 + TK);
                    for (int64_t k = k0; k < k1; ++k) {
                        const T* row = X + idx[k] * sn;
                        for (int64_t m = m0; m < m1; ++m) O[m * so + k] = row[m];
                    }
                }
            }
        });
        return;
    }
    parallel_range(M, std::max<int64_t>(1, GRAIN / std::max<int64_t>(K, 1)), [&](int64_t b, int64_t e) {
        for (int64_t m = b; m < e; ++m)
            for (int64_t k = 0; k < K; ++k) O[m * so + k * sk] = X[m * sm + idx[k] * sn];
    });
}

// scatter for one row of many indices into an `out` far larger than a core's cache, where
// each add would miss it: the (position, value) pairs are first partitioned, in k order, into
// buckets of 2^shift consecutive positions (a counting pass and a copy, both streaming), then
// each bucket is added into its own stretch of `out`, which stays in cache. The buckets cover
// disjoint positions, so threads take them in any order, and every position still receives
// its values in k order: the sequential loop's result to the bit. 9 * 10^6 int64 adds into
// 9 * 10^6 positions: see docs/performance.md.
template <class T>
void scatter_bucketed(const View& out, const int64_t* idx, const View& values, int shift) {
    const int64_t N = out.shape[1], K = values.shape[1], so = out.strides[1], sv = values.strides[1];
    const int64_t R = ((N - 1) >> shift) + 1;
    const int64_t nc = std::min<int64_t>(4 * num_threads(), std::max<int64_t>(1, K / GRAIN));
    auto lo = [&](int64_t c) { return K * c / nc; };
    // NOTE: each chunk's counters (then its next slots) side by side: [chunk][bucket] keeps
    // the threads off each other's cache lines.
    std::vector<int64_t> next(size_t(nc * R), 0), start(size_t(R + 1), 0);
    parallel_range(nc, 1, [&](int64_t cb, int64_t ce) {
        for (int64_t c = cb; c < ce; ++c) {
            int64_t* n = &next[size_t(c * R)];
            for (int64_t k = lo(c); k < lo(c + 1); ++k) ++n[idx[k] >> shift];
        }
    });
    int64_t sum = 0;
    for (int64_t r = 0; r < R; ++r) {
        start[size_t(r)] = sum;
        for (int64_t c = 0; c < nc; ++c) {
            const int64_t cnt = next[size_t(c * R + r)];
            next[size_t(c * R + r)] = sum;
            sum += cnt;
        }
    }
    start[size_t(R)] = sum;
    Block pos_block = take_block(size_t(K) * sizeof(uint32_t)), val_block = take_block(size_t(K) * sizeof(T));
    uint32_t* pos = static_cast<uint32_t*>(pos_block.get());
    T* val = static_cast<T*>(val_block.get());
    const T* V = reinterpret_cast<const T*>(values.data);
    const uint32_t low = uint32_t((int64_t(1) << shift) - 1);
    parallel_range(nc, 1, [&](int64_t cb, int64_t ce) {
        for (int64_t c = cb; c < ce; ++c) {
            int64_t* n = &next[size_t(c * R)];
            for (int64_t k = lo(c); k < lo(c + 1); ++k) {
                const int64_t j = n[idx[k] >> shift]++;
                pos[j] = uint32_t(idx[k]) & low;
                val[j] = V[k * sv];
            }
        }
    });
    T* O = reinterpret_cast<T*>(out.data);
    parallel_range(R, 1, [&](int64_t rb, int64_t re) {
        for (int64_t r = rb; r < re; ++r) {
            T* base = O + (r << shift) * so;
            for (int64_t j = start[size_t(r)]; j < start[size_t(r + 1)]; ++j) {
                T& o = base[int64_t(pos[j]) * so];
                o = ops::apply2<ops::add, T>(o, val[j]);
            }
        }
    });
}

template <class T>
void scatter(const View& out, const int64_t* idx, const View& values) {
    const int64_t M = out.shape[0], K = values.shape[1];
    constexpr int64_t SPAN = (256 << 10) / int64_t(sizeof(T));  // positions of a bucket
    const int64_t N = out.shape[1], so = out.strides[1];
    // NOTE: only for an `out` past what a last-level cache holds (this machine's: 32 MB;
    // glibc's sysconf reported the whole host's 384 MB inside this 2-core VM). Into 16 MB of
    // int64 the plain loop took 2.5 ns an add and the buckets 4.0 (they stream 50 bytes an
    // add); into 32 MB, 10.6 and 4.5; into 72 MB, 22 and 5.5.
    constexpr int64_t LLC = int64_t(16) << 20;
    if (M == 1 && K >= (1 << 16) && N * std::abs(so) * int64_t(sizeof(T)) > LLC && !overlap(out, &values)) {
        int shift = int(std::bit_width(uint64_t(SPAN / std::abs(so)))) - 1;  // one bucket's stretch in cache
        shift = std::max({shift, int(std::bit_width(uint64_t(N - 1))) - 12, 0});  // at most 4096 buckets
        if (shift <= 32) return scatter_bucketed<T>(out, idx, values, shift);
    }
    T* O = reinterpret_cast<T*>(out.data);
    const T* V = reinterpret_cast<const T*>(values.data);
    // NOTE: sequential in (m, k) order, as np.add.at: repeated indices accumulate in order,
    // and `out` may be any view (even with overlapping rows), so no threads here.
    for (int64_t m = 0; m < M; ++m)
        for (int64_t k = 0; k < K; ++k) {
            T& o = O[m * out.strides[0] + idx[k] * out.strides[1]];
            o = ops::apply2<ops::add, T>(o, V[m * values.strides[0] + k * values.strides[1]]);
        }
}

// Rows r in [0, n): `row` bytes from src(r) to dst(r) (memcpy-like), threaded over the rows.
template <class Src, class Dst>
void copy_rows(int64_t n, size_t row, Src src, Dst dst) {
    const int64_t grain = std::max<int64_t>(1, int64_t(GRAIN) * 4 / int64_t(std::max<size_t>(row, 1)));
    parallel_range(n, grain, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) std::memcpy(dst(r), src(r), row);
    });
}

// fused take_axis: out (A, K, B) = x (A, N, B) at idx on the middle axis, both C-contiguous:
// A * K row copies of B elements.
void take_rows(const View& x, const int64_t* idx, const View& out) {
    const int64_t K = out.shape[1], N = x.shape[1];
    const size_t row = size_t(out.shape[2]) * size_t(ITEMSIZE[x.dtype]);
    const char* X = x.data;
    char* O = out.data;
    copy_rows(
        out.shape[0] * K, row, [&](int64_t r) { return X + size_t((r / K) * N + idx[r % K]) * row; },
        [&](int64_t r) { return O + size_t(r) * row; });
}

// put_rows for rows of a few elements: one pass in (a, k) order, where the last k wins by itself;
// with `distinct` indices (no k's row overwrites another's) the k are split over threads.
template <class T> void put_small_rows(const View& out, const int64_t* idx, const View& values, bool distinct) {
    const int64_t A = values.shape[0], K = values.shape[1], N = out.shape[1], B = values.shape[2];
    const T* V0 = reinterpret_cast<const T*>(values.data);
    T* O0 = reinterpret_cast<T*>(out.data);
    auto rows = [&](int64_t a, int64_t kb, int64_t ke) {
        const T* V = V0 + a * K * B;
        T* O = O0 + a * N * B;
        if (B == 1)
            for (int64_t k = kb; k < ke; ++k) O[idx[k]] = V[k];
        else
            for (int64_t k = kb; k < ke; ++k)
                for (int64_t b = 0; b < B; ++b) O[idx[k] * B + b] = V[k * B + b];
    };
    for (int64_t a = 0; a < A; ++a) {
        if (distinct)  // NOTE: random writes: a quarter of a memory-bound op's grain per thread
            parallel_range(K, std::max<int64_t>(1, GRAIN / 4 / B), [&](int64_t b, int64_t e) { rows(a, b, e); });
        else
            rows(a, 0, K);
    }
}

// fused put_axis: out (A, N, B) at idx on the middle axis = values (A, K, B), in place, both
// C-contiguous. NOTE: where an index repeats the last k wins, so only each index's last k is
// copied (found backwards with a seen-set); the rows copied then never overlap, and are split
// over threads in any order, whole rows at a time as take_rows does. `distinct` (the caller's
// promise that no index repeats, as in a permutation) skips the seen-set.
void put_rows(const View& out, const int64_t* idx, const View& values, bool distinct) {
    const int64_t A = values.shape[0], K = values.shape[1], N = out.shape[1];
    if (values.shape[2] * ITEMSIZE[out.dtype] <= 16) {
        // NOTE: rows of a few elements (x[i] = y on a 1-D x): one pass in order, where the
        // last k wins by itself; the seen-set and a memcpy per row cost more than the writes.
        return dispatch_bits(out.dtype, [&](auto t) { put_small_rows<decltype(t)>(out, idx, values, distinct); });
    }
    std::vector<int64_t> win;
    if (!distinct) {
        win.reserve(size_t(K));
        if (K * 16 >= N) {
            std::vector<uint8_t> seen(size_t(N), 0);
            for (int64_t k = K - 1; k >= 0; --k)
                if (!seen[idx[k]]) {
                    seen[idx[k]] = 1;
                    win.push_back(k);
                }
        } else {
            std::unordered_set<int64_t> seen(size_t(K) * 2);
            for (int64_t k = K - 1; k >= 0; --k)
                if (seen.insert(idx[k]).second) win.push_back(k);
        }
    }
    const int64_t W = distinct ? K : int64_t(win.size());
    auto at = [&](int64_t w) { return distinct ? w : win[size_t(w)]; };
    const size_t row = size_t(values.shape[2]) * size_t(ITEMSIZE[out.dtype]);
    const char* V = values.data;
    char* O = out.data;
    copy_rows(
        A * W, row, [&](int64_t r) { return V + size_t((r / W) * K + at(r % W)) * row; },
        [&](int64_t r) { return O + size_t((r / W) * N + idx[at(r % W)]) * row; });
}

void check_rows3(const char* fn, const View& big, const View& small, const View& indices) {
    if (big.ndim != 3 || small.ndim != 3 || indices.ndim != 1 || small.shape[0] != big.shape[0] ||
        small.shape[2] != big.shape[2] || small.shape[1] != indices.shape[0])
        throw std::invalid_argument(std::string(fn) + ": expected x (A, N, B), indices (K,) and (A, K, B).");
    if (!is_c_contiguous(big) || !is_c_contiguous(small))
        throw std::invalid_argument(std::string(fn) + ": x and the (A, K, B) operand must be C-contiguous.");
}

}  // namespace

void run_take_axis(const View& x, const View& indices, const View& out) {
    check_rows3("fused take_axis", x, out, indices);
    require_dtype("fused take_axis", "out", out, x.dtype);
    std::vector<int64_t> hold;
    const int64_t* idx = checked_indices("fused take_axis", indices, x.shape[1], hold);
    if (out.size) take_rows(x, idx, out);
}

// fused take_along: out (M, J) = x (M, N) at indices (M, J) along the rows, out[m, j] =
// x[m, indices[m, j]]: one gather where the composite offsets every index by its row (an add
// over all of them) and checks the sum. x of any strides; indices and out C-contiguous; every
// index checked first (one vectorised pass), so no read leaves x.
void run_take_along(const View& x, const View& indices, const View& out) {
    const char* fn = "fused take_along";
    if (x.ndim != 2 || indices.ndim != 2 || out.ndim != 2 || indices.shape[0] != x.shape[0] ||
        out.shape[0] != x.shape[0] || out.shape[1] != indices.shape[1])
        throw std::invalid_argument("fused take_along: expected x (M, N), indices (M, J) and out (M, J).");
    require_dtype(fn, "out", out, x.dtype);
    if (!is_c_contiguous(indices) || !is_c_contiguous(out))
        throw std::invalid_argument("fused take_along: indices and out must be C-contiguous.");
    View flat = indices;  // the indices as one row, for checked_indices
    flat.ndim = 1;
    flat.shape[0] = indices.size;
    flat.strides[0] = 1;
    std::vector<int64_t> hold;
    const int64_t* idx = checked_indices(fn, flat, x.shape[1], hold);
    if (!out.size) return;
    const int64_t M = x.shape[0], J = out.shape[1], s0 = x.strides[0], s1 = x.strides[1];
    dispatch_bits(x.dtype, [&](auto t) {
        using T = decltype(t);
        const T* X = reinterpret_cast<const T*>(x.data);
        T* O = reinterpret_cast<T*>(out.data);
        parallel_range(M, std::max<int64_t>(1, GRAIN / std::max<int64_t>(J, 1)), [&](int64_t b, int64_t e) {
            for (int64_t m = b; m < e; ++m) {
                const T* row = X + m * s0;
                const int64_t* im = idx + m * J;
                T* o = O + m * J;
                if (s1 == 1)
                    for (int64_t j = 0; j < J; ++j) o[j] = row[im[j]];
                else
                    for (int64_t j = 0; j < J; ++j) o[j] = row[im[j] * s1];
            }
        });
    });
}

void run_put_axis(const View& out, const View& indices, const View& values, bool distinct) {
    check_rows3("fused put_axis", out, values, indices);
    require_dtype("fused put_axis", "values", values, out.dtype);
    std::vector<int64_t> hold;
    // NOTE: a copy, as scatter_add's, where `out` shares memory with the indices.
    const int64_t* idx = checked_indices("fused put_axis", indices, out.shape[1], hold, overlap(out, &indices));
    if (values.size) put_rows(out, idx, values, distinct);
}

// fused nll: each row's element at its own target, negated (reduction "none", out (M,)), or the
// negated sum of those (out (1,); "mean": divided by M), summed by reduce's own sum (float16 in
// float32). NOTE: the negation flips the sign bit, as the core's `-x` does, for every float width.
void run_nll(const View& x, const View& target, NllReduction reduction, const View& out) {
    const char* fn = "fused nll";
    const bool none = reduction == NLL_NONE;
    if (x.ndim != 2 || target.ndim != 1 || target.shape[0] != x.shape[0] || out.ndim != 1 ||
        out.shape[0] != (none ? x.shape[0] : 1))
        throw std::invalid_argument("fused nll: expected x (M, K), target (M,) and out (M,) (reduction 'none') "
                                    "or (1,) ('sum', 'mean').");
    if (x.dtype != F16 && x.dtype != F32 && x.dtype != F64)
        throw type_error("fused nll: x must have a real floating dtype; got " + std::string(DT_NAME[x.dtype]) + ".");
    require_dtype(fn, "out", out, x.dtype);
    if (out.strides[0] != 1 && out.shape[0] > 1) throw std::invalid_argument("fused nll: out must be contiguous.");
    const int64_t M = x.shape[0];
    if (M == 0 && !none) throw std::invalid_argument("fused nll: a 'sum' or 'mean' needs M >= 1 rows.");
    std::vector<int64_t> hold;
    const int64_t* idx = checked_indices(fn, target, x.shape[1], hold);
    const int item = ITEMSIZE[x.dtype];
    std::unique_ptr<char[]> picked;
    char* dst = none ? out.data : (picked.reset(new char[size_t(M) * size_t(item)]), picked.get());
    const char* X = x.data;
    const int64_t s0 = x.strides[0] * item, s1 = x.strides[1] * item;
    dispatch_bits(x.dtype, [&](auto bits) {
        using U = decltype(bits);
        if constexpr (std::is_integral_v<U>) {  // 2, 4 or 8 bytes: the float widths
            const U sign = none ? U(U(1) << (8 * sizeof(U) - 1)) : U(0);
            U* O = reinterpret_cast<U*>(dst);
            parallel_range(M, GRAIN, [&](int64_t b, int64_t e) {
                for (int64_t m = b; m < e; ++m) O[m] = U(ld<U>(X + m * s0 + idx[m] * s1) ^ sign);
            });
        }
    });
    if (none) return;
    View row = x;  // the picked values as one contiguous row (1, M)
    row.data = dst;
    row.size = M;
    row.shape[0] = 1, row.shape[1] = M;
    row.strides[0] = M, row.strides[1] = 1;
    dispatch(x.dtype, [&](auto t) {
        using T = decltype(t);
        if constexpr (is_float_v<T>) {
            T total;
            kernels().reduce[x.dtype](R_SUM, row, reinterpret_cast<char*>(&total));
            // NOTE: the negation and the division in float64 from the rounded sum, rounded once
            // more to x's dtype (cast's conversion): as the core's `total * (-1 / M)`, with one
            // rounding fewer.
            const double v = convert<double>(total);
            *reinterpret_cast<T*>(out.data) = convert<T>(reduction == NLL_MEAN ? -v / double(M) : -v);
        }
    });
}

void run_take(const View& x, const View& indices, const View& out) {
    if (x.ndim != 2 || out.ndim != 2 || out.shape[0] != x.shape[0] ||
        indices.ndim != 1 || out.shape[1] != indices.shape[0])
        throw std::invalid_argument("take: expected x (M, N), indices (K,) and out (M, K).");
    require_dtype("take", "out", out, x.dtype);
    std::vector<int64_t> hold;
    const int64_t* idx = checked_indices("take", indices, x.shape[1], hold);
    dispatch_bits(x.dtype, [&](auto t) { gather<decltype(t)>(x, idx, out); });
}

namespace {

// fused nonzero: out = the positions k of the truthy x[0, k], in order. Blocks of the row are
// counted, then each writes at its offset from the counts before it (both passes threaded).
// NOTE: each position goes into a small buffer branch-free (store, then advance by the truth):
// a branch per element mispredicts on a random mask; the buffer keeps the store in bounds.
template <class T> void nonzero_positions(const View& x, int64_t* out, int64_t N) {
    constexpr int64_t BLOCK = 1 << 15, BUF = 256;
    const int64_t K = x.shape[1], s = x.strides[1];
    const T* X = reinterpret_cast<const T*>(x.data);
    const int64_t nb = (K + BLOCK - 1) / BLOCK;
    std::vector<int64_t> start(size_t(nb) + 1, 0);
    parallel_range(nb, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
            const int64_t k1 = std::min(K, (i + 1) * BLOCK);
            uint32_t c = 0;
            if (s == 1)
                for (int64_t k = i * BLOCK; k < k1; ++k) c += truth_at(X, k);
            else
                for (int64_t k = i * BLOCK; k < k1; ++k) c += truth_at(X, k * s);
            start[size_t(i) + 1] = c;
        }
    });
    std::partial_sum(start.begin(), start.end(), start.begin());
    if (start[size_t(nb)] != N)
        throw std::invalid_argument("fused nonzero: out has room for " + std::to_string(N) +
                                    " positions but x has " + std::to_string(start[size_t(nb)]) +
                                    " nonzero elements.");
    parallel_range(nb, 1, [&](int64_t b, int64_t e) {
        int64_t buf[BUF];
        for (int64_t i = b; i < e; ++i) {
            int64_t* o = out + start[size_t(i)];
            const int64_t k1 = std::min(K, (i + 1) * BLOCK);
            for (int64_t k0 = i * BLOCK; k0 < k1; k0 += BUF) {
                const int64_t k2 = std::min(k1, k0 + BUF);
                int64_t n = 0;
                for (int64_t k = k0; k < k2; ++k) {
                    buf[n] = k;
                    n += truth_at(X, k * s);
                }
                std::memcpy(o, buf, size_t(n) * sizeof(int64_t));
                o += n;
            }
        }
    });
}

}  // namespace

void run_nonzero(const View& x, const View& out) {
    if (x.ndim != 2 || x.shape[0] != 1 || out.ndim != 1)
        throw std::invalid_argument("fused nonzero: expected x of shape (1, K) and out of shape (N,).");
    require_dtype("fused nonzero", "out", out, I64);
    if (out.strides[0] != 1 && out.shape[0] > 1)
        throw std::invalid_argument("fused nonzero: out must be contiguous.");
    dispatch(x.dtype, [&](auto t) {
        nonzero_positions<decltype(t)>(x, reinterpret_cast<int64_t*>(out.data), out.shape[0]);
    });
}

void run_scatter_add(const View& out, const View& indices, const View& values) {
    if (out.ndim != 2 || values.ndim != 2 || values.shape[0] != out.shape[0] ||
        indices.ndim != 1 || values.shape[1] != indices.shape[0])
        throw std::invalid_argument(
            "scatter_add: expected out (M, N), indices (K,) and values (M, K).");
    require_dtype("scatter_add", "values", values, out.dtype);
    std::vector<int64_t> hold;
    // NOTE: a copy where `out` shares memory with the indices, which must not move as it is written.
    const int64_t* idx = checked_indices("scatter_add", indices, out.shape[1], hold, overlap(out, &indices));
    dispatch(out.dtype, [&](auto t) { scatter<decltype(t)>(out, idx, values); });
}

void run_arange(const View& out, double start, double step, int64_t istart, int64_t istep) {
    if (out.ndim != 1 || (out.strides[0] != 1 && out.shape[0] > 1))
        throw std::invalid_argument("fused arange: out must be 1-D and contiguous.");
    const int dt = out.dtype;
    if (dt == BOOL || dt == C64 || dt == C128)
        throw type_error(std::string("fused arange: expected an integer or real floating out; got ") +
                         DT_NAME[dt] + ".");
    dispatch(dt, [&](auto t) {
        using T = decltype(t);
        if constexpr (!is_complex_v<T> && !is_bool_v<T>) {
            T* o = reinterpret_cast<T*>(out.data);
            parallel_range(out.shape[0], GRAIN, [&](int64_t b, int64_t e) {
                if constexpr (is_float_v<T>) {
                    // NOTE: i as double(base) + double(j) with j an int32 (exact below 2^53): the
                    // baseline build has no vector int64 -> double conversion, and converted
                    // every i alone (1e6 float32 in 2.1x PyTorch's time); int32 -> double is SSE2
                    for (int64_t base = b; base < e; base += int64_t(1) << 30) {
                        const int32_t len = static_cast<int32_t>(std::min<int64_t>(e - base, int64_t(1) << 30));
                        const double db = double(base);
                        T* ob = o + base;
                        for (int32_t j = 0; j < len; ++j)
                            ob[j] = static_cast<T>((db + double(j)) * step + start);  // no FMA: -ffp-contract=off
                    }
                } else {
                    for (int64_t i = b; i < e; ++i) {
                        const uint64_t v = uint64_t(istart) + uint64_t(i) * uint64_t(istep);
                        o[i] = static_cast<T>(int64_t(v));  // wraps as a cast does
                    }
                }
            });
        }
    });
}

// fused clip: out = minimum(maximum(x, lo), hi) of a real floating x with scalar bounds (not
// NaN; either may be absent), x and out contiguous (N,) of one dtype: one pass where the
// composite makes two. The selects are the binary kernels' scalar maximum and minimum
// (`lo > v ? lo : v`: a NaN v stays, equal zeros keep v's sign), so the result is theirs to
// the bit; float16 compares in float (the bounds rounded to float16 first, as a scalar
// operand is).
void run_clip(const View& x, const View& out, bool has_lo, double lo, bool has_hi, double hi) {
    if (x.ndim != 1 || out.ndim != 1 || x.shape[0] != out.shape[0] ||
        (x.shape[0] > 1 && (x.strides[0] != 1 || out.strides[0] != 1)))
        throw std::invalid_argument("fused clip: expected x and out contiguous of shape (N,).");
    if (x.dtype != F16 && x.dtype != F32 && x.dtype != F64)
        throw type_error(std::string("fused clip: x must have a real floating dtype; got ") + DT_NAME[x.dtype] + ".");
    require_dtype("fused clip", "out", out, x.dtype);
    if ((has_lo && lo != lo) || (has_hi && hi != hi))
        throw std::invalid_argument("fused clip: a NaN bound is not allowed (the core clips with maximum/minimum).");
    dispatch(x.dtype, [&](auto t) {
        using T = decltype(t);
        if constexpr (is_float_v<T>) {
            using A = compute_t<T>;
            const A l = has_lo ? A(static_cast<T>(lo)) : -std::numeric_limits<A>::infinity();
            const A u = has_hi ? A(static_cast<T>(hi)) : std::numeric_limits<A>::infinity();
            const T* X = reinterpret_cast<const T*>(x.data);
            T* O = reinterpret_cast<T*>(out.data);
            parallel_range(x.shape[0], GRAIN, [&](int64_t b, int64_t e) {
                for (int64_t i = b; i < e; ++i) {
                    const A v = static_cast<A>(X[i]);
                    const A m = l > v ? l : v;  // an absent bound is an infinity: never taken
                    O[i] = static_cast<T>(u < m ? u : m);
                }
            });
        }
    });
}

// fused cross: each row's three products and differences are the composite's multiply and
// subtract (rounded to the dtype each, float16 computed in float, integers wrapping), so the
// result is its to the bit. Rows of unit stride 3 and components of unit stride (the common
// case) take a loop the compiler sees the layout of.
void run_cross(const View& a, const View& b, const View& out) {
    const char* fn = "fused cross";
    auto rows3 = [](const View& v) { return v.ndim == 2 && v.shape[1] == 3; };
    if (!rows3(a) || !rows3(b) || !rows3(out) || a.shape[0] != out.shape[0] || b.shape[0] != out.shape[0] ||
        (out.shape[0] > 1 && out.strides[0] != 3) || out.strides[1] != 1)
        throw std::invalid_argument("fused cross: expected a and b (M, 3) and out (M, 3) C-contiguous.");
    require_dtype(fn, "b", b, a.dtype);
    require_dtype(fn, "out", out, a.dtype);
    if (a.dtype == BOOL || a.dtype == C64 || a.dtype == C128)
        throw type_error(std::string("fused cross: a must have a real numeric dtype; got ") + DT_NAME[a.dtype] + ".");
    dispatch(a.dtype, [&](auto t) {
        using T = decltype(t);
        if constexpr (!is_bool_v<T> && !is_complex_v<T>) {
            using A = compute_t<T>;
            auto mul = [](T x, T y) -> T {
                if constexpr (is_int_v<T>) return wrap_mul(x, y);
                else return static_cast<T>(A(x) * A(y));
            };
            auto sub = [](T x, T y) -> T {
                if constexpr (is_int_v<T>) return wrap_sub(x, y);
                else return static_cast<T>(A(x) - A(y));
            };
            const T* P = reinterpret_cast<const T*>(a.data);
            const T* Q = reinterpret_cast<const T*>(b.data);
            T* O = reinterpret_cast<T*>(out.data);
            const int64_t m = out.shape[0], a0 = a.strides[0], a1 = a.strides[1], b0 = b.strides[0], b1 = b.strides[1];
            auto rows = [&](int64_t lo, int64_t hi, int64_t pr, int64_t pc, int64_t qr, int64_t qc) {
                for (int64_t i = lo; i < hi; ++i) {
                    const T* x = P + i * pr;
                    const T* y = Q + i * qr;
                    const T x0 = x[0], x1 = x[pc], x2 = x[2 * pc], y0 = y[0], y1 = y[qc], y2 = y[2 * qc];
                    O[3 * i] = sub(mul(x1, y2), mul(x2, y1));
                    O[3 * i + 1] = sub(mul(x2, y0), mul(x0, y2));
                    O[3 * i + 2] = sub(mul(x0, y1), mul(x1, y0));
                }
            };
            const bool dense = (m == 1 || (a0 == 3 && b0 == 3)) && a1 == 1 && b1 == 1;
            parallel_range(m, GRAIN / 3, [&](int64_t lo, int64_t hi) {
                if (dense) rows(lo, hi, 3, 1, 3, 1);  // constants: the compiler sees the layout
                else rows(lo, hi, a0, a1, b0, b1);
            });
        }
    });
}

// Philox-4x32-10: word i of out is word i % 4 of Philox(key, counter + i / 4); the blocks by
// the kernel table's loop (per ISA), threaded, a strided out through a small buffer.
void run_random_bits(uint64_t key, uint64_t ctr_lo, uint64_t ctr_hi, const View& out) {
    require_dtype("random_bits", "out", out, U32);
    if (out.ndim != 1) throw std::invalid_argument("random_bits: out must be 1-D.");
    const int64_t n = out.shape[0], s = out.strides[0], full = n / 4;
    uint32_t* O = reinterpret_cast<uint32_t*>(out.data);
    const PhiloxFn philox = kernels().philox;
    parallel_range(full, GRAIN / 4, [&](int64_t b, int64_t e) {
        if (s == 1) return philox(key, ctr_lo, ctr_hi, b, e, O + 4 * b);
        uint32_t buf[4 * 256];
        for (int64_t c = b; c < e; c += 256) {
            const int64_t ce = std::min(e, c + 256);
            philox(key, ctr_lo, ctr_hi, c, ce, buf);
            for (int64_t k = 0; k < 4 * (ce - c); ++k) O[(4 * c + k) * s] = buf[k];
        }
    });
    if (n % 4) {
        uint32_t w[4];
        philox(key, ctr_lo, ctr_hi, full, full + 1, w);
        for (int64_t j = 0; j < n % 4; ++j) O[(4 * full + j) * s] = w[j];
    }
}

// n values into O from the Philox stream at (key, counter), `words` words each (value i from
// words [i * words, (i + 1) * words)), in chunks of 1024 values on the stack (whole Philox
// blocks each), threaded: convert(w, o, len) turns a chunk's words into its values.
constexpr int64_t PHILOX_CHUNK = 1024;  // values per chunk: a multiple of 4, so chunks start on a block

template <class T, class F>
void philox_fill(uint64_t key, uint64_t ctr_lo, uint64_t ctr_hi, T* O, int64_t n, int64_t words, F convert) {
    const PhiloxFn philox = kernels().philox;
    constexpr int64_t CHUNK = PHILOX_CHUNK;
    parallel_range((n + CHUNK - 1) / CHUNK, std::max<int64_t>(1, GRAIN / CHUNK), [&](int64_t cb, int64_t ce) {
        alignas(64) uint32_t w[2 * CHUNK + 4];
        for (int64_t c = cb; c < ce; ++c) {
            const int64_t v0 = c * CHUNK, v1 = std::min(n, v0 + CHUNK);
            const int64_t blk0 = v0 * words / 4, blk1 = (v1 * words + 3) / 4;
            philox(key, ctr_lo, ctr_hi, blk0, blk1, w);
            convert(w, O + v0, v1 - v0);
        }
    });
}

// fused uniform: the Philox words of run_random_bits turned into floats as the core's
// Generator.uniform does, in one pass with no uint32 array in between: float32 value i from word
// i, (w >> 8) * 2^-24; float64 value i from words 2i and 2i + 1, ((w0 >> 5) * 2^26 + (w1 >> 6)) *
// 2^-53 (all exact); then u * scale and + low, each rounded to T (-ffp-contract=off: no FMA), with
// scale and low already T's.
void run_uniform(uint64_t key, uint64_t ctr_lo, uint64_t ctr_hi, double scale, double low, const View& out) {
    if (out.ndim != 1 || (out.strides[0] != 1 && out.shape[0] > 1))
        throw std::invalid_argument("fused uniform: out must be 1-D and contiguous.");
    if (out.dtype != F32 && out.dtype != F64)
        throw type_error(std::string("fused uniform: expected a float32 or float64 out; got ") + DT_NAME[out.dtype] + ".");
    const int64_t n = out.shape[0];
    if (out.dtype == F32) {
        const float s = static_cast<float>(scale), l = static_cast<float>(low);
        philox_fill(key, ctr_lo, ctr_hi, reinterpret_cast<float*>(out.data), n, 1, [&](const uint32_t* w, float* o, int64_t len) {
            for (int64_t i = 0; i < len; ++i) {
                const float u = static_cast<float>(static_cast<int32_t>(w[i] >> 8)) * 0x1p-24f;
                const float t = u * s;
                o[i] = t + l;
            }
        });
    } else {
        philox_fill(key, ctr_lo, ctr_hi, reinterpret_cast<double*>(out.data), n, 2, [&](const uint32_t* w, double* o, int64_t len) {
            for (int64_t i = 0; i < len; ++i) {
                const double hi = static_cast<double>(static_cast<int32_t>(w[2 * i] >> 5));
                const double lo = static_cast<double>(static_cast<int32_t>(w[2 * i + 1] >> 6));
                const double u = (hi * 67108864.0 + lo) * 0x1p-53;
                const double t = u * scale;
                o[i] = t + low;
            }
        });
    }
}

// fused integers: Generator.integers' values in one pass, as the core composes them: with span =
// top + 1, a 32-bit word per value where span <= 2^32 and out has at most 4 bytes, else the 64-bit
// (w[2i] << 32) | w[2i + 1]; that modulo span (none for a full span), plus low modulo 2^64,
// truncated to out's integer dtype (both wrap, as the composite's cast and add).
void run_integers(uint64_t key, uint64_t ctr_lo, uint64_t ctr_hi, uint64_t top, uint64_t low, const View& out) {
    if (out.ndim != 1 || (out.strides[0] != 1 && out.shape[0] > 1))
        throw std::invalid_argument("fused integers: out must be 1-D and contiguous.");
    if (out.dtype < I8 || out.dtype > U64)
        throw type_error(std::string("fused integers: expected an integer out; got ") + DT_NAME[out.dtype] + ".");
    const int64_t n = out.shape[0];
    dispatch(out.dtype, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
            T* O = reinterpret_cast<T*>(out.data);
            // NOTE: the modulo is the binary kernels' own remainder (per ISA: ops::DivByConst,
            // vectorised) on each chunk's words, staged on the stack; then + low and the cast
            const Kernels& k = kernels();
            const bool narrow = top <= 0xffffffffull && sizeof(T) <= 4;
            const BinaryFn rem = k.binary[ops::b_remainder][narrow ? U32 : U64];
            const uint32_t span32 = static_cast<uint32_t>(top + 1);
            const uint64_t span64 = top + 1;
            const bool full = narrow ? top == 0xffffffffull : top == ~0ull;
            philox_fill(key, ctr_lo, ctr_hi, O, n, narrow ? 1 : 2, [&](const uint32_t* w, T* o, int64_t len) {
                if (narrow) {
                    alignas(64) uint32_t v[PHILOX_CHUNK];
                    const uint32_t* src = w;
                    if (!full) {
                        rem(reinterpret_cast<const char*>(w), 4, reinterpret_cast<const char*>(&span32), 0,
                            reinterpret_cast<char*>(v), 4, len);
                        src = v;
                    }
                    for (int64_t i = 0; i < len; ++i) o[i] = static_cast<T>(uint64_t(src[i]) + low);
                    return;
                }
                alignas(64) uint64_t v[PHILOX_CHUNK];
                for (int64_t i = 0; i < len; ++i) v[i] = (uint64_t(w[2 * i]) << 32) | w[2 * i + 1];
                if (!full)
                    rem(reinterpret_cast<const char*>(v), 8, reinterpret_cast<const char*>(&span64), 0,
                        reinterpret_cast<char*>(v), 8, len);
                for (int64_t i = 0; i < len; ++i) o[i] = static_cast<T>(v[i] + low);
            });
        }
    });
}

// fused batch_norm (inference): out = x * s[c] + t[c] over x (A, C, B), with s = 1 / sqrt(var +
// eps) (times weight) and t = bias - mean * s (or -mean * s) per channel, each step rounded to T
// as the composite's kernels round it (eps rounded to T first; -ffp-contract=off: no FMA). The
// multiply and the add are the binary kernels' own loops (per ISA), one plane of B at a time, so
// the add reads the plane back from L1: one pass over memory where the composite makes two, and
// no per-channel kernels. Planes of one element (batch_norm of (N, C)) go a row of C at a time.
void run_batch_norm(const View& x, const View& mean, const View& var, const View* weight, const View* bias,
                    double eps, const View& out) {
    const char* fn = "fused batch_norm";
    if (x.ndim != 3 || !is_c_contiguous(x))
        throw std::invalid_argument("fused batch_norm: x must be C-contiguous (A, C, B).");
    if (x.dtype != F32 && x.dtype != F64)
        throw type_error(std::string("fused batch_norm: x must be float32 or float64; got ") + DT_NAME[x.dtype] + ".");
    require_same_shape(fn, x, out);
    require_dtype(fn, "out", out, x.dtype);
    if (!is_c_contiguous(out)) throw std::invalid_argument("fused batch_norm: out must be C-contiguous.");
    const int64_t A = x.shape[0], C = x.shape[1], B = x.shape[2];
    const View* stats[4] = {&mean, &var, weight, bias};
    const char* names[4] = {"mean", "var", "weight", "bias"};
    for (int j = 0; j < 4; ++j) {
        const View* v = stats[j];
        if (!v) continue;
        if (v->ndim != 1 || v->shape[0] != C || (C > 1 && v->strides[0] != 1))
            throw std::invalid_argument(std::string("fused batch_norm: ") + names[j] + " must be contiguous of shape (C,) = (" +
                                        std::to_string(C) + ",).");
        require_dtype(fn, names[j], *v, x.dtype);
    }
    if (x.size == 0) return;
    const BinaryFn mul = kernels().binary[ops::b_multiply][x.dtype], add = kernels().binary[ops::b_add][x.dtype];
    dispatch(x.dtype, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            const auto at = [](const View* v, int64_t c) { return reinterpret_cast<const T*>(v->data)[c]; };
            std::vector<T> s(static_cast<size_t>(C)), t(static_cast<size_t>(C));
            for (int64_t c = 0; c < C; ++c) {
                const T root = std::sqrt(at(&var, c) + static_cast<T>(eps));
                T sc = T(1) / root;
                if (weight) sc = sc * at(weight, c);
                const T prod = at(&mean, c) * sc;
                s[c] = sc;
                t[c] = bias ? at(bias, c) - prod : -prod;
            }
            const T* X = reinterpret_cast<const T*>(x.data);
            T* O = reinterpret_cast<T*>(out.data);
            const int64_t z = sizeof(T);
            const auto bytes = [](const T* p) { return reinterpret_cast<const char*>(p); };
            if (B == 1) {  // rows of C: times the row s, plus the row t
                parallel_range(A, std::max<int64_t>(1, GRAIN / std::max<int64_t>(C, 1)), [&](int64_t b, int64_t e) {
                    for (int64_t a = b; a < e; ++a) {
                        T* o = O + a * C;
                        mul(bytes(X + a * C), z, bytes(s.data()), z, reinterpret_cast<char*>(o), z, C);
                        add(bytes(o), z, bytes(t.data()), z, reinterpret_cast<char*>(o), z, C);
                    }
                });
                return;
            }
            parallel_range(A * C, std::max<int64_t>(1, GRAIN / B), [&](int64_t b, int64_t e) {
                for (int64_t p = b; p < e; ++p) {
                    const int64_t c = p % C;
                    T* o = O + p * B;
                    mul(bytes(X + p * B), z, bytes(&s[c]), 0, reinterpret_cast<char*>(o), z, B);
                    add(bytes(o), z, bytes(&t[c]), 0, reinterpret_cast<char*>(o), z, B);
                }
            });
        }
    });
}

namespace {

// The sum of g and of g * (x - m) over a run of n, in chunks of 2048: each chunk summed in two
// accumulators of 32-byte GCC vectors (independent lanes: no reassociation), the lanes and the
// chunks in double.
template <class T> void run_sums(const T* g, const T* x, T m, int64_t n, double& s0, double& s1) {
    typedef T V __attribute__((vector_size(32)));
    constexpr int64_t L = sizeof(V) / sizeof(T), CHUNK = 2048;
    const auto load = [](const T* p) {
        V v;
        std::memcpy(&v, p, sizeof(V));
        return v;
    };
    for (int64_t i0 = 0; i0 < n; i0 += CHUNK) {
        const int64_t e = std::min(n, i0 + CHUNK);
        V a0 = {}, b0 = {}, a1 = {}, b1 = {};
        int64_t i = i0;
        for (; i + 2 * L <= e; i += 2 * L) {
            const V g0 = load(g + i), g1 = load(g + i + L);
            a0 += g0;
            b0 += g1;
            a1 += g0 * (load(x + i) - m);
            b1 += g1 * (load(x + i + L) - m);
        }
        T l0[L], l1[L], m0[L], m1[L];
        std::memcpy(l0, &a0, sizeof(V));
        std::memcpy(m0, &b0, sizeof(V));
        std::memcpy(l1, &a1, sizeof(V));
        std::memcpy(m1, &b1, sizeof(V));
        double c0 = 0, c1 = 0;
        for (int64_t j = 0; j < L; ++j) {
            c0 += static_cast<double>(l0[j]) + static_cast<double>(m0[j]);
            c1 += static_cast<double>(l1[j]) + static_cast<double>(m1[j]);
        }
        for (; i < e; ++i) {
            const T d = x[i] - m;
            c0 += g[i];
            c1 += static_cast<double>(static_cast<T>(g[i] * d));
        }
        s0 += c0;
        s1 += c1;
    }
}

// ((g - c0) - (x - m) * c1) * c2 over a run of n, each step rounded to T as the binary kernels
// round it (-ffp-contract=off: no FMA), so bit for bit the composite's broadcast passes. ROW: a
// row of C, the per-channel values read along it; else one plane, one value of each.
template <class T, bool ROW>
void grad_run(const T* x, const T* g, T* o, int64_t n, const T* m, const T* c0, const T* c1, const T* c2) {
    typedef T V __attribute__((vector_size(32)));
    constexpr int64_t L = sizeof(V) / sizeof(T);
    const auto load = [](const T* p) {
        V v;
        std::memcpy(&v, p, sizeof(V));
        return v;
    };
    const auto at = [&](const T* p, int64_t i) {
        if constexpr (ROW) return p[i];
        else return p[0];
    };
    int64_t i = 0;
    for (; i + L <= n; i += L) {
        V r;
        if constexpr (ROW) r = ((load(g + i) - load(c0 + i)) - (load(x + i) - load(m + i)) * load(c1 + i)) * load(c2 + i);
        else r = ((load(g + i) - *c0) - (load(x + i) - *m) * *c1) * *c2;
        std::memcpy(o + i, &r, sizeof(V));
    }
    for (; i < n; ++i) {
        const T d = x[i] - at(m, i), e = g[i] - at(c0, i), f = d * at(c1, i), h = e - f;
        o[i] = h * at(c2, i);
    }
}

}  // namespace

// The sums: each plane (a, c) summed on its own (planes split across threads), then each
// channel's planes added in order of a: the same numbers on any thread count. The input part:
// one pass, in the composite's order of steps (grad_run).
void run_batch_norm_grad(const View& x, const View& g, const View& mean, const View* coef, const View& out) {
    const char* fn = "fused batch_norm_grad";
    if (x.ndim != 3 || !is_c_contiguous(x) || !is_c_contiguous(g))
        throw std::invalid_argument("fused batch_norm_grad: x and g must be C-contiguous (A, C, B).");
    if (x.dtype != F32 && x.dtype != F64)
        throw type_error(std::string("fused batch_norm_grad: x must be float32 or float64; got ") + DT_NAME[x.dtype] + ".");
    require_same_shape(fn, x, g);
    require_dtype(fn, "g", g, x.dtype);
    const int64_t A = x.shape[0], C = x.shape[1], B = x.shape[2];
    const auto per_channel = [&](const View& v, int64_t rows, const char* name) {
        const bool ok = rows == 1 ? v.ndim == 1 && v.shape[0] == C && (C < 2 || v.strides[0] == 1)
                                  : v.ndim == 2 && v.shape[0] == rows && v.shape[1] == C && is_c_contiguous(v);
        if (!ok) {
            const std::string n = std::to_string(rows), c = std::to_string(C);
            throw std::invalid_argument(std::string("fused batch_norm_grad: ") + name + " must be contiguous of shape " +
                                        (rows == 1 ? "(C,) = (" + c + ",)." : "(" + n + ", C) = (" + n + ", " + c + ")."));
        }
        require_dtype(fn, name, v, x.dtype);
    };
    per_channel(mean, 1, "mean");
    if (coef) {
        per_channel(*coef, 3, "coef");
        require_same_shape(fn, x, out);
        require_dtype(fn, "out", out, x.dtype);
        if (!is_c_contiguous(out)) throw std::invalid_argument("fused batch_norm_grad: out must be C-contiguous.");
        if (overlap(out, &x) || overlap(out, &g))
            throw std::invalid_argument("fused batch_norm_grad: out must not overlap x or g.");
    } else {
        per_channel(out, 2, "out");
    }
    dispatch(x.dtype, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            const T* X = reinterpret_cast<const T*>(x.data);
            const T* G = reinterpret_cast<const T*>(g.data);
            const T* M = reinterpret_cast<const T*>(mean.data);
            if (!coef) {
                std::vector<double> part(static_cast<size_t>(2 * A * C));
                parallel_range(A * C, std::max<int64_t>(1, GRAIN / std::max<int64_t>(B, 1)), [&](int64_t b, int64_t e) {
                    for (int64_t p = b; p < e; ++p) {
                        double s0 = 0, s1 = 0;
                        run_sums(G + p * B, X + p * B, M[p % C], B, s0, s1);
                        part[2 * p] = s0;
                        part[2 * p + 1] = s1;
                    }
                });
                T* O = reinterpret_cast<T*>(out.data);
                for (int64_t c = 0; c < C; ++c) {
                    double s0 = 0, s1 = 0;
                    for (int64_t a = 0; a < A; ++a) {
                        s0 += part[2 * (a * C + c)];
                        s1 += part[2 * (a * C + c) + 1];
                    }
                    O[c] = static_cast<T>(s0);
                    O[C + c] = static_cast<T>(s1);
                }
                return;
            }
            const T* K = reinterpret_cast<const T*>(coef->data);  // rows c0, c1, c2
            T* O = reinterpret_cast<T*>(out.data);
            if (B == 1) {  // rows of C, the per-channel operands read along the row
                parallel_range(A, std::max<int64_t>(1, GRAIN / std::max<int64_t>(C, 1)), [&](int64_t b, int64_t e) {
                    for (int64_t a = b; a < e; ++a)
                        grad_run<T, true>(X + a * C, G + a * C, O + a * C, C, M, K, K + C, K + 2 * C);
                });
                return;
            }
            parallel_range(A * C, std::max<int64_t>(1, GRAIN / B), [&](int64_t b, int64_t e) {
                for (int64_t p = b; p < e; ++p) {
                    const int64_t c = p % C;
                    grad_run<T, false>(X + p * B, G + p * B, O + p * B, B, M + c, K + c, K + C + c, K + 2 * C + c);
                }
            });
        }
    });
}

}  // namespace ndp
