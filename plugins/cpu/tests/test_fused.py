"""Fused softmax, log_softmax, logsumexp and layer_norm against the generic algorithms."""

from __future__ import annotations

import numpy as np
import pytest
from cpu_helpers import FLOATS, assert_close

import ndplane
from ndplane.conformance._helpers import composite_reference

generic = composite_reference  # ndplane.composite's algorithms, in float64


@pytest.mark.parametrize("op", ["softmax", "log_softmax", "logsumexp", "layer_norm"])
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
def test_fused_matches_generic(h, op, dtype):
    assert f"fused:{op}" in h.be.capabilities
    for shape in [(3, 7), (1, 1), (5, 1000), (64, 33), (0, 4)]:
        x = (h.data(shape, dtype, special=False) * 4).astype(dtype.dtype)
        if shape[0] >= 3 and shape[1] >= 3:
            x[1, 1] = -np.inf
            x[2, :] = -np.inf if op == "logsumexp" else x[2, :]
        w = b = None
        inputs = (h.put(x),)
        if op == "layer_norm":
            w = h.data(shape[1:], dtype, special=False)
            b = h.data(shape[1:], dtype, special=False)
            x = np.where(np.isinf(x), 0, x).astype(dtype.dtype)
            inputs = (h.put(x), h.put(w), None if shape[1] == 7 else h.put(b))
            b = None if shape[1] == 7 else b
        out_shape = shape[:1] if op == "logsumexp" else shape
        out = h.empty(out_shape, dtype)
        h.be.fused(op, inputs, out, {"eps": 1e-5} if op == "layer_norm" else {})
        want = generic(op, x, w, b).astype(dtype.dtype)
        assert_close(h.get(out), want, f"{op} {shape}", ulps=32)


def test_fused_nan_rows_stay_nan(h):
    x = np.array([[1.0, np.nan, 2.0], [0.0, 1.0, 2.0]], np.float32)
    for op in ("softmax", "log_softmax", "logsumexp"):
        out = h.empty((2,) if op == "logsumexp" else (2, 3), ndplane.float32)
        h.be.fused(op, (h.put(x),), out, {})
        got = h.get(out)
        assert np.isnan(got[0]).all(), op
        assert np.isfinite(got[1]).all(), op


def _adam_args(h, shape, dtype):
    rng = np.random.default_rng(5)
    p, g, m = (rng.standard_normal(shape).astype(dtype) for _ in range(3))
    v = np.abs(rng.standard_normal(shape)).astype(dtype)
    return p, g, m, v


@pytest.mark.parametrize("decoupled", [False, True])
def test_fused_adam_in_place_matches_formula_float64(h, decoupled):
    p, g, m, v = _adam_args(h, (3, 50), np.float64)
    rp, rg, rm, rv = (h.put(a) for a in (p, g, m, v))
    params = {"lr": 0.01, "beta1": 0.9, "beta2": 0.99, "eps": 1e-8, "weight_decay": 0.1, "decoupled": decoupled,
              "step": 3}  # fmt: skip
    h.be.fused("adam", (rg, rm, rv), rp, params)
    gg = g if decoupled else g + 0.1 * p
    m2 = 0.9 * m + 0.1 * gg
    v2 = 0.99 * v + 0.01 * gg * gg
    p2 = p - 0.01 / (1 - 0.9**3) * m2 / (np.sqrt(v2) / np.sqrt(1 - 0.99**3) + 1e-8) - (0.001 * p if decoupled else 0)
    for ref, want in ((rp, p2), (rm, m2), (rv, v2)):
        np.testing.assert_allclose(h.get(ref), want, rtol=1e-13, atol=1e-15)


def test_fused_adam_refuses_bad_operands_with_clear_errors(h):
    p, g, m, v = _adam_args(h, (4, 6), np.float32)
    rg, rm, rv = (h.put(a) for a in (g, m, v))
    ok = {"lr": 0.1, "step": 1}
    with pytest.raises(ValueError, match="C-contiguous"):
        h.be.fused("adam", (h.put(g[:, ::2].copy()), h.put(m[:, ::2].copy()), h.put(v[:, ::2].copy())),
                   h.put(p[:, ::2], p), ok)
    with pytest.raises(TypeError, match="exp_avg of dtype float32"):
        h.be.fused("adam", (rg, h.put(m.astype(np.float64)), rv), h.put(p), ok)
    with pytest.raises(ValueError, match="shapes differ"):
        h.be.fused("adam", (h.put(g[:2].copy()), rm, rv), h.put(p), ok)
    with pytest.raises(TypeError, match="only float16, float32 and float64"):
        ints = [h.put(a.astype(np.int32)) for a in (p, g, m, v)]
        h.be.fused("adam", tuple(ints[1:]), ints[0], ok)
    with pytest.raises(ValueError, match="step must be >= 1"):
        h.be.fused("adam", (rg, rm, rv), h.put(p), {"step": 0})
    with pytest.raises(TypeError, match="params\\['lr'\\] must be a number"):
        h.be.fused("adam", (rg, rm, rv), h.put(p), {"lr": "fast"})
    with pytest.raises(TypeError, match="inputs must be a tuple"):
        h.be.fused("adam", (rg, rm), h.put(p), ok)


@pytest.mark.parametrize("op", ["softmax", "log_softmax", "logsumexp"])
def test_fused_float32_rows_with_specials(h, op):
    # Rows long enough for every vector path (and threads), with -inf, nan, inf, huge and
    # tiny values, against float64 NumPy.
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((400, 1027)) * 20).astype(np.float32)
    x[0, :] = -np.inf
    x[1, 5] = np.nan
    x[2, 7] = np.inf
    x[3, :] = np.float32(3e38)
    x[4, ::2] = -3e38
    x[5, 3] = 1e30
    x[6, :] = 0.0
    x[7, 100:] = -np.inf
    x[8, :] = np.arange(1027, dtype=np.float32) * -1.0  # values far below the max underflow to 0
    out = h.empty((400,) if op == "logsumexp" else x.shape, ndplane.float32)
    h.be.fused(op, (h.put(x),), out, {})
    want = generic(op, x).astype(np.float32)
    assert_close(h.get(out), want, op, ulps=32)
