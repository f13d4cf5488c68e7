"""Accuracy of ``kernels/f64math.wgsl`` (the float64 transcendentals) against NumPy.

Each function runs in a small compute shader on random float64 inputs spread
log-uniformly over its domain (both signs) plus NumPy's special values, and the result
is compared with NumPy's float64 in ulp of NumPy's result. Special values (NaN, inf,
signed zero) must match exactly. Needs an adapter with ``shader-f64`` and
``shader-int64``. ``NDPLANE_HYPOTHESIS_PROFILE=deep`` samples 16x more points.

Run as a script (``python test_f64math.py [op ...]``) to print the max ulp per function.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

LIB = Path(__file__).parents[1] / "ndplane_webgpu" / "kernels" / "f64math.wgsl"
N = 1 << 16 if os.environ.get("NDPLANE_HYPOTHESIS_PROFILE") != "deep" else 1 << 20

# op: (numpy function, arity, max ulp asserted, domains as (lo, hi) magnitude ranges)
BIG = (1e-300, 1e300)
OPS = {
    "exp": (np.exp, 1, 1.5, [(1e-20, 746.0)]),
    "exp2": (np.exp2, 1, 1.5, [(1e-20, 1076.0)]),
    "expm1": (np.expm1, 1, 1.5, [(1e-20, 710.0)]),
    "log": (np.log, 1, 1.5, [(5e-324, 1.79e308), (0.5, 2.0)]),
    "log2": (np.log2, 1, 1.5, [(5e-324, 1.79e308), (0.5, 2.0)]),
    "log10": (np.log10, 1, 1.5, [(5e-324, 1.79e308), (0.5, 2.0)]),
    "log1p": (np.log1p, 1, 1.5, [(1e-20, 1e300), (1e-20, 1.0)]),
    "sin": (np.sin, 1, 1.5, [(1e-10, 1.6e6), (1e-10, 10.0), (1.6e6, 1.7e308)]),
    "cos": (np.cos, 1, 1.5, [(1e-10, 1.6e6), (1e-10, 10.0), (1.6e6, 1.7e308)]),
    "tan": (np.tan, 1, 1.5, [(1e-10, 1.6e6), (1e-10, 10.0), (1.6e6, 1.7e308)]),
    "asin": (np.arcsin, 1, 1.5, [(1e-20, 1.0), (0.4, 1.0)]),
    "acos": (np.arccos, 1, 1.5, [(1e-20, 1.0), (0.4, 1.0)]),
    "atan": (np.arctan, 1, 1.5, [(1e-20, 1e20)]),
    "sinh": (np.sinh, 1, 1.5, [(1e-20, 711.0)]),
    "cosh": (np.cosh, 1, 1.5, [(1e-20, 711.0)]),
    "tanh": (np.tanh, 1, 1.5, [(1e-20, 30.0)]),
    "asinh": (np.arcsinh, 1, 1.5, [BIG]),
    "acosh": (np.arccosh, 1, 2.5, [(1.0, 1e300), (1.0, 3.0)]),
    "atanh": (np.arctanh, 1, 1.5, [(1e-20, 1.0)]),
    "sqrt": (np.sqrt, 1, 0.5, [(5e-324, 1.79e308)]),
    "atan2": (np.arctan2, 2, 1.5, [BIG]),
    "hypot": (np.hypot, 2, 1.5, [BIG]),
    "pow": (np.power, 2, 1.5, [(1e-3, 1e3)]),
    "logaddexp": (np.logaddexp, 2, 2.5, [(1e-3, 1e3)]),
    "logaddexp2": (np.logaddexp2, 2, 2.5, [(1e-3, 1e3)]),
}
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0,
                    5e-324, -5e-324, 2.2250738585072014e-308, 1e-310, 1.7976931348623157e308,
                    -1.7976931348623157e308, 709.782712893384, -745.1332191019411, -745.14, 710.47,
                    0.1, 1e-17, 1e300, 1024.0, -1074.0, -1075.0, 22.0, 0.9999999999999999, 1.0000000000000002,
                    np.pi / 2, np.pi, 1e6])  # fmt: skip

_DEV = []


def device():
    if not _DEV:
        import wgpu

        ad = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        if ad is None:
            pytest.skip("no WebGPU adapter")
        missing = {"shader-f64", "shader-int64"} - set(ad.features)
        if missing:
            pytest.skip(f"adapter lacks {sorted(missing)}")
        _DEV.append(ad.request_device_sync(required_features=["shader-f64", "shader-int64"]))
    return _DEV[0]


def run_op(op: str, *args: np.ndarray) -> np.ndarray:
    return run_expr(f"f64_{op}(" + ", ".join(f"in{i}[i]" for i in range(len(args))) + ")", *args)


def run_expr(call: str, *args: np.ndarray) -> np.ndarray:
    """The f64 WGSL expression ``call`` of ``in0[i]``, ``in1[i]``, ... over the arrays ``args``."""
    import wgpu

    dev = device()
    n = len(args[0])
    decl = "".join(
        f"@group(0) @binding({i}) var<storage, read> in{i}: array<f64>;\n" for i in range(len(args))
    )
    src = (LIB.read_text() + "\n" + decl
           + f"@group(0) @binding({len(args)}) var<storage, read_write> out: array<f64>;\n"
           "@compute @workgroup_size(64)\n"
           "fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {\n"
           "  let i = g.x + g.y * nw.x * 64u;\n"
           f"  if (i < arrayLength(&out)) {{ out[i] = {call}; }}\n}}\n")  # fmt: skip
    pipe = dev.create_compute_pipeline(
        layout="auto", compute={"module": dev.create_shader_module(code=src), "entry_point": "main"}
    )
    bufs = [dev.create_buffer_with_data(data=np.ascontiguousarray(a, np.float64).tobytes(),
                                        usage=wgpu.BufferUsage.STORAGE) for a in args]  # fmt: skip
    ob = dev.create_buffer(size=n * 8, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
    bg = dev.create_bind_group(
        layout=pipe.get_bind_group_layout(0),
        entries=[{"binding": i, "resource": {"buffer": b}} for i, b in enumerate([*bufs, ob])],
    )
    enc = dev.create_command_encoder()
    p = enc.begin_compute_pass()
    p.set_pipeline(pipe)
    p.set_bind_group(0, bg)
    ng = (n + 63) // 64
    gx = min(ng, 65535)
    p.dispatch_workgroups(gx, (ng + gx - 1) // gx, 1)
    p.end()
    dev.queue.submit([enc.finish()])
    return np.frombuffer(dev.queue.read_buffer(ob), np.float64).copy()


def sample(rng: np.random.Generator, domains, n: int) -> np.ndarray:
    parts = []
    for lo, hi in domains:
        m = n // len(domains)
        mag = np.exp(rng.uniform(np.log(lo), np.log(hi), m))
        parts.append(np.where(rng.random(m) < 0.5, -mag, mag))
    return np.concatenate(parts)


def ulp_error(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Error in ulp of ref where ref is finite; inf where the kinds differ."""
    err = np.zeros(ref.shape)
    fin = np.isfinite(ref)
    with np.errstate(all="ignore"):
        sp = np.spacing(np.abs(ref[fin]))
        err[fin] = np.abs(got[fin] - ref[fin]) / np.maximum(sp, 5e-324)
    bad_nan = np.isnan(ref) != np.isnan(got)
    bad_inf = ~fin & ~np.isnan(ref) & (got != ref)
    zero = fin & (ref == 0)
    bad_zero = zero & ((got != 0) | (np.signbit(got) != np.signbit(ref)))
    err[bad_nan | bad_inf | bad_zero] = np.inf
    err[fin & ~np.isfinite(got)] = np.inf
    return err


