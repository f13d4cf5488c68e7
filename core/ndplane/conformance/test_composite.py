"""softmax, log_softmax, logsumexp, layer_norm and conv2d (``ndplane.composite``) on the device
against their algorithm in float64 (conv2d's gradients too). A backend declaring ``fused:<op>`` runs its fused kernel here; one
without it runs the generic road, so both are held to the same oracle."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ndplane as nd
from ndplane import _dispatch
from ndplane.composite import conv2d, layer_norm, log_softmax, logsumexp, softmax
from ndplane.conformance import _helpers as h

_FNS = {"softmax": softmax, "log_softmax": log_softmax, "logsumexp": logsumexp}
# float16 is computed in float16 by the generic road (every op rounds), in float32 by fused kernels.
_TOL = {"float16": 8e-3, "float32": 2e-5, "float64": 1e-12}


def _data(shape: tuple[int, ...], dtype: nd.DType, seed: int, specials: bool) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal(shape) * 4
    if specials and len(shape) == 2 and shape[0] >= 4 and shape[1] >= 3:
        x[1, 1] = -np.inf  # one -inf: a zero of softmax
        x[2, :] = -np.inf  # a row of -inf: nan (softmax), -inf (logsumexp)
        x[3, 0] = np.nan  # a nan row stays nan
    return x.astype(h.np_dtype(dtype))


@pytest.mark.parametrize("op", sorted(_FNS))
def test_row_composites_match_their_algorithm(device: nd.Device, op: str) -> None:
    for dtype in h.supported(device, ("float",)):
        tol = _TOL[dtype.name]
        # (3, 0): an empty axis, whose logsumexp is -inf (a fused kernel once left it unwritten)
        for shape in [(3, 7), (1, 1), (5, 1000), (64, 33), (6, 4099), (0, 4), (3, 0), (0, 0)]:
            x = _data(shape, dtype, len(shape) + shape[-1], specials=True)
            got = h.host(_FNS[op](nd.asarray(x, device=device))).astype(np.float64)
            want = h.composite_reference(op, x).astype(h.np_dtype(dtype)).astype(np.float64)
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True,
                                       err_msg=f"{op} {shape} {dtype.name} on {device}")  # fmt: skip
            np.testing.assert_array_equal(np.isinf(got), np.isinf(want), err_msg=f"{op} {shape} inf")


@pytest.mark.parametrize("op", sorted(_FNS))
def test_row_composites_along_any_axis(device: nd.Device, op: str) -> None:
    dtype = h.default(device, "real floating")
    x = _data((4, 3, 5), dtype, 1, specials=False)
    a = nd.asarray(x, device=device)
    for axis in (-1, 0, 1):
        got = h.host(_FNS[op](a, axis=axis))
        want = np.moveaxis(h.composite_reference(op, np.moveaxis(x, axis, -1)), -1, axis) if op != "logsumexp" \
            else h.composite_reference(op, np.moveaxis(x, axis, -1))  # fmt: skip
        np.testing.assert_allclose(got, want, rtol=_TOL[dtype.name], atol=_TOL[dtype.name], err_msg=f"axis {axis}")


def test_layer_norm_matches_its_algorithm(device: nd.Device) -> None:
    for dtype in h.supported(device, ("float",)):
        tol = 4 * _TOL[dtype.name]
        for shape in [(3, 7), (1, 1), (5, 1000), (64, 33)]:
            x = _data(shape, dtype, shape[-1], specials=False)
            w = _data(shape[1:], dtype, 2, specials=False)
            b = _data(shape[1:], dtype, 3, specials=False)
            for weight, bias in ((None, None), (w, None), (w, b)):
                got = layer_norm(nd.asarray(x, device=device),
                                 None if weight is None else nd.asarray(weight, device=device),
                                 None if bias is None else nd.asarray(bias, device=device))  # fmt: skip
                want = h.composite_reference("layer_norm", x, weight, bias)
                np.testing.assert_allclose(h.host(got).astype(np.float64), want, rtol=tol, atol=tol,
                                           err_msg=f"layer_norm {shape} {dtype.name}")  # fmt: skip


# (x shape, weight shape, stride, padding, dilation, groups, bias)
_CONV = [
    ((2, 3, 7, 6), (4, 3, 3, 3), (1, 1), (0, 0), (1, 1), 1, True),
    ((2, 3, 8, 9), (5, 3, 3, 2), (2, 2), (1, 1), (1, 1), 1, False),
    ((1, 2, 9, 8), (3, 2, 3, 3), (2, 1), (1, 2), (2, 1), 1, True),
    ((3, 4, 6, 6), (6, 2, 3, 3), (1, 1), (1, 1), (1, 1), 2, True),
    ((2, 4, 5, 7), (4, 1, 3, 3), (1, 2), (2, 0), (1, 2), 4, True),  # depthwise
    ((2, 6, 4, 5), (5, 6, 1, 1), (1, 1), (0, 0), (1, 1), 1, True),  # 1x1: no im2col
    ((1, 3, 4, 4), (2, 3, 4, 4), (3, 3), (0, 0), (1, 1), 1, True),  # the kernel covers the input
    ((0, 3, 5, 5), (2, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1, True),  # an empty batch
    ((4, 3, 32, 32), (16, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1, True),  # several images per thread
]


@pytest.mark.parametrize("case", range(len(_CONV)))
def test_conv2d_and_its_gradients_match_their_algorithm(device: nd.Device, case: int) -> None:
    xs, ws, stride, padding, dilation, groups, with_bias = _CONV[case]
    for dtype in h.supported(device, ("float",)):
        if dtype.name == "float16":
            continue  # conv2d in float16 is matmul's precision, tested there
        tol = 1e-4 if dtype.name == "float32" else 1e-11
        rng = np.random.default_rng(case)
        x, w, b = (rng.standard_normal(s).astype(h.np_dtype(dtype)) for s in (xs, ws, ws[:1]))
        args = [nd.asarray(a, device=device, requires_grad=True) for a in (x, w, b)]
        y = conv2d(args[0], args[1], args[2] if with_bias else None, stride, padding, dilation, groups)
        want = h.conv2d_reference(x, w, b if with_bias else None, stride, padding, dilation, groups)
        where = f"conv2d case {case} {dtype.name} on {device}"
        np.testing.assert_allclose(h.host(y), want, rtol=tol, atol=tol, err_msg=where)
        g = rng.standard_normal(want.shape)
        nd.sum(y * nd.asarray(g.astype(h.np_dtype(dtype)), device=device)).backward()
        grads = h.conv2d_reference(x, w, b, stride, padding, dilation, groups, g=g.astype(h.np_dtype(dtype)))
        for name, arg, gw in zip("xwb", args, grads):
            if name == "b" and not with_bias:
                assert arg.grad is None
                continue
            assert arg.grad is not None, where
            np.testing.assert_allclose(h.host(arg.grad), gw, rtol=tol, atol=tol * 10, err_msg=f"grad {name} {where}")


def test_conv2d_double_backward(device: nd.Device) -> None:
    dtype = h.default(device, "real floating")
    rng = np.random.default_rng(5)
    x = nd.asarray(rng.standard_normal((2, 2, 5, 5)).astype(h.np_dtype(dtype)), device=device, requires_grad=True)
    w = nd.asarray(rng.standard_normal((2, 1, 3, 3)).astype(h.np_dtype(dtype)), device=device, requires_grad=True)
    (gx,) = nd.autograd.grad(nd.sum(conv2d(x, w, stride=2, padding=1, groups=2) ** 2), x, create_graph=True)
    assert gx is not None
    (gw,) = nd.autograd.grad(nd.sum(gx * gx), w)
    assert gw is not None
    xn, wn = h.host(x).astype(np.float64), h.host(w).astype(np.float64)
    eps, e = 1e-6, np.zeros_like(wn)

    def second(wv: np.ndarray) -> float:
        y = h.conv2d_reference(xn, wv, None, (2, 2), (1, 1), (1, 1), 2)
        gxv = h.conv2d_reference(xn, wv, None, (2, 2), (1, 1), (1, 1), 2, g=2 * y)[0]
        return float(np.sum(gxv * gxv))

    e[1, 0, 2, 1] = eps
    want = (second(wn + e) - second(wn - e)) / (2 * eps)
    tol = 2e-2 if dtype.name == "float32" else 1e-5
    np.testing.assert_allclose(h.host(gw)[1, 0, 2, 1], want, rtol=tol, atol=tol)


def _pool_reference(op: str, x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int],
                    g: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """nn.functional's pooling (unfold + max/mean, and its VJP) in float64: the oracle of
    ``fused:max_pool2d`` / ``fused:avg_pool2d``."""
    x = np.asarray(x, np.float64)
    (kh, kw), (sh, sw) = kernel, stride
    oh, ow = (x.shape[2] - kh) // sh + 1, (x.shape[3] - kw) // sw + 1
    win = [(slice(i, i + sh * (oh - 1) + 1, sh), slice(j, j + sw * (ow - 1) + 1, sw))
           for i in range(kh) for j in range(kw)]  # fmt: skip
    cols = np.stack([x[:, :, a, b] for a, b in win], axis=2)
    with np.errstate(all="ignore"):
        if g is None:
            return cols.max(axis=2) if op == "max_pool2d" else cols.mean(axis=2)
        if op == "max_pool2d":
            hit = (cols == cols.max(axis=2, keepdims=True)).astype(np.float64)
            gcols = g[:, :, None] * hit / hit.sum(axis=2, keepdims=True)
        else:
            gcols = np.broadcast_to(g[:, :, None] / (kh * kw), cols.shape)
    gx = np.zeros(x.shape)
    for k, (a, b) in enumerate(win):
        gx[:, :, a, b] += gcols[:, :, k]
    return gx


# (x shape, kernel, stride)
_POOL = [
    ((2, 3, 8, 8), (2, 2), (2, 2)),
    ((1, 2, 7, 9), (3, 2), (2, 3)),  # a ragged edge left out
    ((2, 2, 6, 6), (3, 3), (1, 1)),  # overlapping windows
    ((1, 1, 5, 4), (5, 4), (1, 1)),  # the kernel covers the input
    ((0, 3, 4, 4), (2, 2), (2, 2)),  # an empty batch
    ((4, 8, 32, 32), (2, 2), (2, 2)),  # several planes per thread
]


@pytest.mark.parametrize("case", range(len(_POOL)))
@pytest.mark.parametrize("op", ["max_pool2d", "avg_pool2d"])
def test_pooling_and_its_gradient_match_their_algorithm(device: nd.Device, op: str, case: int) -> None:
    shape, kernel, stride = _POOL[case]
    for dtype in h.supported(device, ("float",)):
        tol = {"float16": 2e-2, "float32": 1e-5}.get(dtype.name, 1e-12)
        rng = np.random.default_rng(case)
        x = rng.standard_normal(shape).astype(h.np_dtype(dtype))
        if op == "max_pool2d" and x.size:
            x.reshape(-1)[:: 7] = x.reshape(-1)[3]  # ties: the gradient is split between them
        xa = nd.asarray(x, device=device, requires_grad=True)
        y = getattr(nd.nn.functional, op)(xa, kernel, stride)
        want = _pool_reference(op, x, kernel, stride)
        where = f"{op} case {case} {dtype.name} on {device}"
        np.testing.assert_allclose(h.host(y).astype(np.float64), want, rtol=tol, atol=tol, err_msg=where)
        g = rng.standard_normal(want.shape).astype(h.np_dtype(dtype))
        nd.sum(y * nd.asarray(g, device=device)).backward()
        gx = _pool_reference(op, x, kernel, stride, g.astype(np.float64))
        assert xa.grad is not None, where
        np.testing.assert_allclose(h.host(xa.grad).astype(np.float64), gx, rtol=tol, atol=tol, err_msg=where)


@pytest.mark.parametrize("op", ["max_pool2d", "avg_pool2d"])
def test_pooling_nan_views_and_double_backward(device: nd.Device, op: str) -> None:
    dtype = h.default(device, "real floating")
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 2, 9, 8)).astype(h.np_dtype(dtype))
    x[0, 1, 3, 4] = np.nan
    base = nd.asarray(np.ascontiguousarray(x[:, :, ::-1].transpose(0, 1, 3, 2)), device=device)
    view = nd.flip(nd.permute_dims(base, (0, 1, 3, 2)), axis=2)  # x's values, not contiguous
    for xa in (nd.asarray(x, device=device), view):
        got = h.host(getattr(nd.nn.functional, op)(xa, 2))
        np.testing.assert_allclose(got.astype(np.float64), _pool_reference(op, x, (2, 2), (2, 2)),
                                   rtol=1e-5, atol=1e-5)  # fmt: skip
    with pytest.raises(ValueError, match="larger"):
        getattr(nd.nn.functional, op)(nd.asarray(x, device=device), 10)
    with pytest.raises(ValueError, match="4-D"):
        getattr(nd.nn.functional, op)(nd.asarray(x[0], device=device), 2)
    xg = nd.asarray(np.abs(x[:1, :1, :4, :4]) + np.arange(16.0).reshape(4, 4).astype(x.dtype), device=device,
                    requires_grad=True)  # fmt: skip
    (gx,) = nd.autograd.grad(nd.sum(getattr(nd.nn.functional, op)(xg, 2) ** 2), xg, create_graph=True)
    assert gx is not None
    (gg,) = nd.autograd.grad(nd.sum(gx), xg)
    want = _pool_reference(op, h.host(xg), (2, 2), (2, 2), g=2 * _pool_reference(op, h.host(xg), (2, 2), (2, 2)))
    np.testing.assert_allclose(h.host(gx).astype(np.float64), want, rtol=1e-4, atol=1e-4)
    assert gg is not None


@pytest.mark.parametrize("shape", [(6, 3), (2, 3, 5, 4)])
def test_batch_norm_inference(device: nd.Device, shape: tuple[int, ...]) -> None:
    """``batch_norm`` outside training (running statistics folded into one scale and one shift
    per channel), with and without the affine parameters, with a gradient to x and without,
    against ``(x - mean) / sqrt(var + eps) * weight + bias`` in float64."""
    rng = np.random.default_rng(11)
    for dtype in h.supported(device, ("float",)):
        npd = h.np_dtype(dtype)
        x = rng.standard_normal(shape).astype(npd) * 3 + 1
        mean, weight, bias = (rng.standard_normal(3).astype(npd) for _ in range(3))
        var = (rng.random(3) + 0.5).astype(npd)
        c = (1, 3) + (1,) * (len(shape) - 2)
        for affine in (False, True):
            want = (x - mean.reshape(c)) / np.sqrt(var.reshape(c).astype(np.float64) + 1e-5)
            if affine:
                want = want * weight.reshape(c) + bias.reshape(c)
            for grad in (False, True):
                xs = nd.asarray(x, device=device, requires_grad=grad)
                m, v = nd.asarray(mean, device=device), nd.asarray(var, device=device)
                w = nd.asarray(weight, device=device) if affine else None
                b = nd.asarray(bias, device=device) if affine else None
                got = nd.nn.functional.batch_norm(xs, m, v, w, b, training=False)
                h.assert_same(got.detach(), h.to_result(want, dtype), dtype, scale=8, msg=f"affine={affine} grad={grad}: ")
                if grad:
                    nd.sum(got).backward()
                    g = 1 / np.sqrt(var.astype(np.float64) + 1e-5) * (weight if affine else 1)
                    assert xs.grad is not None
                    h.assert_same(xs.grad, h.to_result(np.broadcast_to(g.reshape(c), shape), dtype), dtype, scale=8)


def _batch_norm_rule(x: np.ndarray, mean: np.ndarray, var: np.ndarray, weight: np.ndarray | None,
                     bias: np.ndarray | None, eps: float) -> np.ndarray:  # fmt: skip
    """The inference rule in ``x``'s own dtype, step by step as the composite rounds it."""
    t = x.dtype.type
    scale = t(1) / np.sqrt(var + t(eps))
    if weight is not None:
        scale = scale * weight
    shift = -mean * scale if bias is None else bias - mean * scale
    c = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    return x * scale.reshape(c) + shift.reshape(c)


