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
    """Base class of every ndplane-specific exception.

    >>> import ndplane as nd
    >>> try:
    ...     nd.zeros(2, device="numpy:0") + nd.zeros(2, device="numpy:1")
    ... except nd.NdplaneError as exc:
    ...     type(exc).__name__
    'DeviceMismatchError'
    """


class DeviceMismatchError(NdplaneError, ValueError):
    """Operands of one operation live on different devices.

    Nothing moves between devices silently: call ``x.to_device(...)`` first.

    >>> import ndplane as nd
    >>> nd.zeros(2, device="numpy:0") + nd.zeros(2, device="numpy:1")
    Traceback (most recent call last):
    ndplane.DeviceMismatchError: add: operands are on different devices, 'numpy:0' and 'numpy:1'. Move one first...
    """


class UnsupportedDTypeError(NdplaneError, TypeError):
    """A backend was asked for a dtype it does not support.

    >>> import ndplane as nd
    >>> nd.zeros(2, dtype=nd.float64, device="numpy-nof64")  # a test device without 64-bit dtypes
    Traceback (most recent call last):
    ndplane.UnsupportedDTypeError: zeros: dtype float64 is not supported on device 'numpy-nof64:0' ...
    """


class OutOfMemoryError(NdplaneError, MemoryError):
    """A device could not allocate the memory an operation needs.

    >>> import ndplane as nd
    >>> nd.empty((2**46,), dtype=nd.uint8, device="numpy")
    Traceback (most recent call last):
    ndplane.OutOfMemoryError: numpy:0: out of memory allocating 70368744177664 bytes ...
    """


class BackendUnavailableError(NdplaneError, RuntimeError):
    """A device string names a backend that is not installed or not available.

    >>> import ndplane as nd
    >>> nd.zeros(2, device="nosuch")
    Traceback (most recent call last):
    ndplane.BackendUnavailableError: device 'nosuch:0': no backend named 'nosuch' is installed ...
    """


class FallbackError(NdplaneError, RuntimeError):
    """An op would run through the host fallback while fallback is disabled.

    ``nd.fallback_mode("error")`` (or ``NDPLANE_FALLBACK=error``) disables it; ops a device
    runs natively or through a core decomposition are unaffected:

    >>> import ndplane as nd
    >>> with nd.fallback_mode("error"):
    ...     nd.sort(nd.asarray([2, 1], device="numpy")).tolist()
    [1, 2]
    """


class FallbackWarning(UserWarning):
    """An op ran through the host fallback (copy to NumPy, compute, copy back).

    Warned once per op, dtype and backend; silence it like any warning, or make it an error:

    >>> import ndplane as nd, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", nd.FallbackWarning)
    ...     int(nd.sum(nd.arange(4)))
    6
    """


class PluginWarning(UserWarning):
    """A backend plugin was skipped because it failed to load or is incompatible.

    ``ndplane backends`` lists the reason; tests can make it an error:

    >>> import ndplane as nd, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", nd.PluginWarning)  # a plugin that fails to load raises
    ...     nd.Device("numpy") in nd.devices()
    True
    """


for _cls in (NdplaneError, DeviceMismatchError, UnsupportedDTypeError, OutOfMemoryError,
             BackendUnavailableError, FallbackError, FallbackWarning, PluginWarning):  # fmt: skip
    _cls.__module__ = "ndplane"  # tracebacks show ndplane.FallbackError, the public name
