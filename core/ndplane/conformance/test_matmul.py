"""matmul (and vecdot, tensordot on top of it), differential against NumPy.

1-D and 2-D operands, batches that broadcast, transposed operands (column-major
views reach strided backends as such), K = 0 and empty batches, in every
numeric dtype the device supports. Integer operands are small, so no product
overflows; floats are held to a float64 reference with a tolerance scaled by K.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ndplane as nd
from ndplane.conformance import _helpers as h

NUMERIC = ("int", "uint", "float", "complex")


@st.composite
def _operand_shapes(draw: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    m, k, n = draw(st.integers(0, 4)), draw(st.integers(0, 5)), draw(st.integers(0, 4))
    kind = draw(st.sampled_from(["1d@1d", "1d@2d", "2d@1d", "2d@2d", "batched", "batched@1d"]))
    if kind == "1d@1d":
        return (k,), (k,)
    if kind == "1d@2d":
        return (k,), (*draw(st.sampled_from([(), (2,)])), k, n)
    if kind == "2d@1d":
        return (m, k), (k,)
    if kind == "2d@2d":
        return (m, k), (k, n)
    batch = draw(h.shapes(min_dims=1, max_dims=2, max_side=3))
    b1, b2 = draw(h.mutually_broadcastable(batch))
    if kind == "batched@1d":
        return (*b1, m, k), (k,)
    return (*b1, m, k), (*b2, k, n)


@st.composite
def _matmul_layout(draw: Any, shape: tuple[int, ...]) -> h.Layout:
    """Often the transpose of a contiguous matrix (the BLAS-transposed case), else any layout."""
    if len(shape) >= 2 and draw(st.booleans()):
        perm = (*tuple(range(len(shape) - 2)), len(shape) - 1, len(shape) - 2)
        return h.Layout(shape, shape, [("permute", perm)], draw(st.integers(0, 2**32 - 1)))
    return draw(h.layouts(shape, depth=1))


def _tol(dtype: nd.DType, k: int, a: np.ndarray, b: np.ndarray) -> tuple[float, float] | None:
    if dtype.kind not in ("float", "complex"):
        return None
    rtol = h.TOLERANCE[dtype][0] * max(1, k) * 2
    big = max(1.0, float(np.abs(a).max(initial=0)) * float(np.abs(b).max(initial=0)))
    return rtol, rtol * big


@h.hyp(scale=3)
@given(data=st.data())
def test_matmul(device: nd.Device, data: st.DataObject) -> None:
    s1, s2 = data.draw(_operand_shapes(), label="shapes")
    l1 = data.draw(_matmul_layout(s1), label="x1 layout")
    l2 = data.draw(_matmul_layout(s2), label="x2 layout")
    k = s1[-1]
    for dtype in h.supported(device, NUMERIC):
        values = (
            h.Values(-3, 3, special=False)
            if dtype.kind in ("int", "uint")
            else h.Values(-4, 4, special=False)
        )
        a, b = l1.build(device, dtype, values), l2.build(device, dtype, values)
        exact = dtype.kind in ("int", "uint")
        expected = (
            np.matmul(a.ref, b.ref) if exact else h.to_result(np.matmul(h.wide(a.ref), h.wide(b.ref)), dtype)
        )
        h.assert_same(nd.matmul(a.x, b.x), expected, dtype, tol=_tol(dtype, k, a.ref, b.ref),
                      msg=f"matmul({dtype.name}, {s1} {a.layout} @ {s2} {b.layout}): ")  # fmt: skip
        h.assert_same(a.x @ b.x, expected, dtype, tol=_tol(dtype, k, a.ref, b.ref), msg="operator @: ")


def test_matmul_special_values(device: nd.Device) -> None:
    """NaN and inf propagate through a product as NumPy's do (no fast-math shortcuts)."""
    for dtype in h.supported(device, ("float",)):
        t = h.np_dtype(dtype)
        a = np.array([[np.nan, 1.0], [np.inf, 0.0], [1.0, 2.0]], t)
        b = np.array([[1.0, 0.0], [0.0, 1.0]], t)
        got = nd.asarray(a, device=device) @ nd.asarray(b, device=device)
        with np.errstate(all="ignore"):
            h.assert_same(got, a.astype(np.float64) @ b.astype(np.float64), dtype)


