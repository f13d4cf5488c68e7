"""ndplane-cpu: the C++ backend of ndplane (nanobind kernels, OpenBLAS for GEMM).

Importing this package only describes the backend; ``ndplane`` starts it on
first use of the ``"cpu"`` device.
"""

from __future__ import annotations

from .backend import ndplane_register_backends

__all__ = ["ndplane_register_backends"]
__version__ = "0.1.0"
