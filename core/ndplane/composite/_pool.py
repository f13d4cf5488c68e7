"""2-D max and average pooling: the generic unfold + max/mean, or the backend's fused kernels.

On a backend that declares ``"fused:max_pool2d"`` / ``"fused:avg_pool2d"`` (float32/float64
input) the forward pass is one kernel and the op records one graph node whose rule runs the
backend's input-gradient kernel (the composite's VJP: the gradient goes to every element equal
to its window's maximum, split between them; the mean's spreads evenly). Elsewhere the generic
decomposition runs and is differentiated through its pieces.
"""

from __future__ import annotations

from typing import Any

from .. import _dispatch, _graph
from .. import _namespace as nd
from .._array import Array, check_array
from ._conv import _fold

__all__ = ["pool2d", "unfold2d"]

Pair = tuple[int, int]


def _out_size(x: Array, kernel: Pair, stride: Pair) -> Pair:
    """(OH, OW): how many (KH, KW) windows fit along H and W of (N, C, H, W) at ``stride``."""
    _, _, h, w = x.shape
    (kh, kw), (sh, sw) = kernel, stride
    if h < kh or w < kw:
        raise ValueError(f"conv/pool: kernel {kernel} is larger than the padded input ({h}, {w}).")
    return (h - kh) // sh + 1, (w - kw) // sw + 1


def unfold2d(x: Array, kernel: Pair, stride: Pair) -> Array:
    """Patches of (N, C, H, W) as (N, C, KH * KW, OH, OW) (nn.functional.unfold2d)."""
    (kh, kw), (sh, sw) = kernel, stride
    oh, ow = _out_size(x, kernel, stride)
    views = [x[:, :, i : i + sh * (oh - 1) + 1 : sh, j : j + sw * (ow - 1) + 1 : sw]
             for i in range(kh) for j in range(kw)]  # fmt: skip
    return nd.stack(views, axis=2)


def _fused_ok(op: str, x: Array) -> bool:
    return f"fused:{op}" in x.device.backend.capabilities and x.dtype in (nd.float32, nd.float64)


def _fused(op: str, inputs: tuple[Array, ...], shape: tuple[int, ...], params: dict[str, Any]) -> Array:
    x = inputs[0]
    out = _dispatch.empty(shape, x.dtype, x.device, op)
    if out.size:
        keep: list[Array] = []
        refs = tuple(_dispatch.compact_ref(a, keep) for a in inputs)
        x.device.backend.fused(op, refs, out._ref, params)
    return out


def pool2d(op: str, x: Array, kernel: Pair, stride: Pair) -> Array:
    """``max_pool2d`` or ``avg_pool2d`` (``op``) of (N, C, H, W) over (KH, KW) windows."""
    check_array(op, x)
    if x.ndim != 4:
        raise ValueError(f"{op}: expected a 4-D input (N, C, H, W); got shape {x.shape}.")
    if min(*kernel, *stride) < 1:
        raise ValueError(f"{op}: kernel_size and stride must be positive; got {kernel} and {stride}.")
    if not _fused_ok(op, x):
        cols = unfold2d(x, kernel, stride)
        return nd.max(cols, axis=2) if op == "max_pool2d" else nd.mean(cols, axis=2)
    shape = (x.shape[0], x.shape[1], *_out_size(x, kernel, stride))
    params = {"kernel": kernel, "stride": stride, "shape": x.shape, "dtype": x.dtype}
    with _graph.no_grad():
        out = _fused(op, (x,), shape, {"kernel": kernel, "stride": stride})
    # NOTE: the average's gradient needs only x's shape: x is saved for the maximum alone.
    return _graph.record(op, out, (x,), (x,) if op == "max_pool2d" else (), params)


def _generic_vjp(op: str, g: Array, x: Array | None, params: dict[str, Any]) -> Array:
    kernel, stride, shape = params["kernel"], params["stride"], params["shape"]
    g5 = nd.expand_dims(g, axis=2)
    if x is not None:
        cols = unfold2d(x, kernel, stride)
        hit = nd.astype(cols == nd.max(cols, axis=2, keepdims=True), g.dtype)
        gcols = g5 * hit / nd.sum(hit, axis=2, keepdims=True)
    else:
        gcols = nd.broadcast_to(g5 / (kernel[0] * kernel[1]), g.shape[:2] + (kernel[0] * kernel[1],) + g.shape[2:])
    return _fold(gcols, shape, kernel, {"stride": stride, "padding": (0, 0), "dilation": (1, 1)})


def _rule(op: str) -> Any:
    def vjp(g: Array, node: _graph.Node) -> tuple[Array]:
        saved = node.saved_values()
        x = saved[0] if saved else None
        if _graph.is_grad_enabled():  # create_graph: the backward must itself be differentiable
            return (_generic_vjp(op, g, x, node.params),)
        params = node.params
        g = nd.astype(g, params["dtype"]) if g.dtype != params["dtype"] else g
        inputs = (g, x) if x is not None else (g,)
        kw = {"kernel": params["kernel"], "stride": params["stride"], "grad": "input"}
        return (_fused(op, inputs, params["shape"], kw),)

    vjp.__name__ = f"_{op}_vjp"
    return vjp


_graph.RULES["max_pool2d"] = _rule("max_pool2d")
_graph.RULES["avg_pool2d"] = _rule("avg_pool2d")
