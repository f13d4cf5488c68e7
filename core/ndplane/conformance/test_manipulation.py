"""Manipulation functions and sorting, differential against NumPy, on drawn layouts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ndplane as nd
from ndplane.conformance import _helpers as h


def _dtype(device: nd.Device, data: st.DataObject, kinds: Any = None) -> nd.DType:
    return data.draw(st.sampled_from(h.supported(device, kinds)), label="dtype")


@h.hyp(scale=2)
@given(layout=h.layouts(), data=st.data())
def test_reshape(device: nd.Device, layout: h.Layout, data: st.DataObject) -> None:
    """Any layout to any shape of the same size (a view when possible, else a copy), -1 inferred."""
    size = int(np.prod(layout.shape))
    divisors = [d for d in range(1, max(size, 1) + 1) if size % d == 0] if size else [0, 1, 2]
    first = data.draw(st.sampled_from(divisors), label="first axis")
    new: tuple[int, ...] = (first, -1) if first else (0, data.draw(st.integers(0, 3)))
    if data.draw(st.booleans()):
        new = (-1,)
    dtype = _dtype(device, data)
    a = layout.build(device, dtype)
    expected = a.ref.reshape(new)
    h.assert_same(
        nd.reshape(a.x, new), expected, dtype, exact=True, signed_zeros=True, msg=f"reshape {new}: "
    )
    h.assert_same(a.x.reshape(new), expected, dtype, exact=True, msg="Array.reshape: ")
    copied = nd.reshape(a.x, new, copy=True)
    assert copied._storage is not a.x._storage
    h.assert_same(copied, expected, dtype, exact=True)


@h.hyp(scale=2)
@given(layout=h.layouts(h.shapes(min_dims=1)), data=st.data())
def test_view_functions(device: nd.Device, layout: h.Layout, data: st.DataObject) -> None:
    """permute_dims, moveaxis, flip, expand_dims, squeeze, broadcast_to, unstack, matrix_transpose."""
    ndim = len(layout.shape)
    dtype = _dtype(device, data)
    a = layout.build(device, dtype)
    x, r = a.x, a.ref
    perm = tuple(data.draw(st.permutations(range(ndim)), label="perm"))
    checks = [(nd.permute_dims(x, perm), np.transpose(r, perm), "permute_dims")]
    src, dst = data.draw(st.integers(-ndim, ndim - 1)), data.draw(st.integers(-ndim, ndim - 1))
    checks.append((nd.moveaxis(x, src, dst), np.moveaxis(r, src, dst), "moveaxis"))
    axes = tuple(data.draw(st.sets(st.integers(0, ndim - 1)), label="flip axes"))
    checks.append((nd.flip(x, axis=axes or None), np.flip(r, axis=axes or None), f"flip {axes}"))
    checks.append((nd.expand_dims(x, axis=-1), np.expand_dims(r, -1), "expand_dims -1"))
    checks.append((nd.expand_dims(x, axis=0), np.expand_dims(r, 0), "expand_dims 0"))
    ones = tuple(i for i, n in enumerate(layout.shape) if n == 1)
    if ones:
        checks.append((nd.squeeze(x, axis=ones), np.squeeze(r, axis=ones), "squeeze"))
    checks.append(
        (nd.broadcast_to(x, (2, *layout.shape)), np.broadcast_to(r, (2, *layout.shape)), "broadcast_to")
    )
    for i, (u, v) in enumerate(zip(nd.unstack(x, axis=-1), np.moveaxis(r, -1, 0), strict=True)):
        checks.append((u, v, f"unstack[{i}]"))
    if ndim >= 2:
        checks.append((nd.matrix_transpose(x), np.swapaxes(r, -1, -2), "matrix_transpose"))
    for got, expected, name in checks:
        assert got._storage is x._storage, f"{name} must be a view"
        h.assert_same(got, expected, dtype, exact=True, signed_zeros=True, msg=f"{name} ({a.layout}): ")


@h.hyp(scale=2)
@given(data=st.data())
def test_concat_and_stack(device: nd.Device, data: st.DataObject) -> None:
    """Layouts and dtypes mixed; concat along any axis (and None), stack along a new one."""
    shape = data.draw(h.shapes(min_dims=1, max_dims=3), label="shape")
    ndim = len(shape)
    axis = data.draw(st.integers(-ndim, ndim - 1), label="axis")
    count = data.draw(st.integers(1, 3), label="count")
    dtypes = [_dtype(device, data) for _ in range(count)]
    if not all(h.promotes(dtypes[0], d) for d in dtypes) or _result(dtypes) not in device.backend.dtypes:
        dtypes = [dtypes[0]] * count
    result = _result(dtypes)
    parts = []
    for d in dtypes:
        s = list(shape)
        s[axis] = data.draw(st.integers(0, 3))
        parts.append(data.draw(h.layouts(tuple(s))).build(device, d))
    t = h.np_dtype(result)
    cast = [_cast(p.ref, t) for p in parts]
    expected = np.concatenate(cast, axis=axis)
    h.assert_same(
        nd.concat([p.x for p in parts], axis=axis), expected, result, exact=True, msg=f"concat {axis}: "
    )
    flat = np.concatenate([c.reshape(-1) for c in cast])
    h.assert_same(nd.concat([p.x for p in parts], axis=None), flat, result, exact=True, msg="concat None: ")
    same = [data.draw(h.layouts(shape)).build(device, d) for d in dtypes]
    new_axis = data.draw(st.integers(-ndim - 1, ndim), label="stack axis")
    expected = np.stack([_cast(p.ref, t) for p in same], axis=new_axis)
    h.assert_same(nd.stack([p.x for p in same], axis=new_axis), expected, result, exact=True, msg="stack: ")


def _cast(a: np.ndarray, t: np.dtype) -> np.ndarray:
    with np.errstate(all="ignore"):  # int -> float16 may overflow to inf, as it should
        return a.astype(t)



def _result(dtypes: list[nd.DType]) -> nd.DType:
    return nd.result_type(*dtypes)


def test_manipulation_errors(device: nd.Device) -> None:
    x = nd.zeros((2, 3), device=device)
    with pytest.raises(ValueError, match="reshape"):
        nd.reshape(x, (4, 2))
    with pytest.raises(ValueError, match="reshape"):
        nd.reshape(x, (-1, -1))
    with pytest.raises(ValueError, match="reshape"):
        nd.reshape(x.T, (6,), copy=False)
    with pytest.raises(ValueError, match="concat"):
        nd.concat([x, nd.zeros((2, 4), device=device)], axis=0)
    with pytest.raises(ValueError, match="stack"):
        nd.stack([x, x.T])
    with pytest.raises(ValueError, match="squeeze"):
        nd.squeeze(x, axis=0)
    with pytest.raises(ValueError, match="broadcast"):
        nd.broadcast_to(x, (3, 3))
    with pytest.raises((ValueError, IndexError), match="permute_dims"):
        nd.permute_dims(x, (0, 0))
    with pytest.raises((ValueError, IndexError), match="flip"):
        nd.flip(x, axis=2)
    with pytest.raises((ValueError, IndexError), match="expand_dims"):
        nd.expand_dims(x, axis=5)


# ---------------------------------------------------------------------------
# sorting
# ---------------------------------------------------------------------------


def _np_argsort(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable; NaN last ascending, first descending (the reverse order); equal elements keep order."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    n = a.shape[axis]
    idx = np.argsort(np.flip(a, axis=axis), axis=axis, kind="stable")
    return np.flip(n - 1 - idx, axis=axis)


@pytest.mark.parametrize("descending", [False, True])
@h.hyp(scale=2)
@given(layout=h.layouts(h.shapes(min_dims=1, max_side=6)), data=st.data())
def test_sort_argsort_stable(
    device: nd.Device, descending: bool, layout: h.Layout, data: st.DataObject
) -> None:
    """Stable sort on data with many ties, NaN, +-inf and -0.0 == 0.0, along any axis."""
    ndim = len(layout.shape)
    axis = data.draw(st.integers(-ndim, ndim - 1), label="axis")
    index = h.default(device, "indexing")
    for dtype in h.supported(device, ("bool", "int", "uint", "float")):
        a = layout.build(device, dtype, h.Values(-3, 3, grid=1.0 if dtype.kind == "float" else None))
        idx = _np_argsort(a.ref, axis, descending)
        got_i = nd.argsort(a.x, axis=axis, descending=descending, stable=True)
        h.assert_same(got_i, idx, index, msg=f"argsort({dtype.name}, axis={axis}, descending={descending}): ")
        values = np.take_along_axis(a.ref, idx, axis=axis)
        got_v = nd.sort(a.x, axis=axis, descending=descending, stable=True)
        # NOTE: no signed_zeros: -0.0 == 0.0 are ties, and the reference kernel sorts values alone
        # unstably (backend/reference.py ``sort``), so their signs' order is not specified.
        h.assert_same(got_v, values, dtype, exact=True,
                      msg=f"sort({dtype.name}, axis={axis}, descending={descending}): ")  # fmt: skip


@h.hyp()
@given(layout=h.layouts(h.shapes(min_dims=1, max_side=6)), descending=st.booleans())
def test_sort_unstable(device: nd.Device, layout: h.Layout, descending: bool) -> None:
    """``stable=False``: the values are sorted and the indices are a sorting permutation."""
    for dtype in h.supported(device, ("int", "float")):
        a = layout.build(device, dtype, h.Values(-3, 3))
        expected = np.take_along_axis(a.ref, _np_argsort(a.ref, -1, descending), axis=-1)
        h.assert_same(nd.sort(a.x, descending=descending, stable=False), expected, dtype, exact=True)
        idx = nd.argsort(a.x, descending=descending, stable=False).to_numpy()
        assert (np.sort(idx, axis=-1) == np.arange(layout.shape[-1])).all(), "argsort is not a permutation"
        h.assert_values(np.take_along_axis(a.ref, idx, axis=-1), expected, dtype, exact=True)


def test_sort_rejects(device: nd.Device) -> None:
    with pytest.raises(ValueError, match="sort"):
        nd.sort(nd.zeros((), device=device))
    with pytest.raises((IndexError, ValueError), match="argsort"):
        nd.argsort(nd.zeros((3,), device=device), axis=1)
    for dtype in h.supported(device, ("complex",)):
        with pytest.raises(TypeError, match="sort"):
            nd.sort(nd.zeros((3,), dtype=dtype, device=device))
