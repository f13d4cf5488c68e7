"""Pure functions on layouts ``(shape, strides, offset)``, all in elements.

Every view in ndplane is computed here: O(1) metadata math, no data touched.
Nothing in this module knows about arrays, devices or backends.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from typing import Any

Shape = tuple[int, ...]
Strides = tuple[int, ...]


# NOTE: the hot layout functions are memoised on their (hashable, all-int) arguments: a
# training step sees the same few shapes thousands of times, and a dict lookup is several
# times cheaper than the loop. Each cache is bounded; errors are raised, never cached.
_CACHE_LIMIT = 4096


def _memo(fn: Any) -> Any:
    cache: dict[Any, Any] = {}

    def wrapper(*args: Any) -> Any:
        try:
            return cache[args]
        except KeyError:
            pass
        value = fn(*args)
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        cache[args] = value
        return value

    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = fn.__qualname__
    wrapper.__doc__ = fn.__doc__
    wrapper.uncached = fn  # type: ignore[attr-defined]
    return wrapper


_STRIDES_CACHE: dict[Shape, Strides] = {}

# The index range: the most bytes one array may span, so that every element count, byte
# offset and byte stride fits the signed 64-bit index of every backend (NumPy's intp, C++'s
# ptrdiff_t). The core checks it before any backend sees a shape (check_size).
INDEX_MAX = 2**63 - 1


def check_size(shape: Shape, size: int, itemsize: int, name: str) -> None:
    """Raise ValueError when an array of ``shape`` (``size`` elements of ``itemsize`` bytes)
    would not fit the index range; as a contiguous array, even if it is a view (an empty one
    counts its non-zero sides, which its strides multiply)."""
    if size * itemsize <= INDEX_MAX and (size or prod(max(n, 1) for n in shape) * itemsize <= INDEX_MAX):
        return
    raise ValueError(
        f"{name}: an array of shape {shape} with {itemsize}-byte elements would span "
        f"{prod(max(n, 1) for n in shape) * itemsize} bytes, past the index range of 2**63 - 1 "
        f"bytes that every device addresses; use smaller shapes."
    )


def contiguous_strides(shape: Shape) -> Strides:
    s = _STRIDES_CACHE.get(shape)
    if s is None:
        if len(_STRIDES_CACHE) > _CACHE_LIMIT:
            _STRIDES_CACHE.clear()
        s = _STRIDES_CACHE[shape] = _contiguous_strides(shape)
    return s


def _contiguous_strides(shape: Shape) -> Strides:
    strides = []
    acc = 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n if n > 1 else 1
    return tuple(reversed(strides))


def prod(shape: Iterable[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


@_memo
def is_contiguous(shape: Shape, strides: Strides) -> bool:
    """C-contiguity; strides of size-1 axes are ignored, every empty array is contiguous."""
    if 0 in shape:
        return True
    acc = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1:
            if s != acc:
                return False
            acc *= n
    return True


def extent(shape: Shape, strides: Strides, offset: int) -> tuple[int, int]:
    """The lowest and highest element index a layout touches (``(offset, offset-1)`` if empty)."""
    lo = hi = offset
    for n, s in zip(shape, strides):
        if n == 0:
            return offset, offset - 1
        if s > 0:
            hi += (n - 1) * s
        else:
            lo += (n - 1) * s
    return lo, hi


def normalize_axis(axis: Any, ndim: int, name: str) -> int:
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{name}: axis must be an integer; got {type(axis).__name__}.") from None
    if not -ndim <= a < ndim:
        raise IndexError(
            f"{name}: axis {a} is out of bounds for an array of {ndim} dimension(s) "
            f"(valid: {-ndim} to {ndim - 1})." if ndim else
            f"{name}: axis {a} is out of bounds for a 0-d array."
        )
    return a % ndim if ndim else 0


def normalize_axes(axis: Any, ndim: int, name: str) -> tuple[int, ...]:
    """``None`` means every axis; an int or a tuple of ints is normalised; duplicates raise."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(normalize_axis(a, ndim, name) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{name}: repeated axis in {tuple(axis)}.")
        return axes
    return (normalize_axis(axis, ndim, name),)