def test_matmul_mixed_dtypes(device: nd.Device) -> None:
    ints = h.supported(device, ("int",))
    floats = h.supported(device, ("float",))
    if not ints or not floats:
        pytest.skip("needs an integer and a float dtype")
    a = np.arange(6).reshape(2, 3)
    b = np.arange(3.0)
    got = nd.asarray(a.astype(h.np_dtype(ints[0])), device=device) @ nd.asarray(
        b.astype(h.np_dtype(floats[-1])), device=device
    )
    h.assert_same(got, a @ b, floats[-1])


def test_matmul_errors(device: nd.Device) -> None:
    x = nd.zeros((2, 3), device=device)
    with pytest.raises(ValueError, match="matmul"):
        x @ nd.zeros((2, 3), device=device)
    with pytest.raises(ValueError, match="matmul"):
        nd.matmul(nd.zeros((2, 2, 3), device=device), nd.zeros((3, 3, 4), device=device))
    with pytest.raises(ValueError, match="matmul"):
        nd.matmul(nd.zeros((), device=device), x)


def test_imatmul(device: nd.Device) -> None:
    """``x @= y`` writes ``x @ y`` into x: same shape and dtype, a transposed target included."""
    rng = np.random.default_rng(7)
    for dt in h.supported(device, ("int", "float")):
        npdt = h.np_dtype(dt)
        a, b = rng.integers(-3, 4, (2, 3, 4)).astype(npdt), rng.integers(-3, 4, (4, 4)).astype(npdt)
        x = nd.asarray(a, device=device)
        x @= nd.asarray(b, device=device)
        h.assert_same(x, a @ b, dt)
        t = nd.asarray(np.ascontiguousarray(a[0].T), device=device).T  # a strided target
        t @= nd.asarray(b, device=device)
        h.assert_same(t, a[0] @ b, dt)
    x = nd.zeros((2, 3), device=device)
    with pytest.raises(ValueError, match="__imatmul__"):
        x @= nd.zeros((3, 4), device=device)
    ints, floats = h.supported(device, ("int",)), h.supported(device, ("float",))
    if ints and floats:
        i = nd.zeros((2, 2), dtype=ints[0], device=device)
        with pytest.raises(TypeError, match="__imatmul__"):
            i @= nd.ones((2, 2), dtype=floats[0], device=device)


@h.hyp()
@given(layout=h.layouts(h.shapes(min_dims=1, max_dims=3)), data=st.data())
def test_vecdot(device: nd.Device, layout: h.Layout, data: st.DataObject) -> None:
    """Conjugates x1 for complex dtypes; contracts ``axis``, batch axes broadcast."""
    shape = layout.shape
    axis = data.draw(st.integers(-len(shape), -1), label="axis")
    other = data.draw(h.layouts(shape), label="x2 layout")
    for dtype in h.supported(device, NUMERIC):
        values = h.Values(-3, 3, special=False)
        a, b = layout.build(device, dtype, values), other.build(device, dtype, values)
        wide = a.ref if dtype.kind in ("int", "uint") else h.wide(a.ref)
        expected = np.sum(np.conj(wide) * b.ref, axis=axis)
        if dtype.kind in ("int", "uint"):
            expected = expected.astype(h.np_dtype(dtype))
        h.assert_same(nd.vecdot(a.x, b.x, axis=axis), h.to_result(expected, dtype), dtype,
                      tol=_tol(dtype, shape[axis], a.ref, b.ref), msg=f"vecdot({dtype.name}, axis={axis}): ")  # fmt: skip


