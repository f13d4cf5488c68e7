"""Elementwise functions and operators, differential against NumPy.

Every unary and binary function of the namespace runs on every dtype the device
supports that the op accepts, on drawn shapes and layouts, with nan/inf/-0.0 in
float data; binary ops also broadcast, mix dtypes and take Python scalars on
either side. Inputs whose result is undefined (integer overflow, division by
zero, out-of-range shifts, negative integer powers) are not drawn.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ndplane as nd
from ndplane import _dispatch, _elementwise
from ndplane.backend import ops
from ndplane.conformance import _helpers as h

NUM = ("int", "uint", "float", "complex")
REAL = ("int", "uint", "float")
INT = ("int", "uint")
INTB = ("int", "uint", "bool")
FLOAT = ("float", "complex")
ANY = ("bool", "int", "uint", "float", "complex")

# name: (numpy reference, accepted kinds, result rule, exact), from each op's row in the core
# (``ndplane._elementwise.OPS``); the tests add their own oracles where NumPy's answer is not
# the standard's (see _floor_divide, _pow, _sign below) and ``positive``.
# rule: "same" | "float" (integers computed in the default real floating dtype) | "bool" | "real"
#   ("realfloat" rows: real floating inputs only, tested as "same")
# exact: compare with NumPy in the result dtype bit for bit, instead of a float64 reference.
_ORACLES: dict[str, Callable[..., Any] | None] = {
    "sign": None, "floor_divide": None, "reciprocal": lambda x: np.divide(1, x), "round": np.round,
    "real": np.real, "imag": np.imag,
}  # fmt: skip


def _table(arity: int) -> dict[str, tuple[Callable[..., Any] | None, tuple[str, ...], str, bool]]:
    table = {}
    for op in _elementwise.OPS.values():
        if op.arity != arity:
            continue
        kinds = ("float",) if op.rule == "realfloat" else tuple(k for k in ANY if k in op.kinds)
        rule = "same" if op.rule == "realfloat" else op.rule
        table[op.name] = (_ORACLES.get(op.name, op.reference), kinds, rule, op.accuracy == "exact")
    return table


UNARY = {**_table(1), "positive": (np.positive, NUM, "same", True)}
BINARY = _table(2)

def _floor_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # The standard's special cases, where NumPy differs: inf // finite is +-inf (NumPy: nan) and
    # finite // inf of the other sign is -0 (NumPy: -1); true division gives both.
    out = np.floor_divide(a, b)
    if out.dtype.kind != "f":
        return out
    return np.where(np.isinf(a) != np.isinf(b), np.divide(a, b), out)


def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # The standard's special cases for x1 = -inf or -0 and x2 > 0 not an odd integer (+inf, +0),
    # where NumPy's scalar-exponent x ** 0.5 takes sqrt (nan, -0).
    out = np.power(a, b)
    if out.dtype.kind != "f":
        return out
    fix = (b > 0) & (np.floor(b) != b) | (b > 0) & (np.remainder(b, 2) == 0)
    return np.where(fix & np.isneginf(a), np.inf, np.where(fix & (a == 0), 0.0, out)).astype(out.dtype)


def _sign(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "c":
        mag = np.abs(x)
        return np.where(mag == 0, 0, x / np.where(mag == 0, 1, mag))
    return np.sign(x)


# ---------------------------------------------------------------------------
# domains: which values an op is fed
# ---------------------------------------------------------------------------
FLOAT_RANGE = {op.name: op.domain for op in _elementwise.OPS.values() if op.domain is not None}
COMPLEX_RANGE = (-3.0, 3.0)


def _int_bounds(op: str, dtype: nd.DType, pos: int) -> tuple[int | None, int | None, bool]:
    """(lo, hi, nonzero) for operand ``pos`` of ``op`` on an integer dtype: no overflow, no UB."""
    info = np.iinfo(h.np_dtype(dtype))
    lo, hi, bits = int(info.min), int(info.max), info.bits
    signed = dtype.kind == "int"
    if op in ("abs", "negative", "sign", "positive") and signed:
        return lo + 1, hi, False
    if op in ("add", "subtract"):
        return (lo // 2, hi // 2, False) if signed else (None, None, False)
    if op in ("multiply", "square"):
        m = math.isqrt(hi)
        return (-m if signed else 0), m, False
    if op in ("floor_divide", "remainder"):
        return (lo + 1, hi, False) if pos == 0 else (lo + 1, hi, True)
    if op == "bitwise_left_shift":
        return (0, 15, False) if pos == 0 else (0, bits - 5, False)
    if op == "bitwise_right_shift":
        return (None, None, False) if pos == 0 else (0, bits - 1, False)
    if op == "pow":
        return ((-3 if signed else 0), 3, False) if pos == 0 else (0, 4, False)
    if rule_is_float(op):
        return -20, 20, False
    return None, None, False


def rule_is_float(op: str) -> bool:
    spec = UNARY.get(op) or BINARY.get(op)
    return spec is not None and spec[2] == "float"


def operand_values(op: str, dtype: nd.DType, pos: int = 0) -> h.Values:
    kind = dtype.kind
    lo: float | None
    hi: float | None
    if kind in ("int", "uint"):
        lo, hi, nonzero = _int_bounds(op, dtype, pos)
        return h.Values(lo, hi, nonzero=nonzero)
    if kind == "complex":
        lo, hi = (-2.0, 2.0) if op == "pow" else COMPLEX_RANGE
        return h.Values(lo, hi)
    if kind == "float" and op in ("floor_divide", "remainder"):
        # NOTE: quarter-integers keep x1 / x2 exact, so floor(x1 / x2) has one right answer
        # (NumPy computes it from fmod; a backend may compute floor of the quotient).
        return h.Values(-16, 16, grid=0.25)
    if kind == "float":
        span = FLOAT_RANGE.get(op, (-100.0, 100.0))
        lo, hi = span[pos] if isinstance(span[0], tuple) else span  # one range per operand
        return h.Values(lo, hi)
    return h.Values()


# ---------------------------------------------------------------------------
# references
# ---------------------------------------------------------------------------


def result_dtype(op: str, dtype: nd.DType, device: nd.Device, table: dict[str, Any]) -> nd.DType:
    rule = table[op][2]
    if rule == "bool":
        return nd.bool
    if rule == "real":
        return h.REAL_OF.get(dtype, dtype)
    if rule == "float" and dtype.kind in INT:
        return h.default(device, "real floating")
    return dtype


def reference(op: str, table: dict[str, Any], result: nd.DType, *args: Any) -> tuple[np.ndarray, bool]:
    """NumPy's answer as an array of ``result``'s dtype, and whether to compare exactly."""
    fn, _, _, exact = table[op]
    fn = {"sign": _sign, "floor_divide": _floor_divide, "pow": _pow}.get(op, fn)
    args = tuple(np.asarray(a) for a in args)
    compute = args[0].dtype
    if compute.kind == "c" and op in ("abs", "sign"):
        exact = False  # |z| is a rounded hypot
    exact = exact or result.kind in ("bool", "int", "uint")
    if not exact:
        compute = np.complex128 if compute.kind == "c" else np.float64
    conv = [a.astype(compute) for a in args]
    with np.errstate(all="ignore"):
        out = fn(*conv)
    return h.to_result(out, result), exact


def _accepts(kinds: tuple[str, ...], dtype: nd.DType) -> bool:
    return dtype.kind in kinds


def _dtypes_for(device: nd.Device, kinds: tuple[str, ...], op: str) -> list[nd.DType]:
    return [d for d in h.supported(device) if d.kind in kinds]


def _signed_zeros(op: str, dtype: nd.DType) -> bool:
    return dtype.kind == "float" and op in (
        "abs", "negative", "positive", "ceil", "floor", "trunc", "copysign", "conj", "real",
    )  # fmt: skip


# Rows with no Array API name (``_elementwise.NOT_EXPORTED``), called by their public name.
PUBLIC_NAMES: dict[str, Callable[..., nd.Array]] = {
    "erf": nd.special.erf, "gelu": nd.nn.functional.gelu, "sigmoid": nd.nn.functional.sigmoid,
    "silu": nd.nn.functional.silu,
    "bce_with_logits": lambda x, t: nd.nn.functional.binary_cross_entropy_with_logits(x, t, reduction="none"),
}  # fmt: skip


def _call(op: str, *args: Any) -> nd.Array:
    fn = PUBLIC_NAMES.get(op)
    return (fn if fn is not None else getattr(nd, op))(*args)


# ---------------------------------------------------------------------------
# tests
# ---------------------------------------------------------------------------


def test_tables_cover_the_namespace() -> None:
    assert set(UNARY) - {"positive"} == ops.UNARY_OPS and set(BINARY) == ops.BINARY_OPS
    assert all(callable(getattr(nd, name)) for name in {**UNARY, **BINARY} if name not in PUBLIC_NAMES)
    assert set(PUBLIC_NAMES) == _elementwise.NOT_EXPORTED and not any(hasattr(nd, n) for n in PUBLIC_NAMES)


def _accepted(device: nd.Device, op: str, table: dict[str, Any]) -> list[nd.DType]:
    dtypes = [d for d in h.supported(device) if d.kind in table[op][1]]
    if not dtypes:
        pytest.skip(f"{device} supports no dtype {op} accepts")
    return dtypes


@pytest.mark.parametrize("op", sorted(UNARY))
@h.hyp()
@given(layout=h.layouts())
def test_unary(device: nd.Device, op: str, layout: h.Layout) -> None:
    """Every accepted dtype the device supports, on one drawn layout per example."""
    for dtype in _accepted(device, op, UNARY):
        a = layout.build(device, dtype, operand_values(op, dtype))
        result = result_dtype(op, dtype, device, UNARY)
        expected, exact = reference(op, UNARY, result, a.ref)
        h.assert_same(_call(op, a.x), expected, result, exact=exact, signed_zeros=_signed_zeros(op, dtype),
                      msg=f"{op}({dtype.name}, layout {a.layout}): ")  # fmt: skip


_SIGMOID_EDGES = [0.0, -0.0, 1e-3, -1e-3, 0.5, -0.5, 2.0, -2.0, 9.0, -9.0, 17.0, -17.0, 30.0, -30.0,
                  88.0, -88.0, 104.0, -104.0, 710.0, -710.0, 745.0, -745.0, 800.0, -800.0,
                  math.inf, -math.inf, math.nan]  # fmt: skip


def _at_sigmoids_edges(device: nd.Device, name: str, value: Callable[[np.ndarray, np.ndarray], np.ndarray],
                       slope: Callable[[np.ndarray, np.ndarray], np.ndarray],
                       check: Callable[[np.ndarray, np.ndarray, str], None]) -> None:  # fmt: skip
    """``nn.functional.<name>`` at ``_SIGMOID_EDGES`` in every real floating dtype, contiguous and
    strided, against ``value(x, s)`` of float64 ``x`` and ``s = 1 / (1 + exp(-x))``; ``check(x,
    got, dtype name)`` on each result; the gradient against ``slope(x, s)`` at the finite points."""
    fn = getattr(nd.nn.functional, name)
    for dtype in h.supported(device, ("float",)):
        x = np.asarray(_SIGMOID_EDGES, h.np_dtype(dtype))
        with np.errstate(all="ignore"):
            x64 = x.astype(np.float64)
            s = 1.0 / (1.0 + np.exp(-x64))
            want = value(x64, s)
        xs = nd.asarray(np.stack([x, x[::-1]], axis=1), device=device)[:, 0]  # a strided view
        for arr, how in ((nd.asarray(x, device=device), "contiguous"), (xs, "strided")):
            got = fn(arr)
            h.assert_same(got, h.to_result(want, dtype), dtype, msg=f"{name}({dtype.name}, {how}): ")
            check(x, h.host(got), dtype.name)
        if dtype is nd.float16:
            continue
        finite = np.isfinite(x)
        leaf = nd.asarray(x[finite], device=device)
        leaf.requires_grad = True
        nd.sum(fn(leaf)).backward()
        assert leaf.grad is not None
        h.assert_same(leaf.grad, h.to_result(slope(x64[finite], s[finite]), dtype), dtype,
                      msg=f"{name}'({dtype.name}): ")  # fmt: skip


def test_sigmoid_at_the_edges(device: nd.Device) -> None:
    """``nn.functional.sigmoid`` (the native kernel where the backend has one, else the core's
    decomposition) in every real floating dtype, contiguous and strided, against float64
    ``1 / (1 + exp(-x))``: no overflow at large |x| (exactly 1, and 0 or tiny), +-inf, nan, -0.0;
    its gradient ``out * (1 - out)`` is finite there (0 at the extremes, 0.25 at zero)."""

    def check(x: np.ndarray, got: np.ndarray, dt: str) -> None:
        v = got[~np.isnan(x)]
        assert ((v >= 0) & (v <= 1)).all(), f"sigmoid({dt}) left [0, 1]: {v}"
        assert v[x[~np.isnan(x)] >= 88].tolist() == [1.0] * int((x >= 88).sum()), f"sigmoid({dt})"

    _at_sigmoids_edges(device, "sigmoid", lambda x, s: s, lambda x, s: s * (1 - s), check)


def test_silu_at_the_edges(device: nd.Device) -> None:
    """``nn.functional.silu`` (native or ``x * sigmoid(x)``) in every real floating dtype,
    contiguous and strided, at sigmoid's edges against float64 ``x * sigmoid(x)``: x at large
    positive x, a tiny or zero product of the right sign at large negative x, nan at -inf (as
    ``x * sigmoid(x)`` gives) and nan; its gradient ``s + x s (1 - s)`` at the finite points."""

    def check(x: np.ndarray, got: np.ndarray, dt: str) -> None:
        v, xf = got[np.isfinite(x)], x[np.isfinite(x)]
        assert np.signbit(v[xf < 0]).all() and not np.signbit(v[xf > 0]).any(), f"silu({dt}): {v}"

    _at_sigmoids_edges(device, "silu", lambda x, s: x * s, lambda x, s: s + x * s * (1 - s), check)


@st.composite
def _two_layouts(draw: Any) -> tuple[h.Layout, h.Layout]:
    shape = draw(h.shapes())
    s1, s2 = draw(h.mutually_broadcastable(shape))
    return draw(h.layouts(s1)), draw(h.layouts(s2))


@pytest.mark.parametrize("op", sorted(BINARY))
@h.hyp()
@given(layouts=_two_layouts())
def test_binary(device: nd.Device, op: str, layouts: tuple[h.Layout, h.Layout]) -> None:
    """Every accepted dtype, two drawn layouts that broadcast together."""
    for dtype in _accepted(device, op, BINARY):
        a = layouts[0].build(device, dtype, operand_values(op, dtype, 0))
        b = layouts[1].build(device, dtype, operand_values(op, dtype, 1))
        result = result_dtype(op, dtype, device, BINARY)
        expected, exact = reference(op, BINARY, result, a.ref, b.ref)
        h.assert_same(_call(op, a.x, b.x), expected, result, exact=exact, signed_zeros=_signed_zeros(op, dtype),
                      msg=f"{op}({dtype.name}; layouts {a.layout}, {b.layout}): ")  # fmt: skip


def _scalar_for(op: str, dtype: nd.DType, pos: int) -> st.SearchStrategy:
    """A Python scalar of the array's kind that the op accepts at ``pos``."""
    if dtype.kind == "bool":
        return st.booleans()
    if dtype.kind in INT:
        lo, hi, nonzero = _int_bounds(op, dtype, pos)
        info = np.iinfo(h.np_dtype(dtype))
        lo = max(info.min, -100 if lo is None else lo)
        hi = min(info.max, 100 if hi is None else hi)
        return st.integers(lo, hi).filter(lambda v: v != 0 or not nonzero)
    if dtype.kind == "complex":
        return st.builds(complex, st.floats(-2, 2), st.floats(-2, 2))
    if op in ("floor_divide", "remainder"):
        return st.sampled_from([0.25, -0.5, 2.0, -3.0, 0.0, math.inf, math.nan])
    return st.one_of(st.floats(-4, 4).map(lambda v: float(np.asarray(v, h.np_dtype(dtype)))),
                     st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan]))  # fmt: skip


