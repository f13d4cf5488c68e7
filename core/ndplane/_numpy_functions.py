"""NumPy functions written with ndplane functions: the :data:`FUNCTIONS` table that
``Array.__array_function__`` (``_numpy_protocol``) consults.

Each row has the NumPy function's signature, or the part of it ndplane serves; an argument
outside it fails to bind, and a row raises :class:`Unsupported` for a value it does not take
(``order="F"``, ``mode="clip"``): both send the call to the NumPy fallback. NumPy arrays and
scalars among the arguments join the device of the ndplane array (NumPy scalars as Python
scalars), so ``numpy.concatenate([x, numpy_array])`` stays on ``x``'s device.

``nansum``, ``numpy_mean``, ``numpy_take`` and ``numpy_isin`` are also names cubed calls on its
backend namespace (``ndplane.cubed``): one implementation of each NumPy semantics.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from . import _dtypes
from . import _namespace as nd
from ._array import Array
from ._devices import Device

__all__ = [
    "FUNCTIONS", "SIGNATURES", "LIKE", "Unsupported", "device_of", "into", "only", "operand", "walk", "nansum",
    "numpy_isin", "numpy_mean", "numpy_squeeze", "numpy_take",
]  # fmt: skip

_SCALARS = (bool, int, float, complex)


class Unsupported(Exception):
    """Raised by a row for an argument it does not take; the call becomes the NumPy fallback."""


# ---------------------------------------------------------------------------
# operands
# ---------------------------------------------------------------------------


def walk(obj: Any) -> Iterator[Any]:
    if isinstance(obj, (list, tuple)):
        for v in obj:
            yield from walk(v)
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from walk(v)
    else:
        yield obj


def device_of(*objs: Any) -> Device:
    return next(v.device for v in walk(objs) if type(v) is Array)


def operand(v: Any, device: Device) -> Any:
    """An ndplane operand: Arrays and Python scalars as they are, NumPy scalars as Python
    scalars, NumPy arrays copied onto ``device``."""
    if type(v) is Array or isinstance(v, _SCALARS):
        return v
    if isinstance(v, np.generic) and v.dtype.kind in "biufc":
        return v.item()
    if (isinstance(v, np.ndarray) and v.dtype.kind in "biufc") or isinstance(v, list):
        return nd.asarray(v, device=device)
    raise Unsupported(f"an operand of type {type(v).__name__}")


def _arrays(*vals: Any) -> list[Array]:
    """Every value as an Array on the device of the first Array among them."""
    device = device_of(vals)
    out = [operand(v, device) for v in vals]
    return [v if type(v) is Array else nd.asarray(v, device=device) for v in out]


def _arr(v: Any) -> Array:
    return _arrays(v)[0]


def _axis(axis: Any) -> Any:
    return tuple(int(a) for a in axis) if isinstance(axis, (list, tuple)) else axis


def _dtype(dtype: Any, name: str) -> _dtypes.DType | None:
    return None if dtype is None else _dtypes.as_dtype(dtype, name)


_NO_VALUE: Any = np._NoValue  # type: ignore[attr-defined]  # NumPy's "argument not given"


def only(**given: tuple[Any, Any]) -> None:
    """Refuse (to the fallback) every argument given as ``name=(value, default)`` that is not its default."""
    for key, (value, default) in given.items():
        if value is default or value is _NO_VALUE:
            continue
        if not (isinstance(value, (str, bool, int, float, type(None))) and value == default):
            raise Unsupported(f"{key}={value!r}")


def into(out: Any, result: Array) -> Array:
    if out is None:
        return result
    if isinstance(out, tuple) and len(out) == 1:
        out = out[0]
    if type(out) is not Array:
        raise Unsupported(f"out= of type {type(out).__name__}")
    out[...] = result
    return out


def _float_default(x: Array) -> _dtypes.DType:
    return x.device.backend.default_dtypes["real floating"]


# ---------------------------------------------------------------------------
# functions: NumPy function -> a row with NumPy's signature (the parameters it takes)
# ---------------------------------------------------------------------------

FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {}
SIGNATURES: dict[Callable[..., Any], inspect.Signature] = {}


def _implements(*np_funcs: Callable[..., Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(row: Callable[..., Any]) -> Callable[..., Any]:
        for f in np_funcs:
            FUNCTIONS[f] = row
        SIGNATURES[row] = inspect.signature(row)
        return row

    return register


def _reduction(fn: Callable[..., Array]) -> Callable[..., Array]:
    def row(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: Any = False) -> Array:
        return into(out, fn(_arr(a), axis=_axis(axis), dtype=_dtype(dtype, f"numpy.{fn.__name__}"),
                            keepdims=bool(keepdims)))  # fmt: skip

    row.__name__ = row.__qualname__ = f"numpy_{fn.__name__}"
    return row


def _extremum(fn: Callable[..., Array]) -> Callable[..., Array]:  # NumPy's max/min/all/any take no dtype
    def row(a: Any, axis: Any = None, out: Any = None, keepdims: Any = False) -> Array:
        return into(out, fn(_arr(a), axis=_axis(axis), keepdims=bool(keepdims)))

    row.__name__ = row.__qualname__ = f"numpy_{fn.__name__}"
    return row


_implements(np.sum)(_reduction(nd.sum))
_implements(np.prod)(_reduction(nd.prod))
_implements(np.max, np.amax)(_extremum(nd.max))
_implements(np.min, np.amin)(_extremum(nd.min))
_implements(np.all)(_extremum(nd.all))
_implements(np.any)(_extremum(nd.any))


@_implements(np.mean)
def numpy_mean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: Any = False) -> Array:
    """``numpy.mean``: integer and boolean arrays average in the device's default float, and
    ``dtype=`` sets the dtype the mean is computed in (the Array API ``mean`` has neither)."""
    x = _arr(a)
    dt = _dtype(dtype, "numpy.mean") or (x.dtype if x.dtype.is_floating else _float_default(x))
    return into(out, nd.mean(nd.astype(x, dt, copy=False), axis=_axis(axis), keepdims=bool(keepdims)))


def _moment(fn: Callable[..., Array]) -> Callable[..., Array]:
    def row(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
            keepdims: Any = False) -> Array:  # fmt: skip
        x = _arr(a)
        dt = _dtype(dtype, f"numpy.{fn.__name__}") or (x.dtype if x.dtype.is_floating else _float_default(x))
        x = nd.astype(x, dt, copy=False)
        return into(out, fn(x, axis=_axis(axis), correction=ddof, keepdims=bool(keepdims)))

    row.__name__ = row.__qualname__ = f"numpy_{fn.__name__}"
    return row


_implements(np.std)(_moment(nd.std))
_implements(np.var)(_moment(nd.var))


@_implements(np.nansum)
def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: Any = False) -> Array:
    """``numpy.nansum``: the sum with NaNs counted as zero (integer arrays have none)."""
    x = _arr(a)
    if x.dtype.is_floating:
        x = nd.where(nd.isnan(x), nd.zeros_like(x), x)
    return into(out, nd.sum(x, axis=_axis(axis), dtype=_dtype(dtype, "numpy.nansum"), keepdims=bool(keepdims)))


def _arg(fn: Callable[..., Array]) -> Callable[..., Array]:
    def row(a: Any, axis: Any = None, out: Any = None, *, keepdims: Any = False) -> Array:
        return into(out, fn(_arr(a), axis=axis, keepdims=bool(keepdims)))

    row.__name__ = row.__qualname__ = f"numpy_{fn.__name__}"
    return row


_implements(np.argmax)(_arg(nd.argmax))
_implements(np.argmin)(_arg(nd.argmin))


def _cumulative(fn: Callable[..., Array]) -> Callable[..., Array]:
    def row(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Array:
        x = _arr(a)
        if axis is None:  # NumPy flattens
            x, axis = nd.reshape(x, (-1,)), 0
        return into(out, fn(x, axis=axis, dtype=_dtype(dtype, f"numpy.{fn.__name__}")))

    row.__name__ = row.__qualname__ = f"numpy_{fn.__name__}"
    return row


_implements(np.cumsum)(_cumulative(nd.cumulative_sum))
_implements(np.cumprod)(_cumulative(nd.cumulative_prod))


@_implements(np.count_nonzero)
def _count_nonzero(a: Any, axis: Any = None, *, keepdims: Any = False) -> Array:
    return nd.count_nonzero(_arr(a), axis=_axis(axis), keepdims=bool(keepdims))


# -- manipulation


def _flat_if_none(arrays: list[Array], axis: Any) -> tuple[list[Array], int]:
    return ([nd.reshape(a, (-1,)) for a in arrays], 0) if axis is None else (arrays, axis)


@_implements(np.concatenate)
def _concatenate(arrays: Any, axis: Any = 0, out: Any = None, *, dtype: Any = None,
                 casting: Any = "same_kind") -> Array:  # fmt: skip
    only(casting=(casting, "same_kind"))
    xs, ax = _flat_if_none(_arrays(*arrays), axis)
    dt = _dtype(dtype, "numpy.concatenate")
    return into(out, nd.concat([nd.astype(x, dt) for x in xs] if dt else xs, axis=ax))


@_implements(np.stack)
def _stack(arrays: Any, axis: Any = 0, out: Any = None, *, dtype: Any = None,
           casting: Any = "same_kind") -> Array:  # fmt: skip
    only(casting=(casting, "same_kind"))
    xs, dt = _arrays(*arrays), _dtype(dtype, "numpy.stack")
    return into(out, nd.stack([nd.astype(x, dt) for x in xs] if dt else xs, axis=axis))


@_implements(np.transpose)
def _transpose(a: Any, axes: Any = None) -> Array:
    x = _arr(a)
    return nd.permute_dims(x, tuple(range(x.ndim))[::-1] if axes is None else _axis(axes))


@_implements(np.swapaxes)
def _swapaxes(a: Any, axis1: Any, axis2: Any) -> Array:
    x = _arr(a)
    perm = list(range(x.ndim))
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return nd.permute_dims(x, tuple(perm))


@_implements(np.reshape)
def _reshape(a: Any, shape: Any = None, order: Any = "C", *, newshape: Any = None, copy: Any = None) -> Array:
    only(order=(order, "C"))
    shape = newshape if shape is None else shape
    return nd.reshape(_arr(a), (shape,) if isinstance(shape, int) else tuple(shape), copy=copy)


@_implements(np.ravel)
def _ravel(a: Any, order: Any = "C") -> Array:
    only(order=(order, "C"))
    return nd.reshape(_arr(a), (-1,))


@_implements(np.squeeze)
def numpy_squeeze(a: Any, axis: Any = None) -> Array:
    x = _arr(a)
    return nd.squeeze(x, tuple(i for i, n in enumerate(x.shape) if n == 1) if axis is None else _axis(axis))


@_implements(np.expand_dims)
def _expand_dims(a: Any, axis: Any) -> Array:
    return nd.expand_dims(_arr(a), axis=_axis(axis))


@_implements(np.broadcast_to)
def _broadcast_to(array: Any, shape: Any, subok: Any = False) -> Array:
    return nd.broadcast_to(_arr(array), (shape,) if isinstance(shape, int) else tuple(shape))


@_implements(np.broadcast_arrays)
def _broadcast_arrays(*args: Any, subok: Any = False) -> tuple[Array, ...]:
    return tuple(nd.broadcast_arrays(*_arrays(*args)))


@_implements(np.moveaxis)
def _moveaxis(a: Any, source: Any, destination: Any) -> Array:
    return nd.moveaxis(_arr(a), _axis(source), _axis(destination))


@_implements(np.flip)
def _flip(m: Any, axis: Any = None) -> Array:
    return nd.flip(_arr(m), axis=_axis(axis))


@_implements(np.roll)
def _roll(a: Any, shift: Any, axis: Any = None) -> Array:
    return nd.roll(_arr(a), _axis(shift), axis=_axis(axis))


@_implements(np.tile)
def _tile(A: Any, reps: Any) -> Array:
    return nd.tile(_arr(A), (reps,) if isinstance(reps, int) else tuple(reps))


@_implements(np.repeat)
def _repeat(a: Any, repeats: Any, axis: Any = None) -> Array:
    x = _arr(a)
    return nd.repeat(x, repeats if isinstance(repeats, int) else _arrays(x, repeats)[1], axis=axis)


@_implements(np.take)
def numpy_take(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: Any = "raise") -> Array:
    """``numpy.take``: ``indices`` may be a Python int or an array of any shape, which replaces
    axis ``axis`` in the result (``axis=None`` takes from the flattened array)."""
    only(mode=(mode, "raise"))
    x, idx = _arrays(a, indices)
    if axis is None:
        x, axis = nd.reshape(x, (-1,)), 0
    axis = axis % x.ndim if x.ndim else axis
    picked = nd.take(x, nd.reshape(idx, (-1,)), axis=axis)
    return into(out, nd.reshape(picked, x.shape[:axis] + idx.shape + x.shape[axis + 1:]))


@_implements(np.take_along_axis)
def _take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Array:
    x, idx = _arrays(arr, indices)
    if axis is None:
        x, axis = nd.reshape(x, (-1,)), 0
    return nd.take_along_axis(x, idx, axis=axis)


@_implements(np.where)
def _where(condition: Any, x: Any = None, y: Any = None) -> Any:
    if x is None and y is None:
        return nd.nonzero(_arr(condition))
    device = device_of((condition, x, y))
    c, a, b = (operand(v, device) for v in (condition, x, y))
    return nd.where(c if type(c) is Array else nd.asarray(c, device=device), a, b)


@_implements(np.nonzero)
def _nonzero(a: Any) -> tuple[Array, ...]:
    return nd.nonzero(_arr(a))


@_implements(np.clip)
def _clip(a: Any, a_min: Any = _NO_VALUE, a_max: Any = _NO_VALUE, out: Any = None, *, min: Any = _NO_VALUE,
          max: Any = _NO_VALUE) -> Array:  # fmt: skip
    device = device_of(a)
    lo, hi = (v if v is not _NO_VALUE else w for v, w in ((a_min, min), (a_max, max)))
    lo, hi = (None if v is None or v is _NO_VALUE else operand(v, device) for v in (lo, hi))
    return into(out, nd.clip(_arr(a), lo, hi))


@_implements(np.round, np.around)
def _round(a: Any, decimals: Any = 0, out: Any = None) -> Array:
    x = _arr(a)
    if decimals == 0 or (not x.dtype.is_floating and decimals > 0):
        return into(out, nd.round(x) if x.dtype.is_floating else nd.asarray(x, copy=True))
    if not x.dtype.is_floating:
        raise Unsupported(f"decimals={decimals} on an integer array")
    scale = 10.0**decimals  # NOTE: NumPy's own algorithm: scale, round half to even, unscale
    return into(out, nd.round(x * scale) / scale)


@_implements(np.diff)
def _diff(a: Any, n: Any = 1, axis: Any = -1, prepend: Any = _NO_VALUE, append: Any = _NO_VALUE) -> Array:
    x = _arr(a)
    ends = {}
    for key, v in (("prepend", prepend), ("append", append)):
        if v is not _NO_VALUE:
            e = _arrays(x, v)[1]
            if e.ndim == 0:  # NumPy broadcasts a scalar to one slice along ``axis``
                e = nd.broadcast_to(e, x.shape[:axis % x.ndim] + (1,) + x.shape[axis % x.ndim + 1:])
            ends[key] = e
    return nd.diff(x, axis=axis, n=n, **ends)


@_implements(np.tril)
def _tril(m: Any, k: Any = 0) -> Array:
    return nd.tril(_arr(m), k=k)


@_implements(np.triu)
def _triu(m: Any, k: Any = 0) -> Array:
    return nd.triu(_arr(m), k=k)


def _sorting(fn: Callable[..., Array]) -> Callable[..., Array]:
    def row(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> Array:
        only(order=(order, None))
        x = _arr(a)
        if axis is None:
            x, axis = nd.reshape(x, (-1,)), 0
        return fn(x, axis=axis, stable=True)  # a stable sort is a valid result of every kind

    row.__name__ = row.__qualname__ = f"numpy_{fn.__name__}"
    return row


_implements(np.sort)(_sorting(nd.sort))
_implements(np.argsort)(_sorting(nd.argsort))


@_implements(np.searchsorted)
def _searchsorted(a: Any, v: Any, side: Any = "left", sorter: Any = None) -> Array:
    x, values = _arrays(a, v)
    return nd.searchsorted(x, values, side=side, sorter=None if sorter is None else _arrays(x, sorter)[1])


@_implements(np.unique)
def _unique(ar: Any) -> Array:
    return nd.sort(nd.unique_values(nd.reshape(_arr(ar), (-1,))))


@_implements(np.unravel_index)
def _unravel_index(indices: Any, shape: Any, order: Any = "C") -> tuple[Array, ...]:
    only(order=(order, "C"))
    flat, out = _arr(indices), []
    for n in reversed(_shape(shape)):
        out.append(flat % n)
        flat = flat // n
    return tuple(reversed(out))


@_implements(np.ravel_multi_index)
def _ravel_multi_index(multi_index: Any, dims: Any, mode: Any = "raise", order: Any = "C") -> Array:
    only(mode=(mode, "raise"), order=(order, "C"))
    idx, dims = _arrays(*multi_index), _shape(dims)
    flat, stride = nd.zeros_like(idx[0]), 1
    for i, n in reversed(list(zip(idx, dims))):
        if bool(nd.any((i < 0) | (i >= n))):
            raise ValueError(f"numpy.ravel_multi_index: an index is out of bounds for a dimension of length {n}.")
        flat, stride = flat + i * stride, stride * n
    return flat


@_implements(np.isin)
def numpy_isin(element: Any, test_elements: Any, assume_unique: Any = False, invert: Any = False, *,
               kind: Any = None) -> Array:  # fmt: skip
    """``numpy.isin``: whether each element of ``element`` is among ``test_elements`` (a sorted
    search; NaN is in nothing)."""
    x, t = _arrays(element, test_elements)
    dt = nd.result_type(x, t)
    x, table = nd.astype(x, dt, copy=False), nd.sort(nd.unique_values(nd.reshape(nd.astype(t, dt, copy=False), (-1,))))
    if table.size == 0:
        found = nd.zeros(x.shape, dtype=nd.bool, device=x.device)
    else:
        at = nd.minimum(nd.searchsorted(table, x), table.size - 1)
        found = nd.reshape(nd.take(table, nd.reshape(at, (-1,))), x.shape) == x
    return nd.logical_not(found) if invert else found


# -- linear algebra


@_implements(np.dot)
def _dot(a: Any, b: Any, out: Any = None) -> Array:
    x, y = _arrays(a, b)
    if x.ndim == 0 or y.ndim == 0:
        return into(out, nd.multiply(x, y))
    if x.ndim > 2 or y.ndim > 2:  # NumPy's N-d dot is not matmul
        raise Unsupported("arrays of more than 2 dimensions")
    return into(out, nd.matmul(x, y))


@_implements(np.tensordot)
def _tensordot(a: Any, b: Any, axes: Any = 2) -> Array:
    x, y = _arrays(a, b)
    if not isinstance(axes, int):
        axes = tuple((ax,) if isinstance(ax, int) else tuple(ax) for ax in axes)
    return nd.tensordot(x, y, axes=axes)


@_implements(np.outer)
def _outer(a: Any, b: Any, out: Any = None) -> Array:
    x, y = _arrays(a, b)
    return into(out, nd.linalg.outer(nd.reshape(x, (-1,)), nd.reshape(y, (-1,))))


@_implements(np.linalg.qr)
def _qr(a: Any, mode: Any = "reduced") -> Any:
    if mode not in ("reduced", "complete"):
        raise Unsupported(f"mode={mode!r}")
    return nd.linalg.qr(_arr(a), mode=mode)


@_implements(np.linalg.svd)
def _svd(a: Any, full_matrices: Any = True, compute_uv: Any = True, hermitian: Any = False) -> Any:
    x = _arr(a)
    return nd.linalg.svd(x, full_matrices=bool(full_matrices)) if compute_uv else nd.linalg.svdvals(x)


@_implements(np.linalg.inv)
def _inv(a: Any) -> Array:
    return nd.linalg.inv(_arr(a))


@_implements(np.linalg.solve)
def _solve(a: Any, b: Any) -> Array:
    return nd.linalg.solve(*_arrays(a, b))


@_implements(np.linalg.det)
def _det(a: Any) -> Array:
    return nd.linalg.det(_arr(a))


@_implements(np.linalg.cholesky)
def _cholesky(a: Any, /, *, upper: Any = False) -> Array:
    return nd.linalg.cholesky(_arr(a), upper=bool(upper))


# -- creation: NumPy's ``like=`` functions and the ``*_like`` ones, on the array's device


def _new_layout(order: Any) -> None:
    """A new ndplane array is C-contiguous, which every ``order`` but Fortran's allows."""
    if order not in (None, "C", "K", "A"):
        raise Unsupported(f"order={order!r}")


