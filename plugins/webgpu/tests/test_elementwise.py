"""unary, binary, where, cast, copy and fill against the reference kernels, on every
supported dtype and on strided, negative-stride, broadcast, offset, empty and 0-d views."""

from __future__ import annotations

import numpy as np
import pytest
from ndplane_webgpu import _codegen as G
from ndplane_webgpu import _kernels as Kn
from test_complex import _log1p as complex_log1p
from webgpu_helpers import ALL, VIEWS, random_array, whole

import ndplane
from ndplane._elementwise import OPS
from ndplane.backend import reference as R

FLOATS = ["float16", "float32"]
TRANSCENDENTAL = {op.name for op in OPS.values() if op.accuracy == "transcendental"}


def close(got, want, dtype, op=""):
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, want, err_msg=f"{op} {dtype}")
        return
    rtol = 2e-3 if want.dtype == np.float16 else 3e-5 if op in TRANSCENDENTAL else 2e-6
    # Scale-aware absolute tolerance for results that cancel to ~0 (sin(pi), log(1+tiny)).
    atol = 1e-3 if want.dtype == np.float16 else 1e-6 if op in TRANSCENDENTAL else 0
    if want.dtype.kind == "c":
        # NOTE: complex accuracy (normwise, special values) is test_complex.py's; here the wiring,
        # componentwise relative to the modulus (a part may cancel where the other does not).
        eps = np.finfo(want.real.dtype).eps
        tol = (64 if op in TRANSCENDENTAL or op in ("divide", "pow", "reciprocal", "sign") else 4) * eps
        fin = np.isfinite(want) & np.isfinite(got)
        err = np.abs(got - want)[fin] / np.maximum(np.abs(want)[fin], np.finfo(want.real.dtype).tiny)
        assert err.size == 0 or err.max() <= tol, f"{op} {dtype}: {err.max() / eps:.1f} eps"
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{op} {dtype} nan")
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want), err_msg=f"{op} {dtype} inf")
        return
    if want.dtype == np.float64:
        # NOTE: the f64math functions' own accuracy is tested by test_f64math.py; here the
        # wiring. Everything else is exact (or one rounding, as NumPy; complex abs is a hypot).
        rtol, atol = (1e-13, 1e-15) if op in TRANSCENDENTAL or "complex" in dtype else (2.0**-52, 0)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"{op} {dtype}")
    # Signs of infinities and zeros must agree as well.
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want), err_msg=f"{op} {dtype} inf")


def _dtypes(be):
    return [d for d in ALL if any(x.name == d for x in be.dtypes)]


def _skip_unless(be, op, dtype):
    if dtype not in _dtypes(be):
        pytest.skip(f"{dtype} unsupported here")
    if not be.supports(op, getattr(ndplane, dtype)):
        pytest.skip(f"{op} on {dtype} not native here (kernels/f64math.wgsl lacks it)")


def _unary_cases():
    for op in sorted(G.UNARY):
        for d in ALL:
            if G.op_expr(G.UNARY, op, d) is not None:
                yield op, d