@pytest.mark.parametrize("op", sorted(BINARY))
@h.hyp()
@given(data=st.data())
def test_binary_python_scalar(device: nd.Device, op: str, data: st.DataObject) -> None:
    """``op(x, s)`` and ``op(s, x)`` with a Python scalar of the array's kind: the array's dtype."""
    dtypes = _dtypes_for(device, BINARY[op][1], op)
    if not dtypes:
        pytest.skip(f"{device} supports no dtype {op} accepts")
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    pos = data.draw(st.integers(0, 1), label="scalar position")
    s = data.draw(_scalar_for(op, dtype, pos), label="scalar")
    a = data.draw(h.arrays(device, dtype, values=operand_values(op, dtype, 1 - pos)), label="x")
    result = result_dtype(op, dtype, device, BINARY)
    sref = np.asarray(s, h.np_dtype(dtype))
    args_nd = (a.x, s) if pos == 1 else (s, a.x)
    args_np = (a.ref, sref) if pos == 1 else (sref, a.ref)
    expected, exact = reference(op, BINARY, result, *args_np)
    expected = np.broadcast_to(expected, a.ref.shape)
    h.assert_same(_call(op, *args_nd), expected, result, exact=exact,
                  msg=f"{op} with scalar {s!r} at {pos} ({dtype.name}): ")  # fmt: skip


