"""Fused softmax, log_softmax, logsumexp and layer_norm against the generic algorithms."""

from __future__ import annotations

import numpy as np
import pytest
from cpu_helpers import FLOATS, assert_close

import ndplane


def generic(op: str, x: np.ndarray, w=None, b=None, eps=1e-5) -> np.ndarray:
    """ndplane.composite's algorithms, in float64."""
    x = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if op == "layer_norm":
            xc = x - x.mean(-1, keepdims=True)
            out = xc / np.sqrt((xc * xc).mean(-1, keepdims=True) + eps)
            return out * (1 if w is None else w) + (0 if b is None else b)
        m = x.max(-1, keepdims=True)
        if op == "softmax":
            e = np.exp(x - m)
            return e / e.sum(-1, keepdims=True)
        if op == "log_softmax":
            z = x - m
            return z - np.log(np.exp(z).sum(-1, keepdims=True))
        m = np.where(np.isfinite(m), m, 0.0)
        return np.log(np.exp(x - m).sum(-1)) + m[..., 0]


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
