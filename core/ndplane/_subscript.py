"""The Array's subscripts: ``x[key]`` and ``x[key] = value`` (Array API "Indexing").

Basic indices (ints, slices with steps, ``...``, ``None``) give views.  Advanced
indices follow NumPy's rules: integer arrays (any number, broadcast together,
mixed with slices, ints and ``None``) and boolean masks (anywhere, each turned
into integer arrays by ``nonzero``; a 0-d mask adds an axis of length 1 or 0).
Reading gathers with ``take`` over the advanced axes flattened into one;
writing turns the indices into a per-position "source" map and selects with
``where`` (the ``scatter_add`` primitive only handles integer bookkeeping), so
every backend gets it and it is differentiable.  Every index is bounds-checked
here, before any kernel reads the indexed array.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from . import _dispatch, _dtypes, _graph, _indexing, _layout
from . import _manipulation as manip
from ._array import Array
from ._creation import asarray, full, ones, zeros
from ._dispatch import view_as
from ._indexing import take_in_range
from ._searching import flat_nonzero, nonzero
from ._sorting import argsort
from .backend.base import Ref

__all__ = ["getitem", "setitem"]

_BASIC = (int, slice, type(None), type(Ellipsis))


def _basic_view(x: Array, key: Any) -> Array:
    r = x._ref
    shape, strides, offset = _layout.basic_index(r.shape, r.strides, r.offset, key)
    return view_as(x, shape, strides, offset)


def _is_index(k: Any) -> bool:
    # NOTE: a NumPy array has ``__index__`` too (it raises unless the array is one integer).
    return type(k) is not bool and not isinstance(k, (Array, np.ndarray)) and hasattr(k, "__index__")


def _is_basic(key: Any) -> bool:
    if isinstance(key, tuple):
        return all(_basic_item(k) for k in key)
    return _basic_item(key)


def _basic_item(k: Any) -> bool:
    if type(k) is bool:
        return False
    return isinstance(k, _BASIC) or _is_index(k)


# ---------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------


def getitem(x: Array, key: Any) -> Array:
    """``x[key]``: ints, slices, ``...`` and ``None`` give views; integer arrays and boolean masks
    (NumPy's placement rules) gather, with every index bounds-checked first.

    >>> import ndplane as nd
    >>> x = nd.arange(12).reshape((3, 4))
    >>> x[1].tolist(), x[:, ::2].tolist(), x[x > 9].tolist(), x[nd.asarray([2, 0]), 1].tolist()
    ([4, 5, 6, 7], [[0, 2], [4, 6], [8, 10]], [10, 11], [9, 1])
    """
    if type(key) is int or type(key) is slice or _is_basic(key):
        v = _basic_view(x, key)
        if x.requires_grad:
            _graph.record("getitem", v, (x,), (), (x.shape, key))
        return v
    if type(key) is Array and key.ndim:
        if key.dtype is _dtypes.bool:
            return _mask_get(x, key)
        if key.ndim == 1 and x.ndim and key.dtype.kind in ("int", "uint"):
            # NOTE: x[i] of one 1-D integer array is take(x, i, axis=0) (the same checks and
            # messages): the general plan's views and broadcasts cost 30 us against take's 12.
            return _indexing.take(x, key, axis=0)
    plan = _plan(x, key, "__getitem__")
    if plan is None:  # only ints and 0-d integer arrays: a basic index after all
        return getitem(x, tuple(int(k) if isinstance(k, (Array, np.ndarray)) else k for k in _as_tuple(key)))
    v, adv_dims, idx, front = plan
    return _gather(v, adv_dims, idx, front)


def _as_tuple(key: Any) -> tuple[Any, ...]:
    return key if isinstance(key, tuple) else (key,)


def _plan(x: Array, key: Any, name: str) -> tuple[Array, list[int], list[Array], int] | None:
    """Split an advanced ``key`` into a basic view of ``x``, the view's axes that the integer
    index arrays address, those arrays (bounds-checked, non-negative, broadcast to one shape)
    and the axis where the indexed axes go in the result."""
    parts = _expand(x, _as_tuple(key), name)
    if parts is None:
        return None
    ndim = x.ndim
    consumed = sum(1 for k in parts if k is not None and k is not Ellipsis and type(k) is not _NewAxisIndex)
    if consumed > ndim:
        raise IndexError(f"{name}: too many indices: the array has {ndim} dimension(s) but {consumed} were indexed.")
    basic: list[Any] = []
    adv: list[tuple[int, Array]] = []  # (axis of the basic view, index array)
    positions: list[int] = []
    dim = 0
    for pos, k in enumerate(parts):
        if type(k) is Array or type(k) is _NewAxisIndex:
            adv.append((dim, k if type(k) is Array else k.index))
            positions.append(pos)
            basic.append(slice(None) if type(k) is Array else None)
            dim += 1
        elif k is Ellipsis:
            basic.append(k)
            dim += ndim - consumed
        elif k is None or isinstance(k, slice):
            basic.append(k)
            dim += 1
        else:
            basic.append(k)  # an int: removes the axis
    v = _basic_view(x, tuple(basic))
    if x.requires_grad:
        _graph.record("getitem", v, (x,), (), (x.shape, tuple(basic)))
    try:
        shape = _layout.broadcast_shapes(*(a.shape for _, a in adv), name=name)
    except ValueError as exc:
        raise IndexError(f"{exc} (the shapes of the index arrays)") from None
    # NOTE: reading is a gather, and its bounds errors read as take's (the docs show them).
    label = "take" if name == "__getitem__" else name
    idx = [manip.broadcast_to(_indexing.normalize_indices(a, v.shape[d], f"{label} (axis {d})"), shape)
           for d, a in adv]  # fmt: skip
    adjacent = positions == list(range(positions[0], positions[0] + len(positions)))
    return v, [d for d, _ in adv], idx, adv[0][0] if adjacent else 0


def _expand(x: Array, parts: tuple[Any, ...], name: str) -> list[Any] | None:
    """Turn masks into integer arrays (nonzero), Python bools into 0-d masks, lists and NumPy
    arrays into arrays on ``x``'s device, ints into 0-d arrays when any array index is present;
    None when no array index is left."""

    out: list[Any] = []
    dim = 0
    n_index = sum(_consumes(k) for k in parts)
    for k in parts:
        if type(k) is bool:
            k = asarray(k, device=x.device)
        elif isinstance(k, (list, tuple, np.ndarray)):
            k = asarray(k, device=x.device)
        if type(k) is Array:
            _dispatch.same_device(name, x, k)
            if k.dtype.kind not in ("int", "uint", "bool"):
                raise IndexError(f"{name}: array indices must be integer or boolean; got {k.dtype.name}.")
            if k.dtype is _dtypes.bool:
                out.extend(_mask_parts(x, k, dim, name))
                dim += k.ndim
                continue
            dim += 1
        elif k is Ellipsis:
            dim += x.ndim - n_index
        elif k is not None:
            if not isinstance(k, slice) and not _is_index(k):
                raise IndexError(
                    f"{name}: only integers, slices, ellipsis ('...'), None and integer or boolean "
                    f"arrays are valid indices; got {type(k).__name__}."
                )
            dim += 1
        out.append(k)
    if not any((type(k) is Array and k.ndim) or type(k) is _NewAxisIndex for k in out):
        return None
    return [asarray(operator.index(k), device=x.device) if _is_index(k) else k for k in out]


def _consumes(k: Any) -> int:
    if k is None or k is Ellipsis or type(k) is bool:
        return 0
    if type(k) is Array and k.dtype is _dtypes.bool:
        return k.ndim
    return 1


class _NewAxisIndex:
    """A new axis of length 1 indexed by an integer array (what a 0-d mask becomes)."""

    __slots__ = ("index",)

    def __init__(self, index: Array) -> None:
        self.index = index


def _mask_parts(x: Array, mask: Array, dim: int, name: str) -> list[Any]:
    if mask.ndim == 0:
        # NOTE: a 0-d mask adds an axis indexed by [0] (True) or [] (False): NumPy's rule.
        n = 1 if bool(mask) else 0
        return [_NewAxisIndex(zeros((n,), dtype=mask.device.backend.default_dtypes["indexing"], device=x.device))]
    sub = x.shape[dim : dim + mask.ndim]
    if len(sub) < mask.ndim or any(m not in (s, 0) for m, s in zip(mask.shape, sub)):
        raise IndexError(
            f"{name}: boolean index of shape {mask.shape} does not match the indexed array's shape "
            f"{sub} at axis {dim}."
        )

    return list(nonzero(mask))


def _gather(v: Array, adv_dims: list[int], idx: list[Array], front: int) -> Array:
    """``v`` indexed by the broadcast integer arrays ``idx`` on its axes ``adv_dims``."""
    shape = idx[0].shape
    rest = [d for d in range(v.ndim) if d not in adv_dims]
    moved = manip.permute_dims(v, adv_dims + rest)
    sizes = [v.shape[d] for d in adv_dims]
    flat = _flat_index(idx, sizes)
    src = manip.reshape(moved, (_layout.prod(sizes),) + moved.shape[len(adv_dims) :])
    out = take_in_range(src, manip.reshape(flat, (-1,)), 0)  # idx normalized: in range
    out = manip.reshape(out, shape + out.shape[1:])
    if front:
        k = len(shape)
        order = list(range(k, k + front)) + list(range(k)) + list(range(k + front, out.ndim))
        out = manip.permute_dims(out, order)
    return out


def _flat_index(idx: list[Array], sizes: list[int]) -> Array:
    """Row-major flat index over the advanced axes (index arrays already non-negative)."""
    flat = idx[0]
    for a, n in zip(idx[1:], sizes[1:]):
        flat = _dispatch.binary("add", _dispatch.binary("multiply", flat, n), a)
    return flat


def _mask_get(x: Array, mask: Array) -> Array:
    _dispatch.same_device("__getitem__", x, mask)
    k = mask.ndim
    if k > x.ndim or any(m not in (s, 0) for m, s in zip(mask.shape, x.shape)):
        raise IndexError(
            f"__getitem__: boolean index of shape {mask.shape} does not match the indexed array's "
            f"leading shape {x.shape[:k]}."
        )

    flat_idx = flat_nonzero(mask)
    rest = x.shape[k:]
    flat_x = manip.reshape(x, (_layout.prod(x.shape[:k]),) + rest)
    return take_in_range(flat_x, flat_idx, 0)  # positions from nonzero: in range


# ---------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------


def setitem(x: Array, key: Any, value: Any) -> None:
    """``x[key] = value``: the same keys as ``x[key]``; ``value`` (an array or a Python scalar)
    broadcasts to the selection.

    >>> import ndplane as nd
    >>> x = nd.zeros((2, 3), dtype=nd.int64)
    >>> x[0] = 7
    >>> x[:, 2] = nd.asarray([1, 2])
    >>> x[x == 0] = -1
    >>> x.tolist()
    [[7, 7, 1], [-1, -1, 2]]
    """
    if _is_basic(key):
        _graph.check_inplace(x, "__setitem__")
        grad = (x.requires_grad or (type(value) is Array and value.requires_grad)) and _graph.is_grad_enabled()
        old = _graph.alias(x) if grad else None
        _dispatch.assign(_basic_view(x, key), value)
        if grad:
            v_shape = value.shape if type(value) is Array else None
            _graph.record("setitem", x, (old, value), (), (key, v_shape))
        return
    value = _value_array(x, value)
    if type(key) is Array and key.dtype is _dtypes.bool and key.ndim == x.ndim and value.ndim == 0:
        return _mask_set(x, key, value)
    plan = _plan(x, key, "__setitem__")
    if plan is None:
        return setitem(x, tuple(int(k) if isinstance(k, (Array, np.ndarray)) else k for k in _as_tuple(key)), value)
    _graph.check_inplace(x, "__setitem__")
    grad = (x.requires_grad or value.requires_grad) and _graph.is_grad_enabled()
    old = _graph.alias(x) if grad else None
    v, adv_dims, idx, front = plan
    with _graph.no_grad():
        _scatter_set(v, adv_dims, idx, front, value)
    if grad:
        _graph.record("setitem", x, (old, value), (), (key, value.shape))


def _value_array(x: Array, value: Any) -> Array:
    if type(value) is Array:
        _dispatch.same_device("__setitem__", x, value)
        return value if value.dtype is x.dtype else _dispatch.cast(value, x.dtype)

    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, (bool, int, float, complex)):
        raise TypeError(f"__setitem__: value must be an ndplane array or a Python scalar; got {type(value).__name__}.")
    _dispatch._check_scalar_kind(value, x.dtype, "__setitem__")
    return full((), value, dtype=x.dtype, device=x.device)


def _mask_set(x: Array, mask: Array, value: Array) -> None:
    """``x[mask] = scalar`` for a full-rank mask: one ``where``."""
    _dispatch.same_device("__setitem__", x, mask)
    if mask.shape != x.shape:
        raise IndexError(f"__setitem__: boolean index of shape {mask.shape} does not match the array's shape {x.shape}.")
    _graph.check_inplace(x, "__setitem__")
    src = _graph.alias(x) if x.requires_grad else x
    result = _dispatch.where(mask, value, src)
    _dispatch.assign(x, result)
    if result.requires_grad:
        _graph.record("identity", x, (result,))


def _scatter_set(v: Array, adv_dims: list[int], idx: list[Array], front: int, value: Array) -> None:
    """``v[idx on adv_dims] = value``, writing through the view ``v``.

    The advanced axes are flattened into one axis of P positions, moved first; each position
    gets the index of the value written there (the last one among duplicates: the order is
    unspecified by the standard) and a hit flag, both by ``scatter_add`` into zeros; then one
    ``take`` + ``where`` builds the new contents, copied back through the view."""
    if _put_axis(v, adv_dims, idx, front, value):
        return
    shape = idx[0].shape
    rest = [d for d in range(v.ndim) if d not in adv_dims]
    sizes = [v.shape[d] for d in adv_dims]
    p = _layout.prod(sizes)
    # NOTE: the advanced axes first, not last: for ``x[rows] = y`` the target is then x itself
    # and every pass below reads and writes whole rows (the axes last made each one a transpose).
    target = manip.permute_dims(v, adv_dims + rest)  # a view of x: (adv..., rest...)
    lead = target.shape[len(adv_dims) :]
    # the value, broadcast to the gather's result shape, as (L, rest...)
    k = len(shape)
    res_shape = [v.shape[d] for d in rest]
    res_shape[front:front] = list(shape)
    vals = manip.broadcast_to(value, tuple(res_shape))
    order = list(range(front, front + k)) + list(range(front)) + list(range(front + k, len(res_shape)))
    vals = manip.reshape(manip.permute_dims(vals, order), (_layout.prod(shape), _layout.prod(lead)))
    flat = manip.reshape(_flat_index(idx, sizes), (-1,))
    n = flat.shape[0]
    index = flat.dtype
    if n == 0 or p == 0:
        return
    # the last occurrence of each position wins
    perm = argsort(flat, stable=True)
    sflat = take_in_range(flat, perm, 0)
    last = manip.concat([_dispatch.binary("not_equal", sflat[1:], sflat[:-1]),
                         ones((1,), dtype=_dtypes.bool, device=v.device)])  # fmt: skip
    winners = take_in_range(perm, flat_nonzero(last), 0)
    pos = take_in_range(flat, winners, 0)
    src = zeros((1, p), dtype=index, device=v.device)
    _dispatch.scatter_add_last(src, pos, manip.reshape(winners, (1, -1)))
    hit = zeros((1, p), dtype=index, device=v.device)
    _dispatch.scatter_add_last(hit, pos, ones((1, pos.shape[0]), dtype=index, device=v.device))
    hit = manip.reshape(_dispatch.binary("not_equal", hit, 0), (p, 1))
    src = manip.reshape(src, (-1,))
    gathered = take_in_range(vals, src, 0)  # (P, rest)
    old = manip.reshape(target, (p, _layout.prod(lead)))
    new = _dispatch.where(hit, gathered, old)
    _dispatch.assign(target, manip.reshape(new, target.shape))


def _put_axis(v: Array, adv_dims: list[int], idx: list[Array], front: int, value: Array) -> bool:
    """``v[idx] = value`` for one index array on one axis of a C-contiguous ``v``, by the
    backend's ``fused:put_axis`` (row copies straight into ``v``); False where it does not apply."""
    st = v._storage
    if len(adv_dims) != 1 or "fused:put_axis" not in st.backend.capabilities or not v._ref.contiguous:
        return False
    d = adv_dims[0]
    if front != d or not v.size:
        return False
    shape = idx[0].shape
    k = _layout.prod(shape)
    vals = _dispatch.compact(manip.broadcast_to(value, v.shape[:d] + shape + v.shape[d + 1 :]))
    if vals._storage is st:
        vals = _dispatch.copy_of(vals)  # NOTE: x[i] = x[j]: every value is read before any write
    a, n, b = _layout.prod(v.shape[:d]), v.shape[d], _layout.prod(v.shape[d + 1 :])
    if k:
        r, vr = v._ref, vals._ref
        out = Ref(r.buffer, r.dtype, (a, n, b), (n * b, b, 1), r.offset, r.size, True)
        values = Ref(vr.buffer, vr.dtype, (a, k, b), (k * b, b, 1), vr.offset, vr.size, True)
        flat = _dispatch.compact(manip.reshape(idx[0], (-1,)))
        st.backend.fused("put_axis", (flat._ref, values), out, {})
    st.version += 1
    return True
