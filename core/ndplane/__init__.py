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

from . import _namespace
from ._elementwise import *  # noqa: F403 - also in _namespace; repeated for mypy (below)
from ._namespace import *  # noqa: F403 - the Array API namespace

# mypy reads only literal ``__all__`` lists, so a star import of a star import loses names; the
# elementwise chapter is the one _namespace re-exports by star, hence the direct import above.

__all__ += _namespace.__all__

from . import autograd, composite, nn, optim

__all__ += ["autograd", "composite", "nn", "optim"]

from ._methods import bind_methods as _bind_methods

_bind_methods()
