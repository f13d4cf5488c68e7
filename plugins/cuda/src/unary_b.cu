// Unary ops, second half of NDP_UNARY_OPS (two files compile in parallel).
#include "elementwise.cuh"

namespace ndp {

template <int Code, class Op> static void row(Tables& t) {
    if constexpr (Code >= ops::NUNARY_ / 2) fill_unary_op<Op>(t, Code);
}

void fill_unary_b(Tables& t) {
#define X(n) row<ops::u_##n, ops::n>(t);
    NDP_UNARY_OPS(X)
#undef X
}

}  // namespace ndp