def _result_dtype(op, d, a, b=None):
    probe = getattr(np, {"bitwise_invert": "invert", "acos": "arccos", "acosh": "arccosh", "asin": "arcsin",
                         "asinh": "arcsinh", "atan": "arctan", "atanh": "arctanh", "atan2": "arctan2",
                         "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift",
                         "pow": "power", "conj": "conjugate"}.get(op, op), None)  # fmt: skip
    if op in ("reciprocal", "real", "imag", "signbit") or probe is None:
        return np.dtype(bool) if op == "signbit" else np.dtype(d)
    with np.errstate(all="ignore"):
        return (probe(a.ravel()[:1], b.ravel()[:1]) if b is not None else probe(a.ravel()[:1])).dtype


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("op,dtype", list(_unary_cases()))
def test_unary(be, host, op, dtype, view):
    _skip_unless(be, op, dtype)
    rng = np.random.default_rng(hash((op, dtype, view)) % 2**32)
    shape, fn = VIEWS[view]
    base = random_array(rng, shape, dtype)
    if op in ("acos", "asin", "atanh") and rng.random() < 0.7:
        base = (base / 150).astype(dtype)
    x = fn(base)
    rdt = np.dtype(bool) if op in ("isfinite", "isinf", "isnan", "logical_not", "signbit") else np.dtype(dtype)
    if rdt.kind == "c" and op in G.REAL_RESULT:
        rdt = np.empty(0, rdt).real.dtype
    want = np.empty(x.shape, rdt)
    if np.dtype(dtype) == np.complex64:
        # NOTE: against complex128 rounded: NumPy's own complex64 log1p is 240 eps off near 0
        wide = np.empty(x.shape, np.complex128 if rdt.kind == "c" else rdt if rdt.kind == "b" else np.float64)
        R.unary(op, x.astype(np.complex128), wide)
        want[...] = wide
    else:
        R.unary(op, x, want)
    if op == "log1p" and rdt.kind == "c":  # NumPy's complex log1p cancels near 0; ours does not
        with np.errstate(all="ignore"):
            want[...] = np.where(np.isfinite(x), complex_log1p(x.astype(np.complex128)), want)
    out = host.empty(x.shape, rdt)
    be.unary(op, host.view(base, x), out)
    close(host.get(out), want, dtype, op)


def _binary_cases():
    for op in sorted(G.BINARY):
        for d in ALL:
            if G.op_expr(G.BINARY, op, d) is not None:
                yield op, d


def _operands(rng, op, dtype, shape):
    a = random_array(rng, shape, dtype)
    b = random_array(rng, shape, dtype)
    if op in ("bitwise_left_shift", "bitwise_right_shift") and np.dtype(dtype).kind in "iu":
        counts = rng.integers(0, 70 if np.dtype(dtype).itemsize == 8 else 40, b.shape).astype(dtype)
        b = np.where(rng.random(b.shape) < 0.8, counts, b)
    if op == "pow" and np.dtype(dtype).kind in "iu":
        b = rng.integers(-2 if np.dtype(dtype).kind == "i" else 0, 9, b.shape).astype(dtype)
    if op in ("floor_divide", "remainder", "divide") and np.dtype(dtype).kind == "f":
        b = np.where(rng.random(b.shape) < 0.3, np.round(b), b).astype(dtype)
    if op == "pow" and np.dtype(dtype).kind == "c":
        # NOTE: a ** b = exp(b log a) is conditioned by |b log a|: moderate exponents, and some
        # small integers (NumPy multiplies for those)
        b = np.where(rng.random(b.shape) < 0.2, rng.integers(-4, 5, b.shape), b / 100).astype(dtype)
    return a, b


@pytest.mark.parametrize("view", ["contig", "zero_d", "empty", "transposed", "negative", "broadcast",
                                  "three_d", "large", "vec4", "vec4_misaligned"])  # fmt: skip
@pytest.mark.parametrize("op,dtype", list(_binary_cases()))
def test_binary(be, host, op, dtype, view):
    _skip_unless(be, op, dtype)
    rng = np.random.default_rng(hash((op, dtype, view, 2)) % 2**32)
    shape, fn = VIEWS[view]
    abase, bbase = _operands(rng, op, dtype, shape)
    a, b = fn(abase), fn(bbase)
    rdt = np.dtype(bool) if op in G.BOOL_BINARY else np.dtype(dtype)
    want = np.empty(a.shape, rdt)
    if np.dtype(dtype) == np.complex64:  # against complex128 rounded, as test_unary
        wide = np.empty(a.shape, np.complex128 if rdt.kind == "c" else rdt)
        R.binary(op, a.astype(np.complex128), b.astype(np.complex128), wide)
        want[...] = wide
    else:
        R.binary(op, a, b, want)
    out = host.empty(a.shape, rdt)
    be.binary(op, host.view(abase, a), host.view(bbase, b), out)
    close(host.get(out), want, dtype, op)


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("op,dtype", [c for c in _binary_cases() if c[0] in
                                      ("add", "subtract", "multiply", "divide", "pow", "less", "maximum",
                                       "bitwise_right_shift", "remainder", "floor_divide", "logical_and")])
