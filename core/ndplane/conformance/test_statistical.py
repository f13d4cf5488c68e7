"""Reductions, statistics, searching reductions and scans, differential against NumPy.

Every axis combination (None, one axis, several, negative) with and without
``keepdims``, on drawn layouts of every supported dtype; float sums and
products are held to a float64 reference with a tolerance scaled by the
number of terms.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ndplane as nd
from ndplane.conformance import _helpers as h


@st.composite
def _layout_and_axes(draw: Any, max_side: int = 4, min_dims: int = 0) -> tuple[h.Layout, Any]:
    layout = draw(h.layouts(h.shapes(min_dims=min_dims, max_side=max_side)))
    ndim = len(layout.shape)
    if draw(st.booleans()) or ndim == 0:
        axis = None if draw(st.booleans()) or ndim == 0 else draw(st.integers(-ndim, ndim - 1))
    else:
        axes = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
        axis = tuple(a - ndim if draw(st.booleans()) else a for a in axes)
    return layout, axis


def _np_axis(axis: Any) -> Any:
    return axis if axis is None or isinstance(axis, int) else tuple(axis)


def _count(shape: tuple[int, ...], axis: Any) -> int:
    if axis is None:
        return int(np.prod(shape))
    axes = (axis,) if isinstance(axis, int) else axis
    return int(np.prod([shape[a] for a in axes]))


def _accumulator(device: nd.Device, dtype: nd.DType) -> nd.DType:
    """sum/prod/cumulative dtype: small integers widen to the default integer of their signedness."""
    default_int = h.default(device, "integral")
    if dtype.kind in ("bool", "int"):
        return dtype if dtype.kind == "int" and dtype.itemsize >= default_int.itemsize else default_int
    if dtype.kind == "uint":
        wide = h.BY_NAME["uint" + default_int.name[3:]]
        return dtype if dtype.itemsize >= wide.itemsize else wide
    return dtype


_SUM_VALUES = h.Values(-8, 8)
# NOTE: float16 products of values in [-2, 2] overflow in some orders and not others; halves in
# [-1, 1] multiply exactly (powers of two) and only ever shrink.
_PROD_VALUES = {None: h.Values(-2, 2), nd.float16: h.Values(-1, 1, grid=0.5)}


@pytest.mark.parametrize("op", ["sum", "prod"])
@pytest.mark.parametrize("keepdims", [False, True])
@h.hyp()
@given(drawn=_layout_and_axes(max_side=3))
def test_sum_prod(device: nd.Device, op: str, keepdims: bool, drawn: tuple[h.Layout, Any]) -> None:
    layout, axis = drawn
    n = _count(layout.shape, axis)
    for dtype in h.supported(device):
        result = _accumulator(device, dtype)
        if result not in device.backend.dtypes:
            continue
        values = _SUM_VALUES if op == "sum" else _PROD_VALUES.get(dtype, _PROD_VALUES[None])
        a = layout.build(device, dtype, values)
        ref = a.ref
        if op == "prod" and dtype.kind in ("int", "uint") and n > 24:
            ref = np.clip(ref, -1, 1) if dtype.kind == "int" else np.clip(ref, 0, 1)
            a = layout.build(device, dtype, data=ref)
        wide = ref if result.kind in ("int", "uint", "bool") else h.wide(ref)
        with np.errstate(all="ignore"):
            expected = getattr(np, op)(wide, axis=_np_axis(axis), keepdims=keepdims,
                                       dtype=h.np_dtype(result) if result.kind in ("int", "uint") else None)  # fmt: skip
        got = getattr(nd, op)(a.x, axis=axis, keepdims=keepdims)
        h.assert_same(got, h.to_result(expected, result), result, tol=_sum_tol(result, ref, n),
                      msg=f"{op}({dtype.name}, axis={axis}, layout {a.layout}): ")  # fmt: skip


def _sum_tol(result: nd.DType, ref: np.ndarray, n: int) -> tuple[float, float] | None:
    """n rounding errors, each relative to the largest term (partial sums can cancel)."""
    if result.kind not in ("float", "complex"):
        return None
    rtol = h.TOLERANCE[result][0] * max(1, n)
    finite = np.abs(ref[np.isfinite(ref)]) if ref.size else np.zeros(1)
    return rtol, rtol * max(1.0, float(finite.max()) if finite.size else 1.0)


def test_sum_dtype_argument(device: nd.Device) -> None:
    for dtype in h.supported(device, ("int", "uint", "float")):
        v = np.array([[1, 2, 3], [4, 5, 6]], h.np_dtype(dtype))
        x = nd.asarray(v, device=device)
        h.assert_same(nd.sum(x, axis=1, dtype=dtype), v.sum(axis=1, dtype=v.dtype), dtype)
        h.assert_same(nd.prod(x, axis=0, dtype=dtype), v.prod(axis=0, dtype=v.dtype), dtype)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("keepdims", [False, True])
@h.hyp()
@given(drawn=_layout_and_axes())
def test_max_min(device: nd.Device, op: str, keepdims: bool, drawn: tuple[h.Layout, Any]) -> None:
    """NaN propagates; a reduction over an axis of length 0 raises ValueError."""
    layout, axis = drawn
    empty = _count(layout.shape, axis) == 0
    out_shape = np.sum(np.zeros(layout.shape), axis=_np_axis(axis), keepdims=keepdims).shape
    for dtype in h.supported(device, ("bool", "int", "uint", "float")):
        a = layout.build(device, dtype)
        if empty and int(np.prod(out_shape)):
            with pytest.raises(ValueError, match=op):
                getattr(nd, op)(a.x, axis=axis, keepdims=keepdims)
            continue
        if empty:
            expected = np.zeros(out_shape, a.ref.dtype)
        else:
            expected = getattr(np, op)(a.ref, axis=_np_axis(axis), keepdims=keepdims)
        got = getattr(nd, op)(a.x, axis=axis, keepdims=keepdims)
        h.assert_same(got, expected, dtype, exact=True, msg=f"{op}({dtype.name}, axis={axis}): ")


@pytest.mark.parametrize("op", ["mean", "var", "std"])
@h.hyp()
@given(drawn=_layout_and_axes(), keepdims=st.booleans(), correction=st.sampled_from([0, 1, 0.5, 5]))
def test_mean_var_std(device: nd.Device, op: str, drawn: tuple[h.Layout, Any], keepdims: bool,
                      correction: float) -> None:  # fmt: skip
    layout, axis = drawn
    n = _count(layout.shape, axis)
    for dtype in h.supported(device, ("int", "uint", "float")):
        a = layout.build(device, dtype, h.Values(-8, 8))
        result = dtype if dtype.kind == "float" else h.default(device, "real floating")
        kwargs = {} if op == "mean" else {"correction": correction}
        np_kwargs = {} if op == "mean" else {"ddof": correction}
        with np.errstate(all="ignore"), _no_numpy_warnings():
            expected = getattr(np, op)(h.wide(a.ref), axis=_np_axis(axis), keepdims=keepdims, **np_kwargs)
        if op != "mean" and n - correction <= 0:
            expected = np.full_like(expected, np.nan)  # the Array API's special case (NumPy: inf)
        got = getattr(nd, op)(a.x, axis=axis, keepdims=keepdims, **kwargs)
        h.assert_same(got, h.to_result(expected, result), result, scale=4 * max(1, n),
                      msg=f"{op}({dtype.name}, axis={axis}, correction={correction}): ")  # fmt: skip


def _no_numpy_warnings() -> Any:
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("ignore", RuntimeWarning)

    class _Exit:
        def __enter__(self) -> None:
            return None

        def __exit__(self, *exc: Any) -> None:
            ctx.__exit__(*exc)

    return _Exit()


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@h.hyp(scale=1.5)
@given(layout=h.layouts(h.shapes(min_dims=1, min_side=1)), data=st.data())
def test_argmax_argmin(device: nd.Device, op: str, layout: h.Layout, data: st.DataObject) -> None:
    """First index of the extreme; NaN counts as the extreme (NumPy's rule); default indexing dtype."""
    ndim = len(layout.shape)
    axis = data.draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1)), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    index = h.default(device, "indexing")
    for dtype in h.supported(device, ("bool", "int", "uint", "float")):
        # few distinct values, so ties (first index wins) are common
        a = layout.build(device, dtype, h.Values(-2, 2, grid=1.0 if dtype.kind == "float" else None))
        expected = getattr(np, op)(a.ref, axis=axis, keepdims=keepdims)
        got = getattr(nd, op)(a.x, axis=axis, keepdims=keepdims)
        h.assert_same(got, expected, index, msg=f"{op}({dtype.name}, axis={axis}, keepdims={keepdims}): ")


