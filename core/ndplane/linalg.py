"""The Array API ``linalg`` extension: ``ndplane.linalg``.

Factorisations and solvers (cholesky, qr, svd, svdvals, eigh, eigvalsh, solve, inv,
det, slogdet) are kernels of the optional ``"linalg"`` backend capability
(``Backend.linalg``); a backend without them runs them through the host fallback
with a :class:`~ndplane.FallbackWarning`. Everything else is a core composite over
primitives and those kernels, so every backend has it: norms, trace, diagonal,
outer, cross, matrix_power (repeated squaring), matrix_rank (svdvals), pinv (svd).
The kernels record autograd nodes (rules in :mod:`ndplane.autograd.rules_extra`);
``svdvals`` and ``eigvalsh`` are ``svd``/``eigh`` when a gradient is needed, since their
rules need the vectors.

>>> import ndplane as nd
>>> nd.linalg.det(nd.asarray([[2.0, 0.0], [0.0, 3.0]])), nd.linalg.outer(nd.arange(2), nd.arange(2)).shape
(Array(6., dtype=float64, device='numpy:0'), (2, 2))
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Sequence
from typing import NamedTuple

from . import _creation, _dispatch, _dtypes, _graph, _indexing, _layout, _searching, _statistical
from ._array import Array, check_array
from ._data_type_functions import finfo
from ._dtypes import DType
from ._linear_algebra_functions import matmul, tensordot, vecdot
from ._manipulation import broadcast_to, expand_dims, matrix_transpose, reshape, stack

__all__ = [
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm",
    "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve",
    "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
    "EighResult", "QRResult", "SlogdetResult", "SVDResult",
]  # fmt: skip


class EighResult(NamedTuple):
    """``eigh``'s result: ascending real eigenvalues and the eigenvectors (columns).

    >>> import ndplane as nd
    >>> w, v = nd.linalg.eigh(nd.asarray([[2.0, 0.0], [0.0, 1.0]]))
    >>> w.tolist(), nd.abs(v).tolist()
    ([1.0, 2.0], [[0.0, 1.0], [1.0, 0.0]])
    """

    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    """``qr``'s result: orthonormal ``Q`` and upper-triangular ``R``.

    >>> import ndplane as nd
    >>> a = nd.asarray([[3.0, 1.0], [4.0, 2.0]])
    >>> Q, R = nd.linalg.qr(a)
    >>> float(R[1, 0]), bool(nd.all(nd.abs(Q @ R - a) < 1e-12))
    (0.0, True)
    """

    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    """``slogdet``'s result: the sign (a unit complex number for complex input) and log|det|.

    >>> import ndplane as nd
    >>> sign, logabsdet = nd.linalg.slogdet(nd.asarray([[0.0, 1.0], [1.0, 0.0]]))
    >>> float(sign), float(logabsdet)
    (-1.0, 0.0)
    """

    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    """``svd``'s result: ``U``, descending singular values ``S`` and ``Vh``.

    >>> import ndplane as nd
    >>> U, S, Vh = nd.linalg.svd(nd.asarray([[0.0, 2.0], [1.0, 0.0]]))
    >>> S.tolist(), (U * S @ Vh).tolist()
    ([2.0, 1.0], [[0.0, 2.0], [1.0, 0.0]])
    """

    U: Array
    S: Array
    Vh: Array


# ---------------------------------------------------------------------------
# helpers: checks, dtypes, batching
# ---------------------------------------------------------------------------


def _matrices(name: str, x: Array, square: bool = False, floating: bool = True) -> Array:
    check_array(f"linalg.{name}", x)
    if x.ndim < 2:
        raise ValueError(f"linalg.{name}: expected an array of matrices (at least 2-D); got shape {x.shape}.")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"linalg.{name}: expected square matrices; got shape {x.shape}.")
    if floating and not x.dtype.is_floating:
        raise TypeError(f"linalg.{name}: only floating-point dtypes are allowed; got {x.dtype.name}.")
    return x


def _compute_dtype(dt: DType) -> DType:
    # NOTE: LAPACK has no half precision; float16 is computed in float32 and cast back.
    return _dtypes.float32 if dt is _dtypes.float16 else dt


def _kernel(op: str, x: Array, outputs: Sequence[tuple[tuple[int, ...], bool]],
            extra: tuple[Array, ...] = ()) -> tuple[Array, ...]:  # fmt: skip
    """Run the batched kernel ``op`` on ``x`` (..., M, N) (+ ``extra`` operands of the same
    batch); ``outputs`` are (per-matrix shape, real?) pairs; results carry ``x``'s batch."""
    batch = x.shape[:-2]
    nb = _layout.prod(batch)
    dt = x.dtype
    cdt = _compute_dtype(dt)
    ins = tuple(_as_batch(a, nb, cdt) for a in (x, *extra))
    specs = tuple(((nb, *shape), _dtypes.real_of(cdt) if real else cdt) for shape, real in outputs)
    outs = _dispatch.linalg(op, ins, specs)
    result = []
    for o, (shape, real) in zip(outs, outputs):
        o = reshape(o, batch + tuple(shape))
        want = _dtypes.real_of(dt) if real else dt
        result.append(o if o.dtype is want else _dispatch.cast(o, want))
    return tuple(result)


