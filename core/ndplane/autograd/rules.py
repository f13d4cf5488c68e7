"""Vector-Jacobian products, written with core ops so every backend gets gradients.

Each rule takes the output's gradient ``g`` and the recorded node and returns
one gradient per input (``None`` for no gradient).  Binary rules return
gradients of the broadcast shape; :func:`unbroadcast` sums them back to each
input's shape.  Complex inputs follow PyTorch's convention (the gradient is
the conjugate Wirtinger derivative), which is why ``conj`` appears below; for
real dtypes it is skipped.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .. import _dispatch
from .. import _namespace as nd
from .._graph import NEEDS_OUT, NO_SAVE, RULES, Node, record
from .._subscript import _basic_view

Rule = Callable[[Any, Node], Any]


def _c(x: Any) -> Any:
    """The complex conjugate of a complex array or Python scalar (anything else as it is)."""
    if type(x) is nd.Array:
        return nd.conj(x) if x.dtype.kind == "complex" else x
    return x.conjugate() if type(x) is complex else x


def unbroadcast(g: nd.Array, shape: tuple[int, ...]) -> nd.Array:
    """Sum ``g`` over the axes that broadcasting added or stretched to reach ``shape``."""
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    stretched = tuple(lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    if not stretched:  # only leading axes were added: their sum has ``shape`` already
        return nd.sum(g, axis=tuple(range(lead)))
    s = nd.sum(g, axis=tuple(range(lead)) + stretched, keepdims=True)
    return nd.reshape(s, shape)


def _unary(fn: Callable[[Any, Any, Any], Any]) -> Rule:
    """A rule from ``fn(g, x, out)`` (see :func:`ndplane.autograd.graph.record_elementwise`)."""

    def rule(g: Any, node: Node) -> tuple[Any]:
        x, out = node.operands()
        return (fn(g, x, out),)

    return rule


def _binary(fa: Callable[..., Any] | None, fb: Callable[..., Any] | None) -> Rule:
    """A rule from ``fa(g, a, b, out)`` and ``fb(...)``; gradients summed back to each input's shape."""

    def rule(g: Any, node: Node) -> tuple[Any, Any]:
        a, b, out = node.operands()
        ia, ib = node.inputs
        ga = unbroadcast(fa(g, a, b, out), ia.shape) if ia is not None and fa is not None else None
        gb = unbroadcast(fb(g, a, b, out), ib.shape) if ib is not None and fb is not None else None
        return ga, gb

    return rule


_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_zero = None  # marker: no gradient flows (piecewise-constant functions)

UNARY_RULES: dict[str, Callable[[Any, Any, Any], Any] | None] = {
    "negative": lambda g, x, o: -g,
    "positive": lambda g, x, o: g,
    "conj": lambda g, x, o: nd.conj(g),
    # NOTE: complex abs: g * sgn(x), sgn(x) = x / |x| (0 at 0), not conjugated (PyTorch's rule)
    "abs": lambda g, x, o: g * nd.where(o == 0, 0, x / nd.where(o == 0, 1, o)) if x.dtype.kind == "complex"
    else g * nd.sign(x),
    "exp": lambda g, x, o: g * _c(o),
    "expm1": lambda g, x, o: g * _c(o + 1),
    "log": lambda g, x, o: g / _c(x),
    "log1p": lambda g, x, o: g / _c(x + 1),
    "log2": lambda g, x, o: g / (_c(x) * _LN2),
    "log10": lambda g, x, o: g / (_c(x) * _LN10),
    "sqrt": lambda g, x, o: g / (2 * _c(o)),
    "square": lambda g, x, o: g * 2 * _c(x),
    "reciprocal": lambda g, x, o: -g * _c(o * o),
    "sin": lambda g, x, o: g * _c(nd.cos(x)),
    "cos": lambda g, x, o: -g * _c(nd.sin(x)),
    "tan": lambda g, x, o: g * _c(1 + o * o),
    "sinh": lambda g, x, o: g * _c(nd.cosh(x)),
    "cosh": lambda g, x, o: g * _c(nd.sinh(x)),
    "tanh": lambda g, x, o: g * _c(1 - o * o),
    "asin": lambda g, x, o: g / _c(nd.sqrt(1 - x * x)),
    "acos": lambda g, x, o: -g / _c(nd.sqrt(1 - x * x)),
    "atan": lambda g, x, o: g / _c(1 + x * x),
    "asinh": lambda g, x, o: g / _c(nd.sqrt(x * x + 1)),
    "acosh": lambda g, x, o: g / _c(nd.sqrt(x * x - 1)),
    "atanh": lambda g, x, o: g / _c(1 - x * x),
    "real": lambda g, x, o: nd.astype(g, x.dtype) if x.dtype.kind == "complex" else g,
    "imag": lambda g, x, o: nd.astype(g, x.dtype) * 1j if x.dtype.kind == "complex" else g * 0,
    "sign": _zero, "floor": _zero, "ceil": _zero, "round": _zero, "trunc": _zero,
}  # fmt: skip


