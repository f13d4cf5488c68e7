"""Indexing: basic getitem/setitem (views, writes both ways), boolean masks, integer
arrays, take, take_along_axis, nonzero and where, differential against NumPy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ndplane as nd
from ndplane.conformance import _helpers as h


def _dtype(device: nd.Device, data: st.DataObject, kinds: Any = None) -> nd.DType:
    return data.draw(st.sampled_from(h.supported(device, kinds)), label="dtype")


@h.hyp(scale=3)
@given(layout=h.layouts(), data=st.data())
def test_getitem_basic(device: nd.Device, layout: h.Layout, data: st.DataObject) -> None:
    """Ints (negative too), slices with steps (negative too), ``...`` and None give NumPy's view."""
    key = data.draw(hnp.basic_indices(layout.shape, allow_newaxis=True, allow_ellipsis=True), label="key")
    dtype = _dtype(device, data)
    a = layout.build(device, dtype)
    got = a.x[key]
    assert got._storage is a.x._storage, "basic indexing must return a view"
    h.assert_same(got, a.ref[key], dtype, exact=True, signed_zeros=True, msg=f"x[{key!r}] ({a.layout}): ")


@h.hyp(scale=3)
@given(layout=h.layouts(broadcast=False), data=st.data())
def test_setitem_basic(device: nd.Device, layout: h.Layout, data: st.DataObject) -> None:
    """``x[key] = value`` (scalar or broadcast array) on a view; the view and its base see it."""
    key = data.draw(hnp.basic_indices(layout.shape, allow_newaxis=True, allow_ellipsis=True), label="key")
    dtype = _dtype(device, data)
    a = layout.build(device, dtype)
    ref = a.ref.copy()
    target_shape = ref[key].shape
    if data.draw(st.booleans(), label="scalar value"):
        choices = [0, 1, 2] + ([] if dtype.kind == "uint" else [-1])
        value = data.draw(st.sampled_from(np.array(choices, h.np_dtype(dtype)).tolist()), label="value")
        ref[key] = value
        a.x[key] = value
    else:
        v = data.draw(h.layouts(data.draw(h.broadcastable_shape(target_shape))), label="value layout")
        value = v.build(device, dtype)
        ref[key] = value.ref
        a.x[key] = value.x
    h.assert_same(a.x, ref, dtype, exact=True, signed_zeros=True, msg=f"x[{key!r}] = ... ({a.layout}): ")


def test_setitem_casts_and_overlaps(device: nd.Device) -> None:
    """A value of another dtype is cast; overlapping source and target act as if copied first."""
    floats = h.supported(device, ("float",))
    ints = h.supported(device, ("int",))
    if not floats or not ints:
        pytest.skip("needs a float and an int dtype")
    ref = np.arange(10.0).astype(h.np_dtype(floats[0]))
    x = nd.asarray(ref.copy(), device=device)
    x[1:] = x[:-1]
    ref[1:] = ref[:-1].copy()
    h.assert_same(x, ref, floats[0])
    x[::-1] = x
    ref[::-1] = ref.copy()
    h.assert_same(x, ref, floats[0])
    x[2:5] = nd.asarray(np.array([7, 8, 9], h.np_dtype(ints[0])), device=device)
    ref[2:5] = [7, 8, 9]
    h.assert_same(x, ref, floats[0])
    x[...] = 3
    h.assert_same(x, np.full(10, 3, ref.dtype), floats[0])


def test_views_share_storage_both_ways(device: nd.Device) -> None:
    """A write through any view shows in the base, and a write to the base shows in the view."""
    dtype = h.default(device, "real floating")
    views = {
        "slice": lambda x: x[1:, ::2], "negative step": lambda x: x[::-1, ::-3], "int": lambda x: x[2],
        "ellipsis": lambda x: x[..., 1], "newaxis": lambda x: x[None, 1:3, None],
        "T": lambda x: x.T, "mT": lambda x: x.mT, "permute_dims": lambda x: nd.permute_dims(x, (1, 0)),
        "reshape": lambda x: nd.reshape(x, (6, 4)), "flip": lambda x: nd.flip(x, axis=1),
        "expand_dims": lambda x: nd.expand_dims(x, axis=0), "squeeze": lambda x: nd.squeeze(x[:1], axis=0),
        "moveaxis": lambda x: nd.moveaxis(x, 0, 1), "unstack": lambda x: nd.unstack(x, axis=1)[3],
        "matrix_transpose": lambda x: nd.matrix_transpose(x),
    }  # fmt: skip
    for name, view in views.items():
        base = nd.asarray(np.arange(24.0).reshape(4, 6).astype(h.np_dtype(dtype)), device=device)
        v = view(base)
        assert v._storage is base._storage, f"{name} is not a view"
        v[...] = -1
        assert int(nd.sum(base == -1)) == v.size, f"write through {name} not visible in the base"
        base[...] = 5
        assert bool(nd.all(v == 5)), f"write to the base not visible through {name}"


