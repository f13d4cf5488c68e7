"""Indexing functions (Array API chapter): ``take`` and ``take_along_axis``; also ``repeat``
(Manipulation chapter), a gather with repeated indices.

The subscripts ``x[key]`` and ``x[key] = value`` are :mod:`ndplane._subscript`, a layer
above: they need searching and sorting, which need these.
"""

from __future__ import annotations

import operator

from . import _dispatch, _graph, _layout
from ._array import Array, check_array
from ._creation import arange, zeros
from ._manipulation import broadcast_to, expand_dims, moveaxis, reshape
from ._statistical import cumulative_sum
from ._statistical import min as _min
from ._statistical import sum as _sum
from .backend.base import Ref
from .backend.ops import CHECKED_INDICES

__all__ = ["take", "take_along_axis", "repeat"]


# ---------------------------------------------------------------------------
# take, take_along_axis
# ---------------------------------------------------------------------------


def take(x: Array, indices: Array, /, *, axis: int | None = None) -> Array:
    """Elements of ``x`` at integer ``indices`` (1-D) along ``axis``.

    Negative indices count from the end; out-of-range indices raise IndexError.

    >>> import ndplane as nd
    >>> nd.take(nd.asarray([[1, 2, 3], [4, 5, 6]]), nd.asarray([2, -3]), axis=1).tolist()
    [[3, 1], [6, 4]]
    """
    if type(x) is not Array or type(indices) is not Array:
        raise TypeError("take: x and indices must be ndplane arrays.")
    _dispatch.same_device("take", x, indices)
    if indices.dtype.kind not in ("int", "uint"):
        raise TypeError(f"take: indices must have an integer dtype; got {indices.dtype.name}.")
    if indices.ndim != 1:
        raise ValueError(f"take: indices must be 1-D; got shape {indices.shape}.")
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"take: axis is required for a {x.ndim}-D array.")
        axis = 0
    if x.ndim == 0:
        raise ValueError("take: x must have at least one dimension.")
    ax = _layout.normalize_axis(axis, x.ndim, "take")
    if (x.size and indices.size and CHECKED_INDICES in x.device.backend.capabilities
            and indices.dtype is x.device.backend.default_dtypes["indexing"]):  # fmt: skip
        # NOTE: the kernel checks the indices as it gathers (a non-empty result: it runs); the
        # check below runs only after it refused one, to name it or to wrap negative indices.
        try:
            return take_in_range(x, indices, ax)
        except IndexError:
            pass
    return take_in_range(x, normalize_indices(indices, x.shape[ax], f"take (axis {ax})"), ax)


def take_in_range(x: Array, indices: Array, ax: int) -> Array:
    """``take`` along axis ``ax`` (normalized) of 1-D ``indices`` already checked to lie in
    [0, n) and in the device's indexing dtype (no bounds check, no host sync); differentiable."""
    # NOTE: a C-contiguous x only: compacting a large strided x for a few rows would cost more
    # than the strided gather below.
    if ax < x.ndim - 1 and x._ref.contiguous and "fused:take_axis" in x.device.backend.capabilities:
        out = _take_axis(x, indices, ax)
    else:
        moved, _, _ = _dispatch.move_axes_last(x, (ax,))
        # NOTE: C order, as the fused road's: a result's layout must not depend on the road
        # (whether a later reshape copies or views would differ between devices).
        out = _dispatch.compact(_dispatch._move_axis_back(_dispatch.take_last(moved, indices), ax))
    if x.requires_grad:
        _graph.record("take", out, (x, indices), (indices,), (x.shape, ax))
    return out


