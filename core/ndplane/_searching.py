"""Searching functions (Array API chapter): argmax, argmin, nonzero, where."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from . import _creation, _dispatch, _dtypes, _indexing, _layout, _manipulation, _sorting, _statistical
from ._array import Array, check_array
from ._statistical import _real, reduction

__all__ = ["argmax", "argmin", "nonzero", "where", "count_nonzero", "searchsorted"]


def _arg(op: str, x: Array, axis: int | None, keepdims: bool) -> Array:
    check_array(op, x)
    _real(op, x)
    index = x.device.backend.default_dtypes["indexing"]
    if axis is None:
        out = reduction(op, _manipulation.reshape(x, (-1,)), 0, False, index, op)
        return _manipulation.reshape(out, (1,) * x.ndim) if keepdims else out
    return reduction(op, x, _layout.normalize_axis(axis, x.ndim, op), keepdims, index, op)


def argmax(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the first maximum along ``axis`` (of the flattened array by default).

    >>> import ndplane as nd
    >>> nd.argmax(nd.asarray([[1, 9], [8, 2]]), axis=1).tolist()
    [1, 0]
    """
    return _arg("argmax", x, axis, keepdims)


def argmin(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the first minimum along ``axis`` (of the flattened array by default).

    >>> import ndplane as nd
    >>> nd.argmin(nd.asarray([3.0, -1.0, -1.0]))
    Array(1, dtype=int64, device='numpy:0')
    """
    return _arg("argmin", x, axis, keepdims)


def flat_nonzero(x: Array) -> Array:
    """Flat indices of the nonzero elements of ``x``, on the device: one ``fused:nonzero``
    call after a count where the backend declares it, else from primitives only.

    Each true element's rank among the true ones (an exclusive prefix sum) is where its
    flat index goes; false elements all go to one spare slot past the end.
    """

    backend = x.device.backend
    index = backend.default_dtypes["indexing"]
    if "fused:nonzero" in backend.capabilities:
        return _dispatch.fused_nonzero(x, int(count_nonzero(x)), index)
    flat = _manipulation.reshape(x, (-1,))
    truth = flat if flat.dtype is _dtypes.bool else _dispatch.binary("not_equal", flat, 0)
    n = flat.shape[0]
    count = int(_statistical.sum(truth, dtype=index))
    slot = _dispatch.binary("subtract", _statistical.cumulative_sum(truth, dtype=index), 1)
    dest = _dispatch.where(truth, slot, _creation.full((), count, dtype=index, device=x.device))
    out = _creation.zeros((1, count + 1), dtype=index, device=x.device)
    _dispatch.scatter_add_last(out, dest, _manipulation.reshape(_creation.arange(n, dtype=index, device=x.device), (1, n)))
    return _manipulation.reshape(out, (-1,))[:count]


def nonzero(x: Array, /) -> tuple[Array, ...]:
    """Indices of the nonzero elements, one array per axis.

    >>> import ndplane as nd
    >>> [a.tolist() for a in nd.nonzero(nd.asarray([[0, 3], [4, 0]]))]
    [[0, 1], [1, 0]]
    """
    check_array("nonzero", x)
    if x.ndim == 0:
        raise ValueError("nonzero: 0-d arrays are not allowed; use expand_dims first.")
    flat = flat_nonzero(x)
    if x.size == 0:  # NOTE: no element, no index; the strides below would divide by zero
        return tuple(_dispatch.copy_of(flat) for _ in x.shape)
    out = []
    stride = _layout.prod(x.shape)
    for n in x.shape:
        stride //= n
        idx = _dispatch.binary("floor_divide", flat, stride) if stride > 1 else flat
        out.append(_dispatch.binary("remainder", idx, n) if n > 0 else idx)
    return tuple(out)


def where(condition: Array, x1: Array | bool | int | float | complex, x2: Array | bool | int | float | complex, /) -> Array:
    """Elements of ``x1`` where ``condition`` is true, else of ``x2`` (broadcast together).

    >>> import ndplane as nd
    >>> x = nd.asarray([1.0, -2.0, 3.0])
    >>> nd.where(x > 0, x, 0.0).tolist()
    [1.0, 0.0, 3.0]
    """
    check_array("where", condition)

    arrays = [a for a in (x1, x2) if type(a) is Array]
    if not arrays:  # two scalars: the first becomes a 0-d array of its default dtype
        x1 = _creation.full((), cast("bool | int | float | complex", x1), device=condition.device)
        arrays = [x1]
    ref = arrays[0]
    dt = ref.dtype if len(arrays) == 1 else _dtypes.promote(ref.dtype, arrays[1].dtype, "where")
    defaults = ref.device.backend.default_dtypes
    for s in (x1, x2):
        if type(s) is not Array:
            dt = _dtypes.scalar_result_dtype(dt, s, defaults)
    a = x1 if type(x1) is Array else _creation._filled((), x1, dt, ref.device, "where")
    b = x2 if type(x2) is Array else _creation._filled((), x2, dt, ref.device, "where")
    return _dispatch.where(condition, a, b)


def count_nonzero(x: Array, /, *, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Array:
    """Number of nonzero (true) elements over ``axis``, in the default integer dtype.

    >>> import ndplane as nd
    >>> nd.count_nonzero(nd.asarray([[0, 1], [2, 3]]), axis=0).tolist()
    [1, 2]
    """
    check_array("count_nonzero", x)
    backend = x.device.backend
    index = backend.default_dtypes["integral"]
    if x.dtype is not _dtypes.bool and "fused:count_nonzero" in backend.capabilities:
        # NOTE: one pass over x, not a mask written and then summed (a third more traffic).
        axes = _layout.normalize_axes(axis, x.ndim, "count_nonzero")
        out = _dispatch.fused_reduce("count_nonzero", x, axes, index)
        if keepdims:
            shape = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
            out = _dispatch.view_as(out, shape, _layout.contiguous_strides(shape), 0)
        return out
    truth = x if x.dtype is _dtypes.bool else _dispatch.binary("not_equal", x, 0)
    return reduction("sum", truth, axis, keepdims, index, "count_nonzero")


def searchsorted(x1: Array, x2: Array | int | float, /, *, side: str = "left", sorter: Array | None = None) -> Array:
    """Indices where ``x2``'s elements would be inserted into the sorted 1-D ``x1`` to keep it sorted.

    A binary search per element where the backend declares ``fused:searchsorted``; else a
    sorted merge on the device: ``x1`` and ``x2`` are sorted together (stably, ``x2`` placed
    before equal ``x1`` elements for ``side="left"``, after them for ``"right"``), and each
    ``x2`` element's answer is the count of ``x1`` elements ranked before it. NaN sorts last
    and ``-0.0`` equals ``0.0``, as in :func:`sort`.

    >>> import ndplane as nd
    >>> x = nd.asarray([1.0, 2.0, 2.0, 3.0])
    >>> nd.searchsorted(x, nd.asarray([2.0, 0.0, 5.0])).tolist(), nd.searchsorted(x, nd.asarray([2.0]), side="right").tolist()
    ([1, 0, 4], [3])
    """

    check_array("searchsorted", x1)
    if x1.ndim != 1:
        raise ValueError(f"searchsorted: x1 must be 1-D; got shape {x1.shape}.")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right'; got {side!r}.")
    if type(x2) is not Array:
        x2 = _creation.full((), x2, dtype=_dtypes.scalar_result_dtype(x1.dtype, x2, x1.device.backend.default_dtypes),
                  device=x1.device)  # fmt: skip
    _dispatch.same_device("searchsorted", x1, x2)
    _real("searchsorted", x1)
    _real("searchsorted", x2)
    if sorter is not None:
        x1 = _indexing.take(x1, sorter)
    dt = _dtypes.promote(x1.dtype, x2.dtype, "searchsorted")
    a = x1 if x1.dtype is dt else _dispatch.cast(x1, dt)
    values = x2 if x2.dtype is dt else _dispatch.cast(x2, dt)
    index = x1.device.backend.default_dtypes["indexing"]
    if "fused:searchsorted" in x1.device.backend.capabilities:
        return _dispatch.fused_searchsorted(a, values, side == "right", index)
    v = _manipulation.reshape(values, (-1,))
    n, m = a.shape[0], v.shape[0]
    if m == 0 or n == 0:
        return _creation.zeros(x2.shape, dtype=index, device=x1.device)
    left = side == "left"
    perm = _sorting.argsort(_manipulation.concat([v, a] if left else [a, v]), stable=True)
    is_a = _dispatch.binary("greater_equal", perm, m) if left else _dispatch.binary("less", perm, n)
    before = _statistical.cumulative_sum(is_a, dtype=index)  # x1 elements ranked at or before each position
    # scatter each x2 element's count to its own slot; x1 positions go to a spare slot m
    slot = perm if left else _dispatch.binary("subtract", perm, n)
    slot = _dispatch.where(is_a, _creation.full((), m, dtype=index, device=x1.device), _dispatch.cast(slot, index))
    out = _creation.zeros((1, m + 1), dtype=index, device=x1.device)
    _dispatch.scatter_add_last(out, slot, _manipulation.reshape(_dispatch.where(is_a, _creation.zeros((), dtype=index, device=x1.device),
                                                                  before), (1, -1)))  # fmt: skip
    return _manipulation.reshape(_manipulation.reshape(out, (-1,))[:m], x2.shape)
