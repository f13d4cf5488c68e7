// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3"), the same
// stream as ndplane.backend.reference.philox4x32. Host and device: the host self-test
// checks the known answers on machines without a GPU.
#pragma once

#include <cstdint>

#include "common.h"

namespace ndp {

struct Philox4 {
    uint32_t w[4];
};

NDP_HD inline Philox4 philox4x32(uint64_t key, uint64_t ctr_lo, uint64_t ctr_hi) {
    uint32_t c0 = uint32_t(ctr_lo), c1 = uint32_t(ctr_lo >> 32), c2 = uint32_t(ctr_hi), c3 = uint32_t(ctr_hi >> 32);
    uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
    for (int round = 0; round < 10; ++round) {
        const uint64_t p0 = uint64_t(0xD2511F53u) * c0;
        const uint64_t p1 = uint64_t(0xCD9E8D57u) * c2;
        const uint32_t n0 = uint32_t(p1 >> 32) ^ c1 ^ k0;
        const uint32_t n1 = uint32_t(p1);
        const uint32_t n2 = uint32_t(p0 >> 32) ^ c3 ^ k1;
        const uint32_t n3 = uint32_t(p0);
        c0 = n0;
        c1 = n1;
        c2 = n2;
        c3 = n3;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    return {{c0, c1, c2, c3}};
}

// Block i of the stream: the 128-bit counter (ctr_hi:ctr_lo) + i.
NDP_HD inline Philox4 philox_block(uint64_t key, uint64_t ctr_lo, uint64_t ctr_hi, uint64_t i) {
    const uint64_t lo = ctr_lo + i;
    return philox4x32(key, lo, ctr_hi + (lo < ctr_lo ? 1 : 0));
}

}  // namespace ndp
