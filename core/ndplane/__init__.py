"""ndplane: a multi-backend n-dimensional array library.

The namespace is the Python Array API standard (2024.12) plus devices,
backends and a seeded random generator.

>>> import ndplane as nd
>>> x = nd.arange(6, dtype=nd.float32).reshape((2, 3))
>>> (x.T @ x).shape, float(nd.sum(x))
((3, 3), 15.0)
"""

from __future__ import annotations

__version__ = "0.1.0"
__array_api_version__ = "2024.12"


__all__ = ["__array_api_version__", "__version__"]

# Docstrings of the two strings, as ``_namespace.__test__`` holds those of the constants.
__test__ = {
    "__version__": "The version of this ndplane core, as installed.\n\n>>> import ndplane as nd, importlib.metadata\n"
                   ">>> nd.__version__ == importlib.metadata.version('ndplane')\nTrue",
    "__array_api_version__": "The Array API standard version this namespace implements.\n\n"
                             ">>> import ndplane as nd\n>>> nd.__array_api_version__\n'2024.12'",
}

from . import _namespace
from ._elementwise import *  # noqa: F403 - also in _namespace; repeated for mypy (below)
from ._namespace import *  # noqa: F403 - the Array API namespace

# mypy reads only literal ``__all__`` lists, so a star import of a star import loses names; the
# elementwise chapter is the one _namespace re-exports by star, hence the direct import above.

__all__ += _namespace.__all__

from ._checkpoints import load, load_metadata, save

__all__ += ["load", "load_metadata", "save"]

from . import autograd, composite, nn, optim, special

__all__ += ["autograd", "composite", "nn", "optim", "special"]

from ._methods import bind_methods as _bind_methods

_bind_methods()