# (Python scalar kind, array kind) -> the default dtype kind the result takes
_HIGHER_SCALARS = [
    ("int", "bool", 3, "integral"), ("float", "bool", 1.5, "real floating"),
    ("float", "int", 1.5, "real floating"), ("float", "uint", -0.5, "real floating"),
    ("complex", "int", 1 + 2j, "complex floating"),
]  # fmt: skip


@pytest.mark.parametrize(("skind", "akind", "scalar", "default_kind"), _HIGHER_SCALARS)
@pytest.mark.parametrize("op", ["add", "multiply", "subtract"])
def test_python_scalar_of_higher_kind(device: nd.Device, skind: str, akind: str, scalar: Any,
                                      default_kind: str, op: str) -> None:  # fmt: skip
    """A scalar of a higher kind than the array makes the result the device's default of that kind."""
    dtypes = h.supported(device, (akind,))
    result = h.default(device, default_kind)
    if not dtypes or result not in device.backend.dtypes:
        pytest.skip(f"{device} lacks a {akind} dtype")
    host = np.array([0, 1, 1, 0, 2][: 4 if akind == "bool" else 5]).astype(h.np_dtype(dtypes[0]))
    x = nd.asarray(host, device=device)
    fn = BINARY[op][0]
    assert fn is not None
    for args_nd, args_np in (((x, scalar), (host, scalar)), ((scalar, x), (scalar, host))):
        with np.errstate(all="ignore"):
            expected = fn(*[np.asarray(v).astype(h.np_dtype(result)) for v in args_np])
        h.assert_same(_call(op, *args_nd), expected, result, msg=f"{op}{args_np}: ")