def _maxmin_a(g: Any, a: Any, b: Any, o: Any) -> Any:
    # NOTE: ties split the gradient evenly, as PyTorch does for maximum/minimum.
    return g * nd.where(a == b, 0.5, nd.where(a == o, 1.0, 0.0))


def _maxmin_b(g: Any, a: Any, b: Any, o: Any) -> Any:
    return g * nd.where(a == b, 0.5, nd.where(b == o, 1.0, 0.0))


def _pow_a(g: Any, a: Any, b: Any, o: Any) -> Any:
    return g * _c(b * nd.where(b == 0, 1, a) ** nd.where(b == 0, 1, b - 1)) if type(b) is nd.Array else g * _c(
        b * a ** (b - 1) if b != 0 else a * 0
    )


def _pow_b(g: Any, a: Any, b: Any, o: Any) -> Any:
    safe = nd.where(a == 0, 1, a) if type(a) is nd.Array else (a if a != 0 else 1)
    return g * _c(o * nd.log(safe) if type(safe) is nd.Array else o * math.log(safe))


def _copysign_a(g: Any, a: Any, b: Any, o: Any) -> Any:
    return g * nd.where(nd.signbit(a) == nd.signbit(o), 1.0, -1.0)


BINARY_RULES: dict[str, tuple[Callable[..., Any] | None, Callable[..., Any] | None]] = {
    "add": (lambda g, a, b, o: g, lambda g, a, b, o: g),
    "subtract": (lambda g, a, b, o: g, lambda g, a, b, o: -g),
    "multiply": (lambda g, a, b, o: g * _c(b), lambda g, a, b, o: g * _c(a)),
    "divide": (lambda g, a, b, o: g / _c(b), lambda g, a, b, o: -g * _c(o / b)),
    "pow": (_pow_a, _pow_b),
    "maximum": (_maxmin_a, _maxmin_b),
    "minimum": (_maxmin_a, _maxmin_b),
    "atan2": (lambda g, a, b, o: g * b / (a * a + b * b), lambda g, a, b, o: -g * a / (a * a + b * b)),
    "hypot": (lambda g, a, b, o: g * a / o, lambda g, a, b, o: g * b / o),
    "logaddexp": (lambda g, a, b, o: g * nd.exp(a - o), lambda g, a, b, o: g * nd.exp(b - o)),
    "copysign": (_copysign_a, None),
    "remainder": (lambda g, a, b, o: g, lambda g, a, b, o: -g * nd.floor_divide(a, b)),
    "floor_divide": (None, None),
    "nextafter": (None, None),
}


#: Rules that read neither operand nor output: an in-place change of an input is harmless.
NO_SAVE.update({"negative", "positive", "conj", "add", "subtract", "sign", "floor", "ceil", "round", "trunc",
                "floor_divide", "nextafter"})  # fmt: skip
NEEDS_OUT.update({"abs", "exp", "expm1", "sqrt", "reciprocal", "tan", "tanh", "divide", "pow", "maximum",
                  "minimum", "hypot", "logaddexp", "copysign"})  # fmt: skip


def _install() -> None:
    for name, fn in UNARY_RULES.items():
        RULES[name] = _unary(fn) if fn is not None else (lambda g, node: (None,))
    for name, (fa, fb) in BINARY_RULES.items():
        RULES[name] = _binary(fa, fb)
    RULES.update(OTHER_RULES)


def _where(g: Any, node: Node) -> tuple[Any, Any, Any]:
    (cond,) = node.saved_values()
    _, ia, ib = node.inputs
    zero = nd.zeros((), dtype=g.dtype, device=g.device)
    ga = unbroadcast(nd.where(cond, g, zero), ia.shape) if ia is not None else None
    gb = unbroadcast(nd.where(cond, zero, g), ib.shape) if ib is not None else None
    return None, ga, gb


