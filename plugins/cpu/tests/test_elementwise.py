"""unary, binary, where and cast against ndplane.backend.reference, on every dtype and layout."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from cpu_helpers import COMPLEX, DTYPES, FLOATS, INTS, assert_close, native_threads

import ndplane
from ndplane._elementwise import OPS
from ndplane.backend import BINARY_OPS, COMPARISON_OPS, UNARY_OPS, Ref
from ndplane.backend import reference as K

BOOL_OUT = {"isfinite", "isinf", "isnan", "logical_not", "signbit"} | COMPARISON_OPS | {
    "logical_and", "logical_or", "logical_xor"}  # fmt: skip
REAL_OUT = {"abs", "real", "imag"}
# Ops whose integer inputs must stay small (shifts, powers) to mean anything.
SMALL = {"pow", "bitwise_left_shift", "bitwise_right_shift"}


def result_dtype(op: str, dtype: ndplane.DType) -> ndplane.DType:
    if op in BOOL_OUT:
        return ndplane.bool
    if op in REAL_OUT and dtype.kind == "complex":
        return {ndplane.complex64: ndplane.float32, ndplane.complex128: ndplane.float64}[dtype]
    return dtype


def ulps_for(op: str, dtype: ndplane.DType) -> float:
    # NumPy's own SIMD transcendental loops and glibc differ by a few ULP; float16
    # rounds the same float32 result; complex functions go through different formulas.
    # (square and multiply: a*c - b*d cancels, so the error is an ulp of |z|^2, not of the part)
    if dtype.kind == "complex" and op in {"pow", "sign", "divide", "reciprocal", "square", "multiply"}:
        return 8
    if op in OPS and OPS[op].accuracy == "transcendental":
        return 16
    return 2


def reference_unary(op, x, out_dtype):
    want = np.empty(x.shape, out_dtype.dtype)
    try:
        K.unary(op, x, want)
    except TypeError:
        return None
    return want


@pytest.mark.parametrize("op", sorted(UNARY_OPS))
def test_unary_every_dtype_and_layout(h, op):
    supported = [d for d in DTYPES if h.be.supports(op, d)]
    assert supported, op
    for dtype in supported:
        for name, view, base in h.layouts((5, 7), dtype):
            want = reference_unary(op, view, result_dtype(op, dtype))
            if want is None:
                continue  # NumPy has no loop; the native loop is still exercised below
            out = h.empty(view.shape, result_dtype(op, dtype))
            h.be.unary(op, h.put(view, base), out)
            assert_close(h.get(out), want, f"{op} {dtype.name} {name}", ulps_for(op, dtype))


@pytest.mark.parametrize("op", sorted(BINARY_OPS))
def test_binary_every_dtype_and_layout(h, op):
    supported = [d for d in DTYPES if h.be.supports(op, d)]
    assert supported, op
    for dtype in supported:
        small = op in SMALL
        a_layouts = list(h.layouts((4, 9), dtype, small=small))
        for (na, va, ba), (nb, vb, bb) in zip(a_layouts, a_layouts[1:] + a_layouts[:1]):
            if op == "pow" and dtype.kind in ("int", "uint"):
                vb = np.abs(vb) if dtype.kind == "int" else vb
            want = np.empty(va.shape, result_dtype(op, dtype).dtype)
            try:
                K.binary(op, va, vb, want)
            except TypeError:
                continue
            out = h.empty(va.shape, result_dtype(op, dtype))
            rb = h.put(np.ascontiguousarray(vb)) if op == "pow" else h.put(vb, bb)
            h.be.binary(op, h.put(va, ba), rb, out)
            assert_close(h.get(out), want, f"{op} {dtype.name} {na}/{nb}", ulps_for(op, dtype))


@pytest.mark.parametrize("op", sorted(BINARY_OPS))
def test_binary_long_runs_with_a_reversed_operand(h, op):
    """A reversed operand (x[::-1]) beside a forward one, another reversed one or a broadcast
    element, over runs longer than a block (256) and a partial last block: the result of the
    same operands made contiguous first."""
    for dtype in DTYPES:
        if not h.be.supports(op, dtype):
            continue
        out_dtype = result_dtype(op, dtype)
        for n in (1, 255, 257, 1000):
            small = op in SMALL or op == "pow"
            ba, bb = h.data((n,), dtype, small=small), h.data((n,), dtype, small=small)
            if op == "pow" and dtype.kind in ("int", "uint"):
                bb = np.abs(bb) % 4
            one = np.ascontiguousarray(bb[:1])
            cases = {"a reversed": ((ba[::-1], ba), (bb, bb)), "b reversed": ((ba, ba), (bb[::-1], bb)),
                     "both reversed": ((ba[::-1], ba), (bb[::-1], bb)),
                     "a reversed, b broadcast": ((ba[::-1], ba), (np.broadcast_to(one, (n,)), one)),
                     "a broadcast, b reversed": ((np.broadcast_to(one, (n,)), one), (bb[::-1], bb))}  # fmt: skip
            for name, ((va, base_a), (vb, base_b)) in cases.items():
                want = h.empty((n,), out_dtype)
                h.be.binary(op, h.put(np.ascontiguousarray(va)), h.put(np.ascontiguousarray(vb)), want)
                got = h.empty((n,), out_dtype)
                h.be.binary(op, h.put(va, base_a), h.put(vb, base_b), got)
                assert_close(h.get(got), h.get(want), f"{op} {dtype.name} {name} {n}", ulps_for(op, dtype))


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "maximum", "less",
                                "floor_divide", "remainder", "pow", "bitwise_and", "atan2"])  # fmt: skip
@pytest.mark.parametrize("side", ["left", "right"])
def test_binary_python_scalar(h, op, side):
    for dtype in DTYPES:
        if not h.be.supports(op, dtype):
            continue
        a = h.data((3, 5), dtype, small=True)
        scalar = {"bool": True, "int": 3, "uint": 3, "float": 2.5, "complex": 1.5 - 2j}[dtype.kind]
        if op == "pow" and dtype.kind in ("int", "uint"):
            a = np.abs(a) if side == "right" else a
            scalar = 2
        args = (scalar, a) if side == "left" else (a, scalar)
        want = np.empty(a.shape, result_dtype(op, dtype).dtype)
        try:
            K.binary(op, *args, want)
        except TypeError:
            continue
        out = h.empty(a.shape, result_dtype(op, dtype))
        ra = h.put(a)
        h.be.binary(op, *((scalar, ra) if side == "left" else (ra, scalar)), out)
        assert_close(h.get(out), want, f"{op} {dtype.name} scalar {side}", ulps_for(op, dtype))


@pytest.mark.parametrize("op", sorted(UNARY_OPS))
def test_unary_float_result_independent_of_layout_and_position(h, op):
    """Real floating elements all take the vectorised loop (unary_loop in elementwise.cc): a
    strided operand, or an element in the scalar remainder of a vector loop, would otherwise
    call glibc's scalar functions (float32 tanh: 2.1 ulp, over NumPy's tolerance). So every
    layout, and every position, gives the contiguous result bit for bit."""
    for dtype in (ndplane.float32, ndplane.float64):
        if not h.be.supports(op, dtype):
            continue
        out_dtype = result_dtype(op, dtype)
        whole = h.empty((37, 19), out_dtype)
        for name, view, base in h.layouts((37, 19), dtype):
            flat = np.ascontiguousarray(view)
            h.be.unary(op, h.put(flat), whole)
            want = h.get(whole)
            got = h.empty(view.shape, out_dtype)
            h.be.unary(op, h.put(view, base), got)
            assert h.get(got).tobytes() == want.tobytes(), f"{op} {dtype.name} {name}"
            for n in (1, 3, 7, 15):  # each a remainder of every vector width
                part = h.empty((n,), out_dtype)
                h.be.unary(op, h.put(flat.reshape(-1)[-n:]), part)
                assert h.get(part).tobytes() == want.reshape(-1)[-n:].tobytes(), f"{op} {dtype.name} {n}"


def _same(got: np.ndarray, want: np.ndarray, what: str, ulps: float | None) -> None:
    """Bit for bit, or within ``ulps``."""
    if ulps is not None:
        assert_close(got, want, what, ulps)
    else:
        assert got.tobytes() == want.tobytes(), what


@pytest.mark.parametrize("op", sorted(UNARY_OPS))
def test_unary_long_runs_reversed_strided_and_partial(h, op):
    """Runs longer than a block (256) and a partial last block, read forward, reversed (x[::-1]:
    staged by reversed_into) and with a step, written forward or reversed, give the contiguous
    result: bit for bit, but within the op's ulps for complex (a complex element at the scalar
    remainder of a vector loop takes glibc's scalar function, elsewhere the vector one)."""
    for dtype in DTYPES:
        if not h.be.supports(op, dtype):
            continue
        out_dtype = result_dtype(op, dtype)
        ulps = ulps_for(op, dtype) if dtype.kind == "complex" else None
        for n in (1, 255, 256, 257, 1000):
            base = h.data((2 * n + 1,), dtype)
            flat = np.ascontiguousarray(base[:n])
            whole = h.empty((n,), out_dtype)
            h.be.unary(op, h.put(flat), whole)
            want = h.get(whole)
            for name, view, want_view in (("reversed", base[n - 1 :: -1], want[::-1]),
                                          ("step2", base[: 2 * n : 2], None)):  # fmt: skip
                src = np.ascontiguousarray(view)
                if want_view is None:  # the step's own contiguous result
                    h.be.unary(op, h.put(src), whole)
                    want_view = h.get(whole).copy()
                got = h.empty((n,), out_dtype)
                h.be.unary(op, h.put(view, base), got)
                _same(h.get(got), np.ascontiguousarray(want_view), f"{op} {dtype.name} {name} {n}", ulps)
            # written reversed: out[::-1] = op(x)
            back = h.empty((n,), out_dtype)
            rev = Ref(back.buffer, back.dtype, (n,), (-1,), n - 1, n, n == 1)
            h.be.unary(op, h.put(flat), rev)
            _same(h.get(back)[::-1], want, f"{op} {dtype.name} out reversed {n}", ulps)


