"""The rest of the Array API 2024.12 surface, differential against NumPy, on every backend.

Composites over primitives (so every backend has them): repeat, roll, tile, diff,
count_nonzero, searchsorted, the set functions, meshgrid, tril/triu; advanced
indexing (integer arrays mixed with slices, ints and None; boolean masks anywhere;
assignment through both); take_along_axis; DLPack; ``__array_namespace_info__``.
"""

from __future__ import annotations

import gc
import operator
from typing import Any, Literal

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ndplane as nd
from ndplane.backend import DLPACK
from ndplane.conformance import _helpers as h

SMALL = h.Values(-5, 5, special=False)


def _index_dtype(device: nd.Device) -> nd.DType:
    return h.default(device, "indexing")


# ---------------------------------------------------------------------------
# manipulation, utility, searching
# ---------------------------------------------------------------------------


@h.hyp()
@given(data=st.data())
def test_repeat_roll_tile(device: nd.Device, data: st.DataObject) -> None:
    shape = data.draw(h.shapes(min_dims=1, max_dims=3), label="shape")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    reps = data.draw(st.integers(0, 3), label="repeats")
    counts = data.draw(st.lists(st.integers(0, 3), min_size=shape[axis], max_size=shape[axis]), label="counts")
    shift = data.draw(st.integers(-7, 7), label="shift")
    tiles = data.draw(st.lists(st.integers(0, 2), max_size=4).map(tuple), label="tiles")
    for dtype in h.supported(device):
        a = data.draw(h.arrays(device, dtype, shape), label=f"x {dtype.name}")
        h.assert_same(nd.repeat(a.x, reps, axis=axis), np.repeat(a.ref, reps, axis=axis), dtype, exact=True)
        h.assert_same(nd.repeat(a.x, reps), np.repeat(a.ref, reps), dtype, exact=True)
        idx = nd.asarray(np.asarray(counts, np.int64), dtype=_index_dtype(device), device=device)
        h.assert_same(nd.repeat(a.x, idx, axis=axis), np.repeat(a.ref, counts, axis=axis), dtype, exact=True)
        h.assert_same(nd.roll(a.x, shift, axis=axis), np.roll(a.ref, shift, axis=axis), dtype, exact=True)
        h.assert_same(nd.roll(a.x, shift), np.roll(a.ref, shift), dtype, exact=True)
        h.assert_same(nd.tile(a.x, tiles), np.tile(a.ref, tiles), dtype, exact=True)


@h.hyp()
@given(data=st.data(), n=st.integers(0, 3))
def test_diff_count_nonzero(device: nd.Device, data: st.DataObject, n: int) -> None:
    shape = data.draw(h.shapes(min_dims=1, max_dims=3), label="shape")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    for dtype in h.supported(device, ("int", "float", "complex", "bool")):
        a = data.draw(h.arrays(device, dtype, shape, SMALL), label=f"x {dtype.name}")
        if dtype.kind != "bool" or n <= 1:
            ref = np.diff(a.ref, n=n, axis=axis)
            h.assert_same(nd.diff(a.x, n=n, axis=axis), ref, dtype, exact=True)
            if shape[axis]:
                first = (slice(None),) * (axis % len(shape)) + (slice(0, 1),)
                got = nd.diff(a.x, axis=axis, prepend=a.x[first], append=a.x[first])
                expected = np.diff(a.ref, axis=axis, prepend=a.ref[first], append=a.ref[first])
                h.assert_same(got, expected, dtype, exact=True)
        ax = data.draw(st.none() | st.just(axis) | st.just(tuple(range(len(shape)))), label="count axis")
        keep = data.draw(st.booleans(), label="keepdims")
        got = nd.count_nonzero(a.x, axis=ax, keepdims=keep)
        assert got.dtype is h.default(device, "integral")
        h.assert_same(got, np.count_nonzero(a.ref, axis=ax, keepdims=keep))