@pytest.mark.parametrize("op", ["any", "all"])
@h.hyp()
@given(drawn=_layout_and_axes(), keepdims=st.booleans())
def test_any_all(device: nd.Device, op: str, drawn: tuple[h.Layout, Any], keepdims: bool) -> None:
    """Truth of every dtype: nonzero, NaN is true, -0.0 is false."""
    layout, axis = drawn
    for dtype in h.supported(device):
        a = layout.build(device, dtype, h.Values(-1, 1))
        expected = getattr(np, op)(a.ref, axis=_np_axis(axis), keepdims=keepdims)
        got = getattr(nd, op)(a.x, axis=axis, keepdims=keepdims)
        h.assert_same(got, expected, nd.bool, msg=f"{op}({dtype.name}, axis={axis}): ")


def _cumulative_reference(
    op: str, ref: np.ndarray, axis: int, include_initial: bool, result: nd.DType
) -> Any:
    fn = np.cumsum if op == "cumulative_sum" else np.cumprod
    exact = result.kind in ("int", "uint", "bool")
    with np.errstate(all="ignore"):
        out = fn(ref if exact else h.wide(ref), axis=axis, dtype=h.np_dtype(result) if exact else None)
    if include_initial:
        shape = list(ref.shape)
        shape[axis] = 1
        first = np.full(shape, 0 if op == "cumulative_sum" else 1, out.dtype)
        out = np.concatenate([first, out], axis=axis)
    return h.to_result(out, result)


