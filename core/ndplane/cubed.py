"""ndplane as the backend array namespace of `cubed <https://cubed-dev.github.io/cubed/>`_.

cubed runs Array API computations chunk by chunk under a memory bound, storing the chunks
between tasks in Zarr; the namespace that computes on each chunk is the module named by
``CUBED_BACKEND_ARRAY_API_MODULE``. This module is that namespace for ndplane: the ndplane
namespace plus what cubed needs beyond it, each a thin adapter rather than a change to the
public ``ndplane`` namespace, which stays the Array API standard:

- the device: creation functions without ``device=`` use ``NDPLANE_CUBED_DEVICE`` (e.g.
  ``cpu``, ``numpy``), else ndplane's default device, in every process and thread cubed runs
  tasks in (environment variables reach executor threads and worker processes; a
  ``with nd.default_device(...)`` block would not);
- NumPy dtypes as arguments: cubed keeps ``numpy.dtype`` objects (for Zarr) and hands them back,
  so ``isdtype`` and ``result_type`` take them here (the other functions already do);
- ``__array_namespace_info__`` answers for that device: cubed passes its own device label
  (``"cpu"``), not an ndplane device;
- names outside the 2024.12 standard: ``nansum``, ``mean(..., dtype=)``, ``take`` with a Python
  integer index and ``isin``, the same functions ``numpy.nansum``/``mean``/``take``/``isin`` map
  to on ndplane arrays (``_numpy_functions``), and ``broadcast_shapes`` (both of the last two are
  in the Array API draft; they move to the namespace with the standard that adds them).

:func:`use` sets both variables; call it before cubed is imported.

>>> import os, unittest.mock, ndplane.cubed
>>> with unittest.mock.patch.dict(os.environ):  # (restores the environment afterwards)
...     ndplane.cubed.use("numpy")
...     os.environ["CUBED_BACKEND_ARRAY_API_MODULE"], ndplane.cubed.asarray([1.0, 2.0]).device
('ndplane.cubed', Device('numpy:0'))
"""

from __future__ import annotations

import builtins
import functools
import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _dtypes, _layout
from . import _namespace as _nd
from ._devices import Device, as_device
from ._inspection import Info
from ._namespace import *  # noqa: F403 - the namespace cubed computes with, adapted below
from ._numpy_functions import nansum, numpy_isin, numpy_mean, numpy_take

__all__ = [
    *_nd.__all__, "nansum", "isin", "broadcast_shapes", "use", "chunk_device", "MODULE_VARIABLE", "DEVICE_VARIABLE",
]  # fmt: skip

MODULE_VARIABLE = "CUBED_BACKEND_ARRAY_API_MODULE"
DEVICE_VARIABLE = "NDPLANE_CUBED_DEVICE"


def use(device: str | Device | None = None) -> None:
    """Make ndplane, on ``device``, cubed's backend namespace for this process and the processes it
    starts (sets ``CUBED_BACKEND_ARRAY_API_MODULE`` and ``NDPLANE_CUBED_DEVICE``).

    cubed reads its variable once, when it is imported: a cubed already imported with another
    backend raises RuntimeError. The device may change later (it is read at each creation).

    >>> import os, unittest.mock, ndplane.cubed
    >>> with unittest.mock.patch.dict(os.environ):
    ...     ndplane.cubed.use("numpy:1")
    ...     ndplane.cubed.zeros(2).device
    Device('numpy:1')
    """
    dev = as_device(device)  # NOTE: checks the device exists before anything is set
    backend = sys.modules.get("cubed.backend_array_api")
    if backend is not None and getattr(backend, "namespace", None) is not sys.modules[__name__]:
        raise RuntimeError(
            f"use: cubed was imported before ndplane.cubed.use() with backend namespace "
            f"{getattr(backend, 'xp_name', '?')!r}; call use() (or set {MODULE_VARIABLE}=ndplane.cubed) "
            f"before importing cubed."
        )
    os.environ[MODULE_VARIABLE] = __name__
    os.environ[DEVICE_VARIABLE] = str(dev)