@pytest.mark.parametrize("shape", [(6, 3), (2, 3, 5, 4), (3, 3, 1, 7), (4, 3, 24, 40), (0, 3, 2)])
def test_batch_norm_inference_bit_for_bit(device: nd.Device, shape: tuple[int, ...]) -> None:
    """Outside training with no gradient, ``batch_norm`` (a backend's ``fused:batch_norm``, or
    the composite) is the folded rule to the bit in float32/float64: weight and bias each
    present or not, a transposed and a reversed ``x``, an ``eps`` that float32 rounds."""
    rng = np.random.default_rng(12)
    for dtype in h.supported(device, ("float",)):
        if dtype not in (nd.float32, nd.float64):
            continue
        npd = h.np_dtype(dtype)
        x = (rng.standard_normal(shape) * 3 + 1).astype(npd)
        mean, weight, bias = (rng.standard_normal(3).astype(npd) for _ in range(3))
        var = (rng.random(3) + 0.5).astype(npd)
        views = [("contiguous", x, nd.asarray(x, device=device))]
        if len(shape) == 4 and x.size:
            xt = np.ascontiguousarray(np.swapaxes(x, 2, 3))  # the transposed view is x again
            views += [("transposed", x, nd.permute_dims(nd.asarray(xt, device=device), (0, 1, 3, 2))),
                      ("reversed", x[:, :, ::-1], nd.asarray(x, device=device)[:, :, ::-1])]  # fmt: skip
        for w, b in ((None, None), (weight, None), (None, bias), (weight, bias)):
            for name, host_x, xs in views:
                got = nd.nn.functional.batch_norm(
                    xs, nd.asarray(mean, device=device), nd.asarray(var, device=device),
                    None if w is None else nd.asarray(w, device=device),
                    None if b is None else nd.asarray(b, device=device), training=False, eps=1e-3)  # fmt: skip
                want = _batch_norm_rule(host_x, mean, var, w, b, 1e-3)
                assert got.shape == shape and got.dtype is dtype
                if "fused:batch_norm" in device.backend.capabilities or device.backend.name == "numpy":
                    assert np.array_equal(h.host(got), want), f"{dtype.name} {name} w={w is not None} b={b is not None}"
                else:
                    h.assert_same(got, want, dtype, scale=8)