@pytest.mark.parametrize("op", ["cumulative_sum", "cumulative_prod"])
@h.hyp()
@given(layout=h.layouts(h.shapes(min_dims=1, max_side=5)), data=st.data())
def test_cumulative(device: nd.Device, op: str, layout: h.Layout, data: st.DataObject) -> None:
    ndim = len(layout.shape)
    axis = data.draw(st.integers(-ndim, ndim - 1), label="axis")
    include_initial = data.draw(st.booleans(), label="include_initial")
    values = h.Values(-2, 2) if op == "cumulative_prod" else h.Values(-10, 10)
    for dtype in h.supported(device, ("bool", "int", "uint", "float", "complex")):
        result = _accumulator(device, dtype)
        if result not in device.backend.dtypes:
            continue
        a = layout.build(device, dtype, values)
        expected = _cumulative_reference(op, a.ref, axis % ndim, include_initial, result)
        got = getattr(nd, op)(a.x, axis=axis, include_initial=include_initial)
        h.assert_same(got, expected, result, scale=max(1, layout.shape[axis]),
                      msg=f"{op}({dtype.name}, axis={axis}, include_initial={include_initial}): ")  # fmt: skip


def test_cumulative_1d_default_axis(device: nd.Device) -> None:
    x = nd.asarray([1, 2, 3], device=device)
    assert nd.cumulative_sum(x).tolist() == [1, 3, 6]
    assert nd.cumulative_prod(x, include_initial=True).tolist() == [1, 1, 2, 6]
    with pytest.raises(ValueError):
        nd.cumulative_sum(nd.reshape(x, (1, 3)))  # axis is required for N-D


def test_reductions_reject_bad_axes(device: nd.Device) -> None:
    x = nd.zeros((2, 3), device=device)
    fn: Callable[..., nd.Array]
    for fn in (nd.sum, nd.prod, nd.max, nd.min, nd.mean, nd.var, nd.std, nd.any, nd.all):
        with pytest.raises((IndexError, ValueError), match=fn.__name__):
            fn(x, axis=2)
        with pytest.raises(ValueError, match=fn.__name__):
            fn(x, axis=(0, 0))
    for fn in (nd.argmax, nd.argmin, nd.cumulative_sum, nd.cumulative_prod):
        with pytest.raises((IndexError, ValueError), match=fn.__name__):
            fn(x, axis=-3)


def test_complex_has_no_order(device: nd.Device) -> None:
    for dtype in h.supported(device, ("complex",)):
        x = nd.zeros((2,), dtype=dtype, device=device)
        for fn in (nd.max, nd.min, nd.argmax, nd.argmin):
            with pytest.raises(TypeError):
                fn(x)


@pytest.mark.parametrize("layout", ["rows", "long rows", "columns", "reversed", "all"])
def test_sums_of_squares_at_size(device: nd.Device, layout: str) -> None:
    """``var``, ``std`` and the 2-norms (a backend's ``fused:sumsq`` where it has one) on inputs
    large enough for a kernel's other roads: rows of 300 001 (split across threads), a reduction
    down the columns of a C-ordered matrix, reversed and stepped views, all axes at once; a
    non-finite value in one row. Against NumPy in float64."""
    rng = np.random.default_rng(5)
    shape, axis, view = {
        "rows": ((300, 700), -1, lambda a: a), "long rows": ((2, 300_001), 1, lambda a: a),
        "columns": ((3000, 300), 0, lambda a: a), "reversed": ((400, 900), -1, lambda a: a[::-2, ::-3]),
        "all": ((700, 600), None, lambda a: a.T),
    }[layout]  # fmt: skip
    for dtype in h.supported(device, ("float",)):
        scale, offset = (0.02, 0.05) if dtype.itemsize == 2 else (3.0, 10.0)  # float16 sums stay finite
        host = (rng.standard_normal(shape) * scale + offset).astype(h.np_dtype(dtype))
        if layout != "all":
            host[0, 1] = np.inf if layout != "columns" else np.nan
        x = view(nd.asarray(host, device=device))
        ref = view(host).astype(np.float64)
        n = ref.size if axis is None else ref.shape[axis]
        with np.errstate(all="ignore"):
            cases = {
                "var": (nd.var(x, axis=axis, correction=1), np.var(ref, axis=axis, ddof=1)),
                "std": (nd.std(x, axis=axis, keepdims=True), np.std(ref, axis=axis, keepdims=True)),
                "vector_norm": (nd.linalg.vector_norm(x, axis=axis), np.linalg.norm(ref.ravel()) if axis is None
                                else np.sqrt(np.sum(ref * ref, axis=axis))),
            }  # fmt: skip
        if layout == "all":
            cases["matrix_norm"] = (nd.linalg.matrix_norm(x), np.linalg.norm(ref))
        for name, (got, want) in cases.items():
            h.assert_same(got, h.to_result(np.asarray(want), dtype), dtype, scale=4 * np.sqrt(n),
                          msg=f"{name}({dtype.name}, {layout}): ")  # fmt: skip


