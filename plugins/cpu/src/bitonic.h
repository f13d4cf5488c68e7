// Bitonic networks on GCC vectors, shared by sort.cc's many-row network and quicksort.h's
// leaves: compare-exchanges between whole vectors (every lane its own column) and the
// butterfly transpose of an L x L block of lanes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

namespace ndp::bitonic {

#define NDP_NET_INLINE inline __attribute__((always_inline))

template <bool Desc, class V> NDP_NET_INLINE void exchange(V& a, V& b) {
    const V lo = a < b ? a : b, hi = a < b ? b : a;
    a = Desc ? hi : lo;
    b = Desc ? lo : hi;
}

// NOTE: the loops over vectors are compile-time recursions: a loop GCC leaves rolled would
// index r at run time and put it on the stack.
// The exchanges of stride J among r[0, N), from the H-th pair on: descending where bit K of
// the position is set, or everywhere with Desc (K = 0).
template <int N, int J, int K, bool Desc, int H = 0, class V> NDP_NET_INLINE void exchanges(V* r) {
    if constexpr (H < N / 2) {
        constexpr int i = H / J * 2 * J + H % J;  // the H-th position with bit J clear
        exchange<K ? (i & K) != 0 : Desc>(r[i], r[i + J]);
        exchanges<N, J, K, Desc, H + 1>(r);
    }
}

// The exchanges of strides J, J / 2, ..., 1.
template <int N, int J, int K, bool Desc, class V> NDP_NET_INLINE void cascade(V* r) {
    exchanges<N, J, K, Desc>(r);
    if constexpr (J > 1) cascade<N, J / 2, K, Desc>(r);
}

// Sorts each lane over r[0, N) (N a power of two): ascending, or descending with Desc
// (blocks of K first).
template <int N, bool Desc, int K = 2, class V> NDP_NET_INLINE void sort_lanes(V* r) {
    if constexpr (N == 1) {
        return;
    } else if constexpr (K < N) {
        cascade<N, K / 2, K, false>(r);
        sort_lanes<N, Desc, 2 * K>(r);
    } else {
        cascade<N, N / 2, 0, Desc>(r);
    }
}

// Transposes the L x L block of lanes in r[0, L): butterflies on the lane bits.
template <class V, int L, int H, size_t... I> NDP_NET_INLINE V low_lanes(std::index_sequence<I...>) {
    return V{((I & H) ? L + I - H : I)...};
}
template <class V, int L, int H, size_t... I> NDP_NET_INLINE V high_lanes(std::index_sequence<I...>) {
    return V{((I & H) ? L + I : I + H)...};
}
template <class V, int L, int H = L / 2, int I = 0> NDP_NET_INLINE void transpose(V* r) {
    if constexpr (I < L / 2) {
        constexpr int i = I / H * 2 * H + I % H;
        const V a = r[i], b = r[i + H];
        r[i] = __builtin_shuffle(a, b, low_lanes<V, L, H>(std::make_index_sequence<L>{}));
        r[i + H] = __builtin_shuffle(a, b, high_lanes<V, L, H>(std::make_index_sequence<L>{}));
        transpose<V, L, H, I + 1>(r);
    } else if constexpr (H > 1) {
        transpose<V, L, H / 2>(r);
    }
}

#undef NDP_NET_INLINE

}  // namespace ndp::bitonic
