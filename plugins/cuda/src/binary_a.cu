// Binary ops, first half of NDP_BINARY_OPS (two files compile in parallel).
#include "elementwise.cuh"

namespace ndp {

template <int Code, class Op> static void row(Tables& t) {
    if constexpr (Code < ops::NBINARY_ / 2) fill_binary_op<Op>(t, Code);
}

void fill_binary_a(Tables& t) {
#define X(n) row<ops::b_##n, ops::n>(t);
    NDP_BINARY_OPS(X)
#undef X
}

}  // namespace ndp