def test_float16_computes_in_float32(h):
    a = np.array([0.1, 1000.0, 65504.0, 1e-7], np.float16)
    b = np.array([0.2, 0.3, 65504.0, 3.0], np.float16)
    out = h.empty(a.shape, ndplane.float16)
    h.be.binary("add", h.put(a), h.put(b), out)
    with np.errstate(over="ignore"):
        want = a + b  # NumPy rounds float32 sums to half too
    np.testing.assert_array_equal(h.get(out), want)
    h.be.binary("nextafter", h.put(a), h.put(b), out)
    np.testing.assert_array_equal(h.get(out), np.nextafter(a, b))


def test_integer_edge_cases_wrap_like_numpy(h):
    for dtype in INTS:
        info = np.iinfo(dtype.dtype)
        a = np.array([info.min, info.max, info.min, -1 if info.min else 0, 7, info.max],
                     dtype.dtype)  # fmt: skip
        b = np.array([-1 if info.min else 1, 1, 0, info.min, 0, 2], dtype.dtype)
        for op in ["add", "subtract", "multiply", "floor_divide", "remainder",
                   "bitwise_left_shift", "bitwise_right_shift", "maximum", "minimum"]:  # fmt: skip
            want = np.empty(a.shape, dtype.dtype)
            K.binary(op, a, b, want)
            out = h.empty(a.shape, dtype)
            h.be.binary(op, h.put(a), h.put(b), out)
            np.testing.assert_array_equal(h.get(out), want, err_msg=f"{op} {dtype.name}")
        for op in ["negative", "abs", "square", "sign"]:
            want = np.empty(a.shape, dtype.dtype)
            K.unary(op, a, want)
            out = h.empty(a.shape, dtype)
            h.be.unary(op, h.put(a), out)
            np.testing.assert_array_equal(h.get(out), want, err_msg=f"{op} {dtype.name}")