def test_binary_scalar(be, host, op, dtype, side):
    _skip_unless(be, op, dtype)
    rng = np.random.default_rng(hash((op, dtype, side)) % 2**32)
    a, _ = _operands(rng, op, dtype, (6, 7) if side == "left" else (1031,))  # (1031,): vec4 kernel
    kind = np.dtype(dtype).kind
    s = {"b": True, "i": -3, "u": 3, "f": -2.5, "c": -2.5 + 1.5j}[kind]
    if op in ("pow", "bitwise_right_shift") and side == "right":
        s = {"b": True, "i": 3, "u": 3, "f": 3.0, "c": 3.0}[kind]
    rdt = np.dtype(bool) if op in G.BOOL_BINARY else np.dtype(dtype)
    want = np.empty(a.shape, rdt)
    args = (a, s) if side == "right" else (s, a)
    R.binary(op, *args, want)
    out = host.empty(a.shape, rdt)
    x = host.put(a)
    be.binary(op, *((x, s) if side == "right" else (s, x)), out)
    close(host.get(out), want, dtype, op)


@pytest.mark.parametrize("view", ["contig", "negative", "broadcast", "zero_d", "empty"])
@pytest.mark.parametrize("dtype", ALL)
def test_where(be, host, dtype, view):
    if dtype not in _dtypes(be):
        pytest.skip(f"{dtype} unsupported here")
    rng = np.random.default_rng(7)
    shape, fn = VIEWS[view]
    cb, ab, bb = random_array(rng, shape, "bool"), random_array(rng, shape, dtype), random_array(rng, shape, dtype)
    c, a, b = fn(cb), fn(ab), fn(bb)
    want = np.empty(a.shape, dtype)
    R.where(c, a, b, want)
    out = host.empty(a.shape, dtype)
    be.where(host.view(cb, c), host.view(ab, a), host.view(bb, b), out)
    close(host.get(out), want, dtype)


@pytest.mark.parametrize("src", ALL)
@pytest.mark.parametrize("dst", ALL)
def test_cast(be, host, src, dst):
    if src not in _dtypes(be) or dst not in _dtypes(be):
        pytest.skip("unsupported here")
    rng = np.random.default_rng(11)
    base = random_array(rng, (9, 13), src)
    if np.dtype(src).kind in "fc" and np.dtype(dst).kind in "iub":
        # Out-of-range float -> int casts are undefined in the Array API; keep in range (the
        # real part, which a complex -> real cast keeps, as NumPy's astype).
        info = np.iinfo(dst) if dst != "bool" else None
        finite = np.nan_to_num(base.real.astype(np.float64), nan=0, posinf=0, neginf=0)
        lo, hi = (info.min, info.max) if info else (-100, 100)
        base = (np.clip(finite, lo, hi) + (base.imag if dst == "bool" else 0)).astype(src)
    x = base[:, ::-2]
    want = np.empty(x.shape, dst)
    R.cast(x, want)
    out = host.empty(x.shape, dst)
    be.cast(host.view(base, x), out)
    close(host.get(out), want, dst)


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("dtype", ALL)
def test_copy_into_view(be, host, dtype, view):
    """copy writes into any view (also of 8/16-bit elements packed in words) and nothing else."""
    if dtype not in _dtypes(be):
        pytest.skip(f"{dtype} unsupported here")
    rng = np.random.default_rng(3)
    shape, fn = VIEWS[view]
    if view in ("broadcast", "bcast_col"):
        pytest.skip("a broadcast view is never written")
    dbase, sbase = random_array(rng, shape, dtype), random_array(rng, shape, dtype)
    dst_view, src_view = fn(dbase), fn(sbase)
    dst = host.view(dbase, dst_view)
    src = host.view(sbase, src_view[::-1] if src_view.ndim else src_view)
    be.copy(src, dst)
    expect = dbase.copy()
    fn(expect)[...] = src_view[::-1] if src_view.ndim else src_view
    close(be.to_host(whole(dst, dbase)), expect, dtype)


