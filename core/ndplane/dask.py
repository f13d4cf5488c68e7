"""ndplane arrays as the chunks of ``dask.array``.

The chunks need little from here: ``Array`` speaks NumPy's protocols (``__array_function__``
and ``__array_ufunc__`` map the NumPy functions Dask calls onto ndplane's own, see
``_numpy_protocol``), has the NumPy-style methods Dask calls (``copy``, ``ravel``,
``squeeze``, ``astype``, ``reshape``, ...), pickles with protocol 5 onto the same device, and
travels between ``distributed`` processes by that library's own serializer
(``ndplane._dask_serialize``, registered in every process through the ``dask.sizeof`` entry
point). Importing this module registers the rest with Dask, once per process:

- ``dask.array.register_chunk_type(Array)``: a Dask array takes ndplane arrays as operands
  (``dask_array + ndplane_array`` wraps the ndplane array instead of deferring to it);
- ``dask.sizeof`` (which Dask also loads in every process through the ``dask.sizeof`` entry
  point, ``ndplane._dask_sizeof``), so memory limits and spilling see the chunks' bytes;
- the element counts of ``mean``/``var``/``std`` as ndplane arrays on the chunk's device
  (Dask's default makes NumPy ones);
- ``dask_array.to_backend("numpy")``: an explicit copy of every chunk to NumPy.

Distributed workers import Dask, not this module: give them ``preload=["ndplane.dask"]``
(``LocalCluster(..., preload=[...])``, ``dask worker --preload ndplane.dask``) for the counts
above; without it they are small NumPy arrays, which the ndplane ufuncs bring onto the device.

>>> import dask.array as da, ndplane as nd, ndplane.dask
>>> x = da.from_array(nd.reshape(nd.arange(12.0, device="numpy"), (3, 4)), chunks=(2, 2))
>>> type(x._meta).__name__, x.mean(axis=0).compute(scheduler="sync")
('Array', Array([4., 5., 6., 7.], dtype=float64, device='numpy:0'))
"""

from __future__ import annotations

from typing import Any

try:
    import dask.array.backends
    import dask.array.chunk_types
    import dask.array.dispatch
    import dask.sizeof
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError(
        "ndplane.dask needs dask[array]; install it with pip install 'ndplane[distributed]'."
    ) from e

from . import _dask_sizeof
from ._array import Array

__all__ = ["register"]

_registered = False


def _to_numpy(data: Array, **kwargs: Any) -> Any:
    return data.to_numpy()


def register() -> None:
    """Register ndplane's Array with Dask (done on import; calling it again does nothing).

    >>> import ndplane.dask
    >>> ndplane.dask.register()
    >>> import dask.array.chunk_types, ndplane as nd
    >>> dask.array.chunk_types.is_valid_chunk_type(nd.Array)
    True
    """
    global _registered
    if _registered:
        return
    dask.array.chunk_types.register_chunk_type(Array)
    _dask_sizeof.register(dask.sizeof.sizeof)
    dispatch, backends = dask.array.dispatch, dask.array.backends
    dispatch.numel_lookup.register(Array, backends._numel_arraylike)
    dispatch.nannumel_lookup.register(Array, backends._nannumel)
    dispatch.to_numpy_dispatch.register(Array, _to_numpy)
    dispatch.percentile_lookup.register(Array, backends.percentile)  # numpy.percentile: the NumPy fallback
    _registered = True


register()
