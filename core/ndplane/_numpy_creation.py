"""NumPy's creation functions (the ``like=`` ones and the ``*_like`` ones, on the array's
device) and its questions about arrays, written with ndplane functions: rows of
``_numpy_operands.FUNCTIONS``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _dtypes
from . import _namespace as nd
from ._array import Array
from ._numpy_operands import (
    FUNCTIONS,
    SIGNATURES,
    Unsupported,
    as_array,
    dtype_arg,
    implements,
    operand,
    shape_arg,
)

__all__ = ["LIKE"]


# -- creation: NumPy's ``like=`` functions and the ``*_like`` ones, on the array's device


def _new_layout(order: Any) -> None:
    """A new ndplane array is C-contiguous, which every ``order`` but Fortran's allows."""
    if order not in (None, "C", "K", "A"):
        raise Unsupported(f"order={order!r}")


@implements(np.array, np.asarray, np.asanyarray, np.ascontiguousarray)
def _array(a: Any, dtype: Any = None, *, copy: Any = None, order: Any = None, subok: Any = False,
           ndmin: Any = 0, device: Any = None, like: Any = None) -> Array:  # fmt: skip
    _new_layout(order)
    dev = like.device
    x = nd.asarray(a, dtype=dtype_arg(dtype, "numpy.array"), device=dev, copy=copy)
    return nd.reshape(x, (1,) * (ndmin - x.ndim) + x.shape) if ndmin > x.ndim else x


#: NumPy's creation functions that dispatch on their ``like=`` argument.
LIKE: frozenset[Any] = frozenset({
    np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.empty, np.zeros, np.ones, np.full, np.arange,
})  # fmt: skip


def _filled_row(fn: Callable[..., Array], name: str) -> Callable[..., Array]:
    def row(shape: Any, dtype: Any = None, order: Any = "C", *, device: Any = None, like: Any = None) -> Array:
        _new_layout(order)
        dt = _dtypes.float64 if dtype is None else _dtypes.as_dtype(dtype, name)  # NumPy's default
        return fn(shape_arg(shape), dtype=dt, device=like.device)

    row.__name__ = row.__qualname__ = name.replace(".", "_")
    SIGNATURES[row] = inspect.signature(row)
    return row


FUNCTIONS.update({f: _filled_row(fn, name) for f, fn, name in (
    (np.empty, nd.empty, "numpy.empty"), (np.zeros, nd.zeros, "numpy.zeros"), (np.ones, nd.ones, "numpy.ones"),
)})  # fmt: skip


@implements(np.full)
def _full(shape: Any, fill_value: Any, dtype: Any = None, order: Any = "C", *, device: Any = None,
          like: Any = None) -> Array:  # fmt: skip
    _new_layout(order)
    return nd.full(shape_arg(shape), operand(fill_value, like.device), dtype=dtype_arg(dtype, "numpy.full"),
                   device=like.device)  # fmt: skip


@implements(np.arange)
def _arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None, *, device: Any = None,
            like: Any = None) -> Array:  # fmt: skip
    start, stop, step = (None if v is None else operand(v, like.device) for v in (start, stop, step))
    return nd.arange(start, stop, 1 if step is None else step, dtype=dtype_arg(dtype, "numpy.arange"),
                     device=like.device)  # fmt: skip


def _new_like(prototype: Any, dtype: Any, order: Any, shape: Any, name: str) -> tuple[Array, dict[str, Any]]:
    """The prototype and the ``shape``/``dtype``/``device`` of a NumPy ``*_like`` call."""
    _new_layout(order)
    x = as_array(prototype)
    spec = {"dtype": dtype_arg(dtype, name) or x.dtype, "device": x.device}
    return x, {"shape": x.shape if shape is None else shape_arg(shape), **spec}


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


@implements(np.full_like)
def _full_like(a: Any, fill_value: Any, dtype: Any = None, order: Any = "K", subok: Any = True,
               shape: Any = None, *, device: Any = None) -> Array:  # fmt: skip
    x, spec = _new_like(a, dtype, order, shape, "numpy.full_like")
    return nd.full(fill_value=operand(fill_value, x.device), **spec)


@implements(np.copy)
def _copy(a: Any, order: Any = "K", subok: Any = False) -> Array:
    return nd.asarray(as_array(a), copy=True)


def _astype(x: Any, dtype: Any, /, *, copy: Any = True, device: Any = None) -> Array:
    return nd.astype(as_array(x), _dtypes.as_dtype(dtype, "numpy.astype"), copy=bool(copy))


if hasattr(np, "astype"):  # NumPy >= 2.1
    implements(np.astype)(_astype)


# -- information about arrays (answers, not arrays)


@implements(np.shape)
def _np_shape(a: Any) -> tuple[int, ...]:
    return tuple(as_array(a).shape)


@implements(np.ndim)
def _np_ndim(a: Any) -> int:
    return as_array(a).ndim


@implements(np.size)
def _np_size(a: Any, axis: Any = None) -> int:
    x = as_array(a)
    return x.size if axis is None else x.shape[axis]


@implements(np.iscomplexobj)
def _iscomplexobj(x: Any) -> bool:
    return as_array(x).dtype.kind == "complex"


@implements(np.isrealobj)
def _isrealobj(x: Any) -> bool:
    return as_array(x).dtype.kind != "complex"


@implements(np.result_type)
def _result_type(*arrays_and_dtypes: Any) -> np.dtype:
    return np.result_type(*(v.dtype.dtype if type(v) is Array else v for v in arrays_and_dtypes))


@implements(np.real)
def _real(val: Any) -> Array:
    x = as_array(val)
    return nd.real(x) if x.dtype.kind == "complex" else x


@implements(np.imag)
def _imag(val: Any) -> Array:
    x = as_array(val)
    return nd.imag(x) if x.dtype.kind == "complex" else nd.zeros_like(x)
