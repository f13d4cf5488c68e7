"""Linear algebra functions of the main namespace (Array API chapter)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import _dispatch, _dtypes, _graph, _layout, _statistical
from ._array import Array
from ._elementwise import store_inplace
from ._manipulation import expand_dims, moveaxis, permute_dims, reshape, squeeze
from .backend.base import Ref

__all__ = ["matmul", "vecdot", "tensordot"]


def matmul(x1: Array, x2: Array, /) -> Array:
    """Matrix product with NumPy's rules: 1-D operands are vectors, batch axes broadcast.

    >>> import ndplane as nd
    >>> a = nd.asarray([[1.0, 2.0], [3.0, 4.0]])
    >>> (a @ a).tolist(), (a @ nd.asarray([1.0, 1.0])).tolist()
    ([[7.0, 10.0], [15.0, 22.0]], [3.0, 7.0])
    """
    if type(x1) is not Array or type(x2) is not Array:
        raise TypeError(f"matmul: expected ndplane arrays; got {type(x1).__name__} and {type(x2).__name__}.")
    if x1._storage.device is not x2._storage.device:
        _dispatch.same_device("matmul", x1, x2)
    ra, rb = x1._ref, x2._ref
    sa, sb = ra.shape, rb.shape
    if not sa or not sb:
        raise ValueError("matmul: 0-d arrays are not allowed; use multiply for scalars.")
    dt = ra.dtype if ra.dtype is rb.dtype else _dtypes.promote(ra.dtype, rb.dtype, "matmul")
    a = x1 if ra.dtype is dt else _dispatch.cast(x1, dt)
    b = x2 if rb.dtype is dt else _dispatch.cast(x2, dt)
    (m, k) = (1, sa[0]) if len(sa) == 1 else sa[-2:]
    (k2, n) = (sb[0], 1) if len(sb) == 1 else sb[-2:]
    if k != k2:
        raise ValueError(
            f"matmul: shapes {x1.shape} and {x2.shape} are not aligned: "
            f"{k} (last axis of x1) != {k2} (" + ("only axis" if x2.ndim == 1 else "second-to-last axis")
            + " of x2)."
        )
    ba, bb = sa[:-2], sb[:-2]
    batch = ba if ba == bb else _layout.broadcast_shapes(ba, bb, name="matmul")
    nb = _layout.prod(batch)
    # NOTE: the kernel sees (B, R, C) Refs over the operands' storage (no Array, no graph);
    # the whole product is one node, whose rule (autograd/rules.py, "matmul") handles
    # vectors and batch broadcasting.
    owner_a, a3 = _batch3(a, batch, nb, m, k)
    owner_b, b3 = _batch3(b, batch, nb, k, n)
    shape = batch + ((m,) if len(sa) > 1 else ()) + ((n,) if len(sb) > 1 else ())
    out = _dispatch.matmul3(owner_a, a3, owner_b, b3, shape)
    if a.requires_grad or b.requires_grad:
        _graph.record("matmul", out, (a, b), (a, b))
    return out


def _batch3(x: Array, batch: tuple[int, ...], nb: int, r: int, c: int) -> tuple[Array, Ref]:
    """``x`` (..., R, C) -- or a vector standing for (1, C) / (R, 1) -- as a (B, R, C) Ref over
    its storage where the batch axes merge (or broadcast with stride 0); else over a copy,
    returned with it (the Array that owns the Ref's storage)."""
    ref = x._ref
    if len(ref.shape) == 1:
        strides2: tuple[int, ...] = (0, ref.strides[0]) if r == 1 else (ref.strides[0], 0)
        lead: tuple[int, ...] = ()
        lead_strides: tuple[int, ...] = ()
    else:
        strides2 = ref.strides[-2:]
        lead, lead_strides = ref.shape[:-2], ref.strides[:-2]
    if not batch:
        return x, Ref(ref.buffer, ref.dtype, (1, r, c), (0,) + strides2, ref.offset, r * c, ref.contiguous)
    if lead != batch:
        lead_strides = _layout.broadcast_strides(lead, lead_strides, batch, "matmul")
    bstrides = _layout.reshape_strides(batch, lead_strides, (nb,))
    if bstrides is None:  # batch axes that do not merge: copy them into one
        x = _dispatch.copy_of(_dispatch.view_as(x, batch + (r, c), lead_strides + strides2, ref.offset))
        ref = x._ref
        bstrides, strides2 = (r * c,), (c, 1)
    shape3 = (nb, r, c)
    strides3 = bstrides + strides2
    return x, Ref(ref.buffer, ref.dtype, shape3, strides3, ref.offset, nb * r * c,
                  _layout.is_contiguous(shape3, strides3))  # fmt: skip


def vecdot(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Dot product of vectors along ``axis`` (conjugating ``x1``), batch axes broadcast.

    >>> import ndplane as nd
    >>> nd.vecdot(nd.asarray([[1.0, 2.0], [3.0, 4.0]]), nd.asarray([1.0, 1.0])).tolist()
    [3.0, 7.0]
    """

    if type(x1) is not Array or type(x2) is not Array:
        raise TypeError("vecdot: expected ndplane arrays.")
    shape = _layout.broadcast_shapes(x1.shape, x2.shape, name="vecdot")
    ax = _layout.normalize_axis(axis, len(shape), "vecdot")
    if ax - len(shape) < -min(x1.ndim, x2.ndim) or x1.shape[ax - len(shape)] != x2.shape[ax - len(shape)]:
        raise ValueError(f"vecdot: the axis {axis} must have equal sizes in {x1.shape} and {x2.shape}.")
    if x1.dtype.kind == "bool" or x2.dtype.kind == "bool":
        raise TypeError(f"vecdot: only numeric dtypes are allowed; got {x1.dtype.name} and {x2.dtype.name}.")
    if x1.dtype is not x2.dtype:  # NOTE: errors name vecdot, not the multiply or matmul inside
        _dispatch.check_dtype(x1._storage.device, _dtypes.promote(x1.dtype, x2.dtype, "vecdot"), "vecdot")
    a = _dispatch.unary("conj", x1) if x1.dtype.kind == "complex" else x1
    last = ax - len(shape)
    if x1.dtype.is_floating and x2.dtype.is_floating and _unit_step(a, last) and _unit_step(x2, last):
        # NOTE: rows of contiguous vectors are a batch of (1, K) @ (K, 1) products: one
        # matmul (a BLAS dot per row on cpu: 0.4-0.7x the time of multiply and sum, no
        # temporary). Along a strided axis the sum's column loop is faster (4-5x).
        a, b = moveaxis(a, last, -1), moveaxis(x2, last, -1)
        return squeeze(matmul(expand_dims(a, axis=-2), expand_dims(b, axis=-1)), axis=(-2, -1))
    prod = _dispatch.binary("multiply", a, x2)
    # NOTE: the result keeps the promoted dtype (no widening of small integers, unlike sum).
    return _statistical.sum(prod, axis=last, dtype=prod.dtype)


def _unit_step(x: Array, axis: int) -> bool:
    """Whether ``x``'s elements along ``axis`` (negative) are adjacent in memory."""
    return x.shape[axis] <= 1 or x._ref.strides[axis] == 1


def tensordot(x1: Array, x2: Array, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> Array:
    """Sum of products over the given axes (``axes=n``: last n of x1 with first n of x2).

    >>> import ndplane as nd
    >>> nd.tensordot(nd.ones((2, 3)), nd.ones((3, 4)), axes=1).shape
    (2, 4)
    """
    if isinstance(axes, int):
        if axes < 0:
            raise ValueError(f"tensordot: axes must be >= 0; got {axes}.")
        ax1 = tuple(range(x1.ndim - axes, x1.ndim))
        ax2 = tuple(range(axes))
    else:
        ax1 = _layout.normalize_axes(tuple(axes[0]), x1.ndim, "tensordot")
        ax2 = _layout.normalize_axes(tuple(axes[1]), x2.ndim, "tensordot")
    if len(ax1) != len(ax2) or any(x1.shape[a] != x2.shape[b] for a, b in zip(ax1, ax2)):
        raise ValueError(f"tensordot: contracted axes of {x1.shape} and {x2.shape} must have equal sizes.")
    free1 = [i for i in range(x1.ndim) if i not in ax1]
    free2 = [i for i in range(x2.ndim) if i not in ax2]
    k = _layout.prod(x1.shape[a] for a in ax1)
    a = reshape(permute_dims(x1, free1 + list(ax1)), (_layout.prod(x1.shape[i] for i in free1), k))
    b = reshape(permute_dims(x2, list(ax2) + free2), (k, _layout.prod(x2.shape[i] for i in free2)))
    out = matmul(a, b)
    return reshape(out, tuple(x1.shape[i] for i in free1) + tuple(x2.shape[i] for i in free2))



def __matmul__(self: Array, other: Any) -> Any:
    """``self @ other``: :func:`ndplane.matmul`.

    >>> import ndplane as nd
    >>> (nd.asarray([[1, 2], [3, 4]]) @ nd.asarray([1, 1])).tolist()
    [3, 7]
    """
    return matmul(self, other) if type(other) is Array else NotImplemented


def __imatmul__(self: Array, other: Any) -> Array:
    """``self @= other``: :func:`ndplane.matmul` written into ``self``, which keeps its shape
    and dtype (so ``other`` must be square in its last two axes, and broadcast no batch axes).

    >>> import ndplane as nd
    >>> x = nd.asarray([[1.0, 2.0], [3.0, 4.0]])
    >>> x @= nd.asarray([[0.0, 1.0], [1.0, 0.0]])
    >>> x.tolist()
    [[2.0, 1.0], [4.0, 3.0]]
    """
    if type(other) is not Array:
        raise TypeError(f"__imatmul__: expected an ndplane array, got {type(other).__name__}.")
    _graph.check_inplace(self, "__imatmul__")
    track = self.requires_grad and _graph.is_grad_enabled()
    return store_inplace(self, matmul(_graph.alias(self) if track else self, other), "__imatmul__", "@")


def __rmatmul__(self: Array, other: Any) -> Any:
    """``other @ self``, where ``other`` is an array whose ``__matmul__`` declined.

    >>> import ndplane as nd
    >>> nd.asarray([[1, 2], [3, 4]]).__rmatmul__(nd.asarray([1, 1])).tolist()
    [4, 6]
    """
    return matmul(other, self) if type(other) is Array else NotImplemented
