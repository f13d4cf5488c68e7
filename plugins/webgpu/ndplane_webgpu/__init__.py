"""ndplane-webgpu: the WebGPU backend of ndplane, WGSL compute shaders through wgpu-py.

Importing this package only describes the backend; ``ndplane`` creates the wgpu
device on first use of a ``"webgpu"`` device.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .backend import WebGPUBackend, ndplane_register_backends

__all__ = ["WebGPUBackend", "ndplane_register_backends"]
