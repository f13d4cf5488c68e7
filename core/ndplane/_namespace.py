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

# The docstrings of the names that cannot carry one (a float, None, a DType instance): doctest
# runs ``__test__`` entries as it runs docstrings, and the API reference shows them
# (tools/api_reference.py). First line: the summary; then the example.
_INFO = ">>> import ndplane as nd\n>>> nd.iinfo(nd.{0}).min, nd.iinfo(nd.{0}).max\n({1}, {2})"
__test__ = {
    "e": "Euler's number, the base of natural logarithms.\n\n>>> import ndplane as nd\n"
         ">>> float(nd.log(nd.asarray(nd.e)))\n1.0",
    "inf": "Positive infinity (a Python float).\n\n>>> import ndplane as nd\n"
           ">>> nd.isinf(nd.asarray([nd.inf, -nd.inf, 0.0])).tolist()\n[True, True, False]",
    "nan": "Not a number (a Python float).\n\n>>> import ndplane as nd\n"
           ">>> nd.isnan(nd.asarray([nd.nan, 0.0])).tolist()\n[True, False]",
    "newaxis": "``None``: in an index, inserts an axis of size 1.\n\n>>> import ndplane as nd\n"
               ">>> nd.zeros((2, 3))[:, nd.newaxis].shape\n(2, 1, 3)",
    "pi": "The ratio of a circle's circumference to its diameter.\n\n>>> import ndplane as nd\n"
          ">>> float(nd.cos(nd.asarray(nd.pi)))\n-1.0",
    "ALL_DTYPES": "Every dtype, in the order the promotion table and ``ndplane info`` list them.\n\n"
                  ">>> import ndplane as nd\n>>> len(nd.ALL_DTYPES), nd.ALL_DTYPES[0], nd.ALL_DTYPES[-1]\n"
                  "(14, ndplane.bool, ndplane.complex128)",
    "bool": "Boolean, True or False (one byte).\n\n>>> import ndplane as nd\n"
            ">>> nd.asarray([1, 0], dtype=nd.bool).tolist()\n[True, False]",
    "int8": "8-bit signed integer.\n\n" + _INFO.format("int8", -128, 127),
    "int16": "16-bit signed integer.\n\n" + _INFO.format("int16", -32768, 32767),
    "int32": "32-bit signed integer.\n\n" + _INFO.format("int32", -2147483648, 2147483647),
    "int64": "64-bit signed integer (the default integer dtype of most devices).\n\n"
             + _INFO.format("int64", -9223372036854775808, 9223372036854775807),
    "uint8": "8-bit unsigned integer.\n\n" + _INFO.format("uint8", 0, 255),
    "uint16": "16-bit unsigned integer.\n\n" + _INFO.format("uint16", 0, 65535),
    "uint32": "32-bit unsigned integer.\n\n" + _INFO.format("uint32", 0, 4294967295),
    "uint64": "64-bit unsigned integer.\n\n" + _INFO.format("uint64", 0, 18446744073709551615),
    "float16": "IEEE 754 half precision (beyond the standard; some backends compute it in float32).\n\n"
               ">>> import ndplane as nd\n>>> nd.finfo(nd.float16).eps\n0.0009765625",
    "float32": "IEEE 754 single precision.\n\n>>> import ndplane as nd\n"
               ">>> nd.finfo(nd.float32).eps\n1.1920928955078125e-07",
    "float64": "IEEE 754 double precision (the default floating dtype of the devices that have it).\n\n"
               ">>> import ndplane as nd\n>>> nd.finfo(nd.float64).eps\n2.220446049250313e-16",
    "complex64": "Complex number of two float32 parts.\n\n>>> import ndplane as nd\n"
                 ">>> nd.real(nd.asarray([1 + 2j], dtype=nd.complex64)).dtype\nndplane.float32",
    "complex128": "Complex number of two float64 parts.\n\n>>> import ndplane as nd\n"
                  ">>> nd.imag(nd.asarray([1 + 2j], dtype=nd.complex128)).tolist()\n[2.0]",
}

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
