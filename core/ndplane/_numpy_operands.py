"""The operands and the table of ``Array.__array_function__``: NumPy function -> a row with
NumPy's signature (the rows themselves: ``_numpy_functions`` and ``_numpy_creation``).

Each row has the NumPy function's signature, or the part of it ndplane serves; an argument
outside it fails to bind, and a row raises :class:`Unsupported` for a value it does not take
(``order="F"``, ``mode="clip"``): both send the call to the NumPy fallback. NumPy arrays and
scalars among the arguments join the device of the ndplane array (NumPy scalars as Python
scalars), so ``numpy.concatenate([x, numpy_array])`` stays on ``x``'s device.
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
    "FUNCTIONS", "NO_VALUE", "SIGNATURES", "Unsupported", "as_array", "as_arrays", "axis_arg", "device_of",
    "dtype_arg", "float_default", "implements", "into", "only", "operand", "shape_arg", "walk",
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


def as_arrays(*vals: Any) -> list[Array]:
    """Every value as an Array on the device of the first Array among them."""
    device = device_of(vals)
    out = [operand(v, device) for v in vals]
    return [v if type(v) is Array else nd.asarray(v, device=device) for v in out]


def as_array(v: Any) -> Array:
    return as_arrays(v)[0]


def axis_arg(axis: Any) -> Any:
    return tuple(int(a) for a in axis) if isinstance(axis, (list, tuple)) else axis


def dtype_arg(dtype: Any, name: str) -> _dtypes.DType | None:
    return None if dtype is None else _dtypes.as_dtype(dtype, name)


NO_VALUE: Any = np._NoValue  # type: ignore[attr-defined]  # NumPy's "argument not given"


def only(**given: tuple[Any, Any]) -> None:
    """Refuse (to the fallback) every argument given as ``name=(value, default)`` that is not its default."""
    for key, (value, default) in given.items():
        if value is default or value is NO_VALUE:
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


def shape_arg(shape: Any) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)


def float_default(x: Array) -> _dtypes.DType:
    return x.device.backend.default_dtypes["real floating"]


# ---------------------------------------------------------------------------
# the table: NumPy function -> a row with NumPy's signature (the parameters it takes)
# ---------------------------------------------------------------------------

FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {}
SIGNATURES: dict[Callable[..., Any], inspect.Signature] = {}


def implements(*np_funcs: Callable[..., Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(row: Callable[..., Any]) -> Callable[..., Any]:
        for f in np_funcs:
            FUNCTIONS[f] = row
        SIGNATURES[row] = inspect.signature(row)
        return row

    return register