def _cast(g: Any, node: Node) -> tuple[Any]:
    (src,) = node.inputs
    if src.dtype.kind != "complex" and g.dtype.kind == "complex":
        g = nd.real(g)
    return (nd.astype(g, src.dtype),)


def _matmul(g: Any, node: Node) -> tuple[Any, Any]:
    a, b = node.saved_values()
    ia, ib = node.inputs
    # Vectors act as (1, K) and (K, 1) matrices; the output gradient gets those axes back.
    a2 = nd.reshape(a, (1, a.shape[0])) if a.ndim == 1 else a
    b2 = nd.reshape(b, (b.shape[0], 1)) if b.ndim == 1 else b
    g2 = g
    if a.ndim == 1:
        g2 = nd.expand_dims(g2, axis=-2 if b.ndim > 1 else -1)
    if b.ndim == 1:
        g2 = nd.expand_dims(g2, axis=-1)
    ga = gb = None
    if ia is not None:
        ga = nd.reshape(unbroadcast(nd.matmul(g2, _c(nd.matrix_transpose(b2))), a2.shape), a.shape)
    if ib is not None:
        gb = nd.reshape(unbroadcast(nd.matmul(_c(nd.matrix_transpose(a2)), g2), b2.shape), b.shape)
    return ga, gb


def _expand_reduced(g: Any, node: Node) -> Any:
    shape, axes, keepdims = node.params
    if not keepdims:
        g = nd.reshape(g, tuple(1 if i in axes else n for i, n in enumerate(shape)))
    return g


def _sum(g: Any, node: Node) -> tuple[Any]:
    shape = node.params[0]
    return (nd.broadcast_to(_expand_reduced(g, node), shape),)


def _prod(g: Any, node: Node) -> tuple[Any]:
    # NOTE: out / x is exact except where x == 0; there the product of the others is taken
    # directly (prod with that element replaced by 1), which is what the gradient is.
    x, out = node.saved_values()
    _, axes, _ = node.params
    out_k = _expand_reduced(out, node)
    g_k = _expand_reduced(g, node)
    ones_at_zero = nd.where(x == 0, nd.ones((), dtype=x.dtype, device=x.device), x)
    others = nd.prod(ones_at_zero, axis=axes, keepdims=True)
    zeros = nd.sum(nd.astype(x == 0, x.dtype), axis=axes, keepdims=True)
    grad_nonzero = out_k / nd.where(x == 0, 1, x)
    grad_zero = nd.where(zeros == 1, others, 0)
    return (g_k * _c(nd.where(x == 0, grad_zero, grad_nonzero)),)


def _maxmin(g: Any, node: Node) -> tuple[Any]:
    x, out = node.saved_values()
    hit = nd.astype(x == _expand_reduced(out, node), g.dtype)
    count = nd.sum(hit, axis=node.params[1], keepdims=True)
    return (_expand_reduced(g, node) * hit / count,)


def _cumsum(g: Any, node: Node) -> tuple[Any]:
    (axis,) = node.params
    return (nd.flip(nd.cumulative_sum(nd.flip(g, axis=axis), axis=axis), axis=axis),)


def _cumprod(g: Any, node: Node) -> tuple[Any]:
    # NOTE: valid where x has no zeros; sum_{j>=i} g_j * out_j / x_i.
    x, out = node.saved_values()
    (axis,) = node.params
    rev = nd.flip(nd.cumulative_sum(nd.flip(g * _c(out), axis=axis), axis=axis), axis=axis)
    return (rev / _c(x),)


def _take(g: Any, node: Node) -> tuple[Any, None]:
    (indices,) = node.saved_values()
    shape, axis = node.params
    return _scatter_into_zeros(g, indices, shape, axis), None


def _scatter_into_zeros(g: Any, indices: Any, shape: tuple[int, ...], axis: int) -> Any:
    out = nd.zeros(shape, dtype=g.dtype, device=g.device)
    target = nd.moveaxis(out, axis, -1)
    values = nd.moveaxis(g, axis, -1)
    with nd.no_grad():
        _dispatch.scatter_add_last(target, indices, values)

    # The scatter is linear in g: its VJP is the take it undoes (needed for double backward).
    return record("take_of_scatter", out, (g,), (indices,), (axis,))


def _take_of_scatter(gg: Any, node: Node) -> tuple[Any]:
    (indices,) = node.saved_values()
    (axis,) = node.params
    return (nd.take(gg, indices, axis=axis),)


