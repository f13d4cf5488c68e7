"""DLPack interchange: ``Array.__dlpack__``, ``Array.__dlpack_device__`` and ``from_dlpack``.

Host-resident backends (capability ``"host"``) export their memory without a
copy, through NumPy's DLPack support on the backend's ``to_host`` view; the
exported NumPy array's base chain holds the ndplane Array, so the device
buffer stays alive as long as the consumer holds the capsule.  Other backends
export a host copy when the consumer asks for the CPU (``dl_device=(1, 0)``)
and allows a copy.  Importing always goes through the device's ``from_host``:
a copy, except when ``x`` already is an ndplane array on the target device.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from . import _creation
from ._array import Array
from ._devices import Device, as_device

__all__ = ["from_dlpack"]

_CPU = 1
_CUDA = 2


class _Keeper:
    """Exports a NumPy view through ``__array_interface__`` while holding its ndplane Array."""

    __slots__ = ("__array_interface__", "view", "owner")

    def __init__(self, view: np.ndarray, owner: Array) -> None:
        # NOTE: keep both: ``view`` may be a temporary that owns its memory (a backend whose
        # to_host copies), or a view whose memory the Array's storage owns.
        self.__array_interface__ = view.__array_interface__
        self.view = view
        self.owner = owner


def _device_tuple(x: Array) -> tuple[int, int]:
    st = x._storage
    if "host" in st.backend.capabilities:
        return (_CPU, 0)
    if st.device.kind == "cuda":
        return (_CUDA, st.device.index)
    raise BufferError(
        f"__dlpack_device__: device '{st.device}' has no DLPack device type; copy it to the host "
        f"first with x.to_device('cpu') or x.to_numpy()."
    )


def __dlpack_device__(self: Array) -> tuple[int, int]:
    """The DLPack ``(device_type, device_id)`` of this array's memory (``(1, 0)``: CPU).

    >>> import ndplane as nd
    >>> nd.arange(3).__dlpack_device__()
    (1, 0)
    """
    return _device_tuple(self)


def __dlpack__(self: Array, /, *, stream: Any = None, max_version: tuple[int, int] | None = None,
               dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:  # fmt: skip
    """Export this array as a DLPack capsule (zero-copy for host-resident devices).

    >>> import ndplane as nd, numpy as np
    >>> np.from_dlpack(nd.arange(3)).tolist()
    [0, 1, 2]
    """
    st = self._storage
    host_resident = "host" in st.backend.capabilities
    if dl_device is not None and tuple(dl_device) != (_CPU, 0) and tuple(dl_device) != _device_tuple(self):
        raise BufferError(f"__dlpack__: cannot export an array on '{st.device}' to DLPack device {dl_device}.")
    if not host_resident:
        if dl_device is None or tuple(dl_device) != (_CPU, 0):
            raise BufferError(
                f"__dlpack__: arrays on '{st.device}' export only as a host copy; pass "
                f"dl_device=(1, 0), or use x.to_device('cpu') first."
            )
        if copy is False:
            raise BufferError(f"__dlpack__: exporting '{st.device}' memory to the CPU needs a copy, and copy=False.")
        host = self.to_numpy()
    else:
        view = st.backend.to_host(self._ref)
        host = np.asarray(_Keeper(view, self)) if not copy else np.array(view, copy=True)
    # NOTE: the copy (if any) is made above; NumPy only packs the capsule.
    if max_version is None:
        return host.__dlpack__(stream=stream)
    return host.__dlpack__(stream=stream, max_version=cast("tuple[int, int]", tuple(max_version)))


def from_dlpack(x: Any, /, *, device: str | Device | None = None, copy: bool | None = None) -> Array:
    """An ndplane array from any object that supports DLPack (NumPy, PyTorch, JAX, ndplane).

    ``copy=False`` succeeds only when no copy is needed (``x`` is an ndplane array on the
    target device); data from other libraries is always copied into device memory.

    >>> import ndplane as nd, numpy as np
    >>> nd.from_dlpack(np.arange(3.0)).tolist()
    [0.0, 1.0, 2.0]
    """

    if type(x) is Array:
        return _creation.asarray(x, device=device, copy=copy)
    if copy is False:
        raise BufferError(
            "from_dlpack: copy=False, but data from another library must be copied into ndplane's "
            "device memory."
        )
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} does not support the DLPack protocol.")
    host = np.from_dlpack(x)
    return _creation.asarray(host, device=as_device(device), copy=True)

