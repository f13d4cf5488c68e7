"""Special functions beyond the Array API standard (``scipy.special`` / ``torch.special`` names).

>>> import ndplane as nd
>>> round(float(nd.special.erf(nd.asarray(1.0))), 6)
0.842701
"""

from __future__ import annotations

from ._elementwise import erf

__all__ = ["erf"]