def measure(op: str, n: int = N, seed: int = 0):
    fn, arity, _, domains = OPS[op]
    rng = np.random.default_rng(seed)
    if arity == 1:
        x = np.concatenate([sample(rng, domains, n), SPECIAL])
        args = (x,)
    else:
        a = np.concatenate([sample(rng, domains, n), np.repeat(SPECIAL, len(SPECIAL))])
        b = np.concatenate([sample(rng, domains, n), np.tile(SPECIAL, len(SPECIAL))])
        if op == "pow":  # integer and half-integer exponents too
            k = rng.random(n) < 0.25
            b[:n][k] = np.round(b[:n][k] * 2) / 2
        args = (a, b)
    with np.errstate(all="ignore"):
        ref = fn(*args)
    got = run_op(op, *args)
    err = ulp_error(got, ref)
    if op in ("logaddexp", "logaddexp2"):  # cancels near 0 (NumPy's too): ulp of the larger input
        big = np.maximum(np.abs(args[0]), np.abs(args[1]))
        fin = np.isfinite(err) & np.isfinite(big) & (big > np.abs(ref))
        with np.errstate(all="ignore"):
            err[fin] = np.abs(got[fin] - ref[fin]) / np.spacing(big[fin])
    return err, args, got, ref


@pytest.mark.parametrize("op", sorted(OPS))
def test_f64math_accuracy(op):
    err, args, got, ref = measure(op)
    bound = OPS[op][2]
    if LONG_DOUBLE:
        # NOTE: NumPy's own float64 result differs by CPU (its SIMD loops: arctanh was 2 ulp from
        # ours on a CPU without AVX-512, 1.5 with it): the bound is widened by NumPy's own worst
        # error against the exact result (x86's long double), so the test measures us, not NumPy.
        bound += float(exact_ulp_error(op, args, ref, ref).max(initial=0.0))
    i = int(np.argmax(err))
    assert err[i] <= bound, (op, [a[i] for a in args], got[i], ref[i], err[i], bound)