def _take_axis(x: Array, indices: Array, ax: int) -> Array:
    """The backend's ``fused:take_axis`` on a C-contiguous ``x`` seen as (A, N, B) around axis
    ``ax``: a C-contiguous result (``take`` along the last axis of the moved view comes back
    transposed)."""
    shape = x.shape[:ax] + indices.shape + x.shape[ax + 1 :]
    out = _dispatch.empty(shape, x.dtype, x.device, "take")
    if out.size:
        a, b = _layout.prod(x.shape[:ax]), _layout.prod(x.shape[ax + 1 :])
        keep: list[Array] = []
        xr, ir = x._ref, _dispatch.compact_ref(indices, keep)
        x3 = Ref(xr.buffer, xr.dtype, (a, x.shape[ax], b), (x.shape[ax] * b, b, 1), xr.offset, xr.size, True)
        o3 = Ref(out._ref.buffer, x.dtype, (a, indices.shape[0], b), (indices.shape[0] * b, b, 1), 0, out.size, True)
        x.device.backend.fused("take_axis", (x3, ir), o3, {})
    return out


def normalize_indices(indices: Array, n: int, name: str) -> Array:
    """Bounds-check integer ``indices`` against an axis of length ``n`` and make them non-negative,
    in the device's indexing dtype."""
    index_dtype = indices.device.backend.default_dtypes["indexing"]
    if indices.size:
        lo, hi = _dispatch.bounds(indices)
        if lo < -n or hi >= n:
            bad = lo if lo < -n else hi
            raise IndexError(f"{name}: index {bad} is out of bounds for size {n}.")
        if indices.dtype is not index_dtype:
            indices = _dispatch.cast(indices, index_dtype)
        if lo < 0:
            indices = _dispatch.where(
                _dispatch.binary("less", indices, 0), _dispatch.binary("add", indices, n), indices
            )
    elif indices.dtype is not index_dtype:
        indices = _dispatch.cast(indices, index_dtype)
    return indices


def take_along_axis(x: Array, indices: Array, /, *, axis: int = -1) -> Array:
    """Pick values along ``axis`` with an index array of ``x``'s rank (as ``argsort`` returns).

    >>> import ndplane as nd
    >>> x = nd.asarray([[30, 10, 20]])
    >>> nd.take_along_axis(x, nd.argsort(x, axis=1), axis=1).tolist()
    [[10, 20, 30]]
    """
    if type(x) is not Array or type(indices) is not Array:
        raise TypeError("take_along_axis: x and indices must be ndplane arrays.")
    _dispatch.same_device("take_along_axis", x, indices)
    if indices.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices must have x's rank {x.ndim}; got {indices.ndim}.")
    if indices.dtype.kind not in ("int", "uint"):
        raise TypeError(f"take_along_axis: indices must have an integer dtype; got {indices.dtype.name}.")
    ax = _layout.normalize_axis(axis, x.ndim, "take_along_axis")
    n = x.shape[ax]
    shape = _layout.broadcast_shapes(
        x.shape[:ax] + (1,) + x.shape[ax + 1 :], indices.shape[:ax] + (1,) + indices.shape[ax + 1 :],
        name="take_along_axis",
    )[:ax] + (indices.shape[ax],) + _layout.broadcast_shapes(x.shape[ax + 1 :], indices.shape[ax + 1 :])
    xs = broadcast_to(x, shape[:ax] + (n,) + shape[ax + 1 :])
    backend = x.device.backend
    if "fused:take_along" in backend.capabilities and not x.requires_grad and x.size and indices.size:
        # NOTE: one gather of each row at its own indices, where the road below checks the
        # bounds (a pass and a read to the host), offsets every index by its row and takes flat.
        index_dtype = backend.default_dtypes["indexing"]
        if CHECKED_INDICES in backend.capabilities:
            try:
                raw = indices if indices.dtype is index_dtype else _dispatch.cast(indices, index_dtype)
                return _take_along(xs, raw, shape, ax)
            except IndexError:
                pass  # named, or negative indices wrapped, by the check below
        return _take_along(xs, normalize_indices(indices, n, "take_along_axis"), shape, ax)
    idx = normalize_indices(indices, n, "take_along_axis")
    # Flatten to one gather over x moved to (..., n): offset each row's indices by row * n.
    idx = broadcast_to(idx, shape)
    xm = moveaxis(xs, ax, -1)
    im = moveaxis(idx, ax, -1)
    rows = _layout.prod(xm.shape[:-1])
    base = reshape(arange(rows, dtype=idx.dtype, device=x.device), im.shape[:-1] + (1,))
    flat = reshape(_dispatch.binary("add", im, _dispatch.binary("multiply", base, n)), (-1,))
    out = take_in_range(reshape(xm, (rows * n,)), flat, 0)  # in [0, rows * n) by construction
    out = moveaxis(reshape(out, im.shape), -1, ax)
    return out if out._ref.contiguous else _dispatch.copy_of(out)  # C order, as every other result


