"""softmax, log_softmax, logsumexp, layer_norm and conv2d (``ndplane.composite``) on the device
against their algorithm in float64 (conv2d's gradients too). A backend declaring ``fused:<op>`` runs its fused kernel here; one
without it runs the generic road, so both are held to the same oracle."""

from __future__ import annotations

import numpy as np
import pytest

import ndplane as nd
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
        for shape in [(3, 7), (1, 1), (5, 1000), (64, 33), (6, 4099), (0, 4)]:
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
