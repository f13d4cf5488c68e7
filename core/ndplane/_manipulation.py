"""Manipulation functions (Array API chapter). Views are O(1): only the layout changes."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from typing import cast

from . import _dispatch, _dtypes, _graph, _layout
from ._array import Array, _new_views, _view, check_array
from ._dispatch import view_as

__all__ = [
    "reshape", "permute_dims", "broadcast_to", "broadcast_arrays", "expand_dims", "squeeze",
    "flip", "concat", "stack", "moveaxis", "unstack", "matrix_transpose", "roll", "tile",
]  # fmt: skip


def reshape(x: Array, /, shape: Sequence[int], *, copy: bool | None = None) -> Array:
    """``x`` with a new shape; a view whenever the layout allows, else a copy.

    ``copy=True`` always copies; ``copy=False`` raises if a view is impossible.

    >>> import ndplane as nd
    >>> nd.reshape(nd.arange(6), (2, -1)).tolist()
    [[0, 1, 2], [3, 4, 5]]
    """
    check_array("reshape", x)
    r = x._ref
    new_shape = _layout.resolve_shape(
        (shape,) if isinstance(shape, int) else shape, r.size, "reshape"
    )
    if not r.size:  # NOTE: an empty array takes any shape with a zero side; its others must fit
        _layout.check_size(new_shape, 0, r.dtype.itemsize, "reshape")
    strides = None if copy else _layout.reshape_strides(r.shape, r.strides, new_shape)
    if strides is not None:
        out = view_as(x, new_shape, strides, r.offset)
    elif copy is False:
        raise ValueError(
            f"reshape: cannot view an array of shape {r.shape} and strides {r.strides} as shape "
            f"{new_shape} without copying, and copy=False."
        )
    else:
        out = view_as(_dispatch.copy_of(x), new_shape, _layout.contiguous_strides(new_shape), 0)
    return _recorded("reshape", out, x, r.shape)


def _recorded(rule: str, out: Array, x: Array, params: object) -> Array:
    if x.requires_grad:
        _graph.record(rule, out, (x,), (), params)
    return out


def permute_dims(x: Array, /, axes: Sequence[int]) -> Array:
    """Permute the axes (a view).

    >>> import ndplane as nd
    >>> nd.permute_dims(nd.zeros((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    check_array("permute_dims", x)
    return _permuted(x, tuple(_layout.normalize_axis(a, x.ndim, "permute_dims") for a in axes), "permute_dims")


def _permuted(x: Array, axes: tuple[int, ...], name: str) -> Array:
    """The view of ``x`` with its axes in the order ``axes`` (normalised), recorded for autograd."""
    r = x._ref
    shape, strides = _layout.permute(r.shape, r.strides, axes, name)
    return _recorded("permute_dims", view_as(x, shape, strides, r.offset), x, axes)


def matrix_transpose(x: Array, /) -> Array:
    """Transpose the last two axes (a view); same as ``x.mT``.

    >>> import ndplane as nd
    >>> nd.matrix_transpose(nd.asarray([[1, 2, 3]])).tolist()
    [[1], [2], [3]]
    """
    return matrix_transpose_view(check_array("matrix_transpose", x))


def moveaxis(x: Array, source: int | Sequence[int], destination: int | Sequence[int], /) -> Array:
    """Move axes to new positions (a view).

    >>> import ndplane as nd
    >>> nd.moveaxis(nd.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    check_array("moveaxis", x)
    src = _layout.normalize_axes(source if isinstance(source, (tuple, list)) else (source,), x.ndim, "moveaxis")
    dst = _layout.normalize_axes(
        destination if isinstance(destination, (tuple, list)) else (destination,), x.ndim, "moveaxis"
    )
    return _permuted(x, _layout.move_axes(x.ndim, src, dst, "moveaxis"), "moveaxis")


def broadcast_to(x: Array, /, shape: Sequence[int]) -> Array:
    """View ``x`` as ``shape`` by broadcasting (stride 0, no copy).

    >>> import ndplane as nd
    >>> nd.broadcast_to(nd.arange(3), (2, 3)).tolist()
    [[0, 1, 2], [0, 1, 2]]
    """
    check_array("broadcast_to", x)
    r = x._ref
    shape = tuple(operator.index(n) for n in shape)
    if _layout.broadcast_shapes(r.shape, shape, name="broadcast_to") != shape:
        raise ValueError(f"broadcast_to: cannot broadcast shape {r.shape} to {shape}.")
    _layout.check_size(shape, _layout.prod(shape), r.dtype.itemsize, "broadcast_to")
    out = view_as(x, shape, _layout.broadcast_strides(r.shape, r.strides, shape, "broadcast_to"), r.offset)
    return _recorded("broadcast_to", out, x, r.shape)


def broadcast_arrays(*arrays: Array) -> list[Array]:
    """Broadcast arrays against each other (views).

    >>> import ndplane as nd
    >>> [a.shape for a in nd.broadcast_arrays(nd.zeros((2, 1)), nd.zeros(3))]
    [(2, 3), (2, 3)]
    """
    shape = _layout.broadcast_shapes(*(check_array("broadcast_arrays", a).shape for a in arrays),
                                     name="broadcast_arrays")  # fmt: skip
    return [broadcast_to(a, shape) for a in arrays]


def expand_dims(x: Array, /, axis: int | Sequence[int] = 0) -> Array:
    """Insert size-1 axes at ``axis`` (positions in the result; a view).

    >>> import ndplane as nd
    >>> nd.expand_dims(nd.zeros((2, 3)), axis=-1).shape
    (2, 3, 1)
    """
    check_array("expand_dims", x)
    axes = (axis,) if not isinstance(axis, (tuple, list)) else tuple(axis)
    r = x._ref
    shape, strides = _layout.expand(r.shape, r.strides, _layout.normalize_axes(axes, x.ndim + len(axes), "expand_dims"))
    return _recorded("reshape", view_as(x, shape, strides, r.offset), x, r.shape)


def squeeze(x: Array, /, axis: int | Sequence[int]) -> Array:
    """Remove size-1 axes (a view).

    >>> import ndplane as nd
    >>> nd.squeeze(nd.zeros((1, 3, 1)), axis=(0, 2)).shape
    (3,)
    """
    check_array("squeeze", x)
    r = x._ref
    shape, strides = _layout.squeeze(r.shape, r.strides, _layout.normalize_axes(axis, x.ndim, "squeeze"))
    return _recorded("reshape", view_as(x, shape, strides, r.offset), x, r.shape)


def flip(x: Array, /, *, axis: int | Sequence[int] | None = None) -> Array:
    """Reverse the order of elements along ``axis`` (all axes by default; a view).

    >>> import ndplane as nd
    >>> nd.flip(nd.arange(4)).tolist()
    [3, 2, 1, 0]
    """
    check_array("flip", x)
    r = x._ref
    axes = _layout.normalize_axes(axis, x.ndim, "flip")
    strides, offset = _layout.flip(r.shape, r.strides, r.offset, axes)
    return _recorded("flip", view_as(x, r.shape, strides, offset), x, axes)


def concat(arrays: Sequence[Array], /, *, axis: int | None = 0) -> Array:
    """Join arrays along an existing axis (``axis=None`` flattens them first).

    >>> import ndplane as nd
    >>> nd.concat([nd.zeros((1, 2)), nd.ones((2, 2))]).shape
    (3, 2)
    """
    arrays = [check_array("concat", a) for a in arrays]
    if not arrays:
        raise ValueError("concat: need at least one array.")
    _dispatch.same_device("concat", *arrays)
    if axis is None:
        arrays = [reshape(a, (-1,)) for a in arrays]
        axis = 0
    first = arrays[0]
    if first.ndim == 0:
        raise ValueError("concat: zero-dimensional arrays cannot be concatenated; use stack.")
    ax = _layout.normalize_axis(axis, first.ndim, "concat")
    dtype = first.dtype
    for a in arrays[1:]:
        dtype = _dtypes.promote(dtype, a.dtype, "concat")
        if a.ndim != first.ndim or any(
            n != m for i, (n, m) in enumerate(zip(a.shape, first.shape)) if i != ax
        ):
            raise ValueError(
                f"concat: all shapes must match except along axis {ax}; got {first.shape} and {a.shape}."
            )
    shape = list(first.shape)
    shape[ax] = sum(a.shape[ax] for a in arrays)
    out = _dispatch.empty(tuple(shape), dtype, first.device, "concat")
    start = 0
    for a in arrays:
        n = a.shape[ax]
        key = (slice(None),) * ax + (slice(start, start + n),)
        r = out._ref
        vs, vst, voff = _layout.basic_index(r.shape, r.strides, r.offset, key, "concat")
        _dispatch.assign(view_as(out, vs, vst, voff), a, "concat")
        start += n
    if _graph.is_grad_enabled() and any(a.requires_grad for a in arrays):
        _graph.record("concat", out, tuple(arrays), (), (ax, [a.shape[ax] for a in arrays]))
    return out


def stack(arrays: Sequence[Array], /, *, axis: int = 0) -> Array:
    """Join arrays of one shape along a new axis.

    >>> import ndplane as nd
    >>> nd.stack([nd.zeros(2), nd.ones(2)], axis=1).shape
    (2, 2)
    """
    arrays = [check_array("stack", a) for a in arrays]
    if not arrays:
        raise ValueError("stack: need at least one array.")
    shape = arrays[0].shape
    for a in arrays[1:]:
        if a.shape != shape:
            raise ValueError(f"stack: all arrays must have the same shape; got {shape} and {a.shape}.")
    ax = _layout.normalize_axis(axis, len(shape) + 1, "stack")
    return concat([expand_dims(a, axis=ax) for a in arrays], axis=ax)


def unstack(x: Array, /, *, axis: int = 0) -> tuple[Array, ...]:
    """Split ``x`` into views along ``axis``.

    >>> import ndplane as nd
    >>> [a.tolist() for a in nd.unstack(nd.arange(4).reshape((2, 2)), axis=1)]
    [[0, 2], [1, 3]]
    """
    check_array("unstack", x)
    if x.ndim == 0:
        raise ValueError("unstack: the input must have at least one dimension.")
    ax = _layout.normalize_axis(axis, x.ndim, "unstack")
    if x.requires_grad:  # each view records its own indexing node
        return tuple(x[(slice(None),) * ax + (i,)] for i in range(x.shape[ax]))
    # NOTE: one layout for every view, only the offset moves: no indexing road per view, and the
    # layout's size and contiguity found once (1000 views of a 1000 x 1000 array 2.46 -> 0.70 ms,
    # then 1.3-2x less again; NumPy's unstack 0.2 ms, PyTorch's unbind 0.4-1.2).
    r = x._ref
    shape, strides, step = r.shape[:ax] + r.shape[ax + 1 :], r.strides[:ax] + r.strides[ax + 1 :], r.strides[ax]
    return _new_views(x._storage, r.dtype, shape, strides, range(r.offset, r.offset + r.shape[ax] * step, step)
                      if step else [r.offset] * r.shape[ax])  # fmt: skip


# ---------------------------------------------------------------------------
# composites over views, concat and take: every backend has them
# ---------------------------------------------------------------------------


def roll(x: Array, /, shift: int | Sequence[int], *, axis: int | Sequence[int] | None = None) -> Array:
    """Shift elements along ``axis`` with wrap-around (the flattened array if ``axis`` is None).

    >>> import ndplane as nd
    >>> nd.roll(nd.arange(5), 2).tolist(), nd.roll(nd.arange(4).reshape((2, 2)), 1, axis=1).tolist()
    ([3, 4, 0, 1, 2], [[1, 0], [3, 2]])
    """
    check_array("roll", x)
    if axis is None:
        return reshape(roll(reshape(x, (-1,)), _shift_sum(shift), axis=0), x.shape)
    shifts = (shift,) if not isinstance(shift, (tuple, list)) else tuple(shift)
    axes = (axis,) if not isinstance(axis, (tuple, list)) else tuple(axis)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift and axis must have the same length; got {len(shifts)} and {len(axes)}.")
    # NOTE: the net shift of each axis (an axis may be named twice), then one pass: each block
    # of x copied once to its place in a fresh array (2 blocks per rolled axis, 4 for two), where
    # one concat per axis copied everything once per axis.
    net: dict[int, int] = {}
    for s, a in zip(shifts, axes):
        ax = _layout.normalize_axis(a, x.ndim, "roll")
        net[ax] = net.get(ax, 0) + operator.index(s)
    rolled = {ax: k % x.shape[ax] for ax, k in net.items() if x.shape[ax] and k % x.shape[ax]}
    if not rolled or x.size == 0:
        return _dispatch.copy_of(x)
    out = _dispatch.empty(x.shape, x.dtype, x.device, "roll")
    src, dst = x._ref, out._ref
    # per rolled axis, its two blocks: (length, start in x, start in out)
    blocks = [((k, n - k, 0), (n - k, 0, k)) for ax, k in rolled.items() for n in (x.shape[ax],)]
    for combo in itertools.product(*blocks):
        shape, src_off, dst_off = list(x.shape), src.offset, dst.offset
        for ax, (length, s_start, d_start) in zip(rolled, combo):
            shape[ax] = length
            src_off += s_start * src.strides[ax]
            dst_off += d_start * dst.strides[ax]
        block = tuple(shape)
        _dispatch.assign(view_as(out, block, dst.strides, dst_off), view_as(x, block, src.strides, src_off), "roll")
    if _graph.is_grad_enabled() and x.requires_grad:
        _graph.record("roll", out, (x,), (), (tuple(rolled), tuple(rolled.values())))
    return out


def _shift_sum(shift: int | Sequence[int]) -> int:
    if isinstance(shift, (tuple, list)):
        return sum(operator.index(s) for s in shift)
    return operator.index(cast(int, shift))


def tile(x: Array, repetitions: Sequence[int], /) -> Array:
    """``x`` repeated ``repetitions[i]`` times along each axis (shapes aligned from the right).

    >>> import ndplane as nd
    >>> nd.tile(nd.asarray([1, 2]), (2, 2)).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    check_array("tile", x)
    reps = tuple(operator.index(r) for r in repetitions)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be non-negative; got {reps}.")
    nd_ = max(x.ndim, len(reps))
    reps = (1,) * (nd_ - len(reps)) + reps
    shape = (1,) * (nd_ - x.ndim) + x.shape
    inter = tuple(v for n in shape for v in (1, n))
    target = tuple(v for r, n in zip(reps, shape) for v in (r, n))
    out = reshape(broadcast_to(reshape(x, inter), target), tuple(r * n for r, n in zip(reps, shape)))
    return _dispatch.copy_of(out) if out._storage is x._storage else out


def transpose_2d(x: Array) -> Array:
    """``x.T``: the transpose of a 2-D array (a view)."""
    if x.ndim != 2:
        raise ValueError(f"Array.T: only defined for 2-D arrays; got {x.ndim}-D. Use .mT or permute_dims.")
    r = x._ref
    out = _view(x, r.shape[::-1], r.strides[::-1], r.offset)
    return _graph.record("permute_dims", out, (x,), (), (1, 0)) if x.requires_grad else out


def matrix_transpose_view(x: Array) -> Array:
    """``x.mT``: the transpose of the last two axes (a view)."""
    if x.ndim < 2:
        raise ValueError(f"Array.mT: needs at least 2 dimensions; got {x.ndim}-D.")
    r = x._ref
    shape, strides = r.shape, r.strides
    out = _view(x, shape[:-2] + (shape[-1], shape[-2]), strides[:-2] + (strides[-1], strides[-2]), r.offset)
    if x.requires_grad:
        axes = (*range(len(shape) - 2), len(shape) - 1, len(shape) - 2)
        _graph.record("permute_dims", out, (x,), (), axes)
    return out