def _as_batch(a: Array, nb: int, dt: DType) -> Array:
    a = a if a.dtype is dt else _dispatch.cast(a, dt)
    return reshape(a, (nb, *a.shape[-2:]))


def _abs(x: Array) -> Array:
    return _dispatch.unary("abs", x) if x.dtype.kind in ("complex", "int", "float") else x


def _conj_t(x: Array) -> Array:
    t = matrix_transpose(x)
    return _dispatch.unary("conj", t) if t.dtype.kind == "complex" else t


# ---------------------------------------------------------------------------
# kernels of the "linalg" capability
# ---------------------------------------------------------------------------


def cholesky(x: Array, /, *, upper: bool = False) -> Array:
    """Cholesky factor of Hermitian positive-definite matrices (lower, or upper with ``upper=True``).

    >>> import ndplane as nd
    >>> nd.linalg.cholesky(nd.asarray([[4.0, 2.0], [2.0, 5.0]])).tolist()
    [[2.0, 0.0], [1.0, 2.0]]
    """
    x = _matrices("cholesky", x, square=True)
    (low,) = _kernel("cholesky", x, [(x.shape[-2:], False)])
    if x.requires_grad:
        _graph.record("linalg_cholesky", low, (x,), (low,))
    return _conj_t(low) if upper else low


def qr(x: Array, /, *, mode: str = "reduced") -> QRResult:
    """QR factorisation ``x = Q @ R`` of each matrix.

    ``mode="reduced"`` gives Q (..., M, K), R (..., K, N) with K = min(M, N);
    ``"complete"`` gives Q (..., M, M), R (..., M, N).

    >>> import ndplane as nd
    >>> q, r = nd.linalg.qr(nd.asarray([[3.0, 0.0], [4.0, 5.0]]))
    >>> [round(abs(float(v)), 6) for v in (r[0, 0], r[1, 1])]
    [5.0, 3.0]
    """
    x = _matrices("qr", x)
    if mode not in ("reduced", "complete"):
        raise ValueError(f"linalg.qr: mode must be 'reduced' or 'complete'; got {mode!r}.")
    m, n = x.shape[-2:]
    k = m if mode == "complete" else builtins.min(m, n)
    q, r = _kernel("qr", x, [((m, k), False), ((k, n), False)])
    if x.requires_grad:
        _graph.record_multi("linalg_qr", (q, r), (x,), (q, r))
    return QRResult(q, r)


def svd(x: Array, /, *, full_matrices: bool = True) -> SVDResult:
    """Singular value decomposition ``x = U @ diag(S) @ Vh`` (S descending, real).

    >>> import ndplane as nd
    >>> nd.linalg.svd(nd.asarray([[3.0, 0.0], [0.0, -4.0]])).S.tolist()
    [4.0, 3.0]
    """
    x = _matrices("svd", x)
    m, n = x.shape[-2:]
    k = builtins.min(m, n)
    ju, jv = (m, n) if full_matrices else (k, k)
    u, s, vh = _kernel("svd", x, [((m, ju), False), ((k,), True), ((jv, n), False)])
    if x.requires_grad:
        _graph.record_multi("linalg_svd", (u, s, vh), (x,), (u, s, vh))
    return SVDResult(u, s, vh)