@pytest.mark.parametrize("axes", [(0, 2, 3), (0, 2), (1, 3), (0, 1, 3), (0, 3)])
@pytest.mark.parametrize("view", ["contiguous", "stepped", "transposed"])
def test_reductions_over_axes_of_no_single_run(device: nd.Device, axes: tuple[int, ...], view: str) -> None:
    """Reductions over several axes that form no single run in memory (the batch and spatial
    axes of NCHW, which the core may reduce in two stages, innermost run first): every op on
    every supported dtype, with keepdims, against NumPy (float sums in float64)."""
    rng = np.random.default_rng(8)
    shape = (4, 5, 24, 33)
    pick = {"contiguous": lambda a: a, "stepped": lambda a: a[:, ::-1, :, ::2],
            "transposed": lambda a: np.transpose(a, (0, 2, 1, 3)) if isinstance(a, np.ndarray)
            else nd.permute_dims(a, (0, 2, 1, 3))}[view]  # fmt: skip
    for dtype in h.supported(device):
        npd = h.np_dtype(dtype)
        if dtype.kind == "bool":
            host = rng.random(shape) < 0.9
        elif dtype.kind in ("int", "uint"):
            host = rng.integers(0, 3, shape).astype(npd)
        else:
            host = (rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if dtype.kind == "complex" else 0)).astype(npd)
        ref, x = pick(host), pick(nd.asarray(host, device=device))
        ops = ["sum", "any", "all"] + (["max", "min"] if dtype.kind != "complex" else [])
        ops += ["mean", "var", "std"] if dtype.kind == "float" else []
        for op in ops:
            got = getattr(nd, op)(x, axis=axes, keepdims=True)
            if op == "sum" and dtype.kind in ("float", "complex"):
                want = np.sum(ref.astype(np.complex128 if dtype.kind == "complex" else np.float64), axis=axes, keepdims=True)
                h.assert_same(got, h.to_result(want, dtype), dtype, scale=40, msg=f"sum {dtype.name}: ")
            elif op in ("mean", "var", "std"):
                want = getattr(np, op)(ref.astype(np.float64), axis=axes, keepdims=True)
                h.assert_same(got, h.to_result(want, dtype), dtype, scale=40, msg=f"{op} {dtype.name}: ")
            else:
                want = getattr(np, op)(ref, axis=axes, keepdims=True)
                assert got.shape == want.shape, f"{op} {dtype.name}"
                assert np.array_equal(got.to_numpy().astype(want.dtype) if op == "sum" else got.to_numpy(), want), \
                    f"{op} {dtype.name}"  # fmt: skip


def test_var_std_special_cases(device: nd.Device) -> None:
    """``var``/``std`` are NaN where ``N - correction <= 0`` (the Array API's special case, where
    NumPy divides by zero), and the variance of equal float16 values is exactly 0 (the mean and
    the deviations taken in float32, as NumPy takes them)."""
    for dtype in h.supported(device, ("float",)):
        npd = h.np_dtype(dtype)
        for host in (np.full(3, 0.94708097, npd), np.asarray([1.0, 2.0, 4.0], npd)):
            x = nd.asarray(host, device=device)
            for correction in (3, 5, 3.5):
                for fn in (nd.var, nd.std):
                    got = fn(x, correction=correction)
                    assert got.dtype is dtype and np.isnan(float(got)), f"{fn.__name__}({dtype.name}, correction={correction})"
        equal = nd.broadcast_to(nd.asarray(np.asarray(0.3337, npd), device=device), (7,))
        if dtype is nd.float16:
            assert float(nd.var(equal)) == 0.0 and float(nd.std(equal, correction=1)) == 0.0