def test_negative_integer_powers(h):
    a = np.array([1, -1, -1, 2, 0, -3, 5], np.int32)
    b = np.array([-3, -3, -2, -1, 3, 3, 0], np.int32)
    want = np.empty(a.shape, np.int32)
    K.binary("pow", a, b, want)
    out = h.empty(a.shape, ndplane.int32)
    h.be.binary("pow", h.put(a), h.put(b), out)
    np.testing.assert_array_equal(h.get(out), want)


def _ulps32(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|got - exact| in float32 ulps of the float64 ``exact`` (the subnormal spacing below); 0 where
    both are the same infinity or both NaN, inf where only one is."""
    with np.errstate(over="ignore"):
        rounded = exact.astype(np.float32)
    spacing = np.spacing(np.abs(rounded), dtype=np.float32).astype(np.float64)
    spacing = np.where(np.isinf(rounded), np.spacing(np.float32(3e38)), spacing)
    same = (got == rounded) | (np.isnan(got) & np.isnan(exact))
    with np.errstate(invalid="ignore"):
        err = np.abs(got.astype(np.float64) - exact) / spacing
    return np.where(same, 0.0, np.where(np.isnan(err), np.inf, err))


def test_pow_float32_kernel_on_every_road(h):
    """float32 pow (the backend's own powf_core where the FMA is an instruction, libm's pow for the
    lanes it refuses): results of every magnitude -- overflow, underflow, subnormal -- within 1 ulp
    of the float64 power, negative bases, refused lanes (0, subnormal, inf, NaN, |b| >= 2^40)
    scattered through blocks of 256, operands contiguous, strided, reversed and broadcast, and the
    output over either operand (the refused lanes are redone from the operands afterwards)."""
    rng = np.random.default_rng(11)
    n = 3001
    a = rng.integers(0x00800000, 0x7F800000, n, dtype=np.uint32).view(np.float32)
    t = rng.uniform(-160, 140, n)  # 2^t from past float32's largest down through the subnormals
    b = (t / np.log2(a.astype(np.float64))).astype(np.float32)
    b[: n // 3] = rng.uniform(-4, 4, n // 3).astype(np.float32)
    neg = rng.random(n) < 0.3
    a[neg] = -a[neg]
    b[neg] = np.where(rng.random(neg.sum()) < 0.8, np.round(b[neg]), b[neg])  # mostly integers: signs
    where = rng.choice(n, 60, replace=False)
    refused = np.array([0.0, -0.0, 1e-40, -1e-40, np.inf, -np.inf, np.nan, 3.0], np.float32)
    a[where[:40]] = refused[np.arange(40) % 8]
    b[where[40:]] = np.array([2.0**40, -(2.0**41), np.inf, -np.inf, np.nan], np.float32)[np.arange(20) % 5]
    a[:256][a[:256] < 0] *= -1  # a first block without negative bases
    with np.errstate(all="ignore"):
        special = np.power(a, b)  # NumPy's kind of result on special values

    def check(got: np.ndarray, ea: np.ndarray, eb: np.ndarray, road: str) -> None:
        with np.errstate(all="ignore"):
            want = np.power(ea.astype(np.float64), eb.astype(np.float64))
        err = _ulps32(got, want)
        i = int(np.argmax(err))
        assert err[i] <= 1.0, f"pow float32 {road}: {err[i]:.2f} ulp at {ea.flat[i]!r} ** {eb.flat[i]!r}"

    ra, rb = h.put(a), h.put(b)
    out = h.empty((n,), ndplane.float32)
    h.be.binary("pow", ra, rb, out)
    got = h.get(out)
    check(got, a, b, "contiguous")
    assert ((np.signbit(got) == np.signbit(special)) | np.isnan(special)).all()  # -0.0, -inf as NumPy
    inexact = np.isfinite(special) & (special != 0)
    assert ((got == special) | (np.isnan(got) & np.isnan(special)) | inexact).all()
    big = np.empty(3 * n, np.float32)
    big[::3] = a[::-1]
    b2 = np.repeat(b, 2)
    h.be.binary("pow", h.put(big[3 * (n - 1) :: -3], big), h.put(b2[::2], b2), out)
    check(h.get(out), a, b, "reversed and strided")

    def broadcast(value: np.float32) -> Ref:
        one = np.array([value], np.float32)
        return h.put(np.broadcast_to(one, (n,)), one)

    for k, base in enumerate(np.array([-2.5, 0.7, 0.0], np.float32)):
        h.be.binary("pow", broadcast(base), rb, out)
        check(h.get(out), np.full(n, base), b, f"broadcast base {base}")
        expo = b[where[40]] if k == 0 else np.float32(1.7 + k)
        h.be.binary("pow", ra, broadcast(expo), out)
        check(h.get(out), a, np.full(n, expo), f"broadcast exponent {expo}")
    for i, road in ((0, "out over the base"), (1, "out over the exponent")):
        operands = [h.put(a), h.put(b)]
        h.be.binary("pow", *operands, operands[i])
        check(h.get(operands[i]), a, b, road)


@pytest.mark.parametrize("dtype", [ndplane.float16, ndplane.float32, ndplane.float64], ids=lambda d: d.name)
def test_real_pow_signs_and_fast_exponents(h, dtype):
    """pow of real floats as C99 Annex F (the Array API's special cases) on every road -- Python
    scalar, exponent array, strided operands: negative bases through pow(|a|, b) with the sign
    of odd integer exponents, NaN for non-integers. A scalar 2 is x * x bit for bit, 3 within
    1 ulp of the exact cube."""
    nan, inf = float("nan"), float("inf")
    bases = [0.0, -0.0, inf, -inf, nan, 1.0, -1.0, -2.5, 2.5, 0.75, -0.75, 3.0, -3.0, 1e-3, -7.0]
    exps = [2.0, 0.5, 3.0, -3.0, -1.0, -2.0, 0.0, 1.0, 2.5, -0.5, inf, -inf, nan, 1e30, 9.0]
    np_dt = dtype.dtype
    a = np.array(bases, np_dt)
    for e in exps:
        with np.errstate(all="ignore"):
            want = np.array([math_pow(float(x), e) for x in a], np_dt)
        b = np.full(a.shape, e, np_dt)
        roads = {
            "scalar": (h.put(a), np_dt.type(e).item()),
            "exponent array": (h.put(a), h.put(b)),
            "strided": (h.put(np.repeat(a, 2)[::2]), h.put(np.repeat(b, 3)[::3])),
        }
        for road, operands in roads.items():
            out = h.empty(a.shape, dtype)
            h.be.binary("pow", *operands, out)
            got = h.get(out)
            for x, g, w in zip(a, got, want):
                assert (np.isnan(g) and np.isnan(w)) or (g == w and np.signbit(g) == np.signbit(w)) or (
                    np.isfinite(w) and abs(float(g) - float(w)) <= 4 * float(np.spacing(np_dt.type(abs(w))))
                ), f"pow({x!r}, {e!r}) {dtype.name} {road}: {g!r}, want {w!r}"
    x = (np.random.default_rng(7).standard_normal((40, 33)) * 3).astype(np_dt)
    out = h.empty(x.shape, dtype)
    h.be.binary("pow", h.put(x), 2.0, out)
    assert h.get(out).tobytes() == (x * x).tobytes()  # the correctly rounded square, bit for bit
    h.be.binary("pow", h.put(x), 3.0, out)
    exact = np.array([float(Fraction(float(v)) ** 3) for v in x.reshape(-1)]).astype(np_dt).reshape(x.shape)
    ulps = np.abs(h.get(out).astype(np.float64) - exact) / np.spacing(np.abs(exact)).astype(np.float64)
    assert ulps.max() <= 1.0 and (ulps == 0).mean() > 0.98, f"x ** 3 {dtype.name}: {ulps.max()} ulp"


def math_pow(x: float, e: float) -> float:
    """C99's pow in float64 (Python's math.pow raises where C returns inf or NaN)."""
    odd = math.isfinite(e) and e == int(e) and int(e) % 2 == 1
    try:
        return math.pow(x, e)
    except ValueError:  # a pole (0 ** negative) or a negative base with a non-integer exponent
        return (math.copysign(float("inf"), x) if odd else float("inf")) if x == 0 else float("nan")
    except OverflowError:
        return math.copysign(float("inf"), x) if odd else float("inf")


def test_every_op_has_every_dtype_numpy_has(h):
    # The native tables must not silently miss a loop the reference can run.
    for op in sorted(UNARY_OPS):
        for dtype in FLOATS + COMPLEX + INTS:
            x = h.data((4,), dtype, special=False)
            if reference_unary(op, x, result_dtype(op, dtype)) is not None:
                assert h.be.supports(op, dtype), (op, dtype)


def test_large_arrays_use_threads_and_match(h):
    n = 300_000
    a = h.data((n,), ndplane.float32)
    b = h.data((n,), ndplane.float32)
    out = h.empty((n,), ndplane.float32)
    h.be.binary("multiply", h.put(a), h.put(b), out)
    np.testing.assert_array_equal(h.get(out), a * b)
    t = np.ascontiguousarray(h.data((600, 500), ndplane.float64))
    out = h.empty((500, 600), ndplane.float64)
    h.be.unary("negative", h.put(t.T, t), out)
    np.testing.assert_array_equal(h.get(out), -t.T)


# Sizes past every op's thread grain (grains follow bytes moved and cost per element: the
# longest, a 1-byte unary op's, is 196608 elements): odd, so the last chunk is ragged.
_PARALLEL_N = 400_003


@pytest.mark.parametrize("kind", ["unary", "binary"])
@pytest.mark.parametrize("dtype", [ndplane.bool, ndplane.int8, ndplane.uint16, ndplane.int64, ndplane.float16,
                                   ndplane.float32, ndplane.float64, ndplane.complex64], ids=lambda d: d.name)  # fmt: skip
def test_every_op_split_across_threads(h, kind, dtype):
    # Every op on 4 threads, contiguous and reversed: the chunk plan and each op's grain.
    with native_threads(4):
        ops = UNARY_OPS if kind == "unary" else BINARY_OPS
        base = h.data((_PARALLEL_N,), dtype, small=True)
        other = h.data((_PARALLEL_N,), dtype, small=True)
        for op in sorted(o for o in ops if h.be.supports(o, dtype)):
            positive = op == "pow" and dtype.kind == "int"  # no negative integer powers
            src, b = (np.abs(base), np.abs(other)) if positive else (base, other)
            for name, a in (("contiguous", src), ("reversed", src[::-1])):
                want = np.empty(a.shape, result_dtype(op, dtype).dtype)
                try:
                    K.unary(op, a, want) if kind == "unary" else K.binary(op, a, b, want)
                except TypeError:
                    continue
                out = h.empty(a.shape, result_dtype(op, dtype))
                ra = h.put(a, src) if name == "reversed" else h.put(a)
                if kind == "unary":
                    h.be.unary(op, ra, out)
                else:
                    h.be.binary(op, ra, h.put(b), out)
                assert_close(h.get(out), want, f"{op} {dtype.name} {name}", ulps_for(op, dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_where(h, dtype):
    for (na, va, ba), (nc, vc, bc) in zip(h.layouts((6, 5), dtype), h.layouts((6, 5), ndplane.bool)):
        vb = h.data((6, 5), dtype)
        want = np.empty(va.shape, dtype.dtype)
        K.where(vc, va, vb, want)
        out = h.empty(va.shape, dtype)
        h.be.where(h.put(vc, bc), h.put(va, ba), h.put(vb), out)
        np.testing.assert_array_equal(h.get(out), want, err_msg=f"{na}/{nc}")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_where_random_masks_and_broadcast_values(h, dtype):
    """where's contiguous loops (a bit select per element, elementwise.cc where_contig): a
    random mask over an odd length, each operand contiguous or one broadcast value (x[m] = 0
    is where(m, 0, x)), bit for bit (NaN payloads and the sign of zero kept)."""
    n = 1037
    rng = np.random.default_rng(5)
    mask = rng.random(n) < 0.5
    a, b = h.data((n,), dtype), h.data((n,), dtype)
    for a_one in (False, True):
        for b_one in (False, True):
            va = np.broadcast_to(a[:1], (n,)) if a_one else a
            vb = np.broadcast_to(b[:1], (n,)) if b_one else b
            want = np.where(mask, va, vb)
            out = h.empty((n,), dtype)
            h.be.where(h.put(mask), h.put(va, a), h.put(vb, b), out)
            got = h.get(out)
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=f"{a_one} {b_one}")


@pytest.mark.parametrize("src", DTYPES, ids=lambda d: d.name)
def test_cast_every_pair(h, src):
    for dst in DTYPES:
        for name, view, base in h.layouts((3, 6), src, special=False):
            if src.kind in ("float", "complex") and dst.kind in ("int", "uint"):
                # NOTE: out-of-range float -> int is undefined in C and NumPy; keep values in range.
                base = np.clip(np.round(base.real if src.kind == "complex" else base), -100, 100).astype(src.dtype)
                view = base
            want = np.empty(view.shape, dst.dtype)
            K.cast(view, want)
            out = h.empty(view.shape, dst)
            h.be.cast(h.put(view, base), out)
            assert_close(h.get(out), want, f"{src.name}->{dst.name} {name}", ulps=1)


def test_cast_specials_to_float(h):
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 1e300, 1e-300, 70000.0], np.float64)
    for dst in (ndplane.float16, ndplane.float32, ndplane.bool, ndplane.complex64):
        want = np.empty(x.shape, dst.dtype)
        K.cast(x, want)
        out = h.empty(x.shape, dst)
        h.be.cast(h.put(x), out)
        np.testing.assert_array_equal(h.get(out), want, err_msg=dst.name)


_STAGED = [(ndplane.float16, d) for d in DTYPES if d != ndplane.float16] + [
    (d, ndplane.float16) for d in DTYPES if d != ndplane.float16] + [
    (ndplane.bool, d) for d in (ndplane.float64, ndplane.complex64, ndplane.complex128)]  # fmt: skip


@pytest.mark.parametrize("pair", _STAGED, ids=lambda p: f"{p[0].name}-{p[1].name}")
def test_staged_casts_match_numpy_bit_for_bit(h, pair):
    """The casts that run through float32 blocks (every float16 cast; bool to float64 and
    complex) at lengths with a partial block and a partial vector, contiguous and reversed,
    with float16's edges: ties that two roundings get wrong (1 + 2^-11 + 2^-40 is nearer
    1 + 2^-10 than 1), the overflow edge 65520, subnormals, signed zeros, inf and NaN."""
    src, dst = pair
    rng = np.random.default_rng(11)
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1 + 2**-11 + 2**-40, 1 + 2**-11 - 2**-40, 1 + 2**-11,
                      -(1 + 2**-11 + 2**-40), 65504, 65519.99, 65520, 2**-24, 2**-25, 2**-25 + 2**-50, 3 * 2**-26,
                      1e300, 5e-324, 2.0**24 + 1, 70000.0])  # fmt: skip
    for n in (7, 256, 1000 * 257 + 13):
        if src.kind == "bool":
            base = rng.random(n) < 0.5
        elif src.kind in ("int", "uint"):
            info = np.iinfo(src.dtype)
            base = rng.integers(max(info.min, -(1 << 20)), min(info.max, 1 << 20), n, dtype=src.dtype, endpoint=True)
        else:
            v = np.resize(np.concatenate([edges, rng.standard_normal(997) * 300]), n)
            if dst.kind in ("int", "uint"):  # NOTE: out-of-range float -> int is undefined (C, NumPy)
                v = np.clip(np.nan_to_num(np.round(v)), -100, 100)
            with np.errstate(over="ignore", invalid="ignore"):
                base = (v + 1j * v[::-1] if src.kind == "complex" else v).astype(src.dtype)
        for name, view in (("contiguous", base), ("reversed", base[::-1])):
            want = np.empty(view.shape, dst.dtype)
            with np.errstate(all="ignore"):
                K.cast(view, want)
            out = h.empty(view.shape, dst)
            h.be.cast(h.put(view, base), out)
            np.testing.assert_array_equal(h.get(out), want, err_msg=f"{src.name}->{dst.name} {name} n={n}")


@pytest.mark.parametrize("dtype", [ndplane.float32, ndplane.float64, ndplane.int32, ndplane.uint8,
                                   ndplane.float16, ndplane.complex64], ids=lambda d: d.name)  # fmt: skip
def test_binary_row_kernel_layouts(h, dtype):
    # 2-D plans take the row kernel: row and column broadcasts, slices, flips, both
    # below and above the thread threshold, and with too few rows to split (flat path).
    for shape in [(300, 257), (7, 5), (3, 30001), (40, 1), (0, 5), (5, 0)]:
        a_base = h.data((shape[0], 2 * shape[1] + 1), dtype)
        row = h.data((1, shape[1]), dtype)
        col = h.data((shape[0], 1), dtype)
        flip = h.data(shape[::-1], dtype)
        operands = {
            "row": (np.broadcast_to(row, shape), row),
            "col": (np.broadcast_to(col, shape), col),
            "slice": (a_base[:, 1::2], a_base),
            "flipped.T": (flip[::-1, ::-1].T, flip),
        }
        for op in ["add", "multiply", "maximum", "less"]:
            if not h.be.supports(op, dtype):
                continue
            for na, (va, ba) in operands.items():
                for nb, (vb, bb) in operands.items():
                    want = np.empty(shape, result_dtype(op, dtype).dtype)
                    try:
                        K.binary(op, va, vb, want)
                    except TypeError:
                        break
                    out = h.empty(shape, result_dtype(op, dtype))
                    h.be.binary(op, h.put(va, ba), h.put(vb, bb), out)
                    assert_close(h.get(out), want, f"{op} {dtype.name} {shape} {na}/{nb}")


def test_binary_row_kernel_0d_and_negative_row(h):
    x = np.array(2.5, np.float32)
    out = h.empty((), ndplane.float32)
    h.be.binary("add", h.put(x), h.put(x), out)
    assert h.get(out) == np.float32(5.0)
    a = h.data((500, 300), ndplane.float32)
    r = h.data((300,), ndplane.float32)
    rv = r[::-1]
    out = h.empty(a.shape, ndplane.float32)
    h.be.binary("subtract", h.put(a), h.put(np.broadcast_to(rv, a.shape), r), out)
    np.testing.assert_array_equal(h.get(out), a - rv)
    h.be.binary("subtract", h.put(np.broadcast_to(rv, a.shape), r), h.put(a), out)
    np.testing.assert_array_equal(h.get(out), rv - a)


@pytest.mark.parametrize("op", ["logical_and", "logical_or", "logical_xor", "logical_not", "add", "multiply",
                                "maximum", "minimum", "equal", "bitwise_invert"])  # fmt: skip
def test_bool_ops_on_long_rows(h, op):
    # bools are read as bytes in the vector loops: long rows (vector body and tail), a
    # broadcast scalar either side, and a strided operand, against NumPy
    x, y = h.data((3, 1001), ndplane.bool), h.data((3, 1001), ndplane.bool)
    unary = op in UNARY_OPS
    ref = {"bitwise_invert": np.invert}.get(op, getattr(np, op))
    cases = [(x, x, y, y), (x, x, y[:1, :1], y), (x[:, ::2], x, y[:, ::2], y), (x[:1, :1], x, y, y)]
    for va, ba, vb, bb in cases:
        va_, vb_ = np.broadcast_to(va, np.broadcast_shapes(va.shape, vb.shape)), np.broadcast_to(vb, np.broadcast_shapes(va.shape, vb.shape))
        want = ref(va_) if unary else ref(va_, vb_)
        out = h.empty(want.shape, ndplane.bool)
        ra = h.ref_of(va_, ba, h.upload(ba))
        if unary:
            h.be.unary(op, ra, out)
        else:
            h.be.binary(op, ra, h.ref_of(vb_, bb, h.upload(bb)), out)
        np.testing.assert_array_equal(h.get(out), want, err_msg=f"{op} {va.shape} {vb.shape}")


@pytest.mark.parametrize("dtype", [ndplane.float32, ndplane.float64], ids=lambda d: d.name)
@pytest.mark.parametrize("op", ["remainder", "floor_divide"])
def test_divmod_of_floats_bit_for_bit(h, dtype, op):
    """Float remainder and floor_divide take an FMA-based fmod (q = trunc(a / b), a - q * b in
    one fused multiply-add) with libm's fmod for the elements it flags: quotients next to
    integers and past 2^53, zeros of both signs, infinities, NaN, b == 0, subnormals;
    contiguous, strided and broadcast operands. Every bit as the reference's npy_divmod on
    libm's fmod."""
    rng = np.random.default_rng(17)
    dt = dtype.dtype
    fi = np.finfo(dt)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 3.0, -2.5, 0.1, fi.max, -fi.max, fi.tiny,
                        fi.smallest_subnormal, -fi.smallest_subnormal, 1e30], dt)  # fmt: skip
    b = rng.uniform(0.1, 5.0, 4000).astype(dt) * rng.choice([-1, 1], 4000).astype(dt)
    q = rng.integers(-(10**6), 10**6, 4000).astype(dt)
    pairs = [
        (np.repeat(special, special.size), np.tile(special, special.size)),
        (rng.uniform(-1e3, 1e3, 4000).astype(dt), rng.uniform(-10, 10, 4000).astype(dt)),
        ((q * b).astype(dt), b),  # quotients at and next to integers
        ((np.nextafter(q * b, dt.type(np.inf))).astype(dt), b),
        ((rng.standard_normal(4000) * 1e20).astype(dt), rng.uniform(-3, 3, 4000).astype(dt)),  # past 2^53
    ]
    for a, bb in pairs:
        with np.errstate(all="ignore"):
            for av, bv in [(a, bb), (a[::-1], bb[::-1]), (a[::3], bb[::-1][::3]), (a, bb[:1])]:
                av, bv = np.broadcast_arrays(av, bv)
                want = np.empty(av.shape, dt)
                K.binary(op, av, bv, want)
                out = h.empty(av.shape, dtype)
                h.be.binary(op, h.put(av), h.put(bv), out)
                got = h.get(out)
                same = (got.view(np.uint8) == want.view(np.uint8)).reshape(got.shape + (-1,)).all(-1)
                assert (same | (np.isnan(got) & np.isnan(want))).all(), (av[~same][:4], bv[~same][:4], got[~same][:4])