@h.hyp()
@given(data=st.data(), side=st.sampled_from(["left", "right"]), sorter=st.booleans())
def test_searchsorted(device: nd.Device, data: st.DataObject, side: Literal["left", "right"],
                      sorter: bool) -> None:  # fmt: skip
    n = data.draw(st.integers(0, 8), label="n")
    shape = data.draw(h.shapes(max_dims=2), label="shape")
    for dtype in h.supported(device, ("int", "uint", "float")):
        a = data.draw(h.arrays(device, dtype, (n,), h.Values(-3, 3)), label=f"x1 {dtype.name}")
        v = data.draw(h.arrays(device, dtype, shape, h.Values(-4, 4)), label=f"x2 {dtype.name}")
        base = np.sort(a.ref)
        if sorter:
            perm = np.random.default_rng(n).permutation(n)
            x1 = nd.asarray(base[perm], device=device)
            order = nd.asarray(np.argsort(base[perm], kind="stable"), dtype=_index_dtype(device), device=device)
            got = nd.searchsorted(x1, v.x, side=side, sorter=order)
        else:
            got = nd.searchsorted(nd.asarray(base, device=device), v.x, side=side)
        assert got.dtype is _index_dtype(device)
        h.assert_same(got, np.searchsorted(base, v.ref, side=side))


def test_searchsorted_long(device: nd.Device) -> None:
    """Many values (a kernel that searches many at once, on several threads) in bins with
    repeats: every real dtype and bool, NaN and -0.0 on both sides, infinities, values below
    and above every bin, a strided ``x1``, a transposed and reversed ``x2``, no bins, one bin."""
    rng = np.random.default_rng(9)
    for dtype in h.supported(device, ("bool", "int", "uint", "float")):
        np_dt = h.np_dtype(dtype)
        bins = rng.integers(0, 100, 2 * 1001).astype(np_dt)
        vals = rng.integers(-5, 106, (101, 203)).astype(np_dt) if dtype.kind != "uint" else \
            rng.integers(0, 106, (101, 203)).astype(np_dt)  # fmt: skip
        if dtype.kind == "float":
            bins[[3, 40, 41, 900]] = [np.nan, -0.0, np.inf, -np.inf]
            vals[0, :6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, np.nan]
        base = np.sort(bins)[::2]  # sorted, read with a stride
        x1 = nd.asarray(np.sort(bins), device=device)[::2]
        v = nd.asarray(vals, device=device)
        for side in ("left", "right"):
            for got, want_v in ((v, vals), (v.T[::-1], vals.T[::-1])):
                h.assert_same(nd.searchsorted(x1, got, side=side), np.searchsorted(base, want_v, side=side),
                              msg=f"searchsorted({dtype.name}, {side}) ")  # fmt: skip
            for k in (0, 1):
                h.assert_same(nd.searchsorted(x1[:k], v, side=side), np.searchsorted(base[:k], vals, side=side),
                              msg=f"searchsorted({dtype.name}, {k} bins, {side}) ")  # fmt: skip


# ---------------------------------------------------------------------------
# set functions
# ---------------------------------------------------------------------------


def _np_unique(ref: np.ndarray) -> tuple[np.ndarray, ...]:
    values, index, inverse, counts = np.unique(ref.reshape(-1), return_index=True, return_inverse=True,
                                               return_counts=True, equal_nan=False)  # fmt: skip
    return values, index, inverse.reshape(ref.shape), counts