@pytest.mark.parametrize("compute", [False, True], ids=["copy_buffer_to_buffer", "compute"])
@pytest.mark.parametrize("dtype", ALL)
def test_copy_within_one_buffer(be, host, monkeypatch, dtype, compute):
    if dtype not in _dtypes(be):
        pytest.skip(f"{dtype} unsupported here")
    monkeypatch.setattr(Kn, "COMPUTE_COPY", compute)  # the copy that unaliases the source
    base = random_array(np.random.default_rng(5), (20,), dtype)
    whole = host.put(base)
    lo = type(whole)(whole.buffer, whole.dtype, (10,), (1,), 0, 10, True)
    hi = type(whole)(whole.buffer, whole.dtype, (10,), (-1,), 19, 10, False)
    be.copy(hi, lo)
    expect = base.copy()
    expect[:10] = base[10:][::-1]
    close(be.to_host(whole), expect, dtype)


# (elements, source offset, destination offset): whole vec4 words, a partial last one, offsets
# on and off the 16-byte grid (the one-word-a-thread kernel) and off the 4-byte grid (8/16-bit
# dtypes: the dtype's own kernel).
CONTIGUOUS_COPIES = [(1, 0, 0), (3, 1, 2), (5, 0, 4), (1023, 4, 0), (1024, 0, 0), (4099, 4, 8), (4099, 1, 3),
                     (5000, 2, 6), (70001, 0, 0)]  # fmt: skip


@pytest.mark.parametrize("compute", [False, True], ids=["copy_buffer_to_buffer", "compute"])
@pytest.mark.parametrize("n,so,do", CONTIGUOUS_COPIES)
@pytest.mark.parametrize("dtype", ALL)
def test_contiguous_copy_roads(be, host, monkeypatch, dtype, n, so, do, compute):
    """A contiguous copy, by either road, moves exactly the view's bits (NaN payloads, -0.0)."""
    if dtype not in _dtypes(be):
        pytest.skip(f"{dtype} unsupported here")
    monkeypatch.setattr(Kn, "COMPUTE_COPY", compute)
    rng = np.random.default_rng(n + so + do)
    sbase, dbase = random_array(rng, (n + so + 5,), dtype), random_array(rng, (n + do + 5,), dtype)
    src, dst = host.view(sbase, sbase[so : so + n]), host.view(dbase, dbase[do : do + n])
    be.copy(src, dst)
    expect = dbase.copy()
    expect[do : do + n] = sbase[so : so + n]
    got = be.to_host(whole(dst, dbase))
    np.testing.assert_array_equal(got.view(np.uint8), expect.view(np.uint8))


@pytest.mark.parametrize("compute", [False, True, None], ids=["copy_buffer_to_buffer", "compute", "by_adapter"])
def test_compute_copy_keeps_the_pass_open(be, host, monkeypatch, compute):
    """The compute road records a dispatch into the open compute pass; copy_buffer_to_buffer
    must end it. By default only a GPU takes the compute road."""
    monkeypatch.setattr(Kn, "COMPUTE_COPY", compute)
    a, b = host.put(np.arange(4096, dtype=np.float32)), host.empty((4096,), np.float32)
    be.fill(b, 1.0)
    assert be.rt._pass is not None
    be.copy(a, b)
    assert (be.rt._pass is not None) == (not be.rt.software if compute is None else compute)
    np.testing.assert_array_equal(host.get(b), np.arange(4096, dtype=np.float32))


