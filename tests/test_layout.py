"""_layout against NumPy: reshape-as-view decisions, basic indexing, contiguity."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ndplane import _layout


@st.composite
def strided_views(draw):  # type: ignore[no-untyped-def]
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    a = np.arange(int(np.prod(shape))).reshape(shape)
    perm = draw(st.permutations(range(len(shape))))
    a = a.transpose(perm)
    key = tuple(
        slice(draw(st.integers(0, n - 1)), None, draw(st.sampled_from([1, 2, -1]))) for n in a.shape
    )
    return a[key]


def _elem_strides(a: np.ndarray) -> tuple[int, ...]:
    return tuple(s // a.itemsize for s in a.strides)


@given(strided_views(), st.data())
def test_reshape_strides_match_numpy(a: np.ndarray, data: st.DataObject) -> None:
    n = a.size
    factors = [d for d in range(1, n + 1) if n % d == 0]
    first = data.draw(st.sampled_from(factors))
    new_shape = (first, n // first)
    strides = _layout.reshape_strides(a.shape, _elem_strides(a), new_shape)
    try:
        view = a.view()
        view.shape = new_shape  # NumPy raises when a copy would be needed
        numpy_can = True
    except AttributeError:
        numpy_can = False
    if strides is not None:
        base = a.base if a.base is not None else a
        offset = (a.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // a.itemsize
        got = np.lib.stride_tricks.as_strided(
            base.reshape(-1)[offset:], new_shape, [s * a.itemsize for s in strides]
        ) if all(s >= 0 for s in strides) else None
        if got is not None:
            np.testing.assert_array_equal(got, a.reshape(new_shape))
    assert (strides is not None) >= numpy_can  # never copy where NumPy can view


@given(strided_views(), st.data())
def test_basic_index_matches_numpy(a: np.ndarray, data: st.DataObject) -> None:
    key = [data.draw(st.one_of(st.integers(-n, n - 1), st.slices(n))) for n in a.shape]
    key.insert(data.draw(st.integers(0, len(key))), None)
    if data.draw(st.booleans()):
        cut = data.draw(st.integers(0, len(key)))
        key = key[:cut] + [Ellipsis] + [k for k in key[cut:] if k is None]
    key = tuple(key)
    shape, strides, _ = _layout.basic_index(a.shape, _elem_strides(a), 0, key)
    want = a[key]
    assert shape == want.shape
    assert all(s == w for s, w, n in zip(strides, _elem_strides(want), shape) if n > 1)


def test_contiguity_ignores_size_one_axes() -> None:
    assert _layout.is_contiguous((3, 1, 4), (4, 99, 1))
    assert not _layout.is_contiguous((3, 4), (1, 3))
    assert _layout.is_contiguous((0, 5), (7, 3))
    assert _layout.extent((3, 4), (-4, 1), 8) == (0, 11)
