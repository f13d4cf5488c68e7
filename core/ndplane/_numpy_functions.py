"""NumPy's computing functions written with ndplane functions (statistics, manipulation,
searching and sorting, linear algebra): rows of ``_numpy_operands.FUNCTIONS``, the table
``Array.__array_function__`` (``_numpy_protocol``) consults.

``nansum``, ``numpy_mean``, ``numpy_take`` and ``numpy_isin`` are also names cubed calls on its
backend namespace (``ndplane.cubed``): one implementation of each NumPy semantics.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import _namespace as nd
from ._array import Array
from ._numpy_operands import (
    NO_VALUE,
    Unsupported,
    as_array,
    as_arrays,
    axis_arg,
    device_of,
    dtype_arg,
    float_default,
    implements,
    into,
    only,
    operand,
    shape_arg,
)

__all__ = ["nansum", "numpy_isin", "numpy_mean", "numpy_squeeze", "numpy_take"]


def _reduction(fn: Callable[..., Array]) -> Callable[..., Array]:
    def row(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: Any = False) -> Array:
        return into(out, fn(as_array(a), axis=axis_arg(axis), dtype=dtype_arg(dtype, f"numpy.{fn.__name__}"),
                            keepdims=bool(keepdims)))  # fmt: skip

    row.__name__ = row.__qualname__ = f"numpy_{fn.__name__}"
    return row


def _extremum(fn: Callable[..., Array]) -> Callable[..., Array]:  # NumPy's max/min/all/any take no dtype
    def row(a: Any, axis: Any = None, out: Any = None, keepdims: Any = False) -> Array:
        return into(out, fn(as_array(a), axis=axis_arg(axis), keepdims=bool(keepdims)))

    row.__name__ = row.__qualname__ = f"numpy_{fn.__name__}"
    return row


implements(np.sum)(_reduction(nd.sum))
implements(np.prod)(_reduction(nd.prod))
implements(np.max, np.amax)(_extremum(nd.max))
implements(np.min, np.amin)(_extremum(nd.min))
implements(np.all)(_extremum(nd.all))
implements(np.any)(_extremum(nd.any))


@implements(np.mean)
def numpy_mean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: Any = False) -> Array:
    """``numpy.mean``: integer and boolean arrays average in the device's default float, and
    ``dtype=`` sets the dtype the mean is computed in (the Array API ``mean`` has neither)."""
    x = as_array(a)
    dt = dtype_arg(dtype, "numpy.mean") or (x.dtype if x.dtype.is_floating else float_default(x))
    return into(out, nd.mean(nd.astype(x, dt, copy=False), axis=axis_arg(axis), keepdims=bool(keepdims)))


def _moment(fn: Callable[..., Array]) -> Callable[..., Array]:
    def row(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
            keepdims: Any = False) -> Array:  # fmt: skip
        x = as_array(a)
        dt = dtype_arg(dtype, f"numpy.{fn.__name__}") or (x.dtype if x.dtype.is_floating else float_default(x))
        x = nd.astype(x, dt, copy=False)
        return into(out, fn(x, axis=axis_arg(axis), correction=ddof, keepdims=bool(keepdims)))

    row.__name__ = row.__qualname__ = f"numpy_{fn.__name__}"
    return row


implements(np.std)(_moment(nd.std))
implements(np.var)(_moment(nd.var))


@implements(np.nansum)
def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: Any = False) -> Array:
    """``numpy.nansum``: the sum with NaNs counted as zero (integer arrays have none)."""
    x = as_array(a)
    if x.dtype.is_floating:
        x = nd.where(nd.isnan(x), nd.zeros_like(x), x)
    return into(out, nd.sum(x, axis=axis_arg(axis), dtype=dtype_arg(dtype, "numpy.nansum"), keepdims=bool(keepdims)))


def _arg(fn: Callable[..., Array]) -> Callable[..., Array]:
    def row(a: Any, axis: Any = None, out: Any = None, *, keepdims: Any = False) -> Array:
        return into(out, fn(as_array(a), axis=axis, keepdims=bool(keepdims)))

    row.__name__ = row.__qualname__ = f"numpy_{fn.__name__}"
    return row


implements(np.argmax)(_arg(nd.argmax))
implements(np.argmin)(_arg(nd.argmin))


def _cumulative(fn: Callable[..., Array]) -> Callable[..., Array]:
    def row(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Array:
        x = as_array(a)
        if axis is None:  # NumPy flattens
            x, axis = nd.reshape(x, (-1,)), 0
        return into(out, fn(x, axis=axis, dtype=dtype_arg(dtype, f"numpy.{fn.__name__}")))

    row.__name__ = row.__qualname__ = f"numpy_{fn.__name__}"
    return row


implements(np.cumsum)(_cumulative(nd.cumulative_sum))
implements(np.cumprod)(_cumulative(nd.cumulative_prod))


@implements(np.count_nonzero)
def _count_nonzero(a: Any, axis: Any = None, *, keepdims: Any = False) -> Array:
    return nd.count_nonzero(as_array(a), axis=axis_arg(axis), keepdims=bool(keepdims))


# -- manipulation


def _flat_if_none(arrays: list[Array], axis: Any) -> tuple[list[Array], int]:
    return ([nd.reshape(a, (-1,)) for a in arrays], 0) if axis is None else (arrays, axis)


@implements(np.concatenate)
def _concatenate(arrays: Any, axis: Any = 0, out: Any = None, *, dtype: Any = None,
                 casting: Any = "same_kind") -> Array:  # fmt: skip
    only(casting=(casting, "same_kind"))
    xs, ax = _flat_if_none(as_arrays(*arrays), axis)
    dt = dtype_arg(dtype, "numpy.concatenate")
    return into(out, nd.concat([nd.astype(x, dt) for x in xs] if dt else xs, axis=ax))


@implements(np.stack)
def _stack(arrays: Any, axis: Any = 0, out: Any = None, *, dtype: Any = None,
           casting: Any = "same_kind") -> Array:  # fmt: skip
    only(casting=(casting, "same_kind"))
    xs, dt = as_arrays(*arrays), dtype_arg(dtype, "numpy.stack")
    return into(out, nd.stack([nd.astype(x, dt) for x in xs] if dt else xs, axis=axis))


@implements(np.transpose)
def _transpose(a: Any, axes: Any = None) -> Array:
    x = as_array(a)
    return nd.permute_dims(x, tuple(range(x.ndim))[::-1] if axes is None else axis_arg(axes))


@implements(np.swapaxes)
def _swapaxes(a: Any, axis1: Any, axis2: Any) -> Array:
    x = as_array(a)
    perm = list(range(x.ndim))
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return nd.permute_dims(x, tuple(perm))


@implements(np.reshape)
def _reshape(a: Any, shape: Any = None, order: Any = "C", *, newshape: Any = None, copy: Any = None) -> Array:
    only(order=(order, "C"))
    shape = newshape if shape is None else shape
    return nd.reshape(as_array(a), (shape,) if isinstance(shape, int) else tuple(shape), copy=copy)


@implements(np.ravel)
def _ravel(a: Any, order: Any = "C") -> Array:
    only(order=(order, "C"))
    return nd.reshape(as_array(a), (-1,))


@implements(np.squeeze)
def numpy_squeeze(a: Any, axis: Any = None) -> Array:
    x = as_array(a)
    return nd.squeeze(x, tuple(i for i, n in enumerate(x.shape) if n == 1) if axis is None else axis_arg(axis))


@implements(np.expand_dims)
def _expand_dims(a: Any, axis: Any) -> Array:
    return nd.expand_dims(as_array(a), axis=axis_arg(axis))


@implements(np.broadcast_to)
def _broadcast_to(array: Any, shape: Any, subok: Any = False) -> Array:
    return nd.broadcast_to(as_array(array), (shape,) if isinstance(shape, int) else tuple(shape))


@implements(np.broadcast_arrays)
def _broadcast_arrays(*args: Any, subok: Any = False) -> tuple[Array, ...]:
    return tuple(nd.broadcast_arrays(*as_arrays(*args)))


@implements(np.moveaxis)
def _moveaxis(a: Any, source: Any, destination: Any) -> Array:
    return nd.moveaxis(as_array(a), axis_arg(source), axis_arg(destination))


@implements(np.flip)
def _flip(m: Any, axis: Any = None) -> Array:
    return nd.flip(as_array(m), axis=axis_arg(axis))


@implements(np.roll)
def _roll(a: Any, shift: Any, axis: Any = None) -> Array:
    return nd.roll(as_array(a), axis_arg(shift), axis=axis_arg(axis))


@implements(np.tile)
def _tile(A: Any, reps: Any) -> Array:
    return nd.tile(as_array(A), (reps,) if isinstance(reps, int) else tuple(reps))


@implements(np.repeat)
def _repeat(a: Any, repeats: Any, axis: Any = None) -> Array:
    x = as_array(a)
    return nd.repeat(x, repeats if isinstance(repeats, int) else as_arrays(x, repeats)[1], axis=axis)


@implements(np.take)
def numpy_take(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: Any = "raise") -> Array:
    """``numpy.take``: ``indices`` may be a Python int or an array of any shape, which replaces
    axis ``axis`` in the result (``axis=None`` takes from the flattened array)."""
    only(mode=(mode, "raise"))
    x, idx = as_arrays(a, indices)
    if axis is None:
        x, axis = nd.reshape(x, (-1,)), 0
    axis = axis % x.ndim if x.ndim else axis
    picked = nd.take(x, nd.reshape(idx, (-1,)), axis=axis)
    return into(out, nd.reshape(picked, x.shape[:axis] + idx.shape + x.shape[axis + 1:]))


@implements(np.take_along_axis)
def _take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Array:
    x, idx = as_arrays(arr, indices)
    if axis is None:
        x, axis = nd.reshape(x, (-1,)), 0
    return nd.take_along_axis(x, idx, axis=axis)


@implements(np.where)
def _where(condition: Any, x: Any = None, y: Any = None) -> Any:
    if x is None and y is None:
        return nd.nonzero(as_array(condition))
    device = device_of((condition, x, y))
    c, a, b = (operand(v, device) for v in (condition, x, y))
    return nd.where(c if type(c) is Array else nd.asarray(c, device=device), a, b)


@implements(np.nonzero)
def _nonzero(a: Any) -> tuple[Array, ...]:
    return nd.nonzero(as_array(a))


@implements(np.clip)
def _clip(a: Any, a_min: Any = NO_VALUE, a_max: Any = NO_VALUE, out: Any = None, *, min: Any = NO_VALUE,
          max: Any = NO_VALUE) -> Array:  # fmt: skip
    device = device_of(a)
    lo, hi = (v if v is not NO_VALUE else w for v, w in ((a_min, min), (a_max, max)))
    lo, hi = (None if v is None or v is NO_VALUE else operand(v, device) for v in (lo, hi))
    return into(out, nd.clip(as_array(a), lo, hi))


@implements(np.round, np.around)
def _round(a: Any, decimals: Any = 0, out: Any = None) -> Array:
    x = as_array(a)
    if decimals == 0 or (not x.dtype.is_floating and decimals > 0):
        return into(out, nd.round(x) if x.dtype.is_floating else nd.asarray(x, copy=True))
    if not x.dtype.is_floating:
        raise Unsupported(f"decimals={decimals} on an integer array")
    scale = 10.0**decimals  # NOTE: NumPy's own algorithm: scale, round half to even, unscale
    return into(out, nd.round(x * scale) / scale)


@implements(np.diff)
def _diff(a: Any, n: Any = 1, axis: Any = -1, prepend: Any = NO_VALUE, append: Any = NO_VALUE) -> Array:
    x = as_array(a)
    ends = {}
    for key, v in (("prepend", prepend), ("append", append)):
        if v is not NO_VALUE:
            e = as_arrays(x, v)[1]
            if e.ndim == 0:  # NumPy broadcasts a scalar to one slice along ``axis``
                e = nd.broadcast_to(e, x.shape[:axis % x.ndim] + (1,) + x.shape[axis % x.ndim + 1:])
            ends[key] = e
    return nd.diff(x, axis=axis, n=n, **ends)


@implements(np.tril)
def _tril(m: Any, k: Any = 0) -> Array:
    return nd.tril(as_array(m), k=k)


@implements(np.triu)
def _triu(m: Any, k: Any = 0) -> Array:
    return nd.triu(as_array(m), k=k)


def _sorting(fn: Callable[..., Array]) -> Callable[..., Array]:
    def row(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> Array:
        only(order=(order, None))
        x = as_array(a)
        if axis is None:
            x, axis = nd.reshape(x, (-1,)), 0
        return fn(x, axis=axis, stable=True)  # a stable sort is a valid result of every kind

    row.__name__ = row.__qualname__ = f"numpy_{fn.__name__}"
    return row


implements(np.sort)(_sorting(nd.sort))
implements(np.argsort)(_sorting(nd.argsort))


@implements(np.searchsorted)
def _searchsorted(a: Any, v: Any, side: Any = "left", sorter: Any = None) -> Array:
    x, values = as_arrays(a, v)
    return nd.searchsorted(x, values, side=side, sorter=None if sorter is None else as_arrays(x, sorter)[1])


@implements(np.unique)
def _unique(ar: Any) -> Array:
    return nd.sort(nd.unique_values(nd.reshape(as_array(ar), (-1,))))


@implements(np.unravel_index)
def _unravel_index(indices: Any, shape: Any, order: Any = "C") -> tuple[Array, ...]:
    only(order=(order, "C"))
    flat, out = as_array(indices), []
    for n in reversed(shape_arg(shape)):
        out.append(flat % n)
        flat = flat // n
    return tuple(reversed(out))


@implements(np.ravel_multi_index)
def _ravel_multi_index(multi_index: Any, dims: Any, mode: Any = "raise", order: Any = "C") -> Array:
    only(mode=(mode, "raise"), order=(order, "C"))
    idx, dims = as_arrays(*multi_index), shape_arg(dims)
    flat, stride = nd.zeros_like(idx[0]), 1
    for i, n in reversed(list(zip(idx, dims))):
        if bool(nd.any((i < 0) | (i >= n))):
            raise ValueError(f"numpy.ravel_multi_index: an index is out of bounds for a dimension of length {n}.")
        flat, stride = flat + i * stride, stride * n
    return flat


@implements(np.isin)
def numpy_isin(element: Any, test_elements: Any, assume_unique: Any = False, invert: Any = False, *,
               kind: Any = None) -> Array:  # fmt: skip
    """``numpy.isin``: whether each element of ``element`` is among ``test_elements`` (a sorted
    search; NaN is in nothing)."""
    x, t = as_arrays(element, test_elements)
    dt = nd.result_type(x, t)
    x, table = nd.astype(x, dt, copy=False), nd.sort(nd.unique_values(nd.reshape(nd.astype(t, dt, copy=False), (-1,))))
    if table.size == 0:
        found = nd.zeros(x.shape, dtype=nd.bool, device=x.device)
    else:
        at = nd.minimum(nd.searchsorted(table, x), table.size - 1)
        found = nd.reshape(nd.take(table, nd.reshape(at, (-1,))), x.shape) == x
    return nd.logical_not(found) if invert else found


# -- linear algebra


@implements(np.dot)
def _dot(a: Any, b: Any, out: Any = None) -> Array:
    x, y = as_arrays(a, b)
    if x.ndim == 0 or y.ndim == 0:
        return into(out, nd.multiply(x, y))
    if x.ndim > 2 or y.ndim > 2:  # NumPy's N-d dot is not matmul
        raise Unsupported("arrays of more than 2 dimensions")
    return into(out, nd.matmul(x, y))


@implements(np.tensordot)
def _tensordot(a: Any, b: Any, axes: Any = 2) -> Array:
    x, y = as_arrays(a, b)
    if not isinstance(axes, int):
        axes = tuple((ax,) if isinstance(ax, int) else tuple(ax) for ax in axes)
    return nd.tensordot(x, y, axes=axes)


@implements(np.outer)
def _outer(a: Any, b: Any, out: Any = None) -> Array:
    x, y = as_arrays(a, b)
    return into(out, nd.linalg.outer(nd.reshape(x, (-1,)), nd.reshape(y, (-1,))))


@implements(np.linalg.qr)
def _qr(a: Any, mode: Any = "reduced") -> Any:
    if mode not in ("reduced", "complete"):
        raise Unsupported(f"mode={mode!r}")
    return nd.linalg.qr(as_array(a), mode=mode)


@implements(np.linalg.svd)
def _svd(a: Any, full_matrices: Any = True, compute_uv: Any = True, hermitian: Any = False) -> Any:
    x = as_array(a)
    return nd.linalg.svd(x, full_matrices=bool(full_matrices)) if compute_uv else nd.linalg.svdvals(x)


@implements(np.linalg.inv)
def _inv(a: Any) -> Array:
    return nd.linalg.inv(as_array(a))


@implements(np.linalg.solve)
def _solve(a: Any, b: Any) -> Array:
    return nd.linalg.solve(*as_arrays(a, b))


@implements(np.linalg.det)
def _det(a: Any) -> Array:
    return nd.linalg.det(as_array(a))


@implements(np.linalg.cholesky)
def _cholesky(a: Any, /, *, upper: Any = False) -> Array:
    return nd.linalg.cholesky(as_array(a), upper=bool(upper))
