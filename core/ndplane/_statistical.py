"""Statistical functions (Array API chapter).

Reductions over any axes reach a backend as one reduction over the last axis
of a 2-D (M, K) operand: the core moves the reduced axes last (a view) and
merges them (a view where strides allow, else a compaction).
"""

from __future__ import annotations

from collections.abc import Sequence

from . import _creation, _dispatch, _dtypes, _graph, _layout, _manipulation
from ._array import Array, check_array
from ._dispatch import view_as
from ._dtypes import DType, as_dtype

__all__ = ["sum", "prod", "max", "min", "mean", "var", "std", "cumulative_sum", "cumulative_prod"]

Axis = int | Sequence[int] | None


def reduction(op: str, x: Array, axis: Axis, keepdims: bool, result: DType, name: str) -> Array:
    """The one wrapper of every reduction: axes, the kernel, keepdims."""
    axes = _layout.normalize_axes(axis, x.ndim, name)
    out = _dispatch.reduce(op, x, axes, result)
    if keepdims:
        shape = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
        out = view_as(out, shape, _layout.contiguous_strides(shape), 0)
    if x.requires_grad:
        saved = () if op == "sum" else (x, out)
        _graph.record(op, out, (x,), saved, (x.shape, axes, keepdims))
    return out


def accumulator_dtype(x: Array, dtype: DType | None, name: str) -> DType:
    """sum/prod/cumulative result dtype: small integers widen to the default integer of their
    signedness, as the Array API asks; floats keep their dtype."""
    if dtype is not None:
        return as_dtype(dtype, name)
    d = x.dtype
    if d.kind == "float" or d.kind == "complex":
        return d
    default_int = x.device.backend.default_dtypes["integral"]
    if d.kind in ("bool", "int"):
        return d if d.kind == "int" and d.itemsize >= default_int.itemsize else default_int
    if d.kind == "uint":
        wide = _dtypes.BY_NAME["uint" + default_int.name[3:]]
        return d if d.itemsize >= wide.itemsize else wide
    return d


def sum(x: Array, /, *, axis: Axis = None, dtype: DType | None = None, keepdims: bool = False) -> Array:
    """Sum over ``axis`` (all axes by default); small integers accumulate in the default integer.

    >>> import ndplane as nd
    >>> x = nd.asarray([[1, 2], [3, 4]])
    >>> nd.sum(x), nd.sum(x, axis=0).tolist(), nd.sum(x, axis=1, keepdims=True).shape
    (Array(10, dtype=int64, device='numpy:0'), [4, 6], (2, 1))
    """
    check_array("sum", x)
    return reduction("sum", x, axis, keepdims, accumulator_dtype(x, dtype, "sum"), "sum")


def prod(x: Array, /, *, axis: Axis = None, dtype: DType | None = None, keepdims: bool = False) -> Array:
    """Product over ``axis``.

    >>> import ndplane as nd
    >>> nd.prod(nd.asarray([1.5, 2.0, 4.0]))
    Array(12., dtype=float64, device='numpy:0')
    """
    check_array("prod", x)
    return reduction("prod", x, axis, keepdims, accumulator_dtype(x, dtype, "prod"), "prod")


def _real(name: str, x: Array) -> None:
    if x.dtype.kind == "complex":
        raise TypeError(f"{name}: complex dtypes have no order; got {x.dtype.name}.")


def max(x: Array, /, *, axis: Axis = None, keepdims: bool = False) -> Array:
    """Maximum over ``axis``; NaN propagates.

    >>> import ndplane as nd
    >>> nd.max(nd.asarray([[1, 5], [7, 2]]), axis=1).tolist()
    [5, 7]
    """
    check_array("max", x)
    _real("max", x)
    return reduction("max", x, axis, keepdims, x.dtype, "max")


