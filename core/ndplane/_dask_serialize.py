"""Dask ``distributed``'s own serializer for ndplane arrays, registered in every process that
imports Dask.

Without it, ``distributed`` pickles an ndplane array. Between two workers, or a worker and a
client talking directly, that is pickle protocol 5: the data goes out of band, without a copy.
But every message to or through the scheduler is pickled with protocol 4 (the scheduler's
"common denominator" handshake), which has no out-of-band buffers: the result of a
``compute()`` on a cluster, gathered to the client through the scheduler, went in band, copied
three to four times (32 MB: 85 ms where a NumPy array, which ``distributed`` sends with its own
serializer, took 22). Through this serializer an array travels as one header and one frame of
its bytes whatever the route, and is rebuilt on its device, adopting the received bytes where
the device is host-resident, as unpickling it does.

Both ends of a connection must know the serializer, and a worker never imports
``ndplane.dask`` unless told to. So :func:`install` runs from the ``dask.sizeof`` entry point
(``ndplane._dask_sizeof``), which Dask loads in every process that imports it, the client and
each worker alike, before ``distributed``'s serialization module exists: it registers at once
if that module is loaded, else right after it is.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from . import _creation
from ._array import Array

__all__ = ["deserialize", "install", "serialize"]

_MODULE = "distributed.protocol.serialize"


def serialize(x: Array) -> tuple[dict[str, Any], list[memoryview]]:
    """``x`` as ``distributed`` sends it: a small header and one frame of flat bytes, ``x``'s own
    memory where its device is host-resident and ``x`` contiguous (no copy).

    >>> import ndplane as nd
    >>> header, frames = serialize(nd.asarray([[1.5, 2.5]], device="numpy"))
    >>> header, [f.nbytes for f in frames]
    ({'dtype': 'float64', 'shape': (1, 2), 'device': 'numpy:0'}, [16])
    >>> deserialize(header, [bytearray(f) for f in frames])
    Array([[1.5, 2.5]], dtype=float64, device='numpy:0')
    """
    header = {"dtype": x.dtype.name, "shape": x.shape, "device": str(x.device)}
    return header, [memoryview(_creation.host_bytes(x))]  # type: ignore[arg-type]


def deserialize(header: dict[str, Any], frames: Sequence[Any]) -> Array:
    """The array :func:`serialize` described, on its device; received bytes that are writable
    and aligned are used in place where the device is host-resident (as pickle's out-of-band
    buffers are)."""
    # NOTE: the unpickling constructor: one road for both transports
    return _creation._unpickle(frames[0], header["dtype"], tuple(header["shape"]), header["device"])


def _register(module: ModuleType) -> None:
    module.dask_serialize.register(Array)(serialize)
    module.dask_deserialize.register(Array)(deserialize)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when ``distributed.protocol.serialize`` is first imported, it lets
    the other finders find it and wraps its loader, so :func:`_register` runs as soon as the
    module has executed (a one-shot post-import hook)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:  # fmt: skip
        if fullname != _MODULE:
            return None
        _uninstall_hook()
        spec = importlib.util.find_spec(fullname)
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        execute = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            execute(module)
            _register(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


_HOOK = _AfterImport()


def _uninstall_hook() -> None:
    if _HOOK in sys.meta_path:
        sys.meta_path.remove(_HOOK)


def install() -> None:
    """Register :func:`serialize` and :func:`deserialize` with ``distributed`` in this process:
    now if its serialization module is loaded, else when it is (nothing is imported here)."""
    module = sys.modules.get(_MODULE)
    if module is not None and hasattr(module, "dask_deserialize"):
        _register(module)
    elif _HOOK not in sys.meta_path:
        sys.meta_path.insert(0, _HOOK)
