"""DLPack interchange: ``Array.__dlpack__``, ``Array.__dlpack_device__`` and ``from_dlpack``.

Backends with the ``"dlpack"`` capability (the cuda backend, the numpy reference) share
their memory both ways: ``Backend.export_dlpack`` hands a consumer (PyTorch, CuPy, JAX,
NumPy) the device memory itself, ordered before the consumer's stream, and
``Backend.import_dlpack`` wraps a producer's memory on that device as an Array. Other
host-resident backends (capability ``"host"``) export their memory without a copy through
NumPy's DLPack support on the backend's ``to_host`` view; the exported NumPy array's base
chain holds the ndplane Array, so the buffer stays alive as long as the consumer holds the
capsule. The rest export a host copy when the consumer asks for the CPU
(``dl_device=(1, 0)``) and allows a copy, and import by copying through ``from_host``.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from . import _creation, _dispatch, _dtypes
from ._array import Array, Storage, _new
from ._devices import Device, as_device, devices, get_default_device
from .backend.host import held_view
from .backend.ops import DLPACK

__all__ = ["from_dlpack"]

_CPU = 1
_CUDA = 2  # kDLCUDA: the memory __cuda_array_interface__ describes


def _device_tuple(x: Array) -> tuple[int, int]:
    st = x._storage
    if DLPACK in st.backend.capabilities and st.backend.dlpack_device is not None:
        return st.backend.dlpack_device
    if "host" in st.backend.capabilities:
        return (_CPU, 0)
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
    backend = st.backend
    host_resident = "host" in backend.capabilities
    if dl_device is not None and tuple(dl_device) != (_CPU, 0) and tuple(dl_device) != _device_tuple(self):
        raise BufferError(f"__dlpack__: cannot export an array on '{st.device}' to DLPack device {dl_device}.")
    if DLPACK in backend.capabilities and (dl_device is None or tuple(dl_device) == backend.dlpack_device):
        src = _dispatch.copy_of(self) if copy else self
        return _capsule(backend.export_dlpack(src._ref, src, stream), max_version)
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
        host = held_view(view, self) if not copy else np.array(view, copy=True)
    # NOTE: the copy (if any) is made above; NumPy only packs the capsule.
    if max_version is None:
        return host.__dlpack__(stream=stream)
    return host.__dlpack__(stream=stream, max_version=cast("tuple[int, int]", tuple(max_version)))


def cuda_array_interface(self: Array) -> dict[str, Any]:
    """Numba's CUDA Array Interface (version 3) of an array in CUDA memory: its address, layout
    and the stream its pending work is on (consumers synchronise with it). Arrays elsewhere
    have no such attribute (``hasattr`` is False); DLPack serves every device.
    """
    st = self._storage
    backend = st.backend
    if DLPACK not in backend.capabilities or (backend.dlpack_device or (0, 0))[0] != _CUDA:
        raise AttributeError(f"__cuda_array_interface__: an array on '{st.device}' is not in CUDA memory.")
    r = self._ref
    address, stream = backend.device_pointer(r)
    itemsize = r.dtype.itemsize
    return {
        "shape": r.shape,
        "typestr": r.dtype.dtype.str,
        "descr": [("", r.dtype.dtype.str)],
        "data": (address if r.size else 0, False),
        "strides": None if r.contiguous else tuple(s * itemsize for s in r.strides),
        "version": 3,
        "stream": stream,
    }


def _capsule(producer: Any, max_version: Any) -> Any:
    if max_version is None:
        return producer.__dlpack__()
    try:
        return producer.__dlpack__(max_version=tuple(max_version))
    except TypeError:  # a producer that predates max_version: the unversioned capsule
        return producer.__dlpack__()


def _sharing_device(kind: tuple[int, int], device: Device | None) -> Device | None:
    """The device that can wrap memory of DLPack device ``kind``: ``device`` if given, else the
    default device, else (memory off the CPU) any available device whose backend has it."""
    candidates = [device] if device is not None else [get_default_device()]
    if device is None and kind[0] != _CPU:
        candidates += devices()
    for dev in candidates:
        b = dev.backend
        if DLPACK in b.capabilities and b.dlpack_device == kind:
            return dev
    return None


def from_dlpack(x: Any, /, *, device: str | Device | None = None, copy: bool | None = None) -> Array:
    """An ndplane array from any object that supports DLPack (NumPy, PyTorch, JAX, ndplane).

    Where the target device has the ``"dlpack"`` capability and ``x`` lives in its memory
    (a PyTorch CUDA tensor and the ``cuda`` device, a NumPy array and the ``numpy`` device),
    the result shares ``x``'s memory; otherwise the data is copied into device memory, and
    ``copy=False`` raises ``BufferError``. ``copy=True`` always copies.

    >>> import ndplane as nd, numpy as np
    >>> nd.from_dlpack(np.arange(3.0)).tolist()
    [0.0, 1.0, 2.0]
    """

    if type(x) is Array:
        return _creation.asarray(x, device=device, copy=copy)
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} does not support the DLPack protocol.")
    target = None if device is None else as_device(device)
    kind = tuple(x.__dlpack_device__()) if hasattr(x, "__dlpack_device__") else (_CPU, 0)
    dev = _sharing_device(kind, target) if copy is not True else None  # type: ignore[arg-type]
    if dev is not None:
        got = dev.backend.import_dlpack(x)
        if got is not None:
            buffer, name, shape, strides, nbytes = got
            storage = Storage(buffer, dev, dev.backend, nbytes)  # frees the wrap, whatever follows
            dtype = _dtypes.BY_NAME[name]
            _dispatch.check_dtype(dev, dtype, "from_dlpack")
            return _new(storage, dtype, tuple(shape), tuple(strides), 0)
    if copy is False:
        raise BufferError(
            f"from_dlpack: copy=False, but {type(x).__name__} on DLPack device {kind} can reach "
            f"'{target or get_default_device()}' only as a copy."
        )
    if kind[0] != _CPU:
        try:
            host = np.from_dlpack(x, device="cpu", copy=True)  # the producer copies to the host
        except (BufferError, TypeError, ValueError) as exc:
            raise BufferError(
                f"from_dlpack: {type(x).__name__} lives on DLPack device {kind}, which no installed "
                f"ndplane device shares and which would not export a host copy ({exc}); copy it to "
                f"the host first (e.g. tensor.cpu())."
            ) from None
    else:
        host = np.from_dlpack(x)
    return _creation.asarray(host, device=target, copy=True)