def min(x: Array, /, *, axis: Axis = None, keepdims: bool = False) -> Array:
    """Minimum over ``axis``; NaN propagates.

    >>> import ndplane as nd
    >>> nd.min(nd.asarray([3.0, -1.0, 2.0]))
    Array(-1., dtype=float64, device='numpy:0')
    """
    check_array("min", x)
    _real("min", x)
    return reduction("min", x, axis, keepdims, x.dtype, "min")


def _floating(x: Array) -> Array:
    if x.dtype.is_floating:
        return x
    return _dispatch.cast(x, x.device.backend.default_dtypes["real floating"])


def sum_squares(x: Array, axis: Axis, keepdims: bool, name: str, centre: Array | None = None) -> Array:
    """The sum of ``(x - centre)**2`` over ``axis`` for real floating ``x``: ``centre`` has
    ``x``'s dtype and one value per reduced row (the result's shape with ``keepdims``), or is
    None for 0. One pass through the backend's ``fused:sumsq`` where it has one and no gradient
    is recorded, else ``subtract``, ``square`` and ``sum`` (the rule the gradient follows)."""
    axes = _layout.normalize_axes(axis, x.ndim, name)
    fused = "fused:sumsq" in x._storage.backend.capabilities
    if fused and not x.requires_grad and (centre is None or not centre.requires_grad):
        split = _dispatch.split_reduction(x, axes) if x.dtype is not _dtypes.float16 else None
        if split is None:
            out = _dispatch.fused_reduce("sumsq", x, axes, x.dtype, rows=() if centre is None else (centre,))
        else:
            # NOTE: the innermost run of axes first, each of its rows with its own centre (the
            # centres broadcast over the rest), then a sum: no copy of x (see split_reduction)
            first, rest = split
            kept = tuple(n for i, n in enumerate(x.shape) if i not in first)
            rows: tuple[Array, ...] = ()
            if centre is not None:
                ones = tuple(1 if i in axes else n for i, n in enumerate(x.shape) if i not in first)
                rows = (_manipulation.broadcast_to(_manipulation.reshape(centre, ones), kept),)
            part = _dispatch.fused_reduce("sumsq", x, first, x.dtype, rows=rows)
            out = _dispatch.reduce("sum", part, rest, x.dtype)
        if keepdims:
            shape = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
            out = view_as(out, shape, _layout.contiguous_strides(shape), 0)
        return out
    dev = x if centre is None else _dispatch.binary("subtract", x, centre)
    return reduction("sum", _dispatch.unary("square", dev), axis, keepdims, x.dtype, name)


def _count(x: Array, axis: Axis, name: str) -> int:
    return _layout.prod(x.shape[a] for a in _layout.normalize_axes(axis, x.ndim, name))


def mean(x: Array, /, *, axis: Axis = None, keepdims: bool = False) -> Array:
    """Arithmetic mean over ``axis`` (integers are averaged in the default floating dtype).

    >>> import ndplane as nd
    >>> nd.mean(nd.asarray([[1, 2], [3, 4]]), axis=0).tolist()
    [2.0, 3.0]
    """
    check_array("mean", x)
    xf = _floating(x)
    total = reduction("sum", xf, axis, keepdims, xf.dtype, "mean")
    n = _count(x, axis, "mean")
    return _dispatch.binary("divide", total, float(n) if n else float("nan"))


def var(
    x: Array, /, *, axis: Axis = None, correction: int | float = 0.0, keepdims: bool = False
) -> Array:
    """Variance over ``axis``: ``sum(|x - mean|**2) / (N - correction)``; NaN where ``N -
    correction <= 0``.

    >>> import ndplane as nd
    >>> nd.var(nd.asarray([1.0, 2.0, 3.0, 4.0]), correction=1)
    Array(1.66666667, dtype=float64, device='numpy:0')
    """
    check_array("var", x)
    if x.dtype.kind == "complex":
        raise TypeError(f"var: only real dtypes are allowed; got {x.dtype.name}.")
    _, v = moments(_floating(x), axis, correction, keepdims, "var")
    return v