def _take_along(xs: Array, idx: Array, shape: tuple[int, ...], ax: int) -> Array:
    """take_along_axis's fused road: ``xs`` (x broadcast to the result's shape but ``n`` on
    ``ax``) at ``idx`` in the indexing dtype, broadcast to ``shape``; C order."""
    out = _dispatch.fused_take_along(moveaxis(xs, ax, -1), moveaxis(broadcast_to(idx, shape), ax, -1))
    out = moveaxis(out, -1, ax)
    return out if out._ref.contiguous else _dispatch.copy_of(out)


def repeat(x: Array, repeats: int | Array, /, *, axis: int | None = None) -> Array:
    """Repeat each element along ``axis`` (of the flattened array if None).

    ``repeats`` is an int or a 1-D integer array with one count per element.

    >>> import ndplane as nd
    >>> nd.repeat(nd.asarray([1, 2]), 2).tolist(), nd.repeat(nd.asarray([1, 2]), nd.asarray([0, 3])).tolist()
    ([1, 1, 2, 2], [2, 2, 2])
    """
    check_array("repeat", x)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    ax = _layout.normalize_axis(axis, x.ndim, "repeat")
    n = x.shape[ax]
    if type(repeats) is Array:
        if repeats.dtype.kind not in ("int", "uint") or repeats.ndim > 1:
            raise TypeError(f"repeat: repeats must be an int or a 0-d/1-D integer array; got {repeats.dtype.name} "
                            f"of shape {repeats.shape}.")  # fmt: skip
        if repeats.ndim == 0 or repeats.shape[0] == 1:
            return repeat(x, int(reshape(repeats, (-1,))[0]), axis=ax)
        if repeats.shape[0] != n:
            raise ValueError(f"repeat: repeats has {repeats.shape[0]} counts for an axis of size {n}.")
        return take(x, _repeat_indices(repeats), axis=ax)
    r = operator.index(repeats)
    if r < 0:
        raise ValueError(f"repeat: repeats must be non-negative; got {r}.")
    expanded = expand_dims(x, axis=ax + 1)
    shape = x.shape[: ax + 1] + (r,) + x.shape[ax + 1 :]
    out = reshape(broadcast_to(expanded, shape), x.shape[:ax] + (n * r,) + x.shape[ax + 1 :])
    return _dispatch.copy_of(out) if out._storage is x._storage else out


def _repeat_indices(counts: Array) -> Array:
    """``[0]*counts[0] + [1]*counts[1] + ...`` on the device: a 1 scattered at each group's end
    offset (zero counts stack up), then a cumulative sum."""
    index = counts.device.backend.default_dtypes["indexing"]
    if counts.size and int(_min(counts)) < 0:
        raise ValueError("repeat: repeats must be non-negative.")
    total = int(_sum(counts, dtype=index))
    ends = cumulative_sum(counts if counts.dtype is index else _dispatch.cast(counts, index))
    marks = zeros((1, total + 1), dtype=index, device=counts.device)
    ones = _dispatch.binary("add", _dispatch.binary("multiply", ends, 0), 1)
    _dispatch.scatter_add_last(marks, ends[:-1], reshape(ones[:-1], (1, -1)))
    return reshape(cumulative_sum(reshape(marks, (-1,))), (-1,))[:total]