@h.hyp()
@given(data=st.data())
def test_unique(device: nd.Device, data: st.DataObject) -> None:
    shape = data.draw(h.shapes(max_dims=3), label="shape")
    for dtype in h.supported(device, ("bool", "int", "uint", "float")):
        a = data.draw(h.arrays(device, dtype, shape, h.Values(-3, 3, grid=0.5 if dtype.kind == "float" else None)),
                      label=f"x {dtype.name}")  # fmt: skip
        values, index, inverse, counts = _np_unique(a.ref)
        h.assert_same(nd.unique_values(a.x), values, dtype, exact=True)
        r = nd.unique_all(a.x)
        h.assert_same(r.values, values, dtype, exact=True)
        h.assert_same(r.indices, index, _index_dtype(device))
        h.assert_same(r.inverse_indices, inverse, _index_dtype(device))
        h.assert_same(r.counts, counts, _index_dtype(device))
        c = nd.unique_counts(a.x)
        h.assert_same(c.counts, counts, _index_dtype(device))
        i = nd.unique_inverse(a.x)
        h.assert_same(i.inverse_indices, inverse, _index_dtype(device))


def test_unique_long(device: nd.Device) -> None:
    """The set functions over 10^5 elements (about 8 copies of each value, in random order), in
    every real dtype and a reversed view: sorts and position searches long enough to be split
    across threads."""
    rng = np.random.default_rng(9)
    raw = rng.integers(0, 12_500, 100_000)
    for dtype in h.supported(device, ("bool", "int", "uint", "float")):
        ref = raw.astype(h.np_dtype(dtype))[::-1]
        x = nd.flip(nd.asarray(ref[::-1], device=device))
        values, index, inverse, counts = _np_unique(ref)
        r = nd.unique_all(x)
        h.assert_same(r.values, values, dtype, exact=True, msg=f"{dtype.name} ")
        h.assert_same(r.indices, index, _index_dtype(device))
        h.assert_same(r.inverse_indices, inverse, _index_dtype(device))
        h.assert_same(r.counts, counts, _index_dtype(device))
        c = nd.unique_counts(x)
        h.assert_same(c.values, values, dtype, exact=True)
        h.assert_same(c.counts, counts, _index_dtype(device))
        h.assert_same(nd.unique_values(x), values, dtype, exact=True)


def test_unique_nans_are_distinct(device: nd.Device) -> None:
    dt = h.supported(device, ("float",))[-1]
    x = nd.asarray(np.array([np.nan, 1.0, np.nan, -0.0, 0.0], h.np_dtype(dt)), device=device)
    r = nd.unique_counts(x)
    assert r.values.shape == (4,) and r.counts.tolist()[:2] == [2, 1]


# ---------------------------------------------------------------------------
# creation
# ---------------------------------------------------------------------------


@h.hyp()
@given(data=st.data(), k=st.integers(-4, 4), indexing=st.sampled_from(["xy", "ij"]))
def test_meshgrid_tril_triu(device: nd.Device, data: st.DataObject, k: int,
                            indexing: Literal["xy", "ij"]) -> None:  # fmt: skip
    shape = data.draw(h.shapes(min_dims=2, max_dims=4), label="shape")
    sizes = data.draw(st.lists(st.integers(0, 3), max_size=3), label="sizes")
    for dtype in h.supported(device):
        a = data.draw(h.arrays(device, dtype, shape), label=f"x {dtype.name}")
        h.assert_same(nd.tril(a.x, k=k), np.tril(a.ref, k=k), dtype, exact=True)
        h.assert_same(nd.triu(a.x, k=k), np.triu(a.ref, k=k), dtype, exact=True)
        vecs = [np.arange(n).astype(h.np_dtype(dtype)) for n in sizes]
        got = nd.meshgrid(*(nd.asarray(v, device=device) for v in vecs), indexing=indexing)
        for g, e in zip(got, np.meshgrid(*vecs, indexing=indexing)):
            h.assert_same(g, e, dtype, exact=True)


# ---------------------------------------------------------------------------
# indexing
# ---------------------------------------------------------------------------


