"""Indexing (Array API chapter): ``x[key]``, ``x[key] = value`` and ``take``.

Basic indices (ints, slices with steps, ``...``, ``None``) give views.  An
integer array index goes through ``take``; a boolean mask through
``nonzero`` (reading) or ``where`` (writing).  Every index is bounds-checked
here, before any kernel reads memory.
"""

from __future__ import annotations

from typing import Any

from . import _dispatch, _dtypes, _layout
from ._array import Array
from ._dispatch import view_as
from .autograd import graph as _graph

__all__ = ["take", "take_along_axis"]

_BASIC = (int, slice, type(None), type(Ellipsis))


def _basic_view(x: Array, key: Any) -> Array:
    r = x._ref
    shape, strides, offset = _layout.basic_index(r.shape, r.strides, r.offset, key)
    return view_as(x, shape, strides, offset)


def _is_basic(key: Any) -> bool:
    if isinstance(key, tuple):
        return all(isinstance(k, _BASIC) or (not isinstance(k, Array) and hasattr(k, "__index__")) for k in key)
    return isinstance(key, _BASIC) or (not isinstance(key, Array) and hasattr(key, "__index__"))


def getitem(x: Array, key: Any) -> Array:
    if type(key) is int or type(key) is slice or _is_basic(key):
        v = _basic_view(x, key)
        if x.requires_grad:
            _graph.record("getitem", v, (x,), (), (x.shape, key))
        return v
    parts = key if isinstance(key, tuple) else (key,)
    arrays = [i for i, k in enumerate(parts) if type(k) is Array]
    for i in arrays:
        if parts[i].dtype.kind not in ("int", "uint", "bool"):
            raise IndexError(f"__getitem__: array indices must be integer or boolean; got {parts[i].dtype.name}.")
    if len(arrays) == 1:
        k = parts[arrays[0]]
        if k.dtype is _dtypes.bool and len(parts) == 1:
            return _mask_get(x, k)
        if k.dtype is not _dtypes.bool:
            return _int_array_get(x, parts, arrays[0])
    raise IndexError(
        "__getitem__: this combination of array indices is not supported yet; supported are basic "
        "indices, one integer array among basic indices, and one boolean mask as the whole index."
    )


def _int_array_get(x: Array, parts: tuple[Any, ...], pos: int) -> Array:
    idx = parts[pos]
    _dispatch.same_device("__getitem__", x, idx)
    if any(k is None for k in parts):
        raise IndexError("__getitem__: None cannot be combined with an integer array index yet.")
    view = getitem(x, parts[:pos] + (slice(None),) + parts[pos + 1 :])
    axis = _array_axis(x.ndim, parts, pos)
    flat = idx if idx.ndim == 1 else _manip().reshape(idx, (-1,))
    out = take(view, flat, axis=axis)
    if idx.ndim != 1:
        r = out._ref
        out = _manip().reshape(out, r.shape[:axis] + idx.shape + r.shape[axis + 1 :])
    return out


def _array_axis(ndim: int, parts: tuple[Any, ...], pos: int) -> int:
    """The axis that ``parts[pos]`` indexes in the basic view (ints before it drop axes)."""
    n_index = sum(1 for k in parts if k is not Ellipsis)
    axis = 0
    for k in parts[:pos]:
        if k is Ellipsis:
            axis += ndim - n_index
        elif isinstance(k, slice):
            axis += 1
    return axis


def _manip() -> Any:
    from . import _manipulation

    return _manipulation


def _mask_get(x: Array, mask: Array) -> Array:
    _dispatch.same_device("__getitem__", x, mask)
    k = mask.ndim
    if mask.shape != x.shape[:k]:
        raise IndexError(
            f"__getitem__: boolean index of shape {mask.shape} does not match the indexed array's "
            f"leading shape {x.shape[:k]}."
        )
    from ._searching import flat_nonzero

    flat_idx = flat_nonzero(mask)
    rest = x.shape[k:]
    flat_x = _manip().reshape(x, (_layout.prod(x.shape[:k]),) + rest)
    return take(flat_x, flat_idx, axis=0)


