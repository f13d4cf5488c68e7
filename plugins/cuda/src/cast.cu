// astype for every pair of dtypes, with NumPy's semantics (device.cuh: convert).
#include "elementwise.cuh"

namespace ndp {

template <class To, class From> struct CastFn {
    static constexpr bool tiled_transpose = true;
    __device__ __forceinline__ To operator()(From x) const { return convert<To, From>(x); }
};

void fill_cast(Tables& t) {
    for_each_dtype([&](auto f) {
        constexpr int FROM = decltype(f)::value;
        for_each_dtype([&](auto d) {
            constexpr int TO = decltype(d)::value;
            t.cast[FROM][TO] = &launch<dt_t<TO>, CastFn<dt_t<TO>, dt_t<FROM>>, dt_t<FROM>>;
        });
    });
}

}  // namespace ndp