def test_vecdot_dtype_pairs_and_layouts(device: nd.Device) -> None:
    """Every pair of numeric dtypes, through both roads of the composite: vectors adjacent in
    memory (a batch of matmul products) and strided ones (multiply, then sum), with x2 a
    broadcast vector, a broadcast batch, reversed or transposed views, and an empty axis."""
    rng = np.random.default_rng(11)
    dtypes = h.supported(device, NUMERIC)
    base1 = rng.integers(-3, 4, (2, 3, 4)) + rng.integers(-3, 4, (2, 3, 4)) * 1j
    base2 = rng.integers(-3, 4, (2, 3, 4)) + rng.integers(-3, 4, (2, 3, 4)) * 1j
    cases: list[tuple[str, Any, Any, int]] = [  # each view applies to a NumPy and an ndplane array alike
        ("contiguous", lambda a: a, lambda b: b, -1),
        ("x2 a vector", lambda a: a, lambda b: b[0, 0], -1),
        ("x2 a broadcast batch", lambda a: a, lambda b: b[:1], -1),
        ("strided axis", lambda a: a, lambda b: b, -2),
        ("reversed", lambda a: a[..., ::-1], lambda b: b[:, ::-1], -1),
        ("transposed", lambda a: a.mT, lambda b: b[0].mT, -1),
        ("empty axis", lambda a: a[..., :0], lambda b: b[..., :0], -1),
    ]
    for d1 in dtypes:
        for d2 in dtypes:
            try:
                result = nd.result_type(d1, d2)
            except TypeError:  # uint64 with a signed integer: vecdot says so too
                with pytest.raises(TypeError, match="vecdot"):
                    nd.vecdot(nd.ones(3, dtype=d1, device=device), nd.ones(3, dtype=d2, device=device))
                continue
            h1, h2 = _vecdot_values(base1, d1), _vecdot_values(base2, d2)
            if result not in device.backend.dtypes:  # int8 with uint32 is int64: not on every device
                with pytest.raises(nd.UnsupportedDTypeError, match="vecdot"):
                    nd.vecdot(nd.asarray(h1, device=device), nd.asarray(h2, device=device))
                continue
            exact = result.kind in ("int", "uint")
            x1, x2 = nd.asarray(h1, device=device), nd.asarray(h2, device=device)
            for name, v1, v2, axis in cases:
                a, b = v1(h1), v2(h2)
                expected = np.sum(np.conj(a.astype(np.complex128)) * b.astype(np.complex128), axis=axis)
                expected = expected if result.kind == "complex" else expected.real
                ref = expected.astype(h.np_dtype(result)) if exact else h.to_result(expected, result)
                h.assert_same(nd.vecdot(v1(x1), v2(x2), axis=axis), ref, result,
                              tol=None if exact else _tol(result, 4, a, b),
                              msg=f"vecdot({d1.name}, {d2.name}, {name}): ")  # fmt: skip


def _vecdot_values(v: np.ndarray, dtype: nd.DType) -> np.ndarray:
    """Small complex integers ``v`` as ``dtype``: the real part (its magnitude if unsigned)."""
    if dtype.kind == "complex":
        return v.astype(h.np_dtype(dtype))
    return (np.abs(v.real) if dtype.kind == "uint" else v.real).astype(h.np_dtype(dtype))


def test_tensordot(device: nd.Device) -> None:
    for dtype in h.supported(device, ("int", "float")):
        t = h.np_dtype(dtype)
        a = (np.arange(24) % 5).reshape(2, 3, 4).astype(t)
        b = (np.arange(24) % 3).reshape(4, 3, 2).astype(t)
        x, y = nd.asarray(a, device=device), nd.asarray(b, device=device)
        h.assert_same(
            nd.tensordot(x, y, axes=([1, 2], [1, 0])), np.tensordot(a, b, axes=([1, 2], [1, 0])), dtype
        )
        h.assert_same(nd.tensordot(x, nd.flip(y, axis=0), axes=1), np.tensordot(a, b[::-1], axes=1), dtype)
        h.assert_same(nd.tensordot(x, y, axes=0), np.tensordot(a, b, axes=0), dtype)
