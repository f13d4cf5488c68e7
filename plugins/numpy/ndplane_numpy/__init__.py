"""ndplane-numpy: the reference backend of ndplane, pure Python over NumPy.

Importing this package only describes the backend; ``ndplane`` starts it on
first use of the ``"numpy"`` device.
"""

from __future__ import annotations

from .backend import NumpyBackend, ndplane_register_backends

__all__ = ["NumpyBackend", "ndplane_register_backends"]
__version__ = "0.1.0"