@pytest.mark.parametrize("dtype", ALL)
def test_fill(be, host, dtype):
    if dtype not in _dtypes(be):
        pytest.skip(f"{dtype} unsupported here")
    base = random_array(np.random.default_rng(1), (7, 9), dtype)
    value = {"b": True, "i": -5, "u": 200 if dtype == "uint8" else 7, "f": -1.5, "c": -1.5 + 2j}[np.dtype(dtype).kind]
    ref = host.view(base, base[1::3, ::-2])
    be.fill(ref, value)
    expect = base.copy()
    expect[1::3, ::-2] = value
    close(be.to_host(whole(ref, base)), expect, dtype)


@pytest.mark.parametrize("op,bound", [("sin", 1.0), ("cos", 1.0), ("tan", 2.0)])
def test_trig_float32_every_magnitude(be, host, op, bound):
    """sin/cos/tan float32 within 1 ulp (tan 2) of NumPy's float64 result for every finite |x|:
    Payne-Hanek reduction in integers to hi + lo (common.wgsl). The former Cody-Waite reduction,
    folded by Mesa's NIR, was 16000 ulp off in cos(16099.092) and meaningless past 8192 pi; the
    reduced argument rounded to one float32 left sin and cos 2.4 ulp off."""
    rng = np.random.default_rng(3)
    mag = 10 ** rng.uniform(-3, np.log10(3.4e38), 1 << 16)
    x = np.concatenate([mag * rng.choice([-1, 1], mag.size), [16099.092, 25735.927, 3.4028235e38, 1e-3, 0.7853982,
                                                              np.pi / 2, np.pi, 0.0, -0.0]])  # fmt: skip
    x = x.astype(np.float32)
    out = host.empty(x.shape, np.float32)
    be.unary(op, host.put(x), out)
    got = host.get(out).astype(np.float64)
    want = getattr(np, op)(x.astype(np.float64))
    ulp = np.abs(got - want) / np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    worst = int(np.argmax(ulp))
    assert ulp[worst] <= bound, f"{op}({x[worst]!r}) = {got[worst]!r}, NumPy {want[worst]!r}: {ulp[worst]:.2f} ulp"
    assert np.array_equal(np.signbit(got[-2:]), [False, True]) or op == "cos"


#: float32 unary functions: (lowest, highest) magnitude exponent (base 10) and sign of the inputs, and the
#: bound in ulp (measured on lavapipe with 2^18 inputs, plus a margin; docs/api.md "webgpu float32").
_DOMAINS = {
    "acos": (-8, 0, "+-", 1.5), "asin": (-8, 0, "+-", 3), "atanh": (-30, 0, "+-", 1.5), "acosh": (0, 30, "+", 3),
    "log": (-38, 38, "+", 1), "log2": (-38, 38, "+", 1.5), "log10": (-38, 38, "+", 1.2), "log1p": (-30, 38, "+-", 2),
    "exp": (-30, 1.95, "+-", 1.5), "expm1": (-30, 1.95, "+-", 3), "sinh": (-30, 1.95, "+-", 2),
    "cosh": (-30, 1.95, "+-", 2), "tanh": (-30, 1.3, "+-", 1.5), "atan": (-30, 30, "+-", 1),
    "asinh": (-30, 30, "+-", 2), "sqrt": (-38, 38, "+", 1), "erf": (-30, 1, "+-", 3), "gelu": (-30, 1.08, "+-", 6),
    "silu": (-30, 2.03, "+-", 3),
}  # fmt: skip