def _binary_pairs(device: nd.Device) -> list[tuple[nd.DType, nd.DType]]:
    ds = h.supported(device)
    return [(a, b) for a in ds for b in ds if a is not b and h.promotes(a, b)]



_SAME_KIND_EXPECTED = {
    ("int8", "uint8"): "int16", ("int16", "uint16"): "int32", ("int32", "uint32"): "int64",
    ("int8", "uint16"): "int32", ("uint8", "int64"): "int64", ("int8", "int16"): "int16",
    ("uint8", "uint32"): "uint32", ("float16", "float32"): "float32", ("float32", "float64"): "float64",
    ("complex64", "complex128"): "complex128", ("float64", "complex64"): "complex128",
    ("float32", "complex64"): "complex64", ("bool", "bool"): "bool",
}  # fmt: skip


@pytest.mark.parametrize("pair", sorted(_SAME_KIND_EXPECTED), ids="-".join)
def test_promotion_table(pair: tuple[str, str]) -> None:
    """The Array API promotion table within a kind (no backend involved)."""
    a, b = (h.BY_NAME[n] for n in pair)
    expected = h.BY_NAME[_SAME_KIND_EXPECTED[pair]]
    assert nd.result_type(a, b) is expected
    assert nd.result_type(b, a) is expected


@pytest.mark.parametrize("op", ["add", "multiply", "equal", "less", "maximum", "divide"])
@h.hyp(scale=2)
@given(data=st.data())
def test_binary_mixed_dtypes(device: nd.Device, op: str, data: st.DataObject) -> None:
    """Operands of two dtypes: the result has the promoted dtype and NumPy's values in it."""
    kinds = BINARY[op][1]
    pairs = [(a, b) for a, b in _binary_pairs(device) if a.kind in kinds and b.kind in kinds]
    if op in ("less", "maximum"):
        pairs = [(a, b) for a, b in pairs if "complex" not in (a.kind, b.kind)]
    pairs = [(a, b) for a, b in pairs if nd.result_type(a, b) in device.backend.dtypes]
    if not pairs:
        pytest.skip(f"{device} has no two dtypes that promote")
    da, db = data.draw(st.sampled_from(pairs), label="dtypes")
    promoted = nd.result_type(da, db)
    shape = data.draw(h.shapes(max_dims=3), label="shape")
    s1, s2 = data.draw(h.mutually_broadcastable(shape))
    a = data.draw(h.arrays(device, da, s1, h.Values(-50, 50)), label="x1")
    b = data.draw(h.arrays(device, db, s2, h.Values(-50, 50)), label="x2")
    result = result_dtype(op, promoted, device, BINARY)
    pa, pb = a.ref.astype(h.np_dtype(promoted)), b.ref.astype(h.np_dtype(promoted))
    if op == "multiply" and promoted.kind in INT:
        pa, pb = pa % 8, pb % 8
        a_x = nd.remainder(nd.astype(a.x, promoted), 8)
        b_x = nd.remainder(nd.astype(b.x, promoted), 8)
    else:
        a_x, b_x = a.x, b.x
    expected, exact = reference(op, BINARY, result, pa, pb)
    h.assert_same(_call(op, a_x, b_x), expected, result, exact=exact, msg=f"{op}({da.name}, {db.name}): ")


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_rejects_other_kinds(device: nd.Device, op: str) -> None:
    kinds = UNARY[op][1]
    bad = [d for d in h.supported(device) if d.kind not in kinds]
    if UNARY[op][2] == "float":
        bad = [d for d in bad if d.kind != "bool"]  # bool -> default float is an ndplane extension
    if not bad:
        pytest.skip("every supported dtype is accepted")
    for dtype in bad:
        x = nd.zeros((2,), dtype=dtype, device=device)
        with pytest.raises(TypeError, match=op):
            _call(op, x)


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_rejects_other_kinds(device: nd.Device, op: str) -> None:
    kinds = BINARY[op][1]
    if kinds == ("float",):
        kinds = REAL  # integers are computed in the default float (an ndplane extension)
    bad = [d for d in h.supported(device) if d.kind not in kinds]
    if (kinds == REAL and _elementwise.OPS[op].rule == "realfloat") or op == "divide":
        bad = [d for d in bad if d.kind != "bool"]  # bool -> default float, as for integers
    if not bad:
        pytest.skip("every supported dtype is accepted")
    for dtype in bad:
        x = nd.zeros((2,), dtype=dtype, device=device)
        with pytest.raises(TypeError, match=op):
            _call(op, x, x)


