"""``dask.sizeof`` for ndplane arrays, loaded by Dask itself through the ``dask.sizeof`` entry
point (``pyproject.toml``) in every process that imports Dask -- the client and each
``distributed`` worker -- so that a worker's memory accounting and spilling see the bytes an
ndplane chunk holds (without it Dask counts a chunk as the ~100 bytes of the Python object).

Dask calls :func:`register` while ``import dask`` runs, so this module imports no Dask
module; :func:`register` also arranges ``distributed``'s serializer for ndplane arrays
(``ndplane._dask_serialize``) in every such process; ``ndplane.dask`` registers the rest (chunk
type, dask.array dispatches).
"""

from __future__ import annotations

from typing import Any

from . import _dask_serialize
from ._array import Array

__all__ = ["nbytes", "register"]


def nbytes(x: Array) -> int:
    """The bytes of device memory ``x`` keeps alive, as Dask counts a NumPy chunk: its elements,
    a broadcast (stride-0) axis counted once, at most its whole buffer.

    >>> import ndplane as nd
    >>> x = nd.zeros((100, 10), dtype=nd.float32)
    >>> nbytes(x), nbytes(x[:10]), nbytes(nd.broadcast_to(x[0], (1000, 10)))
    (4000, 400, 40)
    """
    r = x._ref
    extent = 1
    for n, s in zip(r.shape, r.strides):
        extent *= n if s != 0 else min(n, 1)
    return min(extent * r.dtype.itemsize, x._storage.nbytes)


def register(sizeof: Any) -> None:
    """Register :func:`nbytes` with ``dask.sizeof.sizeof`` (the entry point Dask calls).

    >>> class Sizeof:  # the one method of dask.sizeof.sizeof this uses
    ...     def register(self, cls):
    ...         return lambda fn: print(f"sizeof({cls.__name__}) -> {fn.__name__}")
    >>> register(Sizeof())
    sizeof(Array) -> nbytes
    """
    sizeof.register(Array)(nbytes)
    # NOTE: the entry point is the one hook Dask runs in every process that imports it (workers
    # included); distributed's serializer for ndplane arrays is arranged from here too.
    _dask_serialize.install()
