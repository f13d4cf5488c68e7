// The fused kernels the cpu backend declares too: softmax, log_softmax, logsumexp and
// layer_norm over C-contiguous (M, K) rows of float16, float32 or float64 -- one block per
// row, each pass a strided sweep of the row (which stays in L2 between passes) and a fixed
// shared-memory tree, so results are deterministic -- and the optimizers' Adam update, one
// element per thread. The arithmetic is the core's generic algorithm's (core/ndplane/composite,
// optim), in float for float16.
#include "elementwise.cuh"

namespace ndp {

namespace {

template <class C> struct MaxOp {
    __device__ static C f(C a, C b) { return ops::maximum::f(a, b); }  // NaN propagates
};
template <class C> struct SumOp {
    __device__ static C f(C a, C b) { return a + b; }
};

// The block's values combined in a fixed tree; every thread gets the result.
template <class Op, class C> __device__ C block_tree(C v, C* s) {
    s[threadIdx.x] = v;
    for (int w = BLOCK / 2; w > 0; w /= 2) {
        __syncthreads();
        if (int(threadIdx.x) < w) s[threadIdx.x] = Op::f(s[threadIdx.x], s[threadIdx.x + w]);
    }
    __syncthreads();
    const C r = s[0];
    __syncthreads();  // s is written again by the next tree
    return r;
}

template <class T, int OP>
__global__ void __launch_bounds__(BLOCK) fused_rows_kernel(const T* __restrict__ x, T* __restrict__ out, int64_t m,
                                                          int64_t k, const T* __restrict__ w, const T* __restrict__ b,
                                                          double eps) {
    using C = compute_t<T>;
    __shared__ C s[BLOCK];
    for (int64_t r = blockIdx.x; r < m; r += gridDim.x) {
        const T* xr = x + r * k;
        if constexpr (OP == FU_LAYER_NORM) {
            C acc = 0;
            for (int64_t j = threadIdx.x; j < k; j += BLOCK) acc += widen(xr[j]);
            const C mu = block_tree<SumOp<C>>(acc, s) / C(k);
            acc = 0;
            for (int64_t j = threadIdx.x; j < k; j += BLOCK) {
                const C d = widen(xr[j]) - mu;
                acc += d * d;
            }
            const C rstd = C(1) / ::sqrt(block_tree<SumOp<C>>(acc, s) / C(k) + C(eps));
            T* o = out + r * k;
            for (int64_t j = threadIdx.x; j < k; j += BLOCK) {
                C v = (widen(xr[j]) - mu) * rstd;
                if (w) v = v * widen(w[j]);
                if (b) v = v + widen(b[j]);
                o[j] = convert<T>(v);
            }
        } else {
            C mx = -cuda::std::numeric_limits<C>::infinity();
            for (int64_t j = threadIdx.x; j < k; j += BLOCK) mx = MaxOp<C>::f(mx, widen(xr[j]));
            mx = block_tree<MaxOp<C>>(mx, s);
            // logsumexp shifts by a finite max only (an infinite one gives inf or -inf itself)
            const C shift = OP == FU_LOGSUMEXP && !::isfinite(mx) ? C(0) : mx;
            C acc = 0;
            for (int64_t j = threadIdx.x; j < k; j += BLOCK) acc += ::exp(widen(xr[j]) - shift);
            const C sum = block_tree<SumOp<C>>(acc, s);
            if constexpr (OP == FU_LOGSUMEXP) {
                if (threadIdx.x == 0) out[r] = convert<T>(::log(sum) + shift);
            } else if constexpr (OP == FU_SOFTMAX) {
                for (int64_t j = threadIdx.x; j < k; j += BLOCK) out[r * k + j] = convert<T>(::exp(widen(xr[j]) - mx) / sum);
            } else {
                const C ls = ::log(sum);
                for (int64_t j = threadIdx.x; j < k; j += BLOCK) out[r * k + j] = convert<T>((widen(xr[j]) - mx) - ls);
            }
        }
    }
}

using FusedFn = void (*)(const char*, char*, int64_t, int64_t, const char*, const char*, double, cudaStream_t);
template <class T, int OP>
void run_fused(const char* x, char* out, int64_t m, int64_t k, const char* w, const char* b, double eps, cudaStream_t s) {
    const unsigned grid = static_cast<unsigned>(m < g_grid_limit ? m : g_grid_limit);
    fused_rows_kernel<T, OP><<<grid, BLOCK, 0, s>>>(reinterpret_cast<const T*>(x), reinterpret_cast<T*>(out), m, k,
                                                    reinterpret_cast<const T*>(w), reinterpret_cast<const T*>(b), eps);
}
template <class T> struct FusedRow {
    static constexpr FusedFn fns[FU_ADAM] = {&run_fused<T, FU_SOFTMAX>, &run_fused<T, FU_LOG_SOFTMAX>,
                                            &run_fused<T, FU_LOGSUMEXP>, &run_fused<T, FU_LAYER_NORM>};
};

// One element per thread step; the constants in the compute type and the expression order of
// the generic rule (optim/__init__.py), as the cpu backend's optim.cc.
template <class T>
__global__ void __launch_bounds__(BLOCK) adam_kernel(T* __restrict__ p, const T* __restrict__ g, T* __restrict__ m,
                                                    T* __restrict__ v, int64_t n, compute_t<T> b1, compute_t<T> c1,
                                                    compute_t<T> b2, compute_t<T> c2, compute_t<T> wd, compute_t<T> eps,
                                                    compute_t<T> step_size, compute_t<T> inv_bc2, compute_t<T> decay,
                                                    bool l2, bool decoupled) {
    using C = compute_t<T>;
    for (int64_t i = int64_t(blockIdx.x) * BLOCK + threadIdx.x; i < n; i += int64_t(gridDim.x) * BLOCK) {
        const C pi = widen(p[i]);
        C gi = widen(g[i]);
        if (l2) gi = gi + wd * pi;
        const C mi = b1 * widen(m[i]) + c1 * gi;
        const C vi = b2 * widen(v[i]) + c2 * (gi * gi);
        const C denom = ::sqrt(vi) * inv_bc2 + eps;
        C delta = step_size * (mi / denom);
        if (decoupled) delta = delta + decay * pi;
        m[i] = convert<T>(mi);
        v[i] = convert<T>(vi);
        p[i] = convert<T>(pi - delta);
    }
}

template <class T>
void run_adam(char* p, const char* g, char* m, char* v, int64_t n, const AdamArgs& a, cudaStream_t s) {
    using C = compute_t<T>;
    const double step_size = a.lr / (1 - ::pow(a.beta1, double(a.step)));
    const double inv_bc2 = 1 / ::sqrt(1 - ::pow(a.beta2, double(a.step)));
    const bool l2 = a.weight_decay != 0 && !a.decoupled, decoupled = a.weight_decay != 0 && a.decoupled;
    adam_kernel<T><<<grid_for(n), BLOCK, 0, s>>>(reinterpret_cast<T*>(p), reinterpret_cast<const T*>(g),
                                                 reinterpret_cast<T*>(m), reinterpret_cast<T*>(v), n, C(a.beta1),
                                                 C(1 - a.beta1), C(a.beta2), C(1 - a.beta2), C(a.weight_decay), C(a.eps),
                                                 C(step_size), C(inv_bc2), C(a.lr * a.weight_decay), l2, decoupled);
}

}  // namespace

void launch_adam(int dtype, char* param, const char* grad, char* exp_avg, char* exp_avg_sq, int64_t n,
                 const AdamArgs& a, Stream s) {
    if (n <= 0) return;
    const auto st = static_cast<cudaStream_t>(s);
    if (dtype == F16) run_adam<f16>(param, grad, exp_avg, exp_avg_sq, n, a, st);
    else if (dtype == F32) run_adam<float>(param, grad, exp_avg, exp_avg_sq, n, a, st);
    else if (dtype == F64) run_adam<double>(param, grad, exp_avg, exp_avg_sq, n, a, st);
    else throw std::invalid_argument("fused adam: no kernel for this dtype.");
}

bool fused_ok(int dtype) { return dtype == F16 || dtype == F32 || dtype == F64; }

void launch_fused(int op, int dtype, const char* x, char* out, int64_t m, int64_t k, const char* w, const char* b,
                  double eps, Stream s) {
    if (!fused_ok(dtype) || op < 0 || op >= FU_ADAM) throw std::invalid_argument("fused: no kernel for this op and dtype.");
    if (m <= 0) return;
    const FusedFn* row = dtype == F16 ? FusedRow<f16>::fns : dtype == F32 ? FusedRow<float>::fns : FusedRow<double>::fns;
    row[op](x, out, m, k, w, b, eps, static_cast<cudaStream_t>(s));
}

}  // namespace ndp