@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 6), (3, 3, 5, 7), (2, 3, 70, 40), (0, 3, 4)])
def test_batch_norm_training_gradients(device: nd.Device, shape: tuple[int, ...]) -> None:
    """Training ``batch_norm``'s gradients for x, weight and bias against the float64 rule, with
    x contiguous, transposed and reversed and the cotangent dense or broadcast (sum's gradient),
    on either road (a backend's ``fused:batch_norm_grad`` or the composite). Where the backend
    declares it: its sums against float64 and its gradient part bit for bit the broadcast ops."""
    rng = np.random.default_rng(13)
    axes = (0, *range(2, len(shape)))
    bshape = (1, 3) + (1,) * (len(shape) - 2)
    fused = "fused:batch_norm_grad" in device.backend.capabilities
    for dtype in h.supported(device, ("float",)):
        if dtype not in (nd.float32, nd.float64):
            continue
        npd = h.np_dtype(dtype)
        x = (rng.standard_normal(shape) * 3 + 2).astype(npd)
        w, b = rng.standard_normal(3).astype(npd), rng.standard_normal(3).astype(npd)
        views = [("contiguous", x, lambda a: a)]
        if len(shape) == 4 and x.size:
            views += [("transposed", x, lambda a: nd.permute_dims(nd.permute_dims(a, (0, 1, 3, 2)) * 1, (0, 1, 3, 2))),
                      ("reversed", x, lambda a: nd.flip(nd.flip(a, axis=2) * 1, axis=2))]  # fmt: skip
        for dense in (True, False):
            g = rng.standard_normal(shape).astype(npd) if dense else np.ones(shape, npd)
            # the rule in float64: d = x - mean, gx = ((g - sum(g) / n) - d * rstd**2 * sum(g d) / n) * w * rstd
            x64, g64 = x.astype(np.float64), g.astype(np.float64)
            n = max(x.size // 3, 1)
            d = x64 - x64.mean(axis=axes, keepdims=True) if x.size else x64
            rstd = 1 / np.sqrt((d * d).mean(axis=axes, keepdims=True) + 1e-5) if x.size else np.ones(bshape)
            gb, dot = g64.sum(axis=axes), (g64 * d).sum(axis=axes)
            gw = dot * rstd.reshape(3)
            gx = ((g64 - gb.reshape(bshape) / n) - d * rstd**2 * dot.reshape(bshape) / n) * w.reshape(bshape) * rstd
            for name, _, view in views:
                leaf = nd.asarray(x, device=device, requires_grad=True)
                wa, ba = (nd.asarray(v, device=device, requires_grad=True) for v in (w, b))
                y = nd.nn.functional.batch_norm(view(leaf), None, None, wa, ba, training=True)
                if dense:
                    y.backward(nd.asarray(g, device=device))
                else:
                    nd.sum(y).backward()
                # NOTE: the sums cancel (sum(g * d) of a constant g is 0): their error is relative
                # to the sum of the magnitudes, not to the result, plus the rounded mean's error
                # times sum(g) (a sequential sum's grows with sqrt(n) on random data)
                eps = float(np.finfo(npd).eps)
                rtol = 64 * eps
                centre = np.abs(g64.sum(axis=axes)) * np.sqrt(n) * np.abs(x64).mean(axis=axes) if x.size else 0
                mag = ((np.abs(g64) * np.abs(d)).sum(axis=axes) + centre) * rstd.reshape(3), np.abs(g64).sum(axis=axes)
                assert leaf.grad is not None and wa.grad is not None and ba.grad is not None
                for got, want, what, atol in ((leaf.grad, gx, "x", 64 * eps * float(np.abs(gx).max(initial=1))),
                                              (wa.grad, gw, "weight", 8 * eps * float(mag[0].max(initial=0))),
                                              (ba.grad, gb, "bias", 8 * eps * float(mag[1].max(initial=0)))):  # fmt: skip
                    h.assert_same(got, want.astype(npd), dtype, tol=(rtol, atol), msg=f"{dtype.name} {name} {what}: ")
        if not fused or not x.size:
            continue
        xs, gs = nd.asarray(x, device=device), nd.asarray(g, device=device)
        mean = nd.asarray(x.mean(axis=axes).astype(npd), device=device)
        sums = _dispatch.fused_batch_norm_grad(xs, gs, mean)
        assert sums is not None, "the backend declares fused:batch_norm_grad, yet the core did not take it"
        d64 = x.astype(np.float64) - x.mean(axis=axes).astype(npd).astype(np.float64).reshape(bshape)
        want_sums = np.stack([g.astype(np.float64).sum(axis=axes), (g.astype(np.float64) * d64).sum(axis=axes)])
        atol = 8 * float(np.finfo(npd).eps) * float((np.abs(g) * np.abs(d64)).sum(axis=axes).max())
        h.assert_same(sums, want_sums.astype(npd), dtype, tol=(64 * float(np.finfo(npd).eps), atol),
                      msg=f"{dtype.name} sums: ")  # fmt: skip
        coef = rng.standard_normal((3, 3)).astype(npd)
        part = _dispatch.fused_batch_norm_grad(xs, gs, mean, nd.asarray(coef, device=device))
        assert part is not None
        m = x.mean(axis=axes).astype(npd).reshape(bshape)
        c0, c1, c2 = (coef[i].reshape(bshape) for i in range(3))
        assert np.array_equal(h.host(part), ((g - c0) - (x - m) * c1) * c2), f"{dtype.name} gradient part"


@pytest.mark.parametrize("shape", [(7,), (2, 3), (0,), ()])
def test_one_hot_every_dtype(device: nd.Device, shape: tuple[int, ...]) -> None:
    """``nn.functional.one_hot`` on both of its roads (a scatter of ones where the device scatters
    the dtype natively, else a comparison with every class): every label dtype into every
    output dtype, against NumPy; labels out of range raise IndexError naming the label."""
    F = nd.nn.functional
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 5, shape)
    ints = h.supported(device, ("int", "uint"))
    for lt in ints:
        lab = nd.asarray(labels.astype(h.np_dtype(lt)), device=device)
        for dt in [None, *h.supported(device)]:
            got = F.one_hot(lab, 5, dtype=dt)
            want = labels[..., None] == np.arange(5)
            expect = dt or device.backend.default_dtypes["real floating"]
            assert got.shape == shape + (5,) and got.dtype is expect and got.device == device
            h.assert_same(got, want.astype(h.np_dtype(expect)), expect, exact=True,
                          msg=f"one_hot {lt.name} -> {expect.name}: ")  # fmt: skip
    lab = nd.asarray([0, 5, 1], dtype=ints[0], device=device)
    with pytest.raises(IndexError, match="label 5"):
        F.one_hot(lab, 5)
    if nd.int8 in ints:
        with pytest.raises(IndexError, match="label -1"):
            F.one_hot(nd.asarray([0, -1], dtype=nd.int8, device=device), 5)
    with pytest.raises(TypeError, match="one_hot"):
        F.one_hot(nd.asarray([0.0], device=device), 5)


