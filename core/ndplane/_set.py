"""Set functions (Array API chapter): unique_all, unique_counts, unique_inverse, unique_values.

One composite over primitives serves every backend: sort the flattened array
(stably, keeping the permutation), mark where a new value starts (``!=`` with
the previous one, so every NaN is its own value, as the standard asks, and
``-0.0`` equals ``0.0``), number the groups with a cumulative sum, then gather
the first element of each group and scatter-add ones (counts) and group
numbers (inverse) through the permutation.
"""

from __future__ import annotations

from typing import NamedTuple

from . import _creation, _dispatch, _dtypes, _indexing, _manipulation, _sorting, _statistical
from ._array import Array, check_array

__all__ = ["unique_all", "unique_counts", "unique_inverse", "unique_values",
           "UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult"]  # fmt: skip


class UniqueAllResult(NamedTuple):
    """``unique_all``'s result."""

    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    """``unique_counts``'s result."""

    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    """``unique_inverse``'s result."""

    values: Array
    inverse_indices: Array


def _groups(x: Array) -> tuple[Array, Array, Array, Array, int]:
    """(flat sorted values, permutation, group-start flags, group numbers, group count)."""

    index = x.device.backend.default_dtypes["indexing"]
    flat = _manipulation.reshape(x, (-1,))
    n = flat.shape[0]
    if x.dtype.kind == "complex":
        # NOTE: complex values have no order; sort by (real, imag) lexicographically in two stable passes.
        perm = _sorting.argsort(_dispatch.unary("imag", flat), stable=True)
        perm = _indexing.take(perm, _sorting.argsort(_indexing.take(_dispatch.unary("real", flat), perm), stable=True))
    else:
        perm = _sorting.argsort(flat, stable=True)
    perm = perm if perm.dtype is index else _dispatch.cast(perm, index)
    s = _indexing.take(flat, perm)
    first = _creation.ones((1,), dtype=_dtypes.bool, device=x.device)
    starts = _manipulation.concat([first, _dispatch.binary("not_equal", s[1:], s[:-1])]) if n else first[:0]
    group = _dispatch.binary("subtract", _statistical.cumulative_sum(starts, dtype=index), 1)
    count = int(group[-1]) + 1 if n else 0
    return s, perm, starts, group, count


def _values(s: Array, starts: Array) -> Array:
    return s[starts]


def _scatter(count: int, group: Array, values: Array, like: Array) -> Array:
    index = like.device.backend.default_dtypes["indexing"]
    out = _creation.zeros((1, count), dtype=index, device=like.device)
    if group.shape[0]:
        _dispatch.scatter_add_last(out, group, _manipulation.reshape(values, (1, -1)))
    return _manipulation.reshape(out, (-1,))


def _counts(group: Array, count: int, x: Array) -> Array:
    index = x.device.backend.default_dtypes["indexing"]
    return _scatter(count, group, _creation.ones(group.shape, dtype=index, device=x.device), x)


def _inverse(perm: Array, group: Array, x: Array) -> Array:
    # inverse[perm[k]] = group[k]: a scatter of the group numbers through the permutation
    return _manipulation.reshape(_scatter(group.shape[0], perm, group, x), x.shape)


def _first_indices(perm: Array, starts: Array) -> Array:
    # NOTE: the sort is stable, so the first element of each group is its first occurrence.
    return perm[starts]


def unique_values(x: Array, /) -> Array:
    """The unique elements of ``x`` (flattened), sorted; every NaN counts as distinct.

    >>> import ndplane as nd
    >>> nd.unique_values(nd.asarray([3, 1, 3, 2, 1])).tolist()
    [1, 2, 3]
    """
    s, _, starts, _, _ = _groups(check_array("unique_values", x))
    return _values(s, starts)


def unique_counts(x: Array, /) -> UniqueCountsResult:
    """The unique elements and how often each occurs.

    >>> import ndplane as nd
    >>> r = nd.unique_counts(nd.asarray([3, 1, 3]))
    >>> r.values.tolist(), r.counts.tolist()
    ([1, 3], [1, 2])
    """
    s, _, starts, group, count = _groups(check_array("unique_counts", x))
    return UniqueCountsResult(_values(s, starts), _counts(group, count, x))


def unique_inverse(x: Array, /) -> UniqueInverseResult:
    """The unique elements and, per element of ``x``, the index of its value among them.

    ``inverse_indices`` has ``x``'s shape.

    >>> import ndplane as nd
    >>> r = nd.unique_inverse(nd.asarray([[3, 1], [3, 2]]))
    >>> r.values.tolist(), r.inverse_indices.tolist()
    ([1, 2, 3], [[2, 0], [2, 1]])
    """
    s, perm, starts, group, _ = _groups(check_array("unique_inverse", x))
    return UniqueInverseResult(_values(s, starts), _inverse(perm, group, x))


def unique_all(x: Array, /) -> UniqueAllResult:
    """The unique elements with first-occurrence indices, inverse indices and counts.

    >>> import ndplane as nd
    >>> r = nd.unique_all(nd.asarray([5, 4, 5]))
    >>> r.values.tolist(), r.indices.tolist(), r.inverse_indices.tolist(), r.counts.tolist()
    ([4, 5], [1, 0], [1, 0, 1], [1, 2])
    """
    s, perm, starts, group, count = _groups(check_array("unique_all", x))
    return UniqueAllResult(_values(s, starts), _first_indices(perm, starts), _inverse(perm, group, x),
                           _counts(group, count, x))  # fmt: skip