@st.composite
def _advanced_key(draw, shape: tuple[int, ...]):
    """A NumPy-style key: per axis a slice, an int, an integer array (broadcastable shapes) or a
    boolean mask over some axes; sometimes a None or an Ellipsis."""
    key: list = []
    arr_shape = draw(st.sampled_from([(), (2,), (1, 2), (2, 1)]))
    axis = 0
    while axis < len(shape):
        n = shape[axis]
        choice = draw(st.sampled_from(["slice", "int", "array", "mask", "none"]))
        if choice == "none":
            key.append(None)
            continue
        if choice == "int" and n:
            key.append(draw(st.integers(-n, n - 1)))
        elif choice == "array" and n:
            idx = draw(st.lists(st.integers(-n, n - 1), min_size=int(np.prod(arr_shape)),
                                max_size=int(np.prod(arr_shape))))  # fmt: skip
            key.append(np.asarray(idx, np.int64).reshape(arr_shape))
        elif choice == "mask":
            k = draw(st.integers(1, len(shape) - axis))
            seed = draw(st.integers(0, 2**16))
            key.append(np.random.default_rng(seed).random(shape[axis : axis + k]) < 0.5)
            axis += k
            continue
        else:
            key.append(slice(draw(st.sampled_from([None, 1, -1])), None, draw(st.sampled_from([None, 2, -1]))))
        axis += 1
    if key and draw(st.booleans()):
        key = key[:-1] + [Ellipsis] if not isinstance(key[-1], np.ndarray) or key[-1].dtype != bool else key
    return tuple(key)


def _nd_key(key: tuple, device: nd.Device) -> tuple:
    def conv(k: np.ndarray) -> nd.Array:
        return nd.asarray(k, dtype=None if k.dtype == bool else _index_dtype(device), device=device)

    return tuple(conv(k) if isinstance(k, np.ndarray) else k for k in key)


def _np_result(ref: np.ndarray, key: tuple) -> np.ndarray | None:
    try:
        return ref[key]
    except IndexError:
        return None


@h.hyp(2)
@given(data=st.data())
def test_advanced_getitem_setitem(device: nd.Device, data: st.DataObject) -> None:
    shape = data.draw(h.shapes(min_dims=1, max_dims=3, min_side=1), label="shape")
    key = data.draw(_advanced_key(shape), label="key")
    for dtype in h.supported(device):
        a = data.draw(h.arrays(device, dtype, shape, broadcast=False), label=f"x {dtype.name}")
        expected = _np_result(a.ref, key)
        if expected is None:
            with pytest.raises(IndexError):
                a.x[_nd_key(key, device)]
            continue
        h.assert_same(a.x[_nd_key(key, device)], expected, dtype, exact=True)
        # assignment: a scalar, then an array of the indexed shape (only unique targets, since
        # the order of duplicate writes is unspecified)
        target = nd.asarray(a.ref, device=device, copy=True)
        ref = np.array(a.ref, copy=True)
        value = np.asarray(h.Values(-3, 3, special=False).sample(np.random.default_rng(0), dtype, expected.shape))
        probe = np.arange(a.ref.size).reshape(a.ref.shape)[key]
        if np.unique(probe).size == probe.size:
            target[_nd_key(key, device)] = nd.asarray(value, device=device)
            ref[key] = value
            h.assert_same(target, ref, dtype, exact=True)
        scalar = True if dtype.kind == "bool" else 1
        target[_nd_key(key, device)] = scalar
        ref[key] = scalar
        h.assert_same(target, ref, dtype, exact=True)