# ---------------------------------------------------------------------------
# operators
# ---------------------------------------------------------------------------
OPERATORS = {
    "__add__": ("add", operator.add), "__sub__": ("subtract", operator.sub), "__mul__": ("multiply", operator.mul),
    "__truediv__": ("divide", operator.truediv), "__floordiv__": ("floor_divide", operator.floordiv),
    "__mod__": ("remainder", operator.mod), "__pow__": ("pow", operator.pow),
    "__and__": ("bitwise_and", operator.and_), "__or__": ("bitwise_or", operator.or_),
    "__xor__": ("bitwise_xor", operator.xor), "__lshift__": ("bitwise_left_shift", operator.lshift),
    "__rshift__": ("bitwise_right_shift", operator.rshift), "__eq__": ("equal", operator.eq),
    "__ne__": ("not_equal", operator.ne), "__lt__": ("less", operator.lt), "__le__": ("less_equal", operator.le),
    "__gt__": ("greater", operator.gt), "__ge__": ("greater_equal", operator.ge),
}  # fmt: skip
INPLACE = {
    "__iadd__": ("add", operator.iadd), "__isub__": ("subtract", operator.isub),
    "__imul__": ("multiply", operator.imul), "__itruediv__": ("divide", operator.itruediv),
    "__ifloordiv__": ("floor_divide", operator.ifloordiv), "__imod__": ("remainder", operator.imod),
    "__ipow__": ("pow", operator.ipow), "__iand__": ("bitwise_and", operator.iand),
    "__ior__": ("bitwise_or", operator.ior), "__ixor__": ("bitwise_xor", operator.ixor),
    "__ilshift__": ("bitwise_left_shift", operator.ilshift), "__irshift__": ("bitwise_right_shift", operator.irshift),
}  # fmt: skip


def _operator_dtypes(device: nd.Device, op: str) -> list[nd.DType]:
    return [
        d for d in _dtypes_for(device, BINARY[op][1], op) if d.kind != "complex" or op in ("add", "multiply")
    ]


@pytest.mark.parametrize("dunder", sorted(OPERATORS))
@h.hyp()
@given(data=st.data())
def test_operator(device: nd.Device, dunder: str, data: st.DataObject) -> None:
    """``x1 <op> x2``, ``x1 <op> scalar`` and the reflected ``scalar <op> x1``."""
    op, fn = OPERATORS[dunder]
    dtypes = _operator_dtypes(device, op)
    if not dtypes:
        pytest.skip(f"{device} supports no dtype {op} accepts")
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    shape = data.draw(h.shapes(max_dims=3), label="shape")
    s1, s2 = data.draw(h.mutually_broadcastable(shape))
    a = data.draw(h.arrays(device, dtype, s1, operand_values(op, dtype, 0)), label="x1")
    b = data.draw(h.arrays(device, dtype, s2, operand_values(op, dtype, 1)), label="x2")
    result = result_dtype(op, dtype, device, BINARY)
    expected, exact = reference(op, BINARY, result, a.ref, b.ref)
    h.assert_same(fn(a.x, b.x), expected, result, exact=exact, msg=f"x1 {dunder} x2: ")
    s = data.draw(_scalar_for(op, dtype, 1), label="scalar")
    expected, exact = reference(op, BINARY, result, a.ref, np.asarray(s, h.np_dtype(dtype)))
    h.assert_same(fn(a.x, s), expected, result, exact=exact, msg=f"x1 {dunder} {s!r}: ")
    s = data.draw(_scalar_for(op, dtype, 0), label="reflected scalar")
    expected, exact = reference(op, BINARY, result, np.asarray(s, h.np_dtype(dtype)), b.ref)
    expected = np.broadcast_to(expected, b.ref.shape)
    h.assert_same(fn(s, b.x), expected, result, exact=exact, msg=f"{s!r} {dunder} x2 (reflected): ")


@pytest.mark.parametrize("dunder", sorted(INPLACE))
@h.hyp()
@given(data=st.data())
def test_inplace_operator(device: nd.Device, dunder: str, data: st.DataObject) -> None:
    """``x <op>= y`` writes into x (a view: the write shows in its base) and keeps x's dtype."""
    op, fn = INPLACE[dunder]
    dtypes = [d for d in _operator_dtypes(device, op) if result_dtype(op, d, device, BINARY) is d]
    if not dtypes:
        pytest.skip(f"{device} supports no dtype {op} accepts in place")
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    shape = data.draw(h.shapes(min_dims=1, max_dims=3), label="shape")
    base_np = data.draw(h.arrays(device, dtype, (shape[0] + 1, *shape[1:]),
                                 operand_values(op, dtype, 0), broadcast=False), label="base")  # fmt: skip
    base, base_ref = base_np.x, base_np.ref.copy()
    y = data.draw(h.arrays(device, dtype, data.draw(h.broadcastable_shape(shape)), operand_values(op, dtype, 1)),
                  label="y")  # fmt: skip
    target = base[1:]
    storage_before = target._storage
    expected, exact = reference(op, BINARY, dtype, base_ref[1:], y.ref)
    use_scalar = data.draw(st.booleans(), label="scalar operand")
    if use_scalar:
        s = data.draw(_scalar_for(op, dtype, 1), label="scalar")
        expected, exact = reference(op, BINARY, dtype, base_ref[1:], np.asarray(s, h.np_dtype(dtype)))
        out = fn(target, s)
    else:
        out = fn(target, y.x)
    assert out is target, f"{dunder} must return the same array object"
    assert out._storage is storage_before
    h.assert_same(target, expected, dtype, exact=exact, msg=f"{dunder}: ")
    base_ref[1:] = expected
    h.assert_same(base, base_ref, dtype, exact=exact, msg=f"{dunder} through a view, the base: ")


# Small operands every in-place operator accepts in every dtype: no overflow (int8 ** 2 < 127),
# no division by zero, shifts inside the width.
_X_SMALL = np.array([[1, 2, 3], [4, 5, 6]])
_Y_SMALL = np.array([2, 1, 3])
_ROADS = ("contiguous", "strided", "recorded")