def svdvals(x: Array, /) -> Array:
    """Singular values, descending (real dtype).

    >>> import ndplane as nd
    >>> nd.linalg.svdvals(nd.asarray([[0.0, 2.0], [1.0, 0.0]])).tolist()
    [2.0, 1.0]
    """
    x = _matrices("svdvals", x)
    m, n = x.shape[-2:]
    k = builtins.min(m, n)
    if not (x.requires_grad and _graph.is_grad_enabled()):
        return _kernel("svdvals", x, [((k,), True)])[0]
    # NOTE: the gradient U diag(gS) Vh needs the vectors: the reduced svd's node, so that the
    # vectors' own dependence on x is there for higher-order gradients too.
    return svd(x, full_matrices=False).S


def eigh(x: Array, /) -> EighResult:
    """Eigenvalues (ascending, real) and eigenvectors of Hermitian matrices (lower triangle read).

    >>> import ndplane as nd
    >>> nd.linalg.eigh(nd.asarray([[2.0, 1.0], [1.0, 2.0]])).eigenvalues.tolist()
    [1.0, 3.0]
    """
    x = _matrices("eigh", x, square=True)
    n = x.shape[-1]
    w, v = _kernel("eigh", x, [((n,), True), ((n, n), False)])
    if x.requires_grad:
        _graph.record_multi("linalg_eigh", (w, v), (x,), (w, v))
    return EighResult(w, v)


def eigvalsh(x: Array, /) -> Array:
    """Eigenvalues (ascending, real) of Hermitian matrices.

    >>> import ndplane as nd
    >>> nd.linalg.eigvalsh(nd.asarray([[2.0, 0.0], [0.0, -1.0]])).tolist()
    [-1.0, 2.0]
    """
    x = _matrices("eigvalsh", x, square=True)
    n = x.shape[-1]
    if not (x.requires_grad and _graph.is_grad_enabled()):
        return _kernel("eigvalsh", x, [((n,), True)])[0]
    # NOTE: the gradient V diag(gw) V^H needs the eigenvectors: eigh's node (see svdvals).
    return eigh(x).eigenvalues