def broadcast_shapes(*shapes: Shape, name: str = "broadcast_shapes") -> Shape:
    """The shape ``shapes`` broadcast to (NumPy's rule); raises ValueError naming ``name``."""
    try:
        return _BROADCAST_CACHE[shapes]
    except KeyError:
        pass
    out = _broadcast_shapes(shapes, name)
    if len(_BROADCAST_CACHE) >= _CACHE_LIMIT:
        _BROADCAST_CACHE.clear()
    _BROADCAST_CACHE[shapes] = out
    return out


_BROADCAST_CACHE: dict[tuple[Shape, ...], Shape] = {}


def _broadcast_shapes(shapes: tuple[Shape, ...], name: str) -> Shape:
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        for i, n in enumerate(shape, ndim - len(shape)):
            m = out[i]
            if m == 1:
                out[i] = n
            elif n != 1 and n != m:
                raise ValueError(
                    f"{name}: shapes {', '.join(str(tuple(s)) for s in shapes)} cannot be "
                    f"broadcast together (axis {i - ndim}: {m} vs {n})."
                )
    return tuple(out)


def broadcast_strides(shape: Shape, strides: Strides, new_shape: Shape, name: str) -> Strides:
    """Strides of ``shape`` viewed as ``new_shape`` (stride 0 on broadcast axes)."""
    key = (shape, strides, new_shape)
    try:
        return _BSTRIDES_CACHE[key]
    except KeyError:
        pass
    out = _broadcast_strides(shape, strides, new_shape, name)
    if len(_BSTRIDES_CACHE) >= _CACHE_LIMIT:
        _BSTRIDES_CACHE.clear()
    _BSTRIDES_CACHE[key] = out
    return out


_BSTRIDES_CACHE: dict[tuple[Shape, Strides, Shape], Strides] = {}


def _broadcast_strides(shape: Shape, strides: Strides, new_shape: Shape, name: str) -> Strides:
    lead = len(new_shape) - len(shape)
    if lead < 0:
        raise ValueError(f"{name}: cannot broadcast shape {shape} to the smaller rank shape {new_shape}.")
    out = [0] * lead
    for n, s, m in zip(shape, strides, new_shape[lead:]):
        if n == m:
            out.append(s if n != 1 else 0)
        elif n == 1:
            out.append(0)
        else:
            raise ValueError(f"{name}: cannot broadcast shape {shape} to {new_shape}.")
    return tuple(out)


@_memo
def reduce_layout(shape: Shape, strides: Strides, axes: tuple[int, ...]) -> tuple[Shape, int, int, tuple[Shape, Strides]]:
    """The layout a reduction over ``axes`` (normalised, distinct) reads: the kept shape, M
    (kept elements), K (reduced elements) and the (shape, strides) with the reduced axes last."""
    keep = tuple(i for i in range(len(shape)) if i not in axes)
    order = keep + axes
    kept = tuple(shape[i] for i in keep)
    moved = (tuple(shape[i] for i in order), tuple(strides[i] for i in order))
    return kept, prod(kept), prod(shape[i] for i in axes), moved


@_memo
def permute(shape: Shape, strides: Strides, axes: tuple[int, ...], name: str) -> tuple[Shape, Strides]:
    """(shape, strides) with the axes in the order ``axes`` (normalised; each named once)."""
    ndim = len(shape)
    if len(axes) != ndim:
        raise ValueError(f"{name}: axes {tuple(axes)} must name each of the {ndim} axes exactly once.")
    ax = tuple(normalize_axis(a, ndim, name) for a in axes)
    if len(set(ax)) != ndim:
        raise ValueError(f"{name}: axes {tuple(axes)} must name each of the {ndim} axes exactly once.")
    return tuple(shape[a] for a in ax), tuple(strides[a] for a in ax)


