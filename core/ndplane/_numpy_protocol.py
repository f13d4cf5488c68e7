"""NumPy's dispatch protocols on Array: ``__array_function__`` (NEP 18) and ``__array_ufunc__``
(NEP 13), so that ``numpy.sum(x)`` or ``numpy.add(x, y)`` on ndplane arrays -- what Dask and
other NumPy-based libraries call on their chunks -- runs ndplane's own functions on the
array's device and returns ndplane arrays.

Two explicit tables say what is mapped: :data:`UFUNCS` (NumPy ufunc -> ndplane elementwise
function) and :data:`FUNCTIONS` (NumPy function -> a row below with NumPy's signature, written
with ndplane functions). A NumPy array or NumPy scalar among the operands joins the ndplane
array's device (``asarray``), so a mixed operation stays on that device; NumPy scalars count
as Python scalars.

Anything else -- a function or ufunc method outside the tables, or an argument a row does not
take (``where=``, ``order="F"``, ...) -- is the NumPy fallback, under the one fallback policy of
``_dispatch`` (``NDPLANE_FALLBACK`` / :func:`ndplane.fallback_mode`): ``warn`` runs it through
NumPy on host copies and brings the results back to the device with one
:class:`~ndplane.FallbackWarning` per function and device kind, ``allow`` does so silently,
``error`` raises :class:`~ndplane.FallbackError` naming the function. A function that writes
into its arguments (``numpy.copyto``, ``ufunc.at``, ``out=`` a NumPy array) cannot run on copies
and raises TypeError. ``numpy.asarray(x)`` itself is not dispatched: it still calls
``Array.__array__``, the one explicit road to NumPy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import _dispatch, _dtypes
from . import _namespace as nd
from ._array import Array
from ._devices import Device
from ._numpy_creation import LIKE
from ._numpy_functions import numpy_squeeze
from ._numpy_operands import FUNCTIONS, SIGNATURES, Unsupported, device_of, into, only, operand, walk

__all__ = ["UFUNCS", "array_function", "array_ufunc", "copy", "ravel", "squeeze"]


# ---------------------------------------------------------------------------
# ufuncs: NumPy ufunc -> ndplane elementwise function (same semantics for the dtypes both accept)
# ---------------------------------------------------------------------------

UFUNCS: dict[np.ufunc, Callable[..., Array]] = {
    np.absolute: nd.abs, np.arccos: nd.acos, np.arccosh: nd.acosh, np.add: nd.add, np.arcsin: nd.asin,
    np.arcsinh: nd.asinh, np.arctan: nd.atan, np.arctan2: nd.atan2, np.arctanh: nd.atanh,
    np.bitwise_and: nd.bitwise_and, np.invert: nd.bitwise_invert, np.left_shift: nd.bitwise_left_shift,
    np.bitwise_or: nd.bitwise_or, np.right_shift: nd.bitwise_right_shift, np.bitwise_xor: nd.bitwise_xor,
    np.ceil: nd.ceil, np.conjugate: nd.conj, np.copysign: nd.copysign, np.cos: nd.cos, np.cosh: nd.cosh,
    np.divide: nd.divide, np.equal: nd.equal, np.exp: nd.exp, np.expm1: nd.expm1, np.floor: nd.floor,
    np.floor_divide: nd.floor_divide, np.greater: nd.greater, np.greater_equal: nd.greater_equal,
    np.hypot: nd.hypot, np.isfinite: nd.isfinite, np.isinf: nd.isinf, np.isnan: nd.isnan, np.less: nd.less,
    np.less_equal: nd.less_equal, np.log: nd.log, np.log10: nd.log10, np.log1p: nd.log1p, np.log2: nd.log2,
    np.logaddexp: nd.logaddexp, np.logaddexp2: nd.logaddexp2, np.logical_and: nd.logical_and,
    np.logical_not: nd.logical_not, np.logical_or: nd.logical_or, np.logical_xor: nd.logical_xor,
    np.matmul: nd.matmul, np.maximum: nd.maximum, np.minimum: nd.minimum, np.multiply: nd.multiply,
    np.negative: nd.negative, np.nextafter: nd.nextafter, np.not_equal: nd.not_equal, np.positive: nd.positive,
    np.power: nd.pow, np.reciprocal: nd.reciprocal, np.remainder: nd.remainder, np.rint: nd.round,
    np.sign: nd.sign, np.signbit: nd.signbit, np.sin: nd.sin, np.sinh: nd.sinh, np.sqrt: nd.sqrt,
    np.square: nd.square, np.subtract: nd.subtract, np.tan: nd.tan, np.tanh: nd.tanh, np.trunc: nd.trunc,
}  # fmt: skip

#: Rows that serve only some dtype kinds: NumPy takes more (``logical_and`` of floats is their
#: truth; the reciprocal of an integer is ``1 // x`` in NumPy, a float in ndplane). Other kinds
#: take the fallback rather than an error or a silently different result.
_KINDS: dict[np.ufunc, frozenset[str]] = {
    np.reciprocal: frozenset({"float", "complex"}),
    **{u: frozenset({"bool"}) for u in (np.logical_and, np.logical_or, np.logical_xor, np.logical_not)},
}


#: The ufunc keywords a call may pass at these values; any other value (or keyword) is refused.
_UFUNC_DEFAULTS: dict[str, Any] = {"where": True, "casting": "same_kind", "order": "K", "subok": True}


def _call_ufunc(ufunc: np.ufunc, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Array:
    fn = UFUNCS.get(ufunc)
    if fn is None:
        raise Unsupported("this ufunc")
    out, dtype = kwargs.pop("out", None), kwargs.pop("dtype", None)
    only(**{k: (v, _UFUNC_DEFAULTS.get(k)) for k, v in kwargs.items()})
    device = device_of((inputs, out))
    args = [operand(v, device) for v in inputs]
    if dtype is not None:
        dt = _dtypes.as_dtype(dtype, f"numpy.{ufunc.__name__}")
        args = [nd.astype(a, dt) if type(a) is Array else a for a in args]
    kinds = _KINDS.get(ufunc)
    if kinds is not None and any(type(a) is Array and a.dtype.kind not in kinds for a in args):
        raise Unsupported(f"{ufunc.__name__} of {', '.join(a.dtype.name for a in args if type(a) is Array)}")
    return into(out, fn(*args))


# ---------------------------------------------------------------------------
# the NumPy fallback: everything outside the tables, under the core's fallback policy
# ---------------------------------------------------------------------------

# Functions that write into an argument: run on host copies they would lose the write.
_WRITES_INTO = frozenset({np.copyto, np.put, np.place, np.putmask, np.fill_diagonal, np.put_along_axis})


def _map(fn: Callable[[Any], Any], obj: Any) -> Any:
    """``fn`` applied to every leaf of nested lists, tuples (named ones too) and dicts."""
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a named tuple (QRResult, ...)
        return type(obj)(*(_map(fn, v) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map(fn, v) for v in obj)
    if isinstance(obj, dict):
        return {k: _map(fn, v) for k, v in obj.items()}
    return fn(obj)


def _to_host(obj: Any) -> Any:
    return obj.to_numpy() if type(obj) is Array else obj


def _to_device(device: Device, name: str) -> Callable[[Any], Any]:
    def convert(obj: Any) -> Any:
        if not isinstance(obj, (np.ndarray, np.generic)):
            return obj
        if obj.dtype.kind not in "biufc":
            raise TypeError(f"{name} returned a NumPy array of dtype {obj.dtype}, which ndplane cannot hold.")
        return nd.asarray(obj, device=device)

    return convert


def _through_numpy(self: Array, name: str, func: Callable[..., Any], args: tuple[Any, ...],
                   kwargs: dict[str, Any], why: str) -> Any:  # fmt: skip
    if func in _WRITES_INTO or any(v is not None for v in walk(kwargs.get("out"))):
        raise TypeError(
            f"{name} writes into its argument, so ndplane cannot run it on host copies; "
            f"use the ndplane function, or x[...] = value."
        )
    # NOTE: the results come back to the operands' one device; operands on two devices are an
    # error here as in every ndplane function, never a silent move.
    device = _dispatch.same_device(name, self, *(v for v in walk((args, kwargs)) if type(v) is Array))
    _dispatch.check_fallback(
        ("numpy", name, device.kind),
        f"{name}: ndplane has no implementation of {why}, and running it through NumPy on the host "
        f"is disabled (NDPLANE_FALLBACK=error or fallback_mode('error')); call the ndplane "
        f"function, or convert explicitly with x.to_numpy().",
        f"{name} runs through NumPy on the host (copy to NumPy, compute, copy back to '{device}'): "
        f"ndplane has no implementation of {why}. Set NDPLANE_FALLBACK=error to make this an error.",
        stacklevel=3,  # the caller of the NumPy function (NumPy's dispatch adds no Python frame)
    )
    return _map(_to_device(device, name), func(*_map(_to_host, args), **_map(_to_host, kwargs)))


def _foreign(objs: Any) -> bool:
    """Whether an operand is another duck array (a Dask array, ...), which must get its turn."""
    return any(
        type(v) is not Array and not isinstance(v, np.ndarray)
        and (hasattr(v, "__array_function__") or hasattr(v, "__array_ufunc__"))
        for v in walk(objs)
    )  # fmt: skip


def array_function(self: Array, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
    """``Array.__array_function__`` (NEP 18): ``func`` through :data:`FUNCTIONS`, else the NumPy fallback.

    >>> import numpy as np, ndplane as nd
    >>> np.sum(nd.asarray([[1.0, 2.0], [3.0, 4.0]]), axis=0)   # ndplane's sum, on the array's device
    Array([4., 6.], dtype=float64, device='numpy:0')
    """
    if not all(issubclass(t, (Array, np.ndarray)) for t in types):
        return NotImplemented
    name = f"{func.__module__}.{func.__name__}"
    row = FUNCTIONS.get(func)
    if row is None:
        return _through_numpy(self, name, func, args, kwargs, "this NumPy function")
    if func in LIKE:  # reached only through like=self, which NumPy takes out of kwargs
        kwargs = {**kwargs, "like": self}
    try:
        SIGNATURES[row].bind(*args, **kwargs)
    except TypeError:
        return _through_numpy(self, name, func, args, kwargs, f"this call's arguments {sorted(kwargs)}")
    try:
        return row(*args, **kwargs)
    except Unsupported as e:
        return _through_numpy(self, name, func, args, kwargs, str(e))


def array_ufunc(self: Array, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """``Array.__array_ufunc__`` (NEP 13): ``ufunc(...)`` through :data:`UFUNCS`, else the NumPy fallback.

    >>> import numpy as np, ndplane as nd
    >>> np.exp(nd.asarray([0.0])), np.ones(2) + nd.asarray([1.0, 2.0])   # a NumPy operand joins the device
    (Array([1.], dtype=float64, device='numpy:0'), Array([2., 3.], dtype=float64, device='numpy:0'))
    """
    if _foreign((inputs, kwargs.get("out"))):
        return NotImplemented
    name = f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
    if method == "at":
        raise TypeError(f"{name} writes into its argument in place; use x[index] = value on ndplane arrays.")
    if method == "__call__":
        try:
            return _call_ufunc(ufunc, inputs, dict(kwargs))
        except Unsupported as e:
            return _through_numpy(self, name, ufunc, inputs, kwargs, str(e))
    return _through_numpy(self, name, getattr(ufunc, method), inputs, kwargs, f"the ufunc method {method!r}")


# ---------------------------------------------------------------------------
# NumPy-style methods Dask calls on its chunks (bound on Array by ``_methods``)
# ---------------------------------------------------------------------------


def copy(self: Array) -> Array:
    """A copy of this array on the same device (NumPy's ``ndarray.copy``).

    >>> import ndplane as nd
    >>> x = nd.asarray([1.0, 2.0])
    >>> y = x.copy()
    >>> y[0] = 5.0
    >>> x.tolist(), y.tolist()
    ([1.0, 2.0], [5.0, 2.0])
    """
    return nd.asarray(self, copy=True)


def ravel(self: Array) -> Array:
    """The array as 1-D, a view where the layout allows (NumPy's ``ndarray.ravel``).

    >>> import ndplane as nd
    >>> nd.reshape(nd.arange(4), (2, 2)).ravel().tolist()
    [0, 1, 2, 3]
    """
    return nd.reshape(self, (-1,))


def squeeze(self: Array, axis: int | tuple[int, ...] | None = None) -> Array:
    """The array without the given length-1 axes, all of them if ``axis`` is None (NumPy's ``ndarray.squeeze``).

    >>> import ndplane as nd
    >>> nd.zeros((1, 3, 1)).squeeze().shape, nd.zeros((1, 3, 1)).squeeze(0).shape
    ((3,), (3, 1))
    """
    return numpy_squeeze(self, axis)
