"""ndplane-cuda: the CUDA backend of ndplane (nanobind + nvcc kernels, cuBLAS at run time).

Importing this package only describes the backend: no CUDA context is created until
``ndplane`` first uses a ``"cuda"`` device.
"""

from __future__ import annotations

from .backend import ndplane_register_backends

__all__ = ["ndplane_register_backends"]
__version__ = "0.1.0"