@_implements(np.array, np.asarray, np.asanyarray, np.ascontiguousarray)
def _array(a: Any, dtype: Any = None, *, copy: Any = None, order: Any = None, subok: Any = False,
           ndmin: Any = 0, device: Any = None, like: Any = None) -> Array:  # fmt: skip
    _new_layout(order)
    dev = like.device
    x = nd.asarray(a, dtype=_dtype(dtype, "numpy.array"), device=dev, copy=copy)
    return nd.reshape(x, (1,) * (ndmin - x.ndim) + x.shape) if ndmin > x.ndim else x


#: NumPy's creation functions that dispatch on their ``like=`` argument.
LIKE: frozenset[Any] = frozenset({
    np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.empty, np.zeros, np.ones, np.full, np.arange,
})  # fmt: skip


def _shape(shape: Any) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)


def _filled_row(fn: Callable[..., Array], name: str) -> Callable[..., Array]:
    def row(shape: Any, dtype: Any = None, order: Any = "C", *, device: Any = None, like: Any = None) -> Array:
        _new_layout(order)
        dt = _dtypes.float64 if dtype is None else _dtypes.as_dtype(dtype, name)  # NumPy's default
        return fn(_shape(shape), dtype=dt, device=like.device)

    row.__name__ = row.__qualname__ = name.replace(".", "_")
    SIGNATURES[row] = inspect.signature(row)
    return row


