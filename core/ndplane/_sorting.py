"""Sorting functions (Array API chapter): sort and argsort along any axis."""

from __future__ import annotations

from typing import cast

from . import _dispatch, _graph, _layout
from ._array import Array, check_array

__all__ = ["sort", "argsort"]


def _sort(name: str, x: Array, axis: int, descending: bool, stable: bool, values: bool) -> Array:
    check_array(name, x)
    if x.dtype.kind == "complex":
        raise TypeError(f"{name}: complex dtypes have no order; got {x.dtype.name}.")
    if x.ndim == 0:
        raise ValueError(f"{name}: x must have at least one dimension.")
    ax = _layout.normalize_axis(axis, x.ndim, name)
    moved, _, _ = _dispatch.move_axes_last(x, (ax,))
    index = x.device.backend.default_dtypes["indexing"]
    grad = values and x.requires_grad
    v, i = _dispatch.sort_last(moved, bool(descending), bool(stable), values, not values or grad, index)
    # sort_last returns each result asked for: the values (``values``), the indices (else, or ``grad``)
    out = _dispatch._move_axis_back(cast(Array, v if values else i), ax)
    if grad:
        _graph.record("sort", out, (x,), (_dispatch._move_axis_back(cast(Array, i), ax),), (x.shape, ax))
    return out


def sort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """Sorted copy of ``x`` along ``axis``; NaNs sort last (first when descending).

    >>> import ndplane as nd
    >>> nd.sort(nd.asarray([3, 1, 2]), descending=True).tolist()
    [3, 2, 1]
    """
    return _sort("sort", x, axis, descending, stable, True)


def argsort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """Indices that sort ``x`` along ``axis`` (stable by default: ties keep input order).

    >>> import ndplane as nd
    >>> nd.argsort(nd.asarray([3.0, 1.0, 2.0])).tolist()
    [1, 2, 0]
    """
    return _sort("argsort", x, axis, descending, stable, False)
