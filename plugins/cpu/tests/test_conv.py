"""The fused conv2d kernels (forward, grad input, grad weight, grad bias) against the generic
algorithm, on one and on several threads, and their argument checks."""

from __future__ import annotations

import os
import subprocess
import sys

import ndplane_cpu._native as native
import numpy as np
import pytest

import ndplane
from ndplane.conformance._helpers import conv2d_reference

FLOATS = [ndplane.float32, ndplane.float64]  # float16 convolutions take the generic road

# (x shape, weight shape, stride, padding, dilation, groups)
CASES = [
    ((2, 3, 7, 6), (4, 3, 3, 3), (1, 1), (0, 0), (1, 1), 1),
    ((5, 3, 8, 9), (5, 3, 3, 2), (2, 3), (1, 2), (1, 1), 1),
    ((3, 4, 9, 8), (6, 2, 3, 3), (2, 1), (2, 1), (2, 3), 2),
    ((4, 6, 5, 5), (6, 1, 3, 3), (1, 1), (1, 1), (1, 1), 6),
    ((3, 6, 4, 5), (5, 6, 1, 1), (1, 1), (0, 0), (1, 1), 1),
    ((2, 2, 3, 3), (3, 2, 5, 5), (1, 1), (1, 1), (1, 1), 1),  # kernel larger than the input
    ((8, 16, 20, 24), (32, 16, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((6, 8, 4, 4), (16, 8, 3, 3), (1, 1), (1, 1), (1, 1), 1),  # the digits CNN's second layer
    # rows of 32 output columns and more take im2col's fill + memcpy road, narrower ones a select
    ((2, 3, 6, 40), (4, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((2, 2, 5, 70), (3, 2, 2, 3), (1, 2), (0, 2), (1, 2), 1),
    ((1, 2, 3, 33), (2, 2, 3, 1), (1, 1), (2, 0), (1, 1), 1),
    # an image's im2col matrix above 2^18 elements: forward and grad weight go by blocks of output
    # rows where each image runs on one thread (a last block shorter than the others)
    ((2, 8, 40, 100), (6, 8, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((2, 8, 70, 90), (3, 8, 3, 5), (2, 1), (1, 2), (2, 1), 1),
    ((3, 16, 64, 64), (4, 8, 3, 3), (1, 1), (1, 1), (1, 1), 2),
    # stride and dilation 1 with rows of a vector or more (16 float32, 8 float64) go direct on
    # AVX2 / AVX-512 (conv.cc): output channels not a multiple of the tile's (20: 16 + 4 padded),
    # one image (its rows split over threads), uneven padding and kernels, groups, one channel,
    # rows of exactly one vector, and a last partial vector
    ((1, 3, 5, 50), (20, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((2, 4, 17, 17), (6, 2, 2, 4), (1, 1), (0, 3), (1, 1), 2),
    ((1, 1, 30, 16), (1, 1, 1, 3), (1, 1), (0, 1), (1, 1), 1),
    ((2, 6, 9, 31), (12, 2, 3, 3), (1, 1), (2, 1), (1, 1), 3),
    ((1, 2, 5, 20), (3, 2, 3, 3), (1, 1), (3, 1), (1, 1), 1),  # padding past K - 1: grad input by gemm
    ((0, 2, 5, 20), (3, 2, 3, 3), (1, 1), (1, 1), (1, 1), 1),  # an empty batch: zero grad weight
]


def _run(h, op_grad, inputs, shape, dtype, params):
    out = h.empty(shape, dtype)
    h.be.fused("conv2d", tuple(h.put(a) if a is not None else None for a in inputs), out,
               {**params, "grad": op_grad})  # fmt: skip
    return h.get(out)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_conv2d_passes_match_generic(h, case, dtype, threads):
    assert "fused:conv2d" in h.be.capabilities
    xs, ws, stride, padding, dilation, groups = CASES[case]
    params = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
    rng = np.random.default_rng(case)
    x, w, b = (rng.standard_normal(s).astype(dtype.dtype) for s in (xs, ws, ws[:1]))
    want = conv2d_reference(x, w, b, stride, padding, dilation, groups)
    g = rng.standard_normal(want.shape).astype(dtype.dtype)
    gx, gw, gb = conv2d_reference(x, w, b, stride, padding, dilation, groups, g=g)
    tol = 2e-5 * (1 + np.sqrt(w[0].size)) if dtype.name == "float32" else 1e-12
    saved = native.num_threads()
    native.set_num_threads(threads)
    try:
        for bias in (b, None):
            y = _run(h, None, (x, w, bias), want.shape, dtype, params)
            np.testing.assert_allclose(y, want - (0 if bias is not None else b.reshape(1, -1, 1, 1)), rtol=tol,
                                       atol=tol)  # fmt: skip
        np.testing.assert_allclose(_run(h, "input", (g, w), xs, dtype, params), gx, rtol=tol, atol=tol * 10)
        np.testing.assert_allclose(_run(h, "weight", (x, g), ws, dtype, params), gw, rtol=tol, atol=tol * 10)
        np.testing.assert_allclose(_run(h, "bias", (g,), ws[:1], dtype, params), gb, rtol=tol, atol=tol * 10)
    finally:
        native.set_num_threads(saved)


def test_conv2d_checks_its_arguments(h):
    x = np.ones((1, 2, 4, 4), np.float32)
    w = np.ones((3, 2, 3, 3), np.float32)
    ok = {"stride": (1, 1), "padding": (0, 0), "dilation": (1, 1), "groups": 1}
    with pytest.raises(ValueError, match="output shape"):
        _run(h, None, (x, w, None), (1, 3, 3, 3), np.dtype("float32"), ok)
    with pytest.raises(ValueError, match="groups"):
        _run(h, None, (x, w, None), (1, 3, 2, 2), np.dtype("float32"), {**ok, "groups": 2})
    with pytest.raises(ValueError, match="grad"):
        _run(h, "everything", (x, w, None), (1, 3, 2, 2), np.dtype("float32"), ok)
    with pytest.raises(TypeError, match="pair"):
        _run(h, None, (x, w, None), (1, 3, 2, 2), np.dtype("float32"), {**ok, "stride": 1})
    with pytest.raises(TypeError, match="float32 and float64"):
        xi = x.astype(np.int32)
        _run(h, None, (xi, w.astype(np.int32), None), (1, 3, 2, 2), np.dtype("int32"), ok)


@pytest.mark.parametrize("isa", ["v3", "baseline"])
def test_conv2d_forward_on_each_isa(isa):
    """The direct forward's and grad input's AVX2 version (and the gemm road of the baseline
    build), in a process whose kernels are forced to that ISA, against the generic algorithm."""
    if native.isa() == "baseline" and isa != "baseline":
        pytest.skip("this CPU runs the baseline build only")
    code = f"""
import numpy as np
import ndplane_cpu._native as native
import ndplane
from ndplane.conformance._helpers import conv2d_reference
assert native.isa() == {("x86-64-" + isa) if isa != "baseline" else "baseline"!r}, native.isa()
be = ndplane.asarray([1.0], device="cpu").device.backend
for case in {[c for c in CASES if c[2] == (1, 1) and c[4] == (1, 1)]!r}:
    xs, ws, stride, padding, dilation, groups = case
    for dt in (np.float32, np.float64):
        rng = np.random.default_rng(0)
        x, w, b = (rng.standard_normal(s).astype(dt) for s in (xs, ws, ws[:1]))
        want = conv2d_reference(x, w, b, stride, padding, dilation, groups)
        got = ndplane.nn.functional.conv2d(ndplane.asarray(x, device="cpu"), ndplane.asarray(w, device="cpu"),
                                           ndplane.asarray(b, device="cpu"), stride=stride, padding=padding,
                                           groups=groups)
        tol = 2e-5 * (1 + np.sqrt(w[0].size)) if dt == np.float32 else 1e-12
        np.testing.assert_allclose(got.to_numpy(), want, rtol=tol, atol=tol)
        g = rng.standard_normal(want.shape).astype(dt)
        gx = conv2d_reference(x, w, b, stride, padding, dilation, groups, g=g)[0]
        xs_ = ndplane.asarray(x, device="cpu", requires_grad=True)
        y = ndplane.nn.functional.conv2d(xs_, ndplane.asarray(w, device="cpu"), stride=stride, padding=padding,
                                         groups=groups)
        ndplane.sum(y * ndplane.asarray(g, device="cpu")).backward()
        np.testing.assert_allclose(xs_.grad.to_numpy(), gx, rtol=tol, atol=tol * 10)
print("ok")
"""
    env = {**os.environ, "NDPLANE_CPU_ISA": isa}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]