FUNCTIONS.update({f: _filled_row(fn, name) for f, fn, name in (
    (np.empty, nd.empty, "numpy.empty"), (np.zeros, nd.zeros, "numpy.zeros"), (np.ones, nd.ones, "numpy.ones"),
)})  # fmt: skip


@_implements(np.full)
def _full(shape: Any, fill_value: Any, dtype: Any = None, order: Any = "C", *, device: Any = None,
          like: Any = None) -> Array:  # fmt: skip
    _new_layout(order)
    return nd.full(_shape(shape), operand(fill_value, like.device), dtype=_dtype(dtype, "numpy.full"),
                   device=like.device)  # fmt: skip


@_implements(np.arange)
def _arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None, *, device: Any = None,
            like: Any = None) -> Array:  # fmt: skip
    start, stop, step = (None if v is None else operand(v, like.device) for v in (start, stop, step))
    return nd.arange(start, stop, 1 if step is None else step, dtype=_dtype(dtype, "numpy.arange"),
                     device=like.device)  # fmt: skip


def _new_like(prototype: Any, dtype: Any, order: Any, shape: Any, name: str) -> tuple[Array, dict[str, Any]]:
    """The prototype and the ``shape``/``dtype``/``device`` of a NumPy ``*_like`` call."""
    _new_layout(order)
    x = _arr(prototype)
    spec = {"dtype": _dtype(dtype, name) or x.dtype, "device": x.device}
    return x, {"shape": x.shape if shape is None else _shape(shape), **spec}


