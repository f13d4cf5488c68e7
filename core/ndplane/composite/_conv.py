"""2-D convolution: the generic unfold + matmul, or the backend's ``fused:conv2d`` kernels.

On a backend that declares ``"fused:conv2d"`` (float32/float64 operands of one dtype) the
forward pass is one kernel and the op records one graph node whose rule runs the backend's
grad-input, grad-weight and grad-bias kernels. Elsewhere the generic decomposition runs and
is differentiated through its pieces, as before.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dispatch, _graph
from .. import _namespace as nd
from .._array import Array, check_array
from ..autograd.rules import _scatter_into_zeros

__all__ = ["conv2d", "pad2d"]

Pair = tuple[int, int]


def _pair(name: str, what: str, v: int | tuple[int, int], low: int) -> Pair:
    p = (v, v) if isinstance(v, int) else tuple(v)
    if len(p) != 2 or not all(isinstance(a, int) and a >= low for a in p):
        raise ValueError(f"conv2d: {what} must be an int >= {low} or a pair of them; got {v!r}.")
    return (int(p[0]), int(p[1]))


def _out_size(x: Array, weight: Array, params: dict[str, Any]) -> Pair:
    (sh, sw), (ph, pw), (dh, dw) = params["stride"], params["padding"], params["dilation"]
    kh, kw = weight.shape[2:]
    oh = (x.shape[2] + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (x.shape[3] + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if oh <= 0 or ow <= 0:
        raise ValueError(
            f"conv/pool: kernel {(kh, kw)} (dilation {(dh, dw)}) is larger than the padded input "
            f"({x.shape[2] + 2 * ph}, {x.shape[3] + 2 * pw})."
        )
    return oh, ow


def _check(x: Array, weight: Array, bias: Array | None, groups: int) -> None:
    check_array("conv2d", x)
    check_array("conv2d", weight)
    if x.ndim != 4 or weight.ndim != 4:
        raise ValueError(f"conv2d: expected 4-D input and weight; got {x.shape} and {weight.shape}.")
    if not isinstance(groups, int) or groups < 1 or weight.shape[0] % groups:
        raise ValueError(
            f"conv2d: groups must be an int >= 1 dividing out_channels {weight.shape[0]}; got {groups!r}."
        )
    if x.shape[1] != weight.shape[1] * groups:
        raise ValueError(
            f"conv2d: input has {x.shape[1]} channels, weight expects {weight.shape[1]}"
            + (f" x {groups} groups." if groups > 1 else ".")
        )
    if bias is not None and bias.shape != (weight.shape[0],):
        raise ValueError(f"conv2d: bias must have shape ({weight.shape[0]},); got {bias.shape}.")


def pad2d(x: Array, ph: int, pw: int) -> Array:
    """``x`` with its last two axes zero-padded by ``ph`` and ``pw`` on each side."""
    if not ph and not pw:
        return x
    *lead, h, w = x.shape
    out = nd.zeros((*lead, h + 2 * ph, w + 2 * pw), dtype=x.dtype, device=x.device)
    out[..., ph : ph + h, pw : pw + w] = x
    return out


def _windows(params: dict[str, Any], kernel: Pair, out: Pair) -> list[tuple[slice, slice]]:
    """The strided slice of the padded input that each kernel offset (i, j) reads, in C order."""
    (sh, sw), (dh, dw) = params["stride"], params["dilation"]
    (kh, kw), (oh, ow) = kernel, out
    return [(slice(i * dh, i * dh + sh * (oh - 1) + 1, sh), slice(j * dw, j * dw + sw * (ow - 1) + 1, sw))
            for i in range(kh) for j in range(kw)]  # fmt: skip


def _cols(x: Array, weight: Array, params: dict[str, Any]) -> Array:
    """im2col: (N, G, C/G * KH * KW, OH * OW)."""
    out = _out_size(x, weight, params)
    xp = pad2d(x, *params["padding"])
    kernel = (weight.shape[2], weight.shape[3])
    cols = nd.stack([xp[:, :, a, b] for a, b in _windows(params, kernel, out)], axis=2)
    n, groups, ck = x.shape[0], params["groups"], weight.shape[1] * weight.shape[2] * weight.shape[3]
    return nd.reshape(cols, (n, groups, ck, out[0] * out[1]))


def _generic(x: Array, weight: Array, bias: Array | None, params: dict[str, Any]) -> Array:
    (o, cg, kh, kw), groups = weight.shape, params["groups"]
    oh, ow = _out_size(x, weight, params)
    y = nd.matmul(nd.reshape(weight, (groups, o // groups, cg * kh * kw)), _cols(x, weight, params))
    y = nd.reshape(y, (x.shape[0], o, oh, ow))
    return y + nd.reshape(bias, (1, o, 1, 1)) if bias is not None else y


def _fused_ok(x: Array, weight: Array, bias: Array | None) -> bool:
    if "fused:conv2d" not in x.device.backend.capabilities or x.dtype not in (nd.float32, nd.float64):
        return False
    return all(a.dtype == x.dtype and a.device == x.device for a in (weight, bias) if a is not None)


def _fused(arrays: tuple[Array | None, ...], shape: tuple[int, ...], params: dict[str, Any]) -> Array:
    x = next(a for a in arrays if a is not None)
    out = _dispatch.empty(shape, x.dtype, x.device, "conv2d")
    if out.size:
        keep: list[Array] = []
        refs = tuple(_dispatch.compact_ref(a, keep) if a is not None else None for a in arrays)
        x.device.backend.fused("conv2d", refs, out._ref, params)
    return out


def conv2d(x: Array, weight: Array, bias: Array | None = None, stride: int | Pair = 1, padding: int | Pair = 0,
           dilation: int | Pair = 1, groups: int = 1) -> Array:  # fmt: skip
    """2-D cross-correlation of (N, C, H, W) with (O, C / groups, KH, KW), plus ``bias`` (O,).

    >>> import ndplane as nd
    >>> conv2d(nd.ones((1, 2, 3, 3)), nd.ones((2, 1, 2, 2)), padding=1, groups=2).shape
    (1, 2, 4, 4)
    """
    _check(x, weight, bias, groups)
    params = {"stride": _pair("conv2d", "stride", stride, 1), "padding": _pair("conv2d", "padding", padding, 0),
              "dilation": _pair("conv2d", "dilation", dilation, 1), "groups": groups}  # fmt: skip
    if not _fused_ok(x, weight, bias):
        return _generic(x, weight, bias, params)
    shape = (x.shape[0], weight.shape[0], *_out_size(x, weight, params))
    with _graph.no_grad():
        out = _fused((x, weight, bias), shape, params)
    return _graph.record("conv2d", out, (x, weight, bias), (x, weight), params)


def _fold(cols: Array, shape: tuple[int, ...], kernel: Pair, params: dict[str, Any]) -> Array:
    """col2im, the adjoint of :func:`_cols`: cols (N, C, KH * KW, OH, OW) summed into (N, C, H, W)."""
    # NOTE: one scatter_add of every window into the flat padded image, not a setitem per
    # kernel offset: its rule (a take) keeps the double backward exact where windows overlap.
    (sh, sw), (ph, pw), (dh, dw) = params["stride"], params["padding"], params["dilation"]
    (n, c, h, w), (kh, kw), (oh, ow) = shape, kernel, cols.shape[3:]
    hp, wp = h + 2 * ph, w + 2 * pw
    rows = np.arange(kh)[:, None, None, None] * dh + np.arange(oh)[None, None, :, None] * sh
    flat = rows * wp + np.arange(kw)[None, :, None, None] * dw + np.arange(ow)[None, None, None, :] * sw
    index = nd.asarray(flat.reshape(-1), dtype=cols.device.backend.default_dtypes["indexing"], device=cols.device)
    xp = _scatter_into_zeros(nd.reshape(cols, (n, c, kh * kw * oh * ow)), index, (n, c, hp * wp), 2)
    return nd.reshape(xp, (n, c, hp, wp))[:, :, ph : ph + h, pw : pw + w]


def _generic_vjp(g: Array, x: Array, weight: Array, node: _graph.Node) -> tuple[Array | None, ...]:
    ix, iw, ib = node.inputs
    (o, cg, kh, kw), groups, (n, _, oh, ow) = weight.shape, node.params["groups"], g.shape
    g4 = nd.reshape(g, (n, groups, o // groups, oh * ow))
    gb = nd.sum(g, axis=(0, 2, 3)) if ib is not None else None
    gw = gx = None
    if iw is not None:
        gw = nd.sum(nd.matmul(g4, nd.matrix_transpose(_cols(x, weight, node.params))), axis=0)
        gw = nd.reshape(gw, weight.shape)
    if ix is not None:
        gcols = nd.matmul(nd.matrix_transpose(nd.reshape(weight, (groups, o // groups, cg * kh * kw))), g4)
        gx = _fold(nd.reshape(gcols, (n, x.shape[1], kh * kw, oh, ow)), x.shape, (kh, kw), node.params)
    return gx, gw, gb


def _conv2d_vjp(g: Array, node: _graph.Node) -> tuple[Array | None, ...]:
    x, weight = node.saved_values()
    if _graph.is_grad_enabled():  # create_graph: the backward must itself be differentiable
        return _generic_vjp(g, x, weight, node)
    ix, iw, ib = node.inputs
    g = nd.astype(g, x.dtype) if g.dtype != x.dtype else g
    params = node.params
    gx = _fused((g, weight), x.shape, {**params, "grad": "input"}) if ix is not None else None
    gw = _fused((x, g), weight.shape, {**params, "grad": "weight"}) if iw is not None else None
    gb = _fused((g,), (weight.shape[0],), {**params, "grad": "bias"}) if ib is not None else None
    return gx, gw, gb


_graph.RULES["conv2d"] = _conv2d_vjp