def test_index_bounds_of_every_integer_dtype(device: nd.Device) -> None:
    """The bounds check of integer indices (a ``min`` and a ``max``, or one ``fused:minmax``
    call) in every integer dtype and layout: the extremes at either end, negative indices
    wrapped, a strided and a reversed index view, a 2-D index array; an index one past either
    end raises IndexError naming it."""
    n = 100
    x = nd.asarray(np.arange(2 * n, dtype=np.float64).reshape(2, n) if nd.float64 in device.backend.dtypes
                   else np.arange(2 * n, dtype=np.float32).reshape(2, n), device=device)  # fmt: skip
    ref = x.to_numpy()
    for dtype in h.supported(device, ("int", "uint")):
        lo = 0 if dtype.kind == "uint" else -n
        hi = min(n - 1, int(np.iinfo(dtype.dtype).max))
        raw = np.array([hi, 3, lo, 7, 0, lo + 1, hi - 1, 5], dtype=dtype.dtype)
        idx = nd.asarray(raw, device=device)
        for view, want in ((idx, raw), (idx[::2], raw[::2]), (idx[::-1], raw[::-1]), (idx[1:-1], raw[1:-1])):
            h.assert_same(nd.take(x, view, axis=1), np.take(ref, want, axis=1), x.dtype, exact=True)
        idx2 = nd.reshape(nd.concat([idx, idx[::-1]]), (2, raw.size))
        want2 = np.take_along_axis(ref, np.stack([raw, raw[::-1]]).astype(np.int64), axis=1)
        h.assert_same(nd.take_along_axis(x, idx2, axis=1), want2, x.dtype, exact=True)
        past = [n] + ([lo - 1] if dtype.kind == "int" else [])
        for bad in past:
            if not np.can_cast(np.min_scalar_type(bad), dtype.dtype):
                continue
            wrong = nd.asarray(np.concatenate([raw, np.array([bad], dtype=dtype.dtype)]), device=device)
            with pytest.raises(IndexError, match=f"index {bad} is out of bounds"):
                nd.take(x, wrong, axis=1)


def test_indexing_errors(device: nd.Device) -> None:
    x = nd.zeros((3, 4), device=device)
    idx = _index_dtype(device)
    with pytest.raises(IndexError, match="out of bounds"):
        x[nd.asarray([0, 3], dtype=idx, device=device)]
    with pytest.raises(IndexError, match="out of bounds"):
        x[:, nd.asarray([-5], dtype=idx, device=device)] = 1.0
    with pytest.raises(IndexError, match="boolean index"):
        x[nd.ones((2,), dtype=nd.bool, device=device)]
    with pytest.raises(IndexError):
        x[nd.asarray([0.5], device=device)]


@h.hyp()
@given(data=st.data())
def test_take_along_axis(device: nd.Device, data: st.DataObject) -> None:
    shape = data.draw(h.shapes(min_dims=1, max_dims=3, min_side=1), label="shape")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    m = data.draw(st.integers(0, 4), label="m")
    idx_shape = list(shape)
    idx_shape[axis] = m
    n = shape[axis]
    seed = data.draw(st.integers(0, 2**16), label="seed")
    idx = np.random.default_rng(seed).integers(-n, n, size=idx_shape)
    for dtype in h.supported(device):
        a = data.draw(h.arrays(device, dtype, shape), label=f"x {dtype.name}")
        got = nd.take_along_axis(a.x, nd.asarray(idx, dtype=_index_dtype(device), device=device), axis=axis)
        h.assert_same(got, np.take_along_axis(a.ref, idx, axis=axis), dtype, exact=True)


# ---------------------------------------------------------------------------
# interchange and inspection
# ---------------------------------------------------------------------------


@h.hyp()
@given(data=st.data())
def test_dlpack(device: nd.Device, data: st.DataObject) -> None:
    shape = data.draw(h.shapes(max_dims=3), label="shape")
    for dtype in h.supported(device):
        a = data.draw(h.arrays(device, dtype, shape), label=f"x {dtype.name}")
        y = nd.from_dlpack(a.x)
        assert y.device == a.x.device
        h.assert_same(y, a.ref, dtype, exact=True)
        h.assert_same(nd.from_dlpack(np.asarray(a.ref), device=device), a.ref, dtype, exact=True)
        try:
            kind = a.x.__dlpack_device__()
        except BufferError:
            continue
        if kind == (1, 0):
            h.assert_values(np.from_dlpack(a.x), a.ref, dtype, exact=True)
    backend = device.backend
    if DLPACK in backend.capabilities and backend.dlpack_device == (1, 0):
        src = np.zeros(2, h.np_dtype(h.supported(device, ("float",))[-1]))
        y = nd.from_dlpack(src, device=device, copy=False)  # NumPy's memory, shared
        src[1] = 5
        assert y.tolist() == [0, 5]
    else:
        with pytest.raises(BufferError):
            nd.from_dlpack(np.zeros(2), device=device, copy=False)