def test_mse_loss_every_dtype(device: nd.Device) -> None:
    """``nn.functional.mse_loss`` on each road (the sum of squares in one pass where the backend
    has ``fused:sumsq`` and no gradient is recorded, else square and sum; with a gradient, one
    graph node): every real floating dtype and an integer one, a transposed operand, a broadcast
    target, a Python scalar target, each reduction and an empty batch, against float64 NumPy."""
    F = nd.nn.functional
    rng = np.random.default_rng(11)
    a64 = rng.standard_normal((33, 7)) * 3
    b64 = rng.standard_normal((7, 33)) * 3
    row = rng.standard_normal(7)
    for dt in h.supported(device, ("float",)):
        t = h.np_dtype(dt)
        a, b, r = (x.astype(t) for x in (a64, b64, row))
        x, y = nd.asarray(a, device=device), nd.asarray(b, device=device).mT  # a transposed target
        cases: list[tuple[nd.Array | float, Any]] = [(y, b.T), (nd.asarray(r, device=device), r), (0.5, 0.5)]
        for target, want_target in cases:
            d = a.astype(np.float64) - np.asarray(want_target, np.float64)
            want = {"mean": np.asarray(np.mean(d * d)), "sum": np.asarray(np.sum(d * d)), "none": d * d}
            for reduction in ("mean", "sum", "none"):
                got = F.mse_loss(x, target, reduction)
                h.assert_same(got, h.to_result(want[reduction], dt), dt, scale=4.0,
                              msg=f"mse_loss {dt.name} {reduction}: ")  # fmt: skip
        leaf = nd.asarray(a, device=device)
        if dt is not nd.float16:
            leaf.requires_grad = True
            F.mse_loss(leaf, y).backward()
            assert leaf.grad is not None
            h.assert_same(leaf.grad, h.to_result(2 * (a.astype(np.float64) - b.T) / a.size, dt), dt,
                          msg=f"mse_loss' {dt.name}: ")  # fmt: skip
        empty = nd.zeros((0, 3), dtype=dt, device=device)
        assert np.isnan(float(F.mse_loss(empty, empty))) and float(F.mse_loss(empty, empty, "sum")) == 0.0
    ints = h.supported(device, ("int",))
    if ints:
        it = ints[-1]
        ia, ib = (nd.asarray(v, dtype=it, device=device) for v in ([1, -2, 3], [0, 2, 3]))
        assert float(F.mse_loss(ia, ib)) == pytest.approx(17 / 3) and int(F.mse_loss(ia, ib, "sum")) == 17


