"""Data type functions (Array API chapter): astype, can_cast, finfo, iinfo."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _dispatch, _dtypes
from ._array import Array, check_array
from ._devices import Device, as_device
from ._dtypes import DType, as_dtype

__all__ = ["astype", "can_cast", "finfo", "iinfo"]


def astype(x: Array, dtype: DType, /, *, copy: bool = True, device: str | Device | None = None) -> Array:
    """``x`` converted to ``dtype`` (and moved to ``device`` if given).

    With ``copy=False`` the input itself is returned when nothing changes.
    Complex to real casts are refused: take ``real()`` first.

    >>> import ndplane as nd
    >>> nd.astype(nd.asarray([1.7, -1.7]), nd.int32)
    Array([ 1, -1], dtype=int32, device='numpy:0')
    """
    check_array("astype", x)
    dt = as_dtype(dtype, "astype")
    if x.dtype.kind == "complex" and dt.kind != "complex":
        raise TypeError(f"astype: cannot cast complex {x.dtype.name} to {dt.name}; use real() or abs() first.")
    if device is not None and as_device(device) is not x.device:
        x = _dispatch.to_device(x, as_device(device))
        copy = False
    if dt is x.dtype:
        return _dispatch.copy_of(x) if copy else x
    return _dispatch.cast(x, dt)


def can_cast(from_: DType | Array, to: DType, /) -> bool:
    """Whether ``from_`` promotes to ``to`` under ndplane's promotion rules.

    >>> import ndplane as nd
    >>> nd.can_cast(nd.int8, nd.int16), nd.can_cast(nd.float64, nd.float32)
    (True, False)
    """
    src = from_.dtype if type(from_) is Array else as_dtype(from_, "can_cast")
    dst = as_dtype(to, "can_cast")
    return _dtypes.PROMOTION_TABLE.get((src, dst)) is dst


@dataclass(frozen=True)
class finfo_object:
    """Machine limits of a floating dtype (Python floats)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: DType


@dataclass(frozen=True)
class iinfo_object:
    """Machine limits of an integer dtype (Python ints)."""

    bits: int
    max: int
    min: int
    dtype: DType


def _dtype_of(obj: Any, name: str) -> DType:
    return obj.dtype if type(obj) is Array else as_dtype(obj, name)


def finfo(type: DType | Array, /) -> finfo_object:
    """Limits of a floating dtype; for complex dtypes, those of their real part.

    >>> import ndplane as nd
    >>> nd.finfo(nd.float32).bits, nd.finfo(nd.float32).eps
    (32, 1.1920928955078125e-07)
    """
    dt = _dtype_of(type, "finfo")
    if not dt.is_floating:
        raise TypeError(f"finfo: only floating-point dtypes are allowed; got {dt.name}.")
    real = _dtypes.real_of(dt)
    fi = np.finfo(real.dtype)
    return finfo_object(
        bits=fi.bits, eps=float(fi.eps), max=float(fi.max), min=float(fi.min),
        smallest_normal=float(fi.smallest_normal), dtype=real,
    )  # fmt: skip


def iinfo(type: DType | Array, /) -> iinfo_object:
    """Limits of an integer dtype.

    >>> import ndplane as nd
    >>> nd.iinfo(nd.int8).min, nd.iinfo(nd.uint16).max
    (-128, 65535)
    """
    dt = _dtype_of(type, "iinfo")
    if dt.kind not in ("int", "uint"):
        raise TypeError(f"iinfo: only integer dtypes are allowed; got {dt.name}.")
    ii = np.iinfo(dt.dtype)
    return iinfo_object(bits=ii.bits, max=int(ii.max), min=int(ii.min), dtype=dt)
