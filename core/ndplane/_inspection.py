"""Inspection (Array API chapter): ``__array_namespace_info__``.

Everything here is read from the backends' own declarations: ``default_dtypes``
and ``dtypes`` per device, ``capabilities`` (the Array API ones plus the
backend's protocol capabilities such as ``"linalg"`` and ``"fft"``).
"""

from __future__ import annotations

from typing import Any

from . import _dtypes
from ._devices import Device, as_device, devices, get_default_device
from ._dtypes import DType
from .backend.ops import DEFAULT_DTYPE_KINDS

__all__ = ["__array_namespace_info__", "Info"]

_KINDS: dict[str, tuple[str, ...]] = {
    "bool": ("bool",),
    "signed integer": ("int",),
    "unsigned integer": ("uint",),
    "integral": ("int", "uint"),
    "real floating": ("float",),
    "complex floating": ("complex",),
    "numeric": ("int", "uint", "float", "complex"),
}


class Info:
    """The inspection namespace returned by :func:`ndplane.__array_namespace_info__`.

    >>> import ndplane as nd
    >>> info = nd.__array_namespace_info__()
    >>> info.capabilities()["boolean indexing"], info.default_dtypes(device="numpy")["indexing"]
    (True, ndplane.int64)
    """

    __module__ = "ndplane"

    def capabilities(self, *, device: str | Device | None = None) -> dict[str, Any]:
        """The Array API capabilities, plus the protocol capabilities of ``device``'s backend.

        >>> import ndplane as nd
        >>> nd.__array_namespace_info__().capabilities()["max dimensions"] is None
        True
        """
        caps: dict[str, Any] = {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}
        backend = as_device(device).backend
        caps["backend capabilities"] = sorted(backend.capabilities)
        return caps

    def default_device(self) -> Device:
        """The device creation functions use when ``device=None``.

        >>> import ndplane as nd
        >>> nd.__array_namespace_info__().default_device() == nd.get_default_device()
        True
        """
        return get_default_device()

    def devices(self) -> list[Device]:
        """Every available device that serves the whole standard: its backend has every standard
        dtype and a default of every kind (``ndplane.devices()`` also lists partial ones, e.g.
        without float64 or complex).

        >>> import ndplane as nd
        >>> nd.Device("numpy:1") in nd.__array_namespace_info__().devices()
        True
        """
        return [d for d in devices() if _complete(d)]

    def default_dtypes(self, *, device: str | Device | None = None) -> dict[str, DType]:
        """The default dtypes of ``device`` (the default device if None), by kind.

        >>> import ndplane as nd
        >>> nd.__array_namespace_info__().default_dtypes(device="numpy-nof64")["real floating"]
        ndplane.float32
        """
        return dict(as_device(device).backend.default_dtypes)

    def dtypes(
        self, *, device: str | Device | None = None, kind: str | tuple[str, ...] | None = None
    ) -> dict[str, DType]:
        """The standard's dtypes ``device`` supports (of ``kind`` if given), by name, in the standard
        order (``float16``, an ndplane extension, is not one of them).

        >>> import ndplane as nd
        >>> list(nd.__array_namespace_info__().dtypes(kind="real floating"))
        ['float32', 'float64']
        """
        have = as_device(device).backend.dtypes
        kinds = _kinds(kind)
        return {d.name: d for d in _dtypes.ALL_DTYPES
                if d in have and d is not _dtypes.float16 and (kinds is None or d.kind in kinds)}  # fmt: skip


#: The standard's dtypes: every one of them must be served (float16 is ndplane's extra).
_STANDARD_DTYPES = frozenset(d for d in _dtypes.ALL_DTYPES if d is not _dtypes.float16)


def _complete(device: Device) -> bool:
    # NOTE: the dtypes as well as a default of every kind: a device without float64 or int64
    # (the test-only numpy-nof64) failed array-api-tests' from_dlpack(x, device=it) on uint64.
    backend = device.backend
    return all(k in backend.default_dtypes for k in DEFAULT_DTYPE_KINDS) and _STANDARD_DTYPES <= set(backend.dtypes)


def _kinds(kind: str | tuple[str, ...] | None) -> set[str] | None:
    if kind is None:
        return None
    out: set[str] = set()
    for k in kind if isinstance(kind, tuple) else (kind,):
        try:
            out.update(_KINDS[k])
        except KeyError:
            raise ValueError(f"__array_namespace_info__().dtypes: unknown kind {k!r}; expected one of "
                             f"{sorted(_KINDS)}.") from None  # fmt: skip
    return out


_INFO = Info()


def __array_namespace_info__() -> Info:
    """The inspection namespace: capabilities, devices and per-device default dtypes.

    >>> import ndplane as nd
    >>> sorted(nd.__array_namespace_info__().default_dtypes(device="numpy"))
    ['complex floating', 'indexing', 'integral', 'real floating']
    """
    return _INFO