class _Producer:
    """Any DLPack producer (not an ndplane Array, so from_dlpack takes no shortcut)."""

    def __init__(self, x: Any) -> None:
        self.x = x

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.x.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.x.__dlpack_device__()


def test_dlpack_shares_device_memory_both_ways(device: nd.Device) -> None:
    """Backends with the "dlpack" capability export their memory and wrap a producer's on the
    same device without a copy (the cuda device and PyTorch CUDA tensors, say); the wrapped
    memory stays valid after the producer's Array is gone, and is freed with the last user."""
    backend = device.backend
    if DLPACK not in backend.capabilities:
        pytest.skip(f"{device} does not declare the dlpack capability")
    dtype = h.supported(device, ("float",))[-1]
    x = nd.arange(6, dtype=dtype, device=device)
    assert x.__dlpack_device__() == backend.dlpack_device
    y = nd.from_dlpack(_Producer(nd.reshape(x, (2, 3))), device=device, copy=False)
    assert y.device == device and y.shape == (2, 3)
    y[0, 1] = 40  # through the wrap, into x's memory
    assert x.tolist() == [0, 40, 2, 3, 4, 5]
    copied = nd.from_dlpack(_Producer(x), device=device, copy=True)
    copied[0] = 7
    assert x[0] == 0
    del x
    gc.collect()
    assert y.tolist() == [[0, 40, 2], [3, 4, 5]]
    with pytest.raises(BufferError):
        x2 = nd.arange(3, dtype=dtype, device=device)
        x2.__dlpack__(dl_device=(99, 0))
    # __cuda_array_interface__ exactly where the memory is CUDA's
    assert hasattr(y, "__cuda_array_interface__") == (backend.dlpack_device[0] == 2)


def test_exported_memory_outlives_the_array(device: nd.Device) -> None:
    x = nd.arange(5, device=device)
    if "host" not in device.backend.capabilities:
        pytest.skip(f"{device} is not host-resident")
    view = np.from_dlpack(x)
    del x
    gc.collect()
    assert view.tolist() == [0, 1, 2, 3, 4]
    del view
    gc.collect()


def test_namespace_info(device: nd.Device) -> None:
    info = nd.__array_namespace_info__()
    caps = info.capabilities(device=device)
    assert caps["boolean indexing"] is True and caps["data-dependent shapes"] is True
    assert caps["max dimensions"] is None
    defaults = info.default_dtypes(device=device)
    assert defaults == dict(device.backend.default_dtypes)
    dtypes = info.dtypes(device=device)
    assert set(dtypes.values()) <= set(device.backend.dtypes)
    for name, dt in info.dtypes(device=device, kind=("bool", "real floating")).items():
        assert dt.kind in ("bool", "float") and dtypes[name] is dt
    assert all(d in nd.devices() for d in info.devices())
    # info.devices() lists only devices with every standard dtype (array-api-tests sends any of
    # them to any of these devices, as from_dlpack(x, device=d) does)
    standard = {dt for name, dt in info.dtypes(device=device).items() if name != "float16"}
    assert (device in info.devices()) == (len(standard) == 13), sorted(dt.name for dt in standard)


@h.hyp()
@given(data=st.data())
def test_broadcast_arrays(device: nd.Device, data: st.DataObject) -> None:
    """Views of every input at the common shape, sharing the inputs' storage."""
    shape = data.draw(h.shapes(max_dims=3), label="shape")
    s1, s2 = data.draw(h.mutually_broadcastable(shape))
    dtype = data.draw(st.sampled_from(h.supported(device)), label="dtype")
    a, b = (data.draw(h.arrays(device, dtype, s), label=f"x{i}") for i, s in enumerate((s1, s2)))
    out = nd.broadcast_arrays(a.x, b.x)
    for got, x, want in zip(out, (a.x, b.x), np.broadcast_arrays(a.ref, b.ref)):
        h.assert_same(got, want, dtype, exact=True)
        assert got._storage is x._storage, "broadcast_arrays must return views"


