"""Exceptions and warnings raised by ndplane.

These live in a leaf module so that every layer (the core, the backend
protocol and third-party plugins) can import them without cycles.
"""

from __future__ import annotations

__all__ = [
    "NdplaneError",
    "DeviceMismatchError",
    "UnsupportedDTypeError",
    "OutOfMemoryError",
    "BackendUnavailableError",
    "FallbackError",
    "FallbackWarning",
    "PluginWarning",
]


class NdplaneError(Exception):
    """Base class of every ndplane-specific exception."""


class DeviceMismatchError(NdplaneError, ValueError):
    """Operands of one operation live on different devices.

    Nothing moves between devices silently: call ``x.to_device(...)`` first.
    """


class UnsupportedDTypeError(NdplaneError, TypeError):
    """A backend was asked for a dtype it does not support."""


class OutOfMemoryError(NdplaneError, MemoryError):
    """A device could not allocate the memory an operation needs."""


class BackendUnavailableError(NdplaneError, RuntimeError):
    """A device string names a backend that is not installed or not available."""


class FallbackError(NdplaneError, RuntimeError):
    """An op would run through the host fallback while fallback is disabled."""


class FallbackWarning(UserWarning):
    """An op ran through the host fallback (copy to NumPy, compute, copy back)."""


class PluginWarning(UserWarning):
    """A backend plugin was skipped because it failed to load or is incompatible."""


for _cls in (NdplaneError, DeviceMismatchError, UnsupportedDTypeError, OutOfMemoryError,
             BackendUnavailableError, FallbackError, FallbackWarning, PluginWarning):  # fmt: skip
    _cls.__module__ = "ndplane"  # tracebacks show ndplane.FallbackError, the public name