@h.hyp(scale=2)
@given(layout=h.layouts(h.shapes(min_dims=1)), data=st.data())
def test_boolean_mask(device: nd.Device, layout: h.Layout, data: st.DataObject) -> None:
    """``x[mask]`` (mask over the leading axes) and ``x[mask] = scalar``."""
    dtype = _dtype(device, data)
    k = data.draw(st.integers(1, len(layout.shape)), label="mask ndim")
    mask_layout = data.draw(h.layouts(layout.shape[:k]), label="mask layout")
    a = layout.build(device, dtype)
    m = mask_layout.build(device, nd.bool)
    h.assert_same(a.x[m.x], a.ref[m.ref], dtype, exact=True, msg=f"x[mask] ({a.layout}, {m.layout}): ")
    if "broadcast" not in a.layout:
        one = True if dtype is nd.bool else 1
        ref = a.ref.copy()
        ref[m.ref] = one
        a.x[m.x] = one
        h.assert_same(a.x, ref, dtype, exact=True, msg="x[mask] = 1: ")


def _index_values(n: int, dtype: nd.DType) -> h.Values:
    return h.Values(0 if dtype.kind == "uint" else -n, n - 1, special=False)


@h.hyp(scale=2)
@given(layout=h.layouts(h.shapes(min_dims=1, min_side=1)), data=st.data())
def test_take(device: nd.Device, layout: h.Layout, data: st.DataObject) -> None:
    """``take`` along any axis with negative indices, from every integer index dtype."""
    ndim = len(layout.shape)
    axis = data.draw(st.integers(-ndim, ndim - 1), label="axis")
    n = layout.shape[axis]
    count = data.draw(st.integers(0, 6), label="number of indices")
    idx_layout = data.draw(h.layouts((count,)), label="indices layout")
    dtype = _dtype(device, data)
    a = layout.build(device, dtype)
    for index_dtype in h.supported(device, ("int", "uint")):
        if np.iinfo(h.np_dtype(index_dtype)).max < n:
            continue
        i = idx_layout.build(device, index_dtype, _index_values(n, index_dtype))
        expected = np.take(a.ref, i.ref, axis=axis)
        got = nd.take(a.x, i.x, axis=axis)
        h.assert_same(got, expected, dtype, exact=True, signed_zeros=True,
                      msg=f"take({dtype.name}, {index_dtype.name} indices {i.ref}, axis={axis}): ")  # fmt: skip
        h.assert_c_order(got, f"take(axis={axis}): ")


@h.hyp(scale=2)
@given(layout=h.layouts(h.shapes(min_dims=1, max_dims=3, min_side=1)), data=st.data())
def test_integer_array_index(device: nd.Device, layout: h.Layout, data: st.DataObject) -> None:
    """``x[idx]`` and ``x[:, idx]``/``x[..., idx]`` with 1-D and 2-D integer arrays (negative too)."""
    ndim = len(layout.shape)
    pos = data.draw(st.integers(0, ndim - 1), label="indexed axis")
    n = layout.shape[pos]
    idx_shape = data.draw(st.sampled_from([(3,), (2, 2), (0,)]), label="index shape")
    index_dtype = h.default(device, "indexing")
    i = data.draw(h.layouts(idx_shape), label="index layout").build(
        device, index_dtype, _index_values(n, index_dtype)
    )
    dtype = _dtype(device, data)
    a = layout.build(device, dtype)
    key = (slice(None),) * pos + (i.x,)
    ref_key = (slice(None),) * pos + (i.ref,)
    h.assert_same(a.x[key], a.ref[ref_key], dtype, exact=True, msg=f"x[{ref_key}]: ")
    if pos == ndim - 1 and ndim > 1:
        h.assert_same(a.x[..., i.x], a.ref[..., i.ref], dtype, exact=True, msg="x[..., idx]: ")


@h.hyp(scale=2)
@given(layout=h.layouts(h.shapes(min_dims=1, max_dims=3, min_side=1)), data=st.data())
def test_take_along_axis(device: nd.Device, layout: h.Layout, data: st.DataObject) -> None:
    shape = layout.shape
    ndim = len(shape)
    axis = data.draw(st.integers(-ndim, ndim - 1), label="axis")
    ax = axis % ndim
    idx_shape = tuple(
        data.draw(st.integers(0, 4)) if i == ax else data.draw(st.sampled_from([1, n]))
        for i, n in enumerate(shape)
    )
    idx_layout = data.draw(h.layouts(idx_shape), label="indices layout")
    dtype = _dtype(device, data)
    a = layout.build(device, dtype)
    index_dtype = h.default(device, "indexing")
    i = idx_layout.build(device, index_dtype, _index_values(shape[ax], index_dtype))
    expected = np.take_along_axis(a.ref, i.ref, axis=ax)
    got = nd.take_along_axis(a.x, i.x, axis=axis)
    h.assert_same(got, expected, dtype, exact=True, msg=f"take_along_axis(axis={axis}, indices {i.ref}): ")
    h.assert_c_order(got, f"take_along_axis(axis={axis}): ")


