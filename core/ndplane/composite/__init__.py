"""Generic algorithms written once over primitives, with optional fused backend kernels.

Each composite runs the backend's fused kernel when it declares ``"fused:<op>"``
(and the generic algorithm otherwise), and records one autograd node with a
cheap, stable VJP instead of differentiating through its pieces.

>>> import ndplane as nd
>>> from ndplane.composite import softmax, logsumexp
>>> softmax(nd.asarray([[0.0, 0.0]])).tolist(), float(logsumexp(nd.asarray([0.0, 0.0])))
([[0.5, 0.5]], 0.6931471805599453)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .. import _dispatch, _graph, _layout
from .. import _namespace as nd
from .._array import Array, check_array
from ..backend.base import Ref

__all__ = ["softmax", "log_softmax", "logsumexp", "layer_norm"]

from ._conv import conv2d

__all__ += ["conv2d"]


def _fused_rows(op: str, x: Array, out_cols: bool, inputs: tuple[Array | None, ...] = (),
                params: dict[str, Any] | None = None) -> Array | None:  # fmt: skip
    """Run ``backend.fused`` on ``x`` viewed as (M, K) along its last axis, if declared."""
    backend = x.device.backend
    if f"fused:{op}" not in backend.capabilities or x.dtype.kind != "float":
        return None
    k = x.shape[-1] if x.ndim else 1
    m = math.prod(x.shape[:-1])
    xc = _dispatch.compact(x)
    shape = x.shape if out_cols else x.shape[:-1]
    out = _dispatch.empty(shape, x.dtype, x.device, op)
    if out.size:
        xr = Ref(xc._ref.buffer, x.dtype, (m, k), (k, 1), xc._ref.offset, m * k, True)
        orr = Ref(out._ref.buffer, x.dtype, (m, k) if out_cols else (m,), (k, 1) if out_cols else (1,), 0,
                  out.size, True)  # fmt: skip
        keep: list[Array] = []
        extra = tuple(_dispatch.compact_ref(a, keep) if a is not None else None for a in inputs)
        backend.fused(op, (xr, *extra), orr, params or {})
    return out


def _last_axis(name: str, x: Array, axis: int, fn: Callable[[Array], Array]) -> Array:
    """Apply a last-axis algorithm along ``axis`` by moving it last (a view) and back."""
    check_array(name, x)
    if x.ndim == 0:
        return fn(nd.reshape(x, (1,)))[0] if name != "logsumexp" else fn(nd.reshape(x, (1,)))
    ax = _layout.normalize_axis(axis, x.ndim, name)
    if ax == x.ndim - 1:
        return fn(x)
    out = fn(nd.moveaxis(x, ax, -1))
    return nd.moveaxis(out, -1, ax) if out.ndim == x.ndim else out


def _floating(name: str, x: Array) -> Array:
    if x.dtype.kind not in ("float",):
        if x.dtype.kind == "complex":
            raise TypeError(f"{name}: only real floating-point dtypes are allowed; got {x.dtype.name}.")
        return nd.astype(x, x.device.backend.default_dtypes["real floating"])
    return x


def softmax(x: Array, /, axis: int = -1) -> Array:
    """``exp(x) / sum(exp(x))`` along ``axis``, computed stably (max subtracted).

    >>> import ndplane as nd
    >>> [round(v, 4) for v in softmax(nd.asarray([1.0, 2.0, 3.0])).tolist()]
    [0.09, 0.2447, 0.6652]
    """

    def rows(v: Array) -> Array:
        v = _floating("softmax", v)
        with _graph.no_grad():
            out = nd.empty_like(v) if v.shape[-1] == 0 else _fused_rows("softmax", v, True)
            if out is None:
                e = nd.exp(v - nd.max(v, axis=-1, keepdims=True))
                out = e / nd.sum(e, axis=-1, keepdims=True)
        return _graph.record("softmax", out, (v,), (out,)) if v.requires_grad else out

    return _last_axis("softmax", x, axis, rows)


def log_softmax(x: Array, /, axis: int = -1) -> Array:
    """``x - logsumexp(x)`` along ``axis``.

    >>> import ndplane as nd
    >>> [round(v, 4) for v in log_softmax(nd.asarray([0.0, 0.0])).tolist()]
    [-0.6931, -0.6931]
    """

    def rows(v: Array) -> Array:
        v = _floating("log_softmax", v)
        with _graph.no_grad():
            out = nd.empty_like(v) if v.shape[-1] == 0 else _fused_rows("log_softmax", v, True)
            if out is None:
                z = v - nd.max(v, axis=-1, keepdims=True)
                out = z - nd.log(nd.sum(nd.exp(z), axis=-1, keepdims=True))
        return _graph.record("log_softmax", out, (v,), (out,)) if v.requires_grad else out

    return _last_axis("log_softmax", x, axis, rows)


def logsumexp(x: Array, /, axis: int = -1, keepdims: bool = False) -> Array:
    """``log(sum(exp(x)))`` along ``axis`` without overflow.

    >>> import ndplane as nd
    >>> float(logsumexp(nd.asarray([1000.0, 1000.0])))
    1000.6931471805599
    """

    def rows(v: Array) -> Array:
        v = _floating("logsumexp", v)
        with _graph.no_grad():
            out: Array | None = (  # over an empty axis the log of an empty sum: -inf, as SciPy's and PyTorch's
                nd.full(v.shape[:-1], -math.inf, dtype=v.dtype, device=v.device) if v.shape[-1] == 0
                else _fused_rows("logsumexp", v, False)
            )  # fmt: skip
            if out is None:
                m = nd.max(v, axis=-1, keepdims=True)
                m = nd.where(nd.isfinite(m), m, 0.0)
                out = nd.log(nd.sum(nd.exp(v - m), axis=-1)) + nd.reshape(m, m.shape[:-1])
        return _graph.record("logsumexp", out, (v,), (v, out)) if v.requires_grad else out

    out = _last_axis("logsumexp", x, axis, rows)
    if keepdims and x.ndim:
        out = nd.expand_dims(out, axis=_layout.normalize_axis(axis, x.ndim, "logsumexp"))
    return out


def layer_norm(x: Array, /, weight: Array | None = None, bias: Array | None = None, eps: float = 1e-5) -> Array:
    """Normalise the last axis to zero mean and unit variance, then scale and shift.

    >>> import ndplane as nd
    >>> [round(v, 4) for v in layer_norm(nd.asarray([1.0, 2.0, 3.0])).tolist()]
    [-1.2247, 0.0, 1.2247]
    """
    check_array("layer_norm", x)
    x = _floating("layer_norm", x)
    k = x.shape[-1]
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and p.shape != (k,):
            raise ValueError(f"layer_norm: {name} must have shape ({k},); got {p.shape}.")
    with _graph.no_grad():
        out = _fused_rows("layer_norm", x, True, (weight, bias), {"eps": float(eps)})
        if out is None:
            mu = nd.mean(x, axis=-1, keepdims=True)
            xc = x - mu
            rstd = 1.0 / nd.sqrt(nd.mean(xc * xc, axis=-1, keepdims=True) + eps)
            out = xc * rstd
            if weight is not None:
                out = out * weight
            if bias is not None:
                out = out + bias
    if any(a is not None and a.requires_grad for a in (x, weight, bias)):
        _graph.record("layer_norm", out, (x, weight, bias), tuple(a for a in (x, weight) if a is not None),
                      (float(eps), weight is not None))  # fmt: skip
    return out


# ---------------------------------------------------------------------------
# VJP rules (registered into the autograd table)
# ---------------------------------------------------------------------------


def _softmax_vjp(g: Array, node: _graph.Node) -> tuple[Array]:
    (y,) = node.saved_values()
    return (y * (g - nd.sum(g * y, axis=-1, keepdims=True)),)


def _log_softmax_vjp(g: Array, node: _graph.Node) -> tuple[Array]:
    (y,) = node.saved_values()
    return (g - nd.exp(y) * nd.sum(g, axis=-1, keepdims=True),)


def _logsumexp_vjp(g: Array, node: _graph.Node) -> tuple[Array]:
    x, out = node.saved_values()
    return (nd.expand_dims(g, axis=-1) * nd.exp(x - nd.expand_dims(out, axis=-1)),)


def _layer_norm_vjp(g: Array, node: _graph.Node) -> tuple[Array | None, ...]:
    saved = node.saved_values()
    eps, has_weight = node.params
    x, weight = saved[0], (saved[1] if has_weight else None)
    ix, iw, ib = node.inputs
    mu = nd.mean(x, axis=-1, keepdims=True)
    xc = x - mu
    rstd = 1.0 / nd.sqrt(nd.mean(xc * xc, axis=-1, keepdims=True) + eps)
    xhat = xc * rstd
    lead = tuple(range(x.ndim - 1))
    gw = nd.sum(g * xhat, axis=lead) if iw is not None else None
    gb = nd.sum(g, axis=lead) if ib is not None else None
    gx = None
    if ix is not None:
        gh = g * weight if weight is not None else g
        gx = rstd * (gh - nd.mean(gh, axis=-1, keepdims=True) - xhat * nd.mean(gh * xhat, axis=-1, keepdims=True))
    return gx, gw, gb


_graph.RULES.update({
    "softmax": _softmax_vjp, "log_softmax": _log_softmax_vjp, "logsumexp": _logsumexp_vjp,
    "layer_norm": _layer_norm_vjp,
})  # fmt: skip
