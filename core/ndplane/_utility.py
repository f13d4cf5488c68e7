"""Utility functions (Array API chapter): ``all`` and ``any``."""

from __future__ import annotations

from . import _dispatch, _dtypes
from ._array import Array
from ._statistical import Axis, _check, reduction

__all__ = ["all", "any"]


def _truth(x: Array) -> Array:
    # NOTE: kernels see bool only; the core turns "nonzero" into bool first.
    return x if x.dtype is _dtypes.bool else _dispatch.binary("not_equal", x, 0)


def all(x: Array, /, *, axis: Axis = None, keepdims: bool = False) -> Array:  # noqa: A001
    """Whether every element along ``axis`` is true (nonzero).

    >>> import ndplane as nd
    >>> nd.all(nd.asarray([[True, False], [True, True]]), axis=1).tolist()
    [False, True]
    """
    _check("all", x)
    return reduction("all", _truth(x), axis, keepdims, _dtypes.bool, "all")


def any(x: Array, /, *, axis: Axis = None, keepdims: bool = False) -> Array:  # noqa: A001
    """Whether any element along ``axis`` is true (nonzero).

    >>> import ndplane as nd
    >>> nd.any(nd.asarray([0.0, 0.0, 2.0]))
    Array(True, dtype=bool, device='numpy:0')
    """
    _check("any", x)
    return reduction("any", _truth(x), axis, keepdims, _dtypes.bool, "any")