@h.hyp(scale=2)
@given(layout=h.layouts(h.shapes(min_dims=1)))
def test_nonzero(device: nd.Device, layout: h.Layout) -> None:
    """Every dtype; NaN is nonzero and -0.0 is zero; indices in the default indexing dtype."""
    index_dtype = h.default(device, "indexing")
    for dtype in h.supported(device):
        a = layout.build(device, dtype, h.Values(-1, 1, grid=1.0 if dtype.kind == "float" else None))
        got = nd.nonzero(a.x)
        expected = np.nonzero(a.ref)
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            h.assert_same(g, e, index_dtype, msg=f"nonzero({dtype.name}, {a.layout}): ")


def test_nonzero_long(device: nd.Device) -> None:
    """nonzero and ``x[mask]`` over rows long enough to be split into blocks (a kernel that
    counts blocks, then writes each at its offset): every dtype, random and all-false and
    all-true stretches, NaN and -0.0, a reversed and a strided view."""
    rng = np.random.default_rng(5)
    n = 100_003
    for dtype in h.supported(device):
        raw = rng.integers(0, 2, n) * rng.integers(1, 100, n)
        raw[20_000:60_000] = 0
        raw[70_000:90_000] = 7
        ref = raw.astype(h.np_dtype(dtype))
        if dtype.kind == "float":
            ref[[5, 80_000]] = np.nan
            ref[[6, 70_001]] = -0.0
        x = nd.asarray(ref, device=device)
        for view, want in ((x, ref), (x[::-1], ref[::-1]), (x[1::3], ref[1::3])):
            h.assert_same(nd.nonzero(view)[0], np.nonzero(want)[0], h.default(device, "indexing"),
                          msg=f"nonzero({dtype.name}) ")  # fmt: skip
            h.assert_same(view[view != 0] if dtype.kind != "bool" else view[view], want[want != 0], dtype,
                          exact=True, msg=f"x[mask] ({dtype.name}) ")  # fmt: skip


@h.hyp(scale=2)
@given(data=st.data())
def test_where(device: nd.Device, data: st.DataObject) -> None:
    """Three operands that broadcast together; scalars for x1/x2; mixed dtypes promote."""
    shape = data.draw(h.shapes(), label="shape")
    sc, s1, s2 = (data.draw(h.broadcastable_shape(shape)) for _ in range(3))
    shape = np.broadcast_shapes(sc, s1, s2)
    c = data.draw(h.layouts(sc), label="cond").build(device, nd.bool)
    d1, d2 = _dtype(device, data), _dtype(device, data)
    if not h.promotes(d1, d2) or nd.result_type(d1, d2) not in device.backend.dtypes:
        d2 = d1
    a = data.draw(h.layouts(s1), label="x1").build(device, d1)
    b = data.draw(h.layouts(s2), label="x2").build(device, d2)
    result = nd.result_type(d1, d2)
    t = h.np_dtype(result)
    with np.errstate(all="ignore"):
        expected = np.where(c.ref, a.ref.astype(t), b.ref.astype(t))
    h.assert_same(nd.where(c.x, a.x, b.x), expected, result, exact=True, signed_zeros=True, msg="where: ")
    scalar = {"bool": True, "int": -1, "uint": 3, "float": -0.0, "complex": 1j}[d1.kind]
    expected = np.where(c.ref, a.ref, np.asarray(scalar, a.ref.dtype))
    h.assert_same(
        nd.where(c.x, a.x, scalar), expected, d1, exact=True, signed_zeros=True, msg="where(c, x, s): "
    )
    expected = np.where(c.ref, np.asarray(scalar, a.ref.dtype), a.ref)
    h.assert_same(
        nd.where(c.x, scalar, a.x), expected, d1, exact=True, signed_zeros=True, msg="where(c, s, x): "
    )



def test_where_requires_bool_condition(device: nd.Device) -> None:
    ints = h.supported(device, ("int",))
    x = nd.zeros((3,), device=device)
    if ints:
        with pytest.raises(TypeError, match="where"):
            nd.where(nd.zeros((3,), dtype=ints[0], device=device), x, x)
