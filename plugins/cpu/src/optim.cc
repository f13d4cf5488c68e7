// Fused optimizer updates: one pass over a parameter, its gradient and its state,
// in place, instead of a dozen elementwise kernels (each a pass over memory and a
// round trip through Python). Float16 is computed in float32.
#include "optim.h"

#include <cmath>
#include <string>

#include "driver.h"

namespace ndp {
namespace {

template <class T> void adam_range(const AdamParams& a, char* p_, const char* g_, char* m_, char* v_,
                                   int64_t b, int64_t e) {
    using A = compute_t<T>;
    T* p = reinterpret_cast<T*>(p_);
    const T* g = reinterpret_cast<const T*>(g_);
    T* m = reinterpret_cast<T*>(m_);
    T* v = reinterpret_cast<T*>(v_);
    // NOTE: the constants in the computation type, as the generic road computes with Python
    // scalars on arrays of T; the expression order is the generic road's (optim/__init__.py).
    const A b1 = A(a.beta1), c1 = A(1 - a.beta1), b2 = A(a.beta2), c2 = A(1 - a.beta2);
    const A wd = A(a.weight_decay), eps = A(a.eps);
    const A step_size = A(a.lr / (1 - std::pow(a.beta1, double(a.step))));
    const A inv_bc2 = A(1 / std::sqrt(1 - std::pow(a.beta2, double(a.step))));
    const A decay = A(a.lr * a.weight_decay);
    const bool l2 = a.weight_decay != 0 && !a.decoupled, decoupled = a.weight_decay != 0 && a.decoupled;
    for (int64_t i = b; i < e; ++i) {
        const A pi = A(p[i]);
        A gi = A(g[i]);
        if (l2) gi = gi + wd * pi;
        const A mi = b1 * A(m[i]) + c1 * gi;
        const A vi = b2 * A(v[i]) + c2 * (gi * gi);
        const A denom = std::sqrt(vi) * inv_bc2 + eps;
        A delta = step_size * (mi / denom);
        if (decoupled) delta = delta + decay * pi;
        m[i] = T(mi);
        v[i] = T(vi);
        p[i] = T(pi - delta);
    }
}

template <class T> void adam_typed(const AdamParams& a, const View& p, const View& g, const View& m,
                                   const View& v) {
    parallel_range(p.size, GRAIN / 4, [&](int64_t b, int64_t e) { adam_range<T>(a, p.data, g.data, m.data, v.data, b, e); });
}

}  // namespace

void run_adam(const AdamParams& a, const View& p, const View& g, const View& m, const View& v) {
    const View* all[4] = {&p, &g, &m, &v};
    const char* names[4] = {"param (out)", "grad", "exp_avg", "exp_avg_sq"};
    for (int i = 0; i < 4; ++i) {
        if (!is_c_contiguous(*all[i]))
            throw std::invalid_argument(std::string("fused adam: ") + names[i] + " must be C-contiguous.");
        require_dtype("fused adam", names[i], *all[i], p.dtype);
        if (i) require_same_shape("fused adam", p, *all[i]);
    }
    if (!(a.step >= 1)) throw std::invalid_argument("fused adam: step must be >= 1; got " + std::to_string(a.step) + ".");
    if (!(a.beta1 >= 0 && a.beta1 < 1 && a.beta2 >= 0 && a.beta2 < 1))
        throw std::invalid_argument("fused adam: beta1 and beta2 must be in [0, 1).");
    switch (p.dtype) {
        case F16: return adam_typed<f16>(a, p, g, m, v);
        case F32: return adam_typed<float>(a, p, g, m, v);
        case F64: return adam_typed<double>(a, p, g, m, v);
        default:
            throw type_error(std::string("fused adam: only float16, float32 and float64 parameters; got ") +
                             DT_NAME[p.dtype] + ".");
    }
}

}  // namespace ndp