def _like_row(fn: Callable[..., Array], name: str) -> Callable[..., Array]:
    def row(prototype: Any, dtype: Any = None, order: Any = "K", subok: Any = True, shape: Any = None, *,
            device: Any = None) -> Array:  # fmt: skip
        return fn(**_new_like(prototype, dtype, order, shape, name)[1])

    row.__name__ = row.__qualname__ = name.replace(".", "_")
    SIGNATURES[row] = inspect.signature(row)
    return row


FUNCTIONS.update({f: _like_row(fn, f"numpy.{f.__name__}") for f, fn in (
    (np.empty_like, nd.empty), (np.zeros_like, nd.zeros), (np.ones_like, nd.ones),
)})  # fmt: skip


@_implements(np.full_like)
def _full_like(a: Any, fill_value: Any, dtype: Any = None, order: Any = "K", subok: Any = True,
               shape: Any = None, *, device: Any = None) -> Array:  # fmt: skip
    x, spec = _new_like(a, dtype, order, shape, "numpy.full_like")
    return nd.full(fill_value=operand(fill_value, x.device), **spec)


@_implements(np.copy)
def _copy(a: Any, order: Any = "K", subok: Any = False) -> Array:
    return nd.asarray(_arr(a), copy=True)


def _astype(x: Any, dtype: Any, /, *, copy: Any = True, device: Any = None) -> Array:
    return nd.astype(_arr(x), _dtypes.as_dtype(dtype, "numpy.astype"), copy=bool(copy))