def setitem(x: Array, key: Any, value: Any) -> None:
    if type(key) is Array and key.dtype is _dtypes.bool:
        _dispatch.same_device("__setitem__", x, key)
        if key.shape != x.shape[: key.ndim]:
            raise IndexError(
                f"__setitem__: boolean index of shape {key.shape} does not match the array's leading "
                f"shape {x.shape[: key.ndim]}."
            )
        mask = _manip().reshape(key, key.shape + (1,) * (x.ndim - key.ndim))
        if type(value) is not Array:
            from ._creation import full

            _dispatch._check_scalar_kind(value, x.dtype, "__setitem__")
            value = full((), value, dtype=x.dtype, device=x.device)
        elif value.ndim and value.shape != x.shape:
            raise IndexError(
                "__setitem__: with a boolean mask, the value must be a scalar or have the array's shape."
            )
        _graph.check_inplace(x, "__setitem__")
        src = _graph.alias(x) if x.requires_grad else x
        result = _dispatch.where(mask, _cast_to(value, x), src)
        _dispatch.assign(x, result)
        if result.requires_grad:
            _graph.record("identity", x, (result,))
        return
    if not _is_basic(key):
        raise IndexError(
            "__setitem__: only basic indices (ints, slices, ..., None) and a whole-array boolean mask "
            "are supported as assignment targets yet."
        )
    _graph.check_inplace(x, "__setitem__")
    grad = (x.requires_grad or (type(value) is Array and value.requires_grad)) and _graph.is_grad_enabled()
    old = _graph.alias(x) if grad else None
    _dispatch.assign(_basic_view(x, key), value)
    if grad:
        v_shape = value.shape if type(value) is Array else None
        _graph.record("setitem", x, (old, value), (), (key, v_shape))


def _cast_to(value: Array, x: Array) -> Array:
    return value if value.dtype is x.dtype else _dispatch.cast(value, x.dtype)


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
    indices = normalize_indices(indices, x.shape[ax], f"take (axis {ax})")
    moved, kept, _ = _dispatch.move_axes_last(x, (ax,))
    out = _dispatch._move_axis_back(_dispatch.take_last(moved, indices), ax)
    if x.requires_grad:
        _graph.record("take", out, (x, indices), (indices,), (x.shape, ax))
    return out


def normalize_indices(indices: Array, n: int, name: str) -> Array:
    """Bounds-check integer ``indices`` against an axis of length ``n`` and make them non-negative,
    in the device's indexing dtype."""
    from ._statistical import max as _max
    from ._statistical import min as _min

    index_dtype = indices.device.backend.default_dtypes["indexing"]
    if indices.size:
        lo, hi = int(_min(indices)), int(_max(indices))
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
    if indices.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices must have x's rank {x.ndim}; got {indices.ndim}.")
    ax = _layout.normalize_axis(axis, x.ndim, "take_along_axis")
    n = x.shape[ax]
    shape = _layout.broadcast_shapes(
        x.shape[:ax] + (1,) + x.shape[ax + 1 :], indices.shape[:ax] + (1,) + indices.shape[ax + 1 :],
        name="take_along_axis",
    )[:ax] + (indices.shape[ax],) + _layout.broadcast_shapes(x.shape[ax + 1 :], indices.shape[ax + 1 :])
    idx = normalize_indices(_manip().reshape(indices, (-1,)), n, "take_along_axis")
    idx = _manip().reshape(idx, indices.shape)
    # Flatten to one gather over x moved to (..., n): offset each row's indices by row * n.
    xs = _manip().broadcast_to(x, shape[:ax] + (n,) + shape[ax + 1 :])
    idx = _manip().broadcast_to(idx, shape)
    xm = _manip().moveaxis(xs, ax, -1)
    im = _manip().moveaxis(idx, ax, -1)
    rows = _layout.prod(xm.shape[:-1])
    from ._creation import arange

    base = _manip().reshape(arange(rows, dtype=idx.dtype, device=x.device), im.shape[:-1] + (1,))
    flat = _manip().reshape(_dispatch.binary("add", im, _dispatch.binary("multiply", base, n)), (-1,))
    out = _dispatch.take_last(_manip().reshape(xm, (1, rows * n)), flat)
    return _manip().moveaxis(_manip().reshape(out, im.shape), -1, ax)


Array.__getitem__ = getitem  # type: ignore[method-assign]
Array.__setitem__ = setitem  # type: ignore[method-assign]
