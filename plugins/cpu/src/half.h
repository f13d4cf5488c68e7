// float16 <-> float32 in vectors, for the files compiled once per ISA level (elementwise.cc,
// reduce.cc). GCC 12 converts a _Float16 one element at a time (a scalar vcvtph2ps, or a
// libgcc call without F16C): 300 us for 10^6 on two threads where F16C's 8-wide form is
// memory-bound, like PyTorch's 50 us. So float16 work goes through float32 blocks that these
// fill and drain.
// NOTE: in an anonymous namespace inside ndp::NDP_ISA: each ISA build keeps its own copy (one
// inline definition shared across builds would let the linker pick the AVX-512 one for all).
#pragma once

#include <cstdint>

#include "common.h"

#ifdef __F16C__
#include <immintrin.h>
#endif

#ifndef NDP_ISA
#define NDP_ISA baseline
#endif

namespace ndp::NDP_ISA {
namespace {

[[gnu::always_inline]] inline void halves_to_floats(const f16* x, float* o, int64_t n) {
    int64_t i = 0;
#ifdef __F16C__
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(o + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
#endif
    for (; i < n; ++i) o[i] = static_cast<float>(x[i]);
}

[[gnu::always_inline]] inline void floats_to_halves(const float* x, f16* o, int64_t n) {
    int64_t i = 0;
#ifdef __F16C__
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
    for (; i < n; ++i) o[i] = static_cast<f16>(x[i]);
}

}  // namespace
}  // namespace ndp::NDP_ISA