def _inplace_road(device: nd.Device, road: str, x: np.ndarray) -> nd.Array:
    """The in-place target holding ``x`` for one road through the dispatcher: contiguous (the
    backend's in-place kernel when it declares ``inplace``), a strided view (cast + assign), and
    a non-leaf array in the autograd graph (recorded functionally)."""
    if road == "contiguous":
        return nd.asarray(x, device=device)
    if road == "strided":
        return nd.asarray(x.T.copy(), device=device).T  # x's values in a transposed view
    leaf = nd.asarray(x, device=device)
    leaf.requires_grad = True
    return leaf * 1


@pytest.mark.parametrize("road", _ROADS)
@pytest.mark.parametrize("dunder", sorted(INPLACE))
def test_inplace_every_dtype_pair(device: nd.Device, dunder: str, road: str) -> None:
    """``x <op>= y`` for every pair of supported dtypes the op and the promotion table accept, on
    each road through the dispatcher: stored in x's dtype when the result's kind is not higher,
    a TypeError naming the operator when it is."""
    op, fn = INPLACE[dunder]
    kinds = BINARY[op][1]
    ds = [d for d in h.supported(device) if _accepts(kinds, d)]
    checked = 0
    for dx in ds:
        if road == "recorded" and dx.kind not in FLOAT:
            continue
        for dy in ds:
            if not h.promotes(dx, dy):
                continue
            promoted = nd.result_type(dx, dy)
            result = result_dtype(op, promoted, device, BINARY)
            if result not in device.backend.dtypes:
                continue
            xv, yv = _X_SMALL.astype(h.np_dtype(dx)), _Y_SMALL.astype(h.np_dtype(dy))
            target = _inplace_road(device, road, xv)
            y = nd.asarray(yv, device=device)
            label = f"{dunder} on {dx.name} with {dy.name} ({road})"
            if h.KIND_RANK[result.kind] > h.KIND_RANK[dx.kind]:
                with pytest.raises(TypeError, match=re.escape(dunder)):
                    fn(target, y)
                continue
            out = fn(target, y)
            assert out is target, f"{label}: must return the same array object"
            assert out.dtype is dx, f"{label}: dtype became {out.dtype.name}"
            np_result = h.np_dtype(result)
            expected, exact = reference(op, BINARY, result, xv.astype(h.np_dtype(promoted)),
                                        yv.astype(h.np_dtype(promoted)))  # fmt: skip
            expected = expected.astype(np_result).astype(h.np_dtype(dx))
            h.assert_same(target, expected, dx, exact=exact or dx.kind in INTB, msg=f"{label}: ")
            checked += 1
    if not checked and road != "recorded":
        pytest.skip(f"{device} has no dtype {op} accepts in place")


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_every_dtype_pair(device: nd.Device, op: str) -> None:
    """Every binary function on every pair of supported dtypes it accepts that promotes, on
    three roads through the dispatcher: same-shape contiguous operands (the fast path), a
    broadcast row with a transposed view (strided operands), and the operator or the reflected
    operator where one exists -- NumPy's answer computed in the promoted dtype."""
    kinds = BINARY[op][1]
    dunder = next((d for d, (o, _) in OPERATORS.items() if o == op), None)
    ds = [d for d in h.supported(device) if _accepts(kinds, d)]
    checked = 0
    for da in ds:
        for db in ds:
            if not h.promotes(da, db):
                continue
            promoted = nd.result_type(da, db)
            result = result_dtype(op, promoted, device, BINARY)
            if promoted not in device.backend.dtypes or result not in device.backend.dtypes:
                continue
            if op in ("less", "greater_equal", "maximum", "minimum") and "complex" in (da.kind, db.kind):
                continue
            xv, yv = _X_SMALL.astype(h.np_dtype(da)), _Y_SMALL.astype(h.np_dtype(db))
            pt = h.np_dtype(promoted)
            expected, exact = reference(op, BINARY, result, xv.astype(pt), yv.astype(pt))
            label = f"{op}({da.name}, {db.name})"
            x = nd.asarray(xv, device=device)
            y_full = nd.asarray(np.broadcast_to(yv, xv.shape).copy(), device=device)
            h.assert_same(_call(op, x, y_full), expected, result, exact=exact, msg=f"{label}, contiguous: ")
            xt = nd.asarray(xv.T.copy(), device=device).T
            h.assert_same(_call(op, xt, nd.asarray(yv, device=device)), expected, result, exact=exact,
                          msg=f"{label}, strided and broadcast: ")  # fmt: skip
            if dunder is not None:
                fn = OPERATORS[dunder][1]
                h.assert_same(fn(x, y_full), expected, result, exact=exact, msg=f"{label}, {dunder}: ")
                back, _ = reference(op, BINARY, result, yv.astype(pt), xv.astype(pt))
                h.assert_same(fn(nd.asarray(yv, device=device), xt), back, result, exact=exact,
                              msg=f"{label}, {dunder} with the operands swapped: ")  # fmt: skip
            checked += 1
    if not checked:
        pytest.skip(f"{device} has no dtype pair {op} accepts")


def _matches_numpy(device: nd.Device, op: str, dtype: nd.DType, rng: np.random.Generator, how: str,
                   layouts: tuple[str, ...] = ("contiguous", "transposed")) -> None:
    """``op`` on ``dtype`` arrays of drawn values, in each of ``layouts``, gives NumPy's answer."""
    table = UNARY if op in UNARY else BINARY
    result = result_dtype(op, dtype, device, table)
    args = [operand_values(op, dtype, i).sample(rng, dtype, (4, 3)) for i in range(1 + (table is BINARY))]
    expected, exact = reference(op, table, result, *args)
    for layout in layouts:
        xs = [nd.asarray(a, device=device) if layout == "contiguous"
              else nd.asarray(a.T.copy(), device=device).T for a in args]  # fmt: skip
        h.assert_same(_call(op, *xs), expected, result, exact=exact, signed_zeros=_signed_zeros(op, dtype),
                      msg=f"{op}({dtype.name}) {how}, {layout}: ")  # fmt: skip


