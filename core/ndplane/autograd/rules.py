"""Vector-Jacobian products, written with core ops so every backend gets gradients.

Each rule takes the output's gradient ``g`` and the recorded node and returns
one gradient per input (``None`` for no gradient).  Binary rules return
gradients of the broadcast shape; :func:`unbroadcast` sums them back to each
input's shape.  Complex inputs follow PyTorch's convention (the gradient is
the conjugate Wirtinger derivative), which is why ``conj`` appears below; for
real dtypes it is skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import _dispatch, _elementwise
from .. import _namespace as nd
from .._elementwise import OPS
from .._graph import NEEDS_OUT, NO_SAVE, RULES, Node, record
from .._subscript import _basic_view

Rule = Callable[[Any, Node], Any]


def _c(x: Any) -> Any:
    """The complex conjugate of a complex array or Python scalar (anything else as it is)."""
    return _elementwise._c(nd, x)


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


def _unary(fn: Callable[..., Any]) -> Rule:
    """A rule from the row's ``fn(nd, g, x, out)`` (see :func:`ndplane._graph.record_elementwise`)."""

    def rule(g: Any, node: Node) -> tuple[Any]:
        x, out = node.operands()
        return (fn(nd, g, x, out),)

    return rule


def _binary(fa: Callable[..., Any] | None, fb: Callable[..., Any] | None) -> Rule:
    """A rule from the row's ``fa(nd, g, a, b, out)`` and ``fb``; gradients summed back to each
    input's shape."""

    def rule(g: Any, node: Node) -> tuple[Any, Any]:
        a, b, out = node.operands()
        ia, ib = node.inputs
        ga = unbroadcast(fa(nd, g, a, b, out), ia.shape) if ia is not None and fa is not None else None
        gb = unbroadcast(fb(nd, g, a, b, out), ib.shape) if ib is not None and fb is not None else None
        return ga, gb

    return rule


def _no_gradient(g: Any, node: Node) -> tuple[None]:
    return (None,)


def _install() -> None:
    """The elementwise rules come from the ops' rows; the others are written below."""
    for op in OPS.values():
        if op.grad is None:
            continue
        if op.arity == 1:
            RULES[op.name] = _unary(op.grad[0]) if op.grad[0] is not None else _no_gradient
        else:
            RULES[op.name] = _binary(*op.grad)
        if op.saves == "nothing":
            NO_SAVE.add(op.name)
        elif op.saves == "operands and out":
            NEEDS_OUT.add(op.name)
    RULES["positive"] = lambda g, node: (g,)
    NO_SAVE.add("positive")
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
    assert src is not None  # the node exists because its one input requires a gradient
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


def _roll(g: Any, node: Node) -> tuple[Any]:
    axes, shifts = node.params
    return (nd.roll(g, tuple(-k for k in shifts), axis=axes),)


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
    "setitem": _setitem, "masked_grad": _masked_grad, "concat": _concat, "roll": _roll, "sort": _sort,
    "gather_sorted": _gather_sorted, "identity": lambda g, node: (g,),
}  # fmt: skip

_install()