def _flushed(be, ref, args, got):
    """Where a float32 result may be a flushed one, on an adapter whose float32 arithmetic flushes
    subnormals to zero (be.flushes_f32_subnormals, probed at creation; WGSL permits it): an input
    or the exact result subnormal, and ``got`` the result for the inputs flushed to (signed) zero,
    or zero for a subnormal result. Nowhere on any other adapter (lavapipe keeps every bound)."""
    if not be.flushes_f32_subnormals:
        return np.zeros(got.shape, bool)
    tiny = float(np.finfo(np.float32).tiny)
    ins = [np.asarray(a, np.float64) for a in args]
    sub = [(a != 0) & (np.abs(a) < tiny) for a in ins]
    with np.errstate(all="ignore"):
        alt = ref(*[np.where(s, np.copysign(0.0, a), a) for s, a in zip(sub, ins)])
        want = ref(*ins)
    same = (got == alt) | (np.isnan(got) & np.isnan(alt))
    return (np.logical_or.reduce(sub) & same) | ((want != 0) & (np.abs(want) < tiny) & (got == 0))


@pytest.mark.parametrize("op", sorted(_DOMAINS))
def test_float32_functions_ulp_bounds(be, host, op):
    """Every float32 function over its whole domain (log-uniform magnitudes) within its bound in ulp of
    NumPy's float64 result (at most 3; NumPy's own float32 tolerances are 2 to 4): the conformance
    tolerance (3e-5) alone let log1p(6e-8) be 8e6 ulp off, after Mesa's NIR folded (1 + x) - 1 (see
    f_opaque in common.wgsl)."""
    lo, hi, signs, bound = _DOMAINS[op]
    rng = np.random.default_rng(4)
    x = 10 ** rng.uniform(lo, hi, 1 << 16)
    if "-" in signs:
        x = x * rng.choice([-1, 1], x.size)
    x = np.clip(x, -1 if op == "log1p" else None, 1 if op in ("acos", "asin", "atanh") else None).astype(np.float32)
    out = host.empty(x.shape, np.float32)
    be.unary(op, host.put(x), out)
    got = host.get(out).astype(np.float64)
    keep = ~_flushed(be, OPS[op].reference, [x], got)
    x, got = x[keep], got[keep]
    with np.errstate(all="ignore"):
        want = OPS[op].reference(x.astype(np.float64))
        finite = np.isfinite(want.astype(np.float32))
    assert np.array_equal(finite, np.isfinite(got)), op
    ulp = np.abs(got[finite] - want[finite]) / np.spacing(np.abs(want[finite]).astype(np.float32)).astype(np.float64)
    worst = int(np.argmax(ulp))
    where = f"{op}({x[finite][worst]!r}): {got[finite][worst]!r}, NumPy {want[finite][worst]!r}"
    assert ulp[worst] <= bound, f"{where}: {ulp[worst]:.2f} ulp"


def test_float32_subnormals_through_integers(be, host):
    """Subnormal inputs of sqrt and the logarithms and subnormal results of exp and pow are handled
    in integers (bits, shifts), so they hold their bounds on every adapter, one that flushes float32
    subnormals (an H100: exp(-87.5) was 0, sqrt(1.2e-38) the input, log(1e-40) -inf) included."""
    rng = np.random.default_rng(8)
    bits = np.concatenate([rng.integers(1, 1 << 23, 1 << 14), [1, 2, 3, 0x7FFFFF, 0x400000]]).astype(np.uint32)
    sub = bits.view(np.float32)

    def run(op, *args):
        out = host.empty(args[0].shape, np.float32)
        (be.unary if len(args) == 1 else be.binary)(op, *[host.put(a) for a in args], out)
        return host.get(out).astype(np.float64)

    def ulp(got, want):
        return np.abs(got - want) / np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)

    for op, bound in [("sqrt", 1), ("log", 1), ("log2", 1.5), ("log10", 1.2)]:
        assert ulp(run(op, sub), OPS[op].reference(sub.astype(np.float64))).max() <= bound, op
        assert np.isnan(run(op, -sub)).all(), op
    x = np.linspace(-104.0, -87.0, 1 << 14).astype(np.float32)
    assert ulp(run("exp", x), np.exp(x.astype(np.float64))).max() <= 1.5
    y = rng.uniform(-1.5, 1.5, sub.size).astype(np.float32)
    with np.errstate(all="ignore"):
        want = np.power(sub.astype(np.float64), y.astype(np.float64))
        finite = np.isfinite(want.astype(np.float32))
    got = run("pow", sub, y)
    assert np.array_equal(np.isfinite(got), finite) and ulp(got[finite], want[finite]).max() <= 2
    x, y = np.float32([1e-40, -1e-40, -1e-40, 2.0, -2.0, 0.0]), np.float32([3.0, 3.0, 2.0, 1e-40, 1e-40, -1e-40])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(run("pow", x, y), np.power(x, y))