def moments(x: Array, axis: Axis, correction: int | float, keepdims: bool, name: str) -> tuple[Array, Array]:
    """The mean (its reduced axes kept, the shape a centre needs) and the variance ``sum(|x -
    mean|**2) / (N - correction)`` over ``axis`` of real floating ``x``, the deviations summed in
    one pass around the mean; NaN where ``N - correction <= 0``. ``var`` and training
    ``batch_norm`` both take their statistics from here."""
    if x.dtype is _dtypes.float16:
        # NOTE: as NumPy, the mean and the deviations in float32, each result rounded once: a
        # float16 mean is off by up to half an ulp, and the variance of equal values was not 0
        mu, v = moments(_dispatch.cast(x, _dtypes.float32), axis, correction, keepdims, name)
        return _dispatch.cast(mu, _dtypes.float16), _dispatch.cast(v, _dtypes.float16)
    mu = reduction("sum", x, axis, True, x.dtype, name)
    n = _count(x, axis, name)
    mu = _dispatch.binary("divide", mu, float(n) if n else float("nan"))
    total = sum_squares(x, axis, keepdims, name, centre=mu)
    # NOTE: NaN where N - correction <= 0, as the Array API specifies (NumPy divides by 0 there:
    # inf, or NaN for equal values, whose squared deviations may not sum to exactly 0)
    denom = n - correction
    return mu, _dispatch.binary("divide", total, float(denom) if denom > 0 else float("nan"))


def std(
    x: Array, /, *, axis: Axis = None, correction: int | float = 0.0, keepdims: bool = False
) -> Array:
    """Standard deviation over ``axis``: ``sqrt(var(x, correction=...))``.

    >>> import ndplane as nd
    >>> nd.std(nd.asarray([1.0, 3.0]))
    Array(1., dtype=float64, device='numpy:0')
    """
    # NOTE: check here so errors name std, not the var it is computed with.
    check_array("std", x)
    if x.dtype.kind == "complex":
        raise TypeError(f"std: only real dtypes are allowed; got {x.dtype.name}.")
    _layout.normalize_axes(axis, x.ndim, "std")
    return _dispatch.unary("sqrt", var(x, axis=axis, correction=correction, keepdims=keepdims))


def _cumulative(op: str, x: Array, axis: int | None, dtype: DType | None, include_initial: bool) -> Array:
    check_array(op, x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{op}: axis is required for a {x.ndim}-D array.")
        if x.ndim == 0:
            raise ValueError(f"{op}: x must have at least one dimension.")
        axis = 0
    ax = _layout.normalize_axis(axis, x.ndim, op)
    result = accumulator_dtype(x, dtype, op)
    out = _dispatch.scan(op, x, ax, result)
    if x.requires_grad:
        _graph.record(op, out, (x,), () if op == "cumulative_sum" else (x, out), (ax,))
    if include_initial:
        shape = x.shape[:ax] + (1,) + x.shape[ax + 1 :]
        first = _creation.full(shape, 0 if op == "cumulative_sum" else 1, dtype=result, device=x.device)
        out = _manipulation.concat([first, out], axis=ax)
    return out


def cumulative_sum(
    x: Array, /, *, axis: int | None = None, dtype: DType | None = None, include_initial: bool = False
) -> Array:
    """Cumulative sum along ``axis``.

    >>> import ndplane as nd
    >>> nd.cumulative_sum(nd.asarray([1, 2, 3]), include_initial=True).tolist()
    [0, 1, 3, 6]
    """
    return _cumulative("cumulative_sum", x, axis, dtype, include_initial)


def cumulative_prod(
    x: Array, /, *, axis: int | None = None, dtype: DType | None = None, include_initial: bool = False
) -> Array:
    """Cumulative product along ``axis``.

    >>> import ndplane as nd
    >>> nd.cumulative_prod(nd.asarray([1, 2, 3, 4])).tolist()
    [1, 2, 6, 24]
    """
    return _cumulative("cumulative_prod", x, axis, dtype, include_initial)