def test_can_cast_and_isdtype(device: nd.Device) -> None:
    """The dtype functions over every pair of the device's dtypes, against the standard's rules."""
    kinds = {"bool": "bool", "int": "signed integer", "uint": "unsigned integer",
             "float": "real floating", "complex": "complex floating"}  # fmt: skip
    ds = h.supported(device)
    for a in ds:
        x = nd.zeros((2,), dtype=a, device=device)
        for b in ds:
            assert nd.can_cast(a, b) is nd.can_cast(x, b) is (h.promotes(a, b) and nd.result_type(a, b) is b)
        assert nd.isdtype(a, kinds[a.kind])
        assert nd.isdtype(a, "numeric") is (a.kind != "bool")
        assert nd.isdtype(a, "integral") is (a.kind in ("int", "uint"))
        assert nd.isdtype(a, ("bool", a)) and not nd.isdtype(a, tuple(d for d in ds if d is not a))


def test_default_device_and_grad_modes(device: nd.Device) -> None:
    """``default_device`` makes creation land on ``device``; ``no_grad`` records nothing there
    and ``enable_grad`` inside it records again."""
    with nd.default_device(device):
        assert nd.get_default_device() == device
        x = nd.ones((3,), dtype=h.default(device, "real floating"))
    assert x.device == device
    x.requires_grad = True
    with nd.no_grad():
        assert not (x * 2).requires_grad
        with nd.enable_grad():
            y = (x * 2).sum()
    y.backward()
    assert x.grad is not None
    h.assert_same(x.grad, np.full(3, 2.0), x.dtype)


def test_fallback_mode(device: nd.Device) -> None:
    """Inside ``fallback_mode("error")`` nothing falls back silently: every native op still runs,
    and an op the backend lacks raises FallbackError naming it; the mode is restored on exit."""
    x = nd.asarray(np.arange(4), dtype=h.default(device, "integral"), device=device)
    with nd.fallback_mode("error"):
        try:
            total = int(nd.sum(x))
        except nd.FallbackError as e:
            assert "sum" in str(e)
        else:
            assert total == 6
    with nd.fallback_mode("allow"):
        assert int(nd.sum(x)) == 6
    with pytest.raises(ValueError, match="fallback_mode"):
        with nd.fallback_mode("sometimes"):
            pass


def test_python_conversions(device: nd.Device) -> None:
    """``bool``/``int``/``float``/``complex``/``operator.index`` of one-element arrays, ``len``,
    iteration, ``__array__`` (host devices) and ``__array_namespace__`` on every dtype."""
    for dtype in h.supported(device):
        v = np.array([[3]], h.np_dtype(dtype))
        three = 1 if dtype.kind == "bool" else 3
        x = nd.asarray(v, device=device)
        assert bool(x) is True and len(x) == 1 and [r.shape for r in x] == [(1,)]
        if dtype.kind != "complex":
            assert int(x) == three and float(x) == three
        assert complex(x) == three
        if dtype.kind in ("int", "uint"):
            assert operator.index(x) == three
        else:
            with pytest.raises(TypeError):
                operator.index(x)
        with pytest.raises(TypeError):
            int(nd.zeros((2,), dtype=dtype, device=device))
        assert x.__array_namespace__() is nd
        if "host" in device.backend.capabilities:
            np.testing.assert_array_equal(np.asarray(x), v)
        else:
            with pytest.raises(TypeError, match=r"to_device|to_numpy"):
                np.asarray(x)
    with pytest.raises(TypeError):
        len(nd.zeros((), device=device, dtype=h.supported(device)[0]))