# Against the exact result (x86's 80-bit long double, 11 bits beyond float64, as reference),
# where NumPy's own float64 result is up to 0.72 ulp off and so cannot tell 0.51 from 1:
# exp(h + l) is summed as a double-double and rounded once, pow's log|x| and product are
# double-doubles, so these are correctly rounded but within about 0.01 ulp of a midpoint.
CORRECTLY_ROUNDED = {"exp": 0.52, "exp2": 0.52, "pow": 0.52}
LONG_DOUBLE = np.finfo(np.longdouble).nmant >= 63


def exact_ulp_error(op: str, args, got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Error of ``got`` in ulp of the exact result, where NumPy's result is a finite normal."""
    with np.errstate(all="ignore"):
        exact = OPS[op][0](*[a.astype(np.longdouble) for a in args])
        fin = np.isfinite(ref) & np.isfinite(got) & (np.abs(ref) >= 2.2250738585072014e-308)
        sp = np.spacing(np.abs(exact[fin]).astype(np.float64)).astype(np.longdouble)
        return np.asarray((np.abs(got[fin].astype(np.longdouble) - exact[fin]) / sp).astype(np.float64))


@pytest.mark.skipif(not LONG_DOUBLE, reason="needs an 80-bit long double reference")
@pytest.mark.parametrize("op", sorted(CORRECTLY_ROUNDED))
def test_f64math_correctly_rounded(op):
    err, args, got, ref = measure(op)
    assert np.isfinite(err).all(), op  # special values: NumPy's exactly
    e = exact_ulp_error(op, args, got, ref)
    assert e.max() <= CORRECTLY_ROUNDED[op], (op, float(e.max()))


@pytest.mark.parametrize("y", [0.5, -0.5])
def test_f64math_pow_half_is_correctly_rounded_sqrt(y):
    """pow(x, +-1/2): sqrt(x) and 1 / sqrt(x) correctly rounded (NumPy's pow(2, 0.5) is
    1.4142135623730951, pow(2, -0.5) 0.7071067811865476), every exponent, subnormals included."""
    rng = np.random.default_rng(1)
    edge = [2.0, 3.0, 0.5, TINY, 1e-310, 1.7976931348623157e308]
    x = np.abs(np.concatenate([random_bits(rng, 1 << 15, 0, 0x7FE), edge]))
    x = x[x > 0]
    got = run_op("pow", x, np.full_like(x, y))
    if y > 0:
        np.testing.assert_array_equal(got, np.sqrt(x))
        return
    from fractions import Fraction

    # g is 1 / sqrt(x) correctly rounded iff the midpoints around g bracket it: exact rationals
    lo = np.nextafter(got, 0)
    hi = np.nextafter(got, np.inf)
    for v, g, a, b in zip(x.tolist(), got.tolist(), lo.tolist(), hi.tolist(), strict=True):
        fv, fg = Fraction(v), Fraction(g)
        m_lo, m_hi = (fg + Fraction(a)) / 2, (fg + Fraction(b)) / 2
        assert m_lo * m_lo * fv <= 1 <= m_hi * m_hi * fv, (v, g)


# ---------------------------------------------------------------------------
# Exact functions: bit for bit against NumPy (any NaN matches any NaN).
# ---------------------------------------------------------------------------

NX = 1 << 17 if os.environ.get("NDPLANE_HYPOTHESIS_PROFILE") != "deep" else 1 << 22
# op: (numpy function, WGSL expression of in0[i] (, in1[i]))
EXACT = {
    "fmod": (np.fmod, "f64_fmod(in0[i], in1[i])"),
    "remainder": (np.remainder, "f64_remainder(in0[i], in1[i])"),
    "floor_divide": (np.floor_divide, "f64_floor_divide(in0[i], in1[i])"),
    "divmod": (lambda a, b: np.divmod(a, b)[1], "f64_divmod(in0[i], in1[i]).y"),
    "copysign": (np.copysign, "f64_copysign(in0[i], in1[i])"),
    "nextafter": (np.nextafter, "f64_nextafter(in0[i], in1[i])"),
    "divide": (np.divide, "(in0[i] / in1[i])"),
    # built-ins and plain arithmetic the backend's float64 rows use as they are
    "floor": (np.floor, "floor(in0[i])"),
    "ceil": (np.ceil, "ceil(in0[i])"),
    "trunc": (np.trunc, "f64_trunc(in0[i])"),  # NOTE: not the built-ins: lavapipe's lose -0 and 27.5
    "round": (np.round, "f64_round(in0[i])"),
    "abs": (np.abs, "abs(in0[i])"),
    "square": (np.square, "(in0[i] * in0[i])"),
    "reciprocal": (np.reciprocal, "(1.0 / in0[i])"),
    "sign": (np.sign, "f64_sign(in0[i])"),
    "sqrt_exact": (np.sqrt, "f64_sqrt(in0[i])"),
}
TINY = 5e-324
SPECIAL_X = np.unique(np.concatenate([
    SPECIAL, -SPECIAL, [1.5, 2.5, 3.5, 0.49999999999999994, 4503599627370495.5, 4503599627370496.0,
                        9007199254740993.0, 1e16, 2.0 ** 52 + 1, 2.0 ** 53 - 1, 2.0 ** 1023,
                        2.0 ** -1022, 2.0 ** -1074 * 3, 2.0 ** -1022 - TINY, 7.0, 10.0, 0.3, 0.7, 1e-300,
                        4.9e-324 * 12345, 1e200, 1e-200, 123456789.0, np.float64(2.0 ** 53) * 0.1]]),
    equal_nan=True)  # fmt: skip


def random_bits(rng, n: int, lo: int = 0, hi: int = 0x7FF) -> np.ndarray:
    """Floats with uniformly random signs, exponent fields in [lo, hi] and mantissas."""
    e = rng.integers(lo, hi + 1, n, dtype=np.uint64)
    m = rng.integers(0, 1 << 52, n, dtype=np.uint64)
    s = rng.integers(0, 2, n, dtype=np.uint64)
    return ((s << np.uint64(63)) | (e << np.uint64(52)) | m).view(np.float64)


def exact_inputs(op: str, n: int = NX, seed: int = 0):
    rng = np.random.default_rng(seed)
    if EXACT[op][1].count("in1") == 0:  # unary: all exponents; near integers and halves
        k = n // 4
        near = np.round(random_bits(rng, k, 1023 - 4, 1023 + 60).astype(np.float64) * 2) / 2
        near = np.concatenate(
            [near, np.nextafter(near[: k // 2], np.inf), np.nextafter(near[k // 2 :], -np.inf)]
        )
        return (np.concatenate([random_bits(rng, n - 2 * k), near, SPECIAL_X]),)
    k = n // 8
    a_parts, b_parts = [], []
    # 1) any two floats (huge and tiny ratios, subnormals, inf, NaN)
    a_parts.append(random_bits(rng, 2 * k))
    b_parts.append(random_bits(rng, 2 * k))
    # 2) similar magnitudes: |a / b| in [2^-4, 2^40], all scales
    b = random_bits(rng, 2 * k, 1, 0x7FE - 41)
    a = b * np.abs(random_bits(rng, 2 * k, 1023 - 4, 1023 + 40))
    a_parts.append(a * np.where(rng.random(2 * k) < 0.5, -1, 1))
    b_parts.append(b)
    # 3) subnormals against subnormals and small normals
    a_parts.append(random_bits(rng, k, 0, 3))
    b_parts.append(random_bits(rng, k, 0, 1))
    # 4) huge exponent differences
    a_parts.append(random_bits(rng, k, 0x700, 0x7FE))
    b_parts.append(random_bits(rng, k, 0, 0x100))
    # 5) exact and nearly exact multiples: a = q b (+- 1 ulp), small q
    b = random_bits(rng, k, 1, 0x7F0)
    with np.errstate(all="ignore"):
        a = b * rng.integers(-64, 65, k).astype(np.float64)
    j = rng.integers(0, 3, k)
    a = np.where(j == 1, np.nextafter(a, np.inf), np.where(j == 2, np.nextafter(a, -np.inf), a))
    a_parts.append(a)
    b_parts.append(b)
    # 6) subnormal b with few significant bits (large quotients per step)
    bits = rng.integers(0, 53, k).astype(np.uint64)
    mb = rng.integers(1, 1 << 62, k, dtype=np.uint64) >> (np.uint64(62) - np.minimum(bits, np.uint64(52)))
    a_parts.append(random_bits(rng, k))
    b_parts.append((mb & np.uint64((1 << 52) - 1)).view(np.float64) * np.where(rng.random(k) < 0.5, -1, 1))
    # 7) small integers and halves (Python's % and // tables)
    a_parts.append(rng.integers(-40, 41, k) / 2.0)
    b_parts.append(rng.integers(-12, 13, k) / 2.0)
    # every pair of special values
    a_parts.append(np.repeat(SPECIAL_X, len(SPECIAL_X)))
    b_parts.append(np.tile(SPECIAL_X, len(SPECIAL_X)))
    return np.concatenate(a_parts), np.concatenate(b_parts)


def exact_mismatch(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    same = (got.view(np.uint64) == ref.view(np.uint64)) | (np.isnan(got) & np.isnan(ref))
    return ~same


def measure_exact(op: str, n: int = NX, seed: int = 0):
    fn, expr = EXACT[op]
    args = exact_inputs(op, n, seed)
    with np.errstate(all="ignore"):
        ref = np.asarray(fn(*args), np.float64)
    got = run_expr(expr, *args)
    return exact_mismatch(got, ref), args, got, ref


@pytest.mark.parametrize("op", sorted(EXACT))
def test_f64math_exact(op):
    bad, args, got, ref = measure_exact(op)
    i = np.flatnonzero(bad)[:5]
    assert len(i) == 0, (op, int(bad.sum()), [[float(a[j]) for a in args] for j in i], got[i], ref[i])


@pytest.mark.parametrize(("a", "b"), [(-0.0, 5.0), (0.0, -5.0), (-1.0, np.inf), (1.0, -np.inf), (-1e-300, 1e300),
                                      (5.0, 0.0), (-5.0, -0.0), (0.0, 0.0), (np.inf, 2.0), (1e308, 1e-308),
                                      (-TINY, 1.0), (7.5, -2.0), (-7.5, 2.0)])  # fmt: skip
def test_f64math_divmod_cases(a, b):
    args = (np.array([a]), np.array([b]))
    for op in ("fmod", "remainder", "floor_divide"):
        fn, expr = EXACT[op]
        with np.errstate(all="ignore"):
            ref = fn(*args)
        got = run_expr(expr, *args)
        assert not exact_mismatch(got, ref).any(), (op, a, b, got[0], ref[0])


# ---------------------------------------------------------------------------
# sin, cos, tan of huge arguments (Payne-Hanek) against the exact result: pi to 1500 bits
# (Machin's formula in integers), x reduced exactly, sin and cos of the reduced argument by
# Taylor series in 256-bit fixed point, the error in ulp of the correctly rounded result.
# ---------------------------------------------------------------------------

NH = 1 << 12 if os.environ.get("NDPLANE_HYPOTHESIS_PROFILE") != "deep" else 1 << 16
TRIG_BOUND = 1.5  # ulp of the exact result
_PI_BITS = 1500
_FIX = 256
_PI: list[int] = []


def pi_fixed() -> int:
    """pi * 2^1500, to within 1 (Machin: pi = 16 atan(1/5) - 4 atan(1/239))."""
    if not _PI:
        one = 1 << (_PI_BITS + 32)

        def atan_inv(n: int) -> int:
            s, t, k, sign = 0, one // n, 1, 1
            while t:
                s += sign * (t // k)
                t //= n * n
                k += 2
                sign = -sign
            return s

        _PI.append((16 * atan_inv(5) - 4 * atan_inv(239)) >> 32)
    return _PI[0]


def exact_trig(op: str, x: float):
    """The exact op(x) as a Fraction, to about 2^-180 relative, for finite |x| >= 2^-20."""
    from fractions import Fraction

    num, den = abs(x).as_integer_ratio()  # den a power of 2 <= 2^1074
    pio2 = pi_fixed() >> 1  # pi/2 * 2^1500
    xs = (num << _PI_BITS) // den  # |x| 2^1500, exact
    n = (2 * xs + pio2) // (2 * pio2)  # the nearest multiple of pi/2
    r = (xs - n * pio2) >> (_PI_BITS - _FIX)  # (|x| - n pi/2) 2^256, |r| <= pi/4 2^256
    one = 1 << _FIX
    r2 = (r * r) >> _FIX
    s, t, k = r, r, 1
    while t:
        t = -((t * r2) >> _FIX) // ((2 * k) * (2 * k + 1))
        s += t
        k += 1
    c, t, k = one, one, 1
    while t:
        t = -((t * r2) >> _FIX) // ((2 * k - 1) * (2 * k))
        c += t
        k += 1
    q = n % 4
    sgn = -1 if x < 0 else 1
    if op == "sin":
        v = (s, c, -s, -c)[q] * sgn
    elif op == "cos":
        v = (c, -s, -c, s)[q]
    else:
        return Fraction(sgn * (s if q % 2 == 0 else -c), c if q % 2 == 0 else s)
    return Fraction(v, one)


def hard_trig_inputs(exponents) -> np.ndarray:
    """For each binary exponent e, the doubles m 2^(e-52) closest to a multiple of pi/2: the
    best rational approximations m/n of pi / 2^(e-51) with 2^52 <= m < 2^53 (continued
    fraction convergents and the largest semiconvergent), and their neighbours."""
    from fractions import Fraction

    out = []
    for e in map(int, exponents):
        a = Fraction(pi_fixed(), 1 << (_PI_BITS + e - 51))  # m / n ~ a
        h0, h1 = 0, 1  # numerators p_(k-2), p_(k-1)
        k0, k1 = 1, 0
        y = a
        while True:
            ai = y.numerator // y.denominator
            h2, k2 = ai * h1 + h0, ai * k1 + k0
            if h2 >= 1 << 53:
                j = ((1 << 53) - 1 - h0) // h1  # largest semiconvergent below 2^53
                cands = [h1, h0 + j * h1] if j > 0 else [h1]
                break
            h0, h1, k0, k1 = h1, h2, k1, k2
            y = 1 / (y - ai)
        for m in cands:
            if 1 << 52 <= m < 1 << 53:
                v = float(m) * 2.0 ** (e - 52)
                out += [v, np.nextafter(v, 0), np.nextafter(v, np.inf)]
    v = np.array(out)
    return np.concatenate([v, -v])


def trig_ulp_error(op: str, x: np.ndarray, got: np.ndarray) -> np.ndarray:
    from fractions import Fraction

    err = np.empty(len(x))
    for i, (xi, g) in enumerate(zip(x.tolist(), got.tolist(), strict=True)):
        ex = exact_trig(op, xi)
        ref = float(ex)
        if not np.isfinite(g):
            err[i] = np.inf
            continue
        err[i] = float(abs(Fraction(g) - ex) / Fraction(float(np.spacing(abs(ref)))))
    return err


def huge_trig_inputs(n: int = NH, seed: int = 2) -> np.ndarray:
    rng = np.random.default_rng(seed)
    mag = np.exp(rng.uniform(np.log(1.6e6), np.log(1.7976931348623157e308), n))
    x = np.where(rng.random(n) < 0.5, -mag, mag)
    famous = [6381956970095103 * 2.0**797, 5.319372648326541e255, 2.0**20, 1.7976931348623157e308,
              1e22, 2.0**1023, 2.0**52, 2.0**53 - 1]  # fmt: skip
    exps = np.arange(20, 1024) if NH > 1 << 12 else np.arange(20, 1024, 3)
    return np.concatenate([x, famous, -np.array(famous), hard_trig_inputs(exps)])


@pytest.mark.parametrize("op", ["sin", "cos", "tan"])
def test_f64math_trig_huge(op):
    """Payne-Hanek: |x| >= 2^20 to the largest double, within TRIG_BOUND ulp of the exact
    result, the doubles nearest to multiples of pi/2 included (6381956970095103 2^797 is
    within 4.7e-19 of one)."""
    x = huge_trig_inputs()
    got = run_op(op, x)
    err = trig_ulp_error(op, x, got)
    i = int(np.argmax(err))
    assert err[i] <= TRIG_BOUND, (op, float(x[i]), got[i], float(exact_trig(op, float(x[i]))), err[i])


if __name__ == "__main__":
    for op in sys.argv[1:] or sorted(OPS) + sorted(EXACT):
        if op in EXACT:
            bad, args, got, ref = measure_exact(op)
            i = np.flatnonzero(bad)[:3]
            print(
                f"{op:12s} {int(bad.sum())} of {len(bad)} differ",
                [[float(a[j]) for a in args] for j in i],
                got[i],
                ref[i],
                flush=True,
            )
            continue
        err, args, got, ref = measure(op)
        i = int(np.argmax(err))
        print(
            f"{op:12s} max {err[i]:.3f} ulp at {[float(a[i]) for a in args]} got {got[i]!r} ref {ref[i]!r}",
            flush=True,
        )