@_memo
def move_axes(ndim: int, src: tuple[int, ...], dst: tuple[int, ...], name: str) -> tuple[int, ...]:
    """The axis order that moves axes ``src`` to positions ``dst`` (both normalised; NumPy's moveaxis)."""
    if len(src) != len(dst):
        raise ValueError(f"{name}: source and destination must have the same number of axes.")
    order = [a for a in range(ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return tuple(order)


@_memo
def squeeze(shape: Shape, strides: Strides, axes: tuple[int, ...]) -> tuple[Shape, Strides]:
    """(shape, strides) without the size-1 axes ``axes`` (normalised); another size raises."""
    for a in axes:
        if shape[a] != 1:
            raise ValueError(f"squeeze: cannot remove axis {a} of size {shape[a]}; only size-1 axes can be removed.")
    keep = [i for i in range(len(shape)) if i not in axes]
    return tuple(shape[i] for i in keep), tuple(strides[i] for i in keep)


@_memo
def expand(shape: Shape, strides: Strides, axes: tuple[int, ...]) -> tuple[Shape, Strides]:
    """(shape, strides) with size-1 axes inserted at ``axes`` (normalised positions in the result)."""
    new_shape, new_strides = list(shape), list(strides)
    for a in sorted(axes):
        new_shape.insert(a, 1)
        new_strides.insert(a, 0)
    return tuple(new_shape), tuple(new_strides)


@_memo
def reshape_strides(shape: Shape, strides: Strides, new_shape: Shape) -> Strides | None:
    """Strides that view ``shape`` as ``new_shape`` without copying, or None if impossible."""
    if prod(shape) == 0 or is_contiguous(shape, strides):
        return contiguous_strides(new_shape)
    # Drop size-1 axes, then match groups of old axes that are contiguous among themselves.
    old = [(n, s) for n, s in zip(shape, strides) if n != 1]
    new_strides = [0] * len(new_shape)
    oi = ni = 0
    while ni < len(new_shape) and oi <= len(old):
        if new_shape[ni] == 1:
            new_strides[ni] = 0
            ni += 1
            continue
        if oi == len(old):
            return None
        # Grow one group of old axes and one of new axes to equal element counts.
        oj, nj = oi + 1, ni + 1
        op, np_ = old[oi][0], new_shape[ni]
        while op != np_:
            if op < np_:
                if oj == len(old):
                    return None
                op *= old[oj][0]
                oj += 1
            else:
                if nj == len(new_shape):
                    return None
                np_ *= new_shape[nj]
                nj += 1
        for k in range(oi, oj - 1):
            if old[k][1] != old[k + 1][1] * old[k + 1][0]:
                return None
        acc = old[oj - 1][1]
        for k in range(nj - 1, ni - 1, -1):
            new_strides[k] = acc
            acc *= new_shape[k]
        oi, ni = oj, nj
    return tuple(new_strides) if oi == len(old) else None


def resolve_shape(shape: Sequence[int], size: int, name: str) -> Shape:
    """Fill in one ``-1`` and check that the element count matches."""
    if type(shape) is tuple:
        key = (shape, size)
        try:
            return _RESOLVED_CACHE[key]
        except (KeyError, TypeError):  # NOTE: TypeError: an unhashable entry, reported below
            pass
        out = _resolve_shape(shape, size, name)
        if len(_RESOLVED_CACHE) >= _CACHE_LIMIT:
            _RESOLVED_CACHE.clear()
        _RESOLVED_CACHE[key] = out
        return out
    return _resolve_shape(shape, size, name)


_RESOLVED_CACHE: dict[tuple[Any, int], Shape] = {}


def _resolve_shape(shape: Sequence[int], size: int, name: str) -> Shape:
    try:
        dims = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be a tuple of integers; got {shape!r}.") from None
    unknown = [i for i, n in enumerate(dims) if n == -1]
    if len(unknown) > 1 or any(n < -1 for n in dims):
        raise ValueError(f"{name}: invalid shape {dims}: at most one -1, other sizes >= 0.")
    if unknown:
        known = prod(n for n in dims if n != -1)
        if known == 0 or size % known:
            raise ValueError(f"{name}: cannot reshape an array of size {size} into shape {dims}.")
        dims = dims[: unknown[0]] + (size // known,) + dims[unknown[0] + 1 :]
    if prod(dims) != size:
        raise ValueError(f"{name}: cannot reshape an array of size {size} into shape {dims}.")
    return dims


def basic_index(
    shape: Shape, strides: Strides, offset: int, key: Any, name: str = "__getitem__"
) -> tuple[Shape, Strides, int]:
    """Apply a basic index (ints, slices, Ellipsis, None, a tuple of those) to a layout."""
    if type(key) is slice and shape:  # the common x[a:b:c]: straight to the answer
        start, stop, step = key.indices(shape[0])
        n = len(range(start, stop, step))
        # NOTE: a side of length <= 1 keeps the axis' stride, not step * stride: ones(5)[::2**62]
        # is one element, and a stride past the index range would overflow a backend's bytes.
        stride = strides[0] * step if n > 1 else strides[0]
        return (n,) + shape[1:], (stride,) + strides[1:], offset + start * strides[0] if n else offset
    if not isinstance(key, tuple):
        key = (key,)
    n_ellipsis = sum(1 for k in key if k is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError(f"{name}: an index can only have a single ellipsis ('...').")
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    ndim = len(shape)
    if consumed > ndim:
        raise IndexError(
            f"{name}: too many indices: the array has {ndim} dimension(s) but {consumed} were indexed."
        )
    out_shape: list[int] = []
    out_strides: list[int] = []
    dim = 0
    for k in key:
        if k is None:
            out_shape.append(1)
            out_strides.append(0)
        elif k is Ellipsis:
            for _ in range(ndim - consumed):
                out_shape.append(shape[dim])
                out_strides.append(strides[dim])
                dim += 1
        elif isinstance(k, slice):
            start, stop, step = k.indices(shape[dim])
            n = len(range(start, stop, step))
            if n:
                offset += start * strides[dim]
            out_shape.append(n)
            out_strides.append(strides[dim] * step if n > 1 else strides[dim])
            dim += 1
        else:
            try:
                i = operator.index(k)
            except TypeError:
                raise IndexError(
                    f"{name}: only integers, slices, ellipsis ('...'), None and integer or boolean "
                    f"arrays are valid indices; got {type(k).__name__}."
                ) from None
            n = shape[dim]
            if not -n <= i < n:
                raise IndexError(f"{name}: index {i} is out of bounds for axis {dim} with size {n}.")
            offset += (i % n) * strides[dim]
            dim += 1
    out_shape.extend(shape[dim:])
    out_strides.extend(strides[dim:])
    return tuple(out_shape), tuple(out_strides), offset


def flip(shape: Shape, strides: Strides, offset: int, axes: Sequence[int]) -> tuple[Strides, int]:
    st = list(strides)
    for a in axes:
        if shape[a] > 0:
            offset += (shape[a] - 1) * st[a]
        st[a] = -st[a]
    return tuple(st), offset


def diagonal(
    shape: Shape, strides: Strides, offset: int, k: int, axis1: int, axis2: int
) -> tuple[Shape, Strides, int]:
    n1, n2 = shape[axis1], shape[axis2]
    if k >= 0:
        n = max(0, min(n1, n2 - k))
        start = k * strides[axis2]
    else:
        n = max(0, min(n1 + k, n2))
        start = -k * strides[axis1]
    keep = [i for i in range(len(shape)) if i not in (axis1, axis2)]
    new_shape = tuple(shape[i] for i in keep) + (n,)
    new_strides = tuple(strides[i] for i in keep) + (strides[axis1] + strides[axis2],)
    return new_shape, new_strides, offset + (start if n else 0)
