"""What a backend plugin author imports: the protocol, op names and discovery hooks.

>>> from ndplane.backend import Backend, Ref, BackendSpec, hookimpl, PROTOCOL_VERSION
>>> PROTOCOL_VERSION
1
"""

from __future__ import annotations

from .base import Backend, Ref
from .hookspecs import hookimpl, hookspec
from .host import held_view
from .ops import (
    ALL_OPS,
    BINARY_OPS,
    CAPABILITIES,
    CHECKED_INDICES,
    COMPARISON_OPS,
    DEFAULT_DTYPE_KINDS,
    DLPACK,
    FFT,
    FFT_AXES,
    FFT_OPS,
    FFT_REAL_INPUT,
    FUSED_OPS,
    HOST_RESIDENT,
    INPLACE,
    KERNEL_OPS,
    LINALG,
    LINALG_OPS,
    PROTOCOL_VERSION,
    REDUCE_OPS,
    SCAN_OPS,
    STRIDED,
    UNARY_OPS,
)
from .spec import BackendSpec

__all__ = [
    "Backend", "Ref", "BackendSpec", "hookimpl", "hookspec", "held_view", "PROTOCOL_VERSION",
    "ALL_OPS", "UNARY_OPS", "BINARY_OPS", "COMPARISON_OPS", "REDUCE_OPS", "SCAN_OPS",
    "KERNEL_OPS", "FUSED_OPS", "LINALG_OPS", "FFT_OPS", "LINALG", "FFT", "FFT_REAL_INPUT", "FFT_AXES", "CAPABILITIES", "CHECKED_INDICES", "STRIDED", "INPLACE", "HOST_RESIDENT", "DLPACK", "DEFAULT_DTYPE_KINDS",
]  # fmt: skip