def inv(x: Array, /) -> Array:
    """Inverse of square matrices.

    >>> import ndplane as nd
    >>> nd.linalg.inv(nd.asarray([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    x = _matrices("inv", x, square=True)
    out = _kernel("inv", x, [(x.shape[-2:], False)])[0]
    return _graph.record("linalg_inv", out, (x,), (out,)) if x.requires_grad else out


def slogdet(x: Array, /) -> SlogdetResult:
    """Sign and natural log of the absolute value of the determinant.

    >>> import ndplane as nd
    >>> s, l = nd.linalg.slogdet(nd.asarray([[0.0, 2.0], [1.0, 0.0]]))
    >>> float(s), round(float(l), 6)
    (-1.0, 0.693147)
    """
    x = _matrices("slogdet", x, square=True)
    sign, logabs = _kernel("slogdet", x, [((), False), ((), True)])
    if x.requires_grad:
        # NOTE: one node for both outputs: a complex sign (a phase) has a gradient too
        _graph.record_multi("linalg_slogdet", (sign, logabs), (x,), (x, sign))
    return SlogdetResult(sign, logabs)


def det(x: Array, /) -> Array:
    """Determinant of square matrices (the backend's kernel, else ``sign * exp(logabsdet)``).

    >>> import ndplane as nd
    >>> round(float(nd.linalg.det(nd.asarray([[1.0, 2.0], [3.0, 4.0]]))), 9)
    -2.0
    """
    x = _matrices("det", x, square=True)
    backend = x.device.backend
    if "det" not in backend.ops and "slogdet" in backend.ops:
        sign, logabs = slogdet(x)
        return _dispatch.binary("multiply", sign, _dispatch.unary("exp", logabs))
    out = _kernel("det", x, [((), False)])[0]
    return _graph.record("linalg_det", out, (x,), (x, out)) if x.requires_grad else out


def solve(x1: Array, x2: Array, /) -> Array:
    """Solve ``x1 @ result = x2``; ``x2`` is (M,) (one vector for every matrix) or (..., M, K).

    >>> import ndplane as nd
    >>> nd.linalg.solve(nd.asarray([[2.0, 0.0], [0.0, 4.0]]), nd.asarray([2.0, 2.0])).tolist()
    [1.0, 0.5]
    """
    x1 = _matrices("solve", x1, square=True)
    if type(x2) is not Array:
        raise TypeError(f"linalg.solve: expected an ndplane array for x2; got {type(x2).__name__}.")
    _dispatch.same_device("linalg.solve", x1, x2)
    dt = _dtypes.promote(x1.dtype, x2.dtype, "linalg.solve")
    if not dt.is_floating:
        raise TypeError(f"linalg.solve: only floating-point dtypes are allowed; got {dt.name}.")
    m = x1.shape[-1]
    vector = x2.ndim == 1
    b = reshape(x2, (m, 1)) if vector and x2.shape[0] == m else x2
    if b.ndim < 2 or b.shape[-2] != m:
        raise ValueError(f"linalg.solve: x2 of shape {x2.shape} does not match x1 of shape {x1.shape}.")
    batch = _layout.broadcast_shapes(x1.shape[:-2], b.shape[:-2], name="linalg.solve")
    a = broadcast_to(x1 if x1.dtype is dt else _dispatch.cast(x1, dt), batch + (m, m))
    b = broadcast_to(b if b.dtype is dt else _dispatch.cast(b, dt), batch + b.shape[-2:])
    (out,) = _kernel("solve", a, [(b.shape[-2:], False)], (b,))
    if a.requires_grad or b.requires_grad:
        _graph.record("linalg_solve", out, (a, b), (a, out))
    return reshape(out, batch + (m,)) if vector else out


# ---------------------------------------------------------------------------
# composites
# ---------------------------------------------------------------------------


def diagonal(x: Array, /, *, offset: int = 0) -> Array:
    """The ``offset``-th diagonal of each matrix (a view; a gather when a gradient is needed).

    >>> import ndplane as nd
    >>> nd.linalg.diagonal(nd.arange(9).reshape((3, 3)), offset=1).tolist()
    [1, 5]
    """
    x = _matrices("diagonal", x, floating=False)
    r = x._ref
    nd_ = x.ndim
    shape, strides, off = _layout.diagonal(r.shape, r.strides, r.offset, int(offset), nd_ - 2, nd_ - 1)
    if not x.requires_grad:
        return _dispatch.view_as(x, shape, strides, off)

    m, n = x.shape[-2:]
    k = shape[-1]
    rows = _creation.arange(k, device=x.device)
    start = offset if offset >= 0 else -offset * n
    flat = _dispatch.binary("add", _dispatch.binary("multiply", rows, n + 1), start)
    return _indexing.take(reshape(x, x.shape[:-2] + (m * n,)), flat, axis=-1)


def trace(x: Array, /, *, offset: int = 0, dtype: DType | None = None) -> Array:
    """Sum of the ``offset``-th diagonal of each matrix (accumulated as ``sum`` does).

    >>> import ndplane as nd
    >>> nd.linalg.trace(nd.arange(9).reshape((3, 3)))
    Array(12, dtype=int64, device='numpy:0')
    """

    x = _matrices("trace", x, floating=False)
    return _statistical.sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def outer(x1: Array, x2: Array, /) -> Array:
    """Outer product of two vectors.

    >>> import ndplane as nd
    >>> nd.linalg.outer(nd.asarray([1, 2]), nd.asarray([3, 4, 5])).tolist()
    [[3, 4, 5], [6, 8, 10]]
    """
    for a in (x1, x2):
        if type(a) is not Array or a.ndim != 1:
            raise ValueError("linalg.outer: expected two 1-D ndplane arrays.")
    return _dispatch.binary("multiply", reshape(x1, (x1.shape[0], 1)), reshape(x2, (1, x2.shape[0])))


def cross(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Cross product of 3-element vectors along ``axis`` (other axes broadcast).

    >>> import ndplane as nd
    >>> nd.linalg.cross(nd.asarray([1, 0, 0]), nd.asarray([0, 1, 0])).tolist()
    [0, 0, 1]
    """
    if type(x1) is not Array or type(x2) is not Array:
        raise TypeError("linalg.cross: expected ndplane arrays.")
    if not -builtins.min(x1.ndim, x2.ndim) <= axis < 0:
        raise ValueError(f"linalg.cross: axis must be in [-{builtins.min(x1.ndim, x2.ndim)}, -1]; got {axis}.")
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(f"linalg.cross: the axis {axis} must have size 3; got {x1.shape} and {x2.shape}.")
    if x1.dtype.kind == "bool" or x2.dtype.kind == "bool":
        raise TypeError("linalg.cross: only numeric dtypes are allowed.")
    shape = _layout.broadcast_shapes(x1.shape, x2.shape, name="linalg.cross")
    fused = _dispatch.fused_cross(x1, x2, shape, axis)
    if fused is not None:
        return fused
    a = [_component(x1, axis, i) for i in range(3)]
    b = [_component(x2, axis, i) for i in range(3)]
    mul, sub = (lambda p, q: _dispatch.binary("multiply", p, q)), (lambda p, q: _dispatch.binary("subtract", p, q))
    parts = [sub(mul(a[1], b[2]), mul(a[2], b[1])), sub(mul(a[2], b[0]), mul(a[0], b[2])),
             sub(mul(a[0], b[1]), mul(a[1], b[0]))]  # fmt: skip
    rest = shape[:axis] + (shape[axis + 1 :] if axis != -1 else ())
    return stack([broadcast_to(p, rest) for p in parts], axis=axis)


def _component(x: Array, axis: int, i: int) -> Array:
    key = (Ellipsis, i) + (slice(None),) * (-axis - 1)
    return x[key]


def matrix_power(x: Array, n: int, /) -> Array:
    """``x`` multiplied by itself ``n`` times (``n < 0``: powers of the inverse; 0: identity).

    >>> import ndplane as nd
    >>> nd.linalg.matrix_power(nd.asarray([[1, 1], [0, 1]]), 3).tolist()
    [[1, 3], [0, 1]]
    """
    x = _matrices("matrix_power", x, square=True, floating=False)
    n = operator.index(n)
    if n == 0:
        return _dispatch.copy_of(broadcast_to(_creation.eye(x.shape[-1], dtype=x.dtype, device=x.device), x.shape))
    if n < 0:
        x, n = inv(x), -n
    result = None
    base = x
    while True:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            break
        base = matmul(base, base)
    assert result is not None  # n >= 1 has a set bit
    return _dispatch.copy_of(result) if result is x else result


def matrix_rank(x: Array, /, *, rtol: float | Array | None = None) -> Array:
    """Number of singular values above ``rtol * largest`` (default ``rtol``: _statistical.max(M, N) * eps).

    >>> import ndplane as nd
    >>> nd.linalg.matrix_rank(nd.asarray([[1.0, 2.0], [2.0, 4.0]]))
    Array(1, dtype=int64, device='numpy:0')
    """

    x = _matrices("matrix_rank", x)
    index = x.device.backend.default_dtypes["integral"]
    if builtins.min(x.shape[-2:]) == 0:
        return _creation.zeros(x.shape[:-2], dtype=index, device=x.device)
    s = svdvals(x)
    tol = _tolerance(x, s, rtol, _statistical.max(s, axis=-1, keepdims=True))
    return _statistical.sum(_dispatch.binary("greater", s, tol), axis=-1, dtype=index)


def _tolerance(x: Array, s: Array, rtol: float | Array | None, smax: Array) -> Array:
    if rtol is None:
        rtol = builtins.max(x.shape[-2:]) * finfo(s.dtype).eps
    elif type(rtol) is Array:
        rtol = expand_dims(rtol if rtol.dtype is s.dtype else _dispatch.cast(rtol, s.dtype), axis=-1)
    return _dispatch.binary("multiply", smax, rtol)


def pinv(x: Array, /, *, rtol: float | Array | None = None) -> Array:
    """Moore-Penrose pseudo-inverse via the SVD, singular values below ``rtol * largest`` dropped.

    >>> import ndplane as nd
    >>> nd.linalg.pinv(nd.asarray([[2.0, 0.0], [0.0, 0.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """

    x = _matrices("pinv", x)
    m, n = x.shape[-2:]
    if builtins.min(m, n) == 0:
        return _creation.zeros(x.shape[:-2] + (n, m), dtype=x.dtype, device=x.device)
    u, s, vh = svd(x, full_matrices=False)
    tol = _tolerance(x, s, rtol, _statistical.max(s, axis=-1, keepdims=True))
    keep = _dispatch.binary("greater", s, tol)

    s_inv = _searching.where(keep, _dispatch.binary("divide", 1.0, _searching.where(keep, s, 1.0)), 0.0)
    s_inv = s_inv if s_inv.dtype is x.dtype else _dispatch.cast(s_inv, x.dtype)
    v_scaled = _dispatch.binary("multiply", _conj_t(vh), expand_dims(s_inv, axis=-2))
    return matmul(v_scaled, _conj_t(u))


def matrix_norm(x: Array, /, *, keepdims: bool = False, ord: int | float | str | None = "fro") -> Array:
    """Matrix norm over the last two axes: ``'fro'``, ``'nuc'``, 1, -1, 2, -2, inf, -inf.

    >>> import ndplane as nd
    >>> float(nd.linalg.matrix_norm(nd.asarray([[3.0, 0.0], [0.0, 4.0]])))
    5.0
    """

    x = _matrices("matrix_norm", x)
    ax = (-2, -1)
    if ord is None or ord == "fro":
        out = _dispatch.unary("sqrt", _sum_squares(x, ax, keepdims, "linalg.matrix_norm"))
    elif ord == "nuc" or ord in (2, -2):
        s = svdvals(x)
        if ord == "nuc":
            out = _statistical.sum(s, axis=-1)
        else:
            out = (_statistical.max if ord == 2 else _statistical.min)(s, axis=-1)
        if keepdims:
            out = reshape(out, out.shape + (1, 1))
    elif ord in (1, -1, math.inf, -math.inf):
        inner, outer = (-2, -1) if ord in (1, -1) else (-1, -2)
        sums = _statistical.sum(_abs(x), axis=inner, keepdims=True)
        out = (_statistical.max if ord > 0 else _statistical.min)(sums, axis=outer, keepdims=True)
        if not keepdims:
            out = reshape(out, out.shape[:-2])
    else:
        raise ValueError(f"linalg.matrix_norm: unsupported ord {ord!r}; use 'fro', 'nuc', 1, -1, 2, -2, inf or -inf.")
    want = _dtypes.real_of(x.dtype)
    return out if out.dtype is want else _dispatch.cast(out, want)


def _sum_squares(x: Array, axis: int | tuple[int, ...] | None, keepdims: bool, name: str) -> Array:
    """The sum of ``|x|**2`` over ``axis``: real ``x`` squared as it is (no ``abs`` pass)."""
    return _statistical.sum_squares(_abs(x) if x.dtype.kind == "complex" else x, axis, keepdims, name)


def vector_norm(x: Array, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False,
                ord: int | float = 2) -> Array:  # fmt: skip
    """Vector p-norm over ``axis`` (all axes by default).

    ``(sum |x|**ord) ** (1/ord)``, with ``ord`` 0 (count of nonzeros), inf (max |x|) and
    -inf (min |x|) too.

    >>> import ndplane as nd
    >>> float(nd.linalg.vector_norm(nd.asarray([3.0, -4.0]))), float(nd.linalg.vector_norm(nd.asarray([3.0, -4.0]), ord=1))
    (5.0, 7.0)
    """

    check_array("linalg.vector_norm", x)
    if not x.dtype.is_floating:
        raise TypeError(f"linalg.vector_norm: only floating-point dtypes are allowed; got {x.dtype.name}.")
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"linalg.vector_norm: ord must be a number; got {ord!r}.")
    if ord == 2:
        return _dispatch.unary("sqrt", _sum_squares(x, axis, keepdims, "linalg.vector_norm"))
    a = _abs(x)
    if ord == math.inf or ord == -math.inf:
        if a.size == 0:
            raise ValueError("linalg.vector_norm: ord=+-inf of an empty array is undefined.")
        return (_statistical.max if ord > 0 else _statistical.min)(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        nz = _dispatch.binary("not_equal", a, 0.0)
        return _statistical.sum(_dispatch.cast(nz, a.dtype), axis=axis, keepdims=keepdims)
    if ord == 1:
        return _statistical.sum(a, axis=axis, keepdims=keepdims)
    p = float(ord)
    total = _statistical.sum(_dispatch.binary("pow", a, p), axis=axis, keepdims=keepdims)
    return _dispatch.binary("pow", total, 1.0 / p)
