// copy, fill and where: instantiated by item size only; the op tables and their names.
#include "elementwise.cuh"

namespace ndp {

int g_grid_limit = 132 * 8;
void set_grid_limit(int blocks) {
    if (blocks > g_grid_limit) g_grid_limit = blocks;
}

template <class T> struct Ident {
    static constexpr bool tiled_transpose = true;
    __device__ __forceinline__ T operator()(T x) const { return x; }
};
template <class T> struct Select {
    __device__ __forceinline__ T operator()(bool c, T a, T b) const { return c ? a : b; }
};

template <int L> static void fill_size(Tables& t) {
    using W = word_t<L>;
    t.copy[L] = &launch<W, Ident<W>, W>;
    t.fill[L] = &launch<W, Ident<W>, W>;  // the value is a scalar input
    t.where[L] = &launch<W, Select<W>, bool, W, W>;
}

void fill_copy(Tables& t) {
    fill_size<0>(t);
    fill_size<1>(t);
    fill_size<2>(t);
    fill_size<3>(t);
    fill_size<4>(t);
}

const int NUNARY = ops::NUNARY_;
const int NBINARY = ops::NBINARY_;
const char* const UNARY_NAMES[MAXOPS] = {
#define X(n) #n,
    NDP_UNARY_OPS(X)
#undef X
};
const char* const BINARY_NAMES[MAXOPS] = {
#define X(n) #n,
    NDP_BINARY_OPS(X)
#undef X
};

const Tables& tables() {
    static const Tables* t = [] {
        auto* p = new Tables{};
        for (auto& row : p->unary_out)
            for (int& v : row) v = -1;
        for (auto& row : p->binary_out)
            for (int& v : row) v = -1;
        fill_unary_a(*p);
        fill_unary_b(*p);
        fill_binary_a(*p);
        fill_binary_b(*p);
        fill_cast(*p);
        fill_copy(*p);
        return p;
    }();
    return *t;
}

}  // namespace ndp