def test_pow_float32_within_2_ulp(be, host):
    """pow float32 through a logarithm to about 2^-40 (f_pow_log) and an exact y * ln|x|: within
    2 ulp of NumPy's float64 result where exp(y ln x) in float32 was up to 133 ulp off (|y ln x|
    near 88), and near x = 1 with huge y, subnormal x, negative x with integer y."""
    rng = np.random.default_rng(6)
    n = 1 << 15
    cases = [(10 ** rng.uniform(-38, 38, n), rng.uniform(-3, 3, n)), (10 ** rng.uniform(-10, 10, n), rng.uniform(-8, 8, n)),
             (1 + rng.uniform(-1e-3, 1e-3, n), rng.uniform(-3e4, 3e4, n)), (1 + rng.uniform(-1e-6, 1e-6, n), rng.uniform(-3e7, 3e7, n)),
             (10 ** rng.uniform(-45, -38, n), rng.uniform(-1, 1, n)), (-(10 ** rng.uniform(-5, 5, n)), rng.integers(-20, 20, n))]  # fmt: skip
    a = np.concatenate([c[0] for c in cases]).astype(np.float32)
    b = np.concatenate([c[1] for c in cases]).astype(np.float32)
    out = host.empty(a.shape, np.float32)
    be.binary("pow", host.put(a), host.put(b), out)
    got = host.get(out).astype(np.float64)
    keep = ~_flushed(be, np.power, [a, b], got)
    a, b, got = a[keep], b[keep], got[keep]
    with np.errstate(all="ignore"):
        want = np.power(a.astype(np.float64), b.astype(np.float64))
        finite = np.isfinite(want.astype(np.float32))
    assert np.array_equal(finite, np.isfinite(got))
    ulp = np.abs(got[finite] - want[finite]) / np.spacing(np.abs(want[finite]).astype(np.float32)).astype(np.float64)
    worst = int(np.argmax(ulp))
    assert ulp[worst] <= 2, f"pow({a[finite][worst]!r}, {b[finite][worst]!r}): {ulp[worst]:.2f} ulp"


@pytest.mark.parametrize("exponent", [0.5, 2.0, 3.0, -1.0, -2.5, 1.5, 0.1, 7.0, -0.5, 11.0])
def test_pow_float16_every_base_within_one_ulp(be, host, exponent):
    """float16 pow is computed in float32 and rounded once more, as NumPy does: every one of the
    65536 float16 bases against NumPy, at most 1 ulp apart, same specials and signs."""
    if not any(d.name == "float16" for d in be.dtypes):
        pytest.skip("adapter without shader-f16")
    a = np.arange(65536, dtype=np.uint16).view(np.float16)
    out = host.empty(a.shape, np.float16)
    be.binary("pow", host.put(a), host.put(np.full_like(a, exponent)), out)
    got = host.get(out)
    with np.errstate(all="ignore"):
        want = np.power(a, np.float16(exponent))
    same = (got.view(np.uint16) == want.view(np.uint16)) | (np.isnan(got) & np.isnan(want))
    near = (np.abs(got.view(np.int16).astype(np.int32) - want.view(np.int16).astype(np.int32)) <= 1) & (
        np.signbit(got) == np.signbit(want)) & np.isfinite(got) & np.isfinite(want)  # fmt: skip
    bad = ~(same | near)
    assert not bad.any(), f"pow(x, {exponent}) float16: {np.c_[a[bad], got[bad], want[bad]][:5]}"