def chunk_device() -> Device:
    """The device cubed's chunks live on: ``NDPLANE_CUBED_DEVICE``, else ndplane's default device.

    >>> import os, unittest.mock, ndplane.cubed
    >>> with unittest.mock.patch.dict(os.environ, NDPLANE_CUBED_DEVICE="numpy-contig"):
    ...     ndplane.cubed.chunk_device()
    Device('numpy-contig:0')
    """
    return as_device(os.environ.get(DEVICE_VARIABLE) or None)


def _on_device(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def create(*args: Any, device: Any = None, **kwargs: Any) -> Any:
        return fn(*args, device=chunk_device() if device is None else device, **kwargs)

    return create


asarray = _on_device(_nd.asarray)
empty = _on_device(_nd.empty)
zeros = _on_device(_nd.zeros)
ones = _on_device(_nd.ones)
full = _on_device(_nd.full)
arange = _on_device(_nd.arange)
linspace = _on_device(_nd.linspace)
eye = _on_device(_nd.eye)

mean = numpy_mean
take = numpy_take
isin = numpy_isin


def _isdtype(dtype: Any, kind: Any) -> builtins.bool:
    """``ndplane.isdtype`` that also takes NumPy dtypes (as cubed's arrays carry).

    >>> import numpy, ndplane.cubed
    >>> ndplane.cubed.isdtype(numpy.dtype("float32"), "real floating")
    True
    """
    if isinstance(kind, tuple):
        kind = tuple(k if isinstance(k, str) else _dtypes.as_dtype(k, "isdtype") for k in kind)
    elif not isinstance(kind, str):
        kind = _dtypes.as_dtype(kind, "isdtype")
    return _nd.isdtype(_dtypes.as_dtype(dtype, "isdtype"), kind)


isdtype = _isdtype


def _result_type(*arrays_and_dtypes: Any) -> _dtypes.DType:
    """``ndplane.result_type`` that also takes NumPy dtypes.

    >>> import numpy, ndplane as nd, ndplane.cubed
    >>> ndplane.cubed.result_type(numpy.dtype("int8"), nd.uint8)
    ndplane.int16
    """
    return _nd.result_type(*(_dtypes.as_dtype(a, "result_type") if isinstance(a, (np.dtype, type)) else a
                             for a in arrays_and_dtypes))  # fmt: skip


result_type = _result_type


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape that ``shapes`` broadcast to (``numpy.broadcast_shapes``; in the Array API draft).

    >>> import ndplane.cubed
    >>> ndplane.cubed.broadcast_shapes((3, 1), (4,))
    (3, 4)
    """
    return _layout.broadcast_shapes(*(tuple(s) for s in shapes), name="broadcast_shapes")


class _CubedInfo(Info):
    """The inspection namespace, answering for :func:`chunk_device` whatever device cubed names."""

    def capabilities(self, *, device: Any = None) -> dict[str, Any]:
        return super().capabilities(device=chunk_device())

    def default_device(self) -> Device:
        return chunk_device()

    def default_dtypes(self, *, device: Any = None) -> dict[str, _dtypes.DType]:
        return super().default_dtypes(device=chunk_device())

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, _dtypes.DType]:
        return super().dtypes(device=chunk_device(), kind=kind)


def _array_namespace_info() -> Info:
    """The inspection namespace of the cubed backend (see :func:`chunk_device`).

    >>> import os, unittest.mock, ndplane.cubed
    >>> with unittest.mock.patch.dict(os.environ, NDPLANE_CUBED_DEVICE="numpy-nof64"):
    ...     ndplane.cubed.__array_namespace_info__().default_dtypes(device="cpu")["real floating"]
    ndplane.float32
    """
    return _CubedInfo()


__array_namespace_info__ = _array_namespace_info
