"""Utility functions (Array API chapter): ``all`` and ``any``."""

from __future__ import annotations

import operator

from . import _dispatch, _dtypes, _layout, _manipulation
from ._array import Array, check_array
from ._statistical import Axis, reduction

__all__ = ["all", "any", "diff"]


def _truth(x: Array) -> Array:
    # NOTE: kernels see bool only; the core turns "nonzero" into bool first.
    return x if x.dtype is _dtypes.bool else _dispatch.binary("not_equal", x, 0)


def all(x: Array, /, *, axis: Axis = None, keepdims: bool = False) -> Array:
    """Whether every element along ``axis`` is true (nonzero).

    >>> import ndplane as nd
    >>> nd.all(nd.asarray([[True, False], [True, True]]), axis=1).tolist()
    [False, True]
    """
    check_array("all", x)
    return reduction("all", _truth(x), axis, keepdims, _dtypes.bool, "all")


def any(x: Array, /, *, axis: Axis = None, keepdims: bool = False) -> Array:
    """Whether any element along ``axis`` is true (nonzero).

    >>> import ndplane as nd
    >>> nd.any(nd.asarray([0.0, 0.0, 2.0]))
    Array(True, dtype=bool, device='numpy:0')
    """
    check_array("any", x)
    return reduction("any", _truth(x), axis, keepdims, _dtypes.bool, "any")


def diff(x: Array, /, *, axis: int = -1, n: int = 1, prepend: Array | None = None,
         append: Array | None = None) -> Array:  # fmt: skip
    """The ``n``-th forward difference along ``axis`` (``prepend``/``append`` joined first).

    >>> import ndplane as nd
    >>> nd.diff(nd.asarray([1, 4, 9, 16])).tolist(), nd.diff(nd.asarray([1, 4, 9, 16]), n=2).tolist()
    ([3, 5, 7], [2, 2])
    """

    check_array("diff", x)
    if x.ndim == 0:
        raise ValueError("diff: x must have at least one dimension.")
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: n must be non-negative; got {n}.")
    ax = _layout.normalize_axis(axis, x.ndim, "diff")
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = _manipulation.concat(parts, axis=ax)
    lead = (slice(None),) * ax
    op = "not_equal" if x.dtype is _dtypes.bool else "subtract"
    for _ in range(n):
        x = _dispatch.binary(op, x[lead + (slice(1, None),)], x[lead + (slice(None, -1),)])
    return x
