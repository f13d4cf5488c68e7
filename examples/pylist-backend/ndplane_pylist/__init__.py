"""ndplane-pylist: an example third-party ndplane backend in pure Python.

Importing this package only describes the backend; ndplane starts it on the
first use of the ``"pylist"`` device.
"""

from __future__ import annotations

from .backend import PylistBackend, ndplane_register_backends

__all__ = ["PylistBackend", "ndplane_register_backends"]
__version__ = "0.1.0"
