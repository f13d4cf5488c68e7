"""Set functions (Array API chapter): unique_all, unique_counts, unique_inverse, unique_values.

One composite over primitives serves every backend: sort the flattened array, mark where a
new value starts (``!=`` with the previous one, so every NaN is its own value, as the
standard asks, and ``-0.0`` equals ``0.0``), and find the starts' positions (``nonzero``).
The values are the sorted array at those positions and the counts their differences. Only
``unique_inverse`` and ``unique_all`` need the sort's permutation (a stable argsort, so each
group's first element is its first occurrence): they number the groups with a cumulative sum
and scatter the numbers back through the permutation.
"""

from __future__ import annotations

from typing import NamedTuple, cast

from . import _creation, _dispatch, _dtypes, _indexing, _manipulation, _sorting, _statistical
from ._array import Array, check_array
from ._searching import flat_nonzero

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


def _sorted(x: Array, permuted: bool) -> tuple[Array, Array | None]:
    """(the flattened ``x`` sorted, the permutation that sorts it stably, or None unless
    ``permuted``)."""

    flat = _manipulation.reshape(x, (-1,))
    if x.dtype.kind == "complex":
        # NOTE: complex values have no order; sort by (real, imag) lexicographically in two stable passes.
        perm = _sorting.argsort(_dispatch.unary("imag", flat), stable=True)
        perm = _indexing.take(perm, _sorting.argsort(_indexing.take(_dispatch.unary("real", flat), perm), stable=True))
        index = x.device.backend.default_dtypes["indexing"]
        perm = perm if perm.dtype is index else _dispatch.cast(perm, index)
        return _indexing.take(flat, perm), perm
    if not permuted:
        # NOTE: values alone: no permutation to carry, so the backend's fastest sort, stable or not.
        return _sorting.sort(flat, stable=False), None
    # the values and the stable permutation from one sort call (not an argsort, then a gather)
    s, p = _dispatch.sort_last(flat, False, True, True, True, x.device.backend.default_dtypes["indexing"])
    return cast(Array, s), p


def _starts(s: Array) -> tuple[Array, Array]:
    """(a flag per element of the sorted ``s``: does a new value start here?, the flags' positions)."""
    first = _creation.ones((1,), dtype=_dtypes.bool, device=s.device)
    starts = _manipulation.concat([first, _dispatch.binary("not_equal", s[1:], s[:-1])]) if s.shape[0] else first[:0]
    return starts, flat_nonzero(starts)


def _counts(at: Array, n: int) -> Array:
    """Each group's length: the distances between its start ``at`` and the next one (or ``n``)."""
    end = _creation.full((1,), n, dtype=at.dtype, device=at.device)
    return _dispatch.binary("subtract", _manipulation.concat([at[1:], end]), at)


def _inverse(perm: Array, starts: Array, x: Array) -> Array:
    """Each element's group number, in ``x``'s shape: the groups numbered along the sorted
    order (a cumulative sum of the starts), scattered back through the permutation (written
    once per element, on many threads, where the backend fuses ``put_axis``; else added into
    zeros)."""
    index = perm.dtype
    n = perm.shape[0]
    group = _dispatch.binary("subtract", _statistical.cumulative_sum(starts, dtype=index), 1)
    if n and "fused:put_axis" in x.device.backend.capabilities:
        return _manipulation.reshape(_dispatch.fused_permute(perm, group), x.shape)
    out = _creation.zeros((1, n), dtype=index, device=x.device)
    if n:
        _dispatch.scatter_add_last(out, perm, _manipulation.reshape(group, (1, -1)))
    return _manipulation.reshape(out, x.shape)


def unique_values(x: Array, /) -> Array:
    """The unique elements of ``x`` (flattened), sorted; every NaN counts as distinct.

    >>> import ndplane as nd
    >>> nd.unique_values(nd.asarray([3, 1, 3, 2, 1])).tolist()
    [1, 2, 3]
    """
    s, _ = _sorted(check_array("unique_values", x), False)
    return _indexing.take_in_range(s, _starts(s)[1], 0)


def unique_counts(x: Array, /) -> UniqueCountsResult:
    """The unique elements and how often each occurs.

    >>> import ndplane as nd
    >>> r = nd.unique_counts(nd.asarray([3, 1, 3]))
    >>> r.values.tolist(), r.counts.tolist()
    ([1, 3], [1, 2])
    """
    s, _ = _sorted(check_array("unique_counts", x), False)
    at = _starts(s)[1]
    return UniqueCountsResult(_indexing.take_in_range(s, at, 0), _counts(at, s.shape[0]))


def unique_inverse(x: Array, /) -> UniqueInverseResult:
    """The unique elements and, per element of ``x``, the index of its value among them.

    ``inverse_indices`` has ``x``'s shape.

    >>> import ndplane as nd
    >>> r = nd.unique_inverse(nd.asarray([[3, 1], [3, 2]]))
    >>> r.values.tolist(), r.inverse_indices.tolist()
    ([1, 2, 3], [[2, 0], [2, 1]])
    """
    s, perm = _sorted(check_array("unique_inverse", x), True)
    assert perm is not None
    starts, at = _starts(s)
    return UniqueInverseResult(_indexing.take_in_range(s, at, 0), _inverse(perm, starts, x))


def unique_all(x: Array, /) -> UniqueAllResult:
    """The unique elements with first-occurrence indices, inverse indices and counts.

    >>> import ndplane as nd
    >>> r = nd.unique_all(nd.asarray([5, 4, 5]))
    >>> r.values.tolist(), r.indices.tolist(), r.inverse_indices.tolist(), r.counts.tolist()
    ([4, 5], [1, 0], [1, 0, 1], [1, 2])
    """
    s, perm = _sorted(check_array("unique_all", x), True)
    assert perm is not None
    starts, at = _starts(s)
    # NOTE: the sort is stable, so the first element of each group is its first occurrence.
    return UniqueAllResult(_indexing.take_in_range(s, at, 0), _indexing.take_in_range(perm, at, 0), _inverse(perm, starts, x),
                           _counts(at, s.shape[0]))  # fmt: skip