_ROAD_PATHS = {"decomposition": _dispatch.DECOMPOSE, "host fallback": _dispatch.HOST}


@pytest.mark.parametrize(("op", "road"), [(op, road) for op in sorted(set(UNARY) | set(BINARY)) for road in _ROAD_PATHS
                                          if road != "decomposition" or op in _dispatch.DECOMPOSITIONS])
def test_every_road(device: nd.Device, op: str, road: str) -> None:
    """Each elementwise op through the roads a backend may not take by itself: the core's
    decomposition (where the op has one) and the host fallback, forced through the device's
    plan cache, on contiguous and transposed operands -- the same answers as NumPy's."""
    table = UNARY if op in UNARY else BINARY
    rng = np.random.default_rng(5)
    dtypes = _accepted(device, op, table)
    if not dtypes:
        pytest.skip(f"{device} supports no dtype {op} accepts")
    try:
        for dtype in dtypes:
            device._plans.clear()
            _, compute, res = _dispatch.plan(device, op, dtype)
            device._plans[(op, dtype)] = (_ROAD_PATHS[road], compute, res)
            with nd.fallback_mode("allow"):
                _matches_numpy(device, op, dtype, rng, f"by {road}")
    finally:
        device._plans.clear()


@pytest.mark.parametrize("op", sorted(set(UNARY) | set(BINARY)))
def test_a_backend_older_than_the_core(device: nd.Device, op: str) -> None:
    """A backend installed before the core learnt an op does not list it in ``ops``: the core
    must then take the op's decomposition or the host fallback -- never call the backend's
    kernel with an op it does not know, never crash. Simulated by hiding ``op`` from the
    backend's ``ops`` (an instance attribute shadows the class's)."""
    backend = device.backend
    if not hasattr(backend, "__dict__"):
        pytest.skip(f"{device}: the backend object takes no attributes")
    table = UNARY if op in UNARY else BINARY
    dtypes = _accepted(device, op, table)
    if not dtypes:
        pytest.skip(f"{device} supports no dtype {op} accepts")
    rng = np.random.default_rng(11)
    own = backend.__dict__.get("ops")  # NOTE: restored below, whether class or instance attribute
    backend.ops = frozenset(backend.ops) - {op}
    try:
        device._plans.clear()
        with nd.fallback_mode("allow"):
            for dtype in dtypes:
                _matches_numpy(device, op, dtype, rng, f"with {op} missing from the backend's ops", ("contiguous",))
    finally:
        if own is None:
            del backend.ops
        else:
            backend.ops = own
        device._plans.clear()


def test_inplace_rejects_broadcasting_the_target(device: nd.Device) -> None:
    x = nd.zeros((3,), device=device)
    with pytest.raises(ValueError):
        x += nd.zeros((2, 3), device=device)


def test_inplace_rejects_a_higher_kind(device: nd.Device) -> None:
    ints = h.supported(device, ("int",))
    if not ints:
        pytest.skip("no integer dtype")
    x = nd.zeros((3,), dtype=ints[0], device=device)
    with pytest.raises(TypeError):
        x += 1.5
    with pytest.raises(TypeError):
        x /= 2


@pytest.mark.parametrize("which", ["neg", "pos", "abs", "invert"])
@h.hyp()
@given(data=st.data())
def test_unary_operators(device: nd.Device, which: str, data: st.DataObject) -> None:
    ops: dict[str, tuple[str, Callable[[Any], Any]]] = {
        "neg": ("negative", operator.neg), "pos": ("positive", operator.pos),
        "abs": ("abs", abs), "invert": ("bitwise_invert", operator.invert),
    }  # fmt: skip
    op, fn = ops[which]
    dtypes = _dtypes_for(device, UNARY[op][1], op)
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    a = data.draw(h.arrays(device, dtype, values=operand_values(op, dtype)), label="x")
    result = result_dtype(op, dtype, device, UNARY)
    expected, exact = reference(op, UNARY, result, a.ref)
    h.assert_same(fn(a.x), expected, result, exact=exact, signed_zeros=_signed_zeros(op, dtype))


def test_python_scalar_out_of_range_raises(device: nd.Device) -> None:
    """An integer scalar the array's dtype cannot hold is an error, never a silent wrap."""
    small = [d for d in h.supported(device, INT) if d.itemsize == 1]
    if not small:
        pytest.skip("no 8-bit integer dtype")
    x = nd.zeros((2,), dtype=small[0], device=device)
    with pytest.raises(OverflowError):
        x + 1000


def test_signed_zero_and_specials(device: nd.Device) -> None:
    """Hand-picked IEEE cases: signs of zero, rounding halves to even, NaN propagation."""
    for dtype in h.supported(device, ("float",)):
        t = h.np_dtype(dtype)
        v = np.array([-0.0, 0.0, -0.4, 0.5, 1.5, 2.5, -2.5, np.inf, -np.inf, np.nan], t)
        x = nd.asarray(v, device=device)
        for op in ("negative", "abs", "ceil", "floor", "trunc", "round"):
            oracle = UNARY[op][0]
            assert oracle is not None
            expected = oracle(v)
            h.assert_same(_call(op, x), expected, dtype, exact=True, signed_zeros=True, msg=f"{op}: ")
        h.assert_same(nd.sign(x), np.sign(v), dtype, exact=True, signed_zeros=True, msg="sign: ")
        zeros = nd.asarray(v[:2], device=device)
        for op in ("sin", "tan", "sinh", "tanh", "asin", "atan", "asinh", "atanh", "expm1", "log1p", "sqrt"):
            if nd.isdtype(dtype, "real floating"):  # odd functions (and sqrt) keep the sign of zero
                h.assert_same(_call(op, zeros), v[:2], dtype, exact=True, signed_zeros=True, msg=f"{op}: ")
        h.assert_same(nd.signbit(x), np.signbit(v), nd.bool)
        h.assert_same(nd.copysign(nd.ones_like(x), x), np.copysign(np.ones_like(v), v), dtype,
                      exact=True, signed_zeros=True)  # fmt: skip
        h.assert_same(nd.maximum(x, 0.0), np.maximum(v, t.type(0.0)), dtype, exact=True)
        h.assert_same(nd.minimum(x, nd.flip(x)), np.minimum(v, v[::-1]), dtype, exact=True)
        with np.errstate(all="ignore"):
            prod, quot = np.multiply(v, t.type(-0.0)), np.divide(t.type(1.0), v[:2])
        h.assert_same(nd.multiply(x, -0.0), prod, dtype, exact=True, signed_zeros=True)
        h.assert_same(nd.divide(1.0, x[:2]), quot, dtype, exact=True)


