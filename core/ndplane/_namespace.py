"""The Array API namespace, assembled from the chapter modules (and ``linalg``, ``fft``,
``random``).

This is the top of the op layers: the autograd rules, ``nn``, ``optim`` and the fused
composites write ``nd.exp(x)`` against this module (``from .. import _namespace as nd``),
and ``ndplane/__init__.py`` re-exports it with autograd, ``nn`` and ``optim`` on top.
"""

# ruff: noqa: E402

from __future__ import annotations

__all__: list[str] = []

from ._errors import (
    BackendUnavailableError,
    DeviceMismatchError,
    FallbackError,
    FallbackWarning,
    NdplaneError,
    OutOfMemoryError,
    PluginWarning,
    UnsupportedDTypeError,
)

__all__ += [
    "BackendUnavailableError", "DeviceMismatchError", "FallbackError", "FallbackWarning",
    "NdplaneError", "OutOfMemoryError", "PluginWarning", "UnsupportedDTypeError",
]  # fmt: skip

from ._dtypes import (
    ALL_DTYPES,
    DType,
    bool,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    isdtype,
    result_type,
    uint8,
    uint16,
    uint32,
    uint64,
)

__all__ += [
    "ALL_DTYPES", "DType", "bool", "complex64", "complex128", "float16", "float32", "float64",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "isdtype", "result_type",
]  # fmt: skip

from ._data_type_functions import astype, can_cast, finfo, iinfo

__all__ += ["astype", "can_cast", "finfo", "iinfo"]

from ._devices import Device, backends, default_device, devices, get_default_device

__all__ += ["Device", "backends", "default_device", "devices", "get_default_device"]

from ._array import Array

__all__ += ["Array"]

from ._dispatch import fallback_mode

__all__ += ["fallback_mode"]

from ._graph import enable_grad, no_grad

__all__ += ["enable_grad", "no_grad"]

from ._creation import (
    arange,
    asarray,
    empty,
    empty_like,
    eye,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    zeros,
    zeros_like,
)

__all__ += [
    "arange", "asarray", "empty", "empty_like", "eye", "full", "full_like", "linspace", "ones",
    "ones_like", "zeros", "zeros_like",
]  # fmt: skip

from . import _elementwise
from ._elementwise import *  # noqa: F403 - the table-built elementwise functions

__all__ += _elementwise.__all__

from ._manipulation import (
    broadcast_arrays,
    broadcast_to,
    concat,
    expand_dims,
    flip,
    matrix_transpose,
    moveaxis,
    permute_dims,
    reshape,
    squeeze,
    stack,
    unstack,
)

__all__ += [
    "broadcast_arrays", "broadcast_to", "concat", "expand_dims", "flip", "matrix_transpose",
    "moveaxis", "permute_dims", "reshape", "squeeze", "stack", "unstack",
]  # fmt: skip

from ._indexing import take, take_along_axis

__all__ += ["take", "take_along_axis"]

from ._statistical import cumulative_prod, cumulative_sum, max, mean, min, prod, std, sum, var

__all__ += ["cumulative_prod", "cumulative_sum", "max", "mean", "min", "prod", "std", "sum", "var"]

from ._utility import all, any

__all__ += ["all", "any"]

from ._searching import argmax, argmin, nonzero, where

__all__ += ["argmax", "argmin", "nonzero", "where"]

from ._sorting import argsort, sort

__all__ += ["argsort", "sort"]

from ._linear_algebra_functions import matmul, tensordot, vecdot

__all__ += ["matmul", "tensordot", "vecdot"]

from . import random

__all__ += ["random"]

e = 2.718281828459045
inf = float("inf")
nan = float("nan")
newaxis = None
pi = 3.141592653589793

__all__ += ["e", "inf", "nan", "newaxis", "pi"]

from ._inspection import __array_namespace_info__

__all__ += ["__array_namespace_info__"]

# -- Array API 2024.12 completion: manipulation, searching, set, utility, creation extras,
# -- the linalg and fft extensions, DLPack
from ._indexing import repeat
from ._manipulation import roll, tile

__all__ += ["repeat", "roll", "tile"]

from ._searching import count_nonzero, searchsorted
from ._utility import diff

__all__ += ["count_nonzero", "searchsorted", "diff"]

from ._creation import meshgrid, tril, triu
from ._dlpack import from_dlpack
from ._set import unique_all, unique_counts, unique_inverse, unique_values

__all__ += ["meshgrid", "tril", "triu", "from_dlpack", "unique_all", "unique_counts", "unique_inverse",
            "unique_values"]  # fmt: skip

from . import fft, linalg

__all__ += ["fft", "linalg"]