def _reshape(g: Any, node: Node) -> tuple[Any]:
    return (nd.reshape(g, node.params),)


def _permute(g: Any, node: Node) -> tuple[Any]:
    inverse = [0] * len(node.params)
    for i, a in enumerate(node.params):
        inverse[a] = i
    return (nd.permute_dims(g, inverse),)


def _broadcast(g: Any, node: Node) -> tuple[Any]:
    return (unbroadcast(g, node.params),)


def _flip(g: Any, node: Node) -> tuple[Any]:
    return (nd.flip(g, axis=node.params),)


def _getitem(g: Any, node: Node) -> tuple[Any]:
    shape, key = node.params
    return (_index_put_zeros(g, shape, key),)


def _index_put_zeros(g: Any, shape: tuple[int, ...], key: Any) -> Any:
    out = nd.zeros(shape, dtype=g.dtype, device=g.device)
    _dispatch.assign(_basic_view(out, key), g)
    return record("getitem_of_put", out, (g,), (), key)


def _getitem_of_put(gg: Any, node: Node) -> tuple[Any]:
    return (gg[node.params],)


def _setitem(g: Any, node: Node) -> tuple[Any, Any]:
    key, value_shape = node.params
    old, value = node.inputs
    g_old = None
    if old is not None:
        g_old = nd.astype(g, g.dtype, copy=True)
        with nd.no_grad():
            g_old[key] = 0

        g_old = record("masked_grad", g_old, (g,), (), key)
    g_value = unbroadcast(g[key], value_shape) if value is not None and value_shape is not None else None
    return g_old, g_value


def _masked_grad(gg: Any, node: Node) -> tuple[Any]:
    out = nd.astype(gg, gg.dtype, copy=True)
    with nd.no_grad():
        out[node.params] = 0
    return (out,)


def _concat(g: Any, node: Node) -> tuple[Any, ...]:
    axis, sizes = node.params
    grads, start = [], 0
    for n in sizes:
        grads.append(g[(slice(None),) * axis + (slice(start, start + n),)])
        start += n
    return tuple(grads)


def _sort(g: Any, node: Node) -> tuple[Any]:
    (indices,) = node.saved_values()
    shape, axis = node.params
    # The sort is a permutation along `axis`: send each gradient back to where its value came from.
    out = nd.zeros(shape, dtype=g.dtype, device=g.device)
    moved_out = nd.moveaxis(out, axis, -1)
    gm = nd.moveaxis(g, axis, -1)
    im = nd.moveaxis(indices, axis, -1)

    rows = 1
    for n in moved_out.shape[:-1]:
        rows *= n
    k = moved_out.shape[-1]
    base = nd.reshape(nd.arange(rows, dtype=im.dtype, device=g.device) * k, im.shape[:-1] + (1,))
    flat_idx = nd.reshape(im + base, (-1,))
    flat_out = nd.reshape(out, (1, -1)) if axis == len(shape) - 1 else None
    with nd.no_grad():
        if flat_out is not None:
            _dispatch.scatter_add_last(flat_out, flat_idx, nd.reshape(gm, (1, -1)))
            result = out
        else:
            tmp = nd.zeros((1, rows * k), dtype=g.dtype, device=g.device)
            _dispatch.scatter_add_last(tmp, flat_idx, nd.reshape(gm, (1, -1)))
            result = nd.moveaxis(nd.reshape(tmp, moved_out.shape), -1, axis)

    return (record("gather_sorted", result, (g,), (indices,), (axis,)),)


def _gather_sorted(gg: Any, node: Node) -> tuple[Any]:
    (indices,) = node.saved_values()
    (axis,) = node.params
    return (nd.take_along_axis(gg, indices, axis=axis),)


OTHER_RULES: dict[str, Rule] = {
    "where": _where, "cast": _cast, "matmul": _matmul, "sum": _sum, "prod": _prod,
    "max": _maxmin, "min": _maxmin, "cumulative_sum": _cumsum, "cumulative_prod": _cumprod,
    "take": _take, "take_of_scatter": _take_of_scatter, "reshape": _reshape, "permute_dims": _permute,
    "broadcast_to": _broadcast, "flip": _flip, "getitem": _getitem, "getitem_of_put": _getitem_of_put,
    "setitem": _setitem, "masked_grad": _masked_grad, "concat": _concat, "sort": _sort,
    "gather_sorted": _gather_sorted, "identity": lambda g, node: (g,),
}  # fmt: skip

_install()