if hasattr(np, "astype"):  # NumPy >= 2.1
    _implements(np.astype)(_astype)


# -- information about arrays (answers, not arrays)


@_implements(np.shape)
def _np_shape(a: Any) -> tuple[int, ...]:
    return tuple(_arr(a).shape)


@_implements(np.ndim)
def _np_ndim(a: Any) -> int:
    return _arr(a).ndim


@_implements(np.size)
def _np_size(a: Any, axis: Any = None) -> int:
    x = _arr(a)
    return x.size if axis is None else x.shape[axis]


@_implements(np.iscomplexobj)
def _iscomplexobj(x: Any) -> bool:
    return _arr(x).dtype.kind == "complex"


@_implements(np.isrealobj)
def _isrealobj(x: Any) -> bool:
    return _arr(x).dtype.kind != "complex"


@_implements(np.result_type)
def _result_type(*arrays_and_dtypes: Any) -> np.dtype:
    return np.result_type(*(v.dtype.dtype if type(v) is Array else v for v in arrays_and_dtypes))


@_implements(np.real)
def _real(val: Any) -> Array:
    x = _arr(val)
    return nd.real(x) if x.dtype.kind == "complex" else x


@_implements(np.imag)
def _imag(val: Any) -> Array:
    x = _arr(val)
    return nd.imag(x) if x.dtype.kind == "complex" else nd.zeros_like(x)