def test_nll_loss_every_dtype(device: nd.Device) -> None:
    """``nn.functional.nll_loss`` on each road (the backend's ``fused:nll`` where it declares it,
    else a bounds check, a gather and a sum; with a gradient, one graph node): every real
    floating dtype, every integer target dtype, contiguous, transposed and reversed
    log-probabilities, a strided target, each reduction, an empty batch and targets out of
    range, against float64 NumPy."""
    F = nd.nn.functional
    rng = np.random.default_rng(12)
    n, c = 37, 9
    base = rng.standard_normal((n, c)) * 4 - 2
    labels = rng.integers(0, c, n)
    labels[:3] = (0, c - 1, c - 1)  # both ends, and a repeat
    views: dict[str, Callable[[np.ndarray], nd.Array]] = {
        "contiguous": lambda a: nd.asarray(a, device=device),
        "transposed": lambda a: nd.asarray(np.ascontiguousarray(a.T), device=device).mT,
        "reversed": lambda a: nd.flip(nd.asarray(a[:, ::-1].copy(), device=device), axis=1),
    }
    ints = h.supported(device, ("int", "uint"))
    signed = [d for d in ints if d.kind == "int"][-1]  # the widest the device has
    for dt in h.supported(device, ("float",)):
        a = base.astype(h.np_dtype(dt))
        picked = -a.astype(np.float64)[np.arange(n), labels]
        want = {"none": picked, "sum": np.asarray(picked.sum()), "mean": np.asarray(picked.mean())}
        for (layout, make), it in zip(views.items(), (ints[0], ints[-1], ints[len(ints) // 2])):
            x = make(a)
            strided = nd.asarray(np.repeat(labels, 2), dtype=it, device=device)[::2]
            for target in (nd.asarray(labels, dtype=it, device=device), strided):
                for reduction in ("none", "sum", "mean"):
                    h.assert_same(F.nll_loss(x, target, reduction), h.to_result(want[reduction], dt), dt, scale=4.0,
                                  msg=f"nll_loss {dt.name} {layout} {it.name} {reduction}: ")  # fmt: skip
        for it in ints:  # every target dtype, the gather exact
            got = F.nll_loss(views["contiguous"](a), nd.asarray(labels, dtype=it, device=device), "none")
            h.assert_same(got, h.to_result(picked, dt), dt, exact=True, msg=f"nll_loss {it.name} targets: ")
        if dt is not nd.float16:
            for reduction, scale in (("mean", 1.5 / n), ("sum", 1.5), ("none", 1.5)):
                leaf = nd.asarray(np.ascontiguousarray(a.T), device=device, requires_grad=True)  # used transposed
                nd.sum(F.nll_loss(leaf.mT, nd.asarray(labels, dtype=signed, device=device), reduction) * 1.5).backward()
                grad = np.zeros((n, c))
                np.add.at(grad, (np.arange(n), labels), -scale)
                assert leaf.grad is not None
                h.assert_same(leaf.grad, h.to_result(grad.T, dt), dt, msg=f"nll_loss' {dt.name} {reduction}: ")
        empty, none = nd.zeros((0, c), dtype=dt, device=device), nd.zeros(0, dtype=ints[-1], device=device)
        assert np.isnan(float(F.nll_loss(empty, none))) and float(F.nll_loss(empty, none, "sum")) == 0.0
        assert F.nll_loss(empty, none, "none").shape == (0,)
        x = views["transposed"](a)
        for bad, named in ((c, c), (-1, -1)):
            target = nd.asarray([0, bad] + [0] * (n - 2), dtype=signed, device=device)
            for reduction in ("none", "sum", "mean"):
                with pytest.raises(IndexError, match=rf"nll_loss: target {named} is out of bounds for {c} classes"):
                    F.nll_loss(x, target, reduction)
        if nd.uint64 in ints:  # above 2**63: no wrap to a negative that passes as in range
            huge = nd.asarray([2**63 + 1] + [0] * (n - 1), dtype=nd.uint64, device=device)
            with pytest.raises(IndexError, match=rf"nll_loss: target {2**63 + 1} is out of bounds"):
                F.nll_loss(x, huge)