def test_pow_special_cases(device: nd.Device) -> None:
    """The standard's pow special cases in every float dtype, as 0-d, 1-d and scalar exponents:
    (-inf) ** 0.5 is +inf and (-0) ** 0.5 is +0 (NumPy's sqrt shortcut gives nan and -0)."""
    xs = [-math.inf, -0.0, 0.0, math.inf, -2.0, 2.0, math.nan, 1.0, -1.0]
    ys = [0.5, 2.0, 3.0, -0.5, -3.0, 0.0, math.inf, -math.inf, math.nan]
    for dtype in h.supported(device, ("float",)):
        t = h.np_dtype(dtype)
        for xv in xs:
            for yv in ys:
                with np.errstate(all="ignore"):
                    want = _pow(np.array([xv], np.float64), np.array([yv], np.float64)).astype(t)
                x0, y0 = nd.asarray(xv, dtype=dtype, device=device), nd.asarray(yv, dtype=dtype, device=device)
                for label, got in (("0-d", x0 ** y0), ("1-d", nd.reshape(x0, (1,)) ** nd.reshape(y0, (1,))),
                                   ("scalar", x0 ** yv)):  # fmt: skip
                    h.assert_same(nd.reshape(got, (1,)), want, dtype, exact=True, signed_zeros=True,
                                  msg=f"pow({xv}, {yv}) in {dtype.name}, {label}: ")  # fmt: skip


def test_clip(device: nd.Device) -> None:
    """Scalar and array bounds (broadcast either way), one bound, min > max, a reversed view,
    NaN, infinities and signed zeros: the first bound's result takes the second in place where
    the backend can, a fresh array where it cannot (a bound that broadcasts the result wider)."""
    for dtype in h.supported(device, REAL):
        v = np.array([0, 1, 5, 9, 3, 7], h.np_dtype(dtype))
        x = nd.asarray(v, device=device)
        h.assert_same(nd.clip(x, 1, 5), np.clip(v, 1, 5), dtype)
        h.assert_same(nd.clip(x, max=4), np.minimum(v, np.asarray(4, v.dtype)), dtype)
        h.assert_same(nd.clip(x, min=4), np.maximum(v, np.asarray(4, v.dtype)), dtype)
        h.assert_same(nd.clip(x, 6, 2), np.clip(v, 6, 2), dtype)  # min > max: max wins
        h.assert_same(nd.clip(x[::-2], 2, 6), np.clip(v[::-2], 2, 6), dtype)
        lo, hi = np.array([1, 2, 3, 4, 5, 6], v.dtype), np.array([[4], [8]], v.dtype)
        got = nd.clip(x, nd.asarray(lo, device=device), nd.asarray(hi, device=device))
        h.assert_same(got, np.minimum(np.maximum(v, lo), hi), dtype)  # (2, 6): wider than x
        assert x.tolist() == v.tolist()  # never written
    for dtype in h.supported(device, ("float",)):
        f = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, -3.5, 2.5], h.np_dtype(dtype))
        y = nd.asarray(f, device=device)
        h.assert_same(nd.clip(y, -1.0, 1.0), np.clip(f, -1.0, 1.0), dtype, signed_zeros=True)
        h.assert_same(nd.clip(y, -0.0, 0.0), np.clip(f, -0.0, 0.0), dtype)


def test_integer_floor_divide_and_remainder_by_a_scalar(device: nd.Device) -> None:
    """``x // d`` and ``x % d`` for one divisor (a broadcast scalar: the modulo of
    ``Generator.integers``, index arithmetic) in every integer dtype, against NumPy: divisors
    from 1 to the dtype's maximum (powers of two, their neighbours, random ones, negative ones),
    dividends at both ends of the range, long enough for any vectorised or multiply-based road."""
    rng = np.random.default_rng(17)
    for dtype in h.supported(device, ("int", "uint")):
        npd = h.np_dtype(dtype)
        info = np.iinfo(npd)
        a = rng.integers(info.min, info.max, size=300, dtype=npd, endpoint=True)
        a[:4] = [info.min, info.max, 0, info.min + 1]
        x = nd.asarray(a, device=device)
        top = int(info.max)
        divisors = {1, 2, 3, 7, 10, 127, top, top // 2, top // 2 + 1, top // 3 + 1}
        divisors |= {1 << k for k in range(1, info.bits - (info.min < 0))} | {(1 << k) + 1 for k in range(1, info.bits - 1)}
        divisors |= {int(v) for v in rng.integers(1, top, size=8, dtype=npd, endpoint=True)}
        if info.min < 0:
            divisors |= {-1, -3, -(1 << (info.bits - 2)), int(info.min)}
        for d in sorted(v for v in divisors if info.min <= v <= top):
            dd = np.array(d, dtype=npd)
            with np.errstate(all="ignore"):
                want_q, want_r = np.floor_divide(a, dd), np.remainder(a, dd)
            h.assert_same(x // d, want_q, dtype, exact=True, msg=f"{dtype.name} // {d}: ")
            h.assert_same(x % d, want_r, dtype, exact=True, msg=f"{dtype.name} % {d}: ")
