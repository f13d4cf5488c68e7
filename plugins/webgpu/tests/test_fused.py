"""The fused row ops (softmax, log_softmax, logsumexp) against ndplane.composite's algorithm."""

from __future__ import annotations

import numpy as np
import pytest

OPS = ("softmax", "log_softmax", "logsumexp")


def generic(op: str, x: np.ndarray) -> np.ndarray:
    """ndplane.composite's algorithms, in float64."""
    x = x.astype(np.float64)
    with np.errstate(all="ignore"):
        m = x.max(-1, keepdims=True)
        if op == "softmax":
            e = np.exp(x - m)
            return e / e.sum(-1, keepdims=True)
        if op == "log_softmax":
            z = x - m
            return z - np.log(np.exp(z).sum(-1, keepdims=True))
        m = np.where(np.isfinite(m), m, 0.0)
        return np.log(np.exp(x - m).sum(-1)) + m[..., 0]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("shape", [(3, 7), (1, 1), (5, 1000), (64, 33), (2, 257), (66000, 2)])
def test_fused_rows_match_the_composite(be, host, op, dtype, shape):
    if not any(d.name == dtype for d in be.dtypes):
        pytest.skip(f"{dtype} unsupported here")
    assert f"fused:{op}" in be.capabilities
    rng = np.random.default_rng(hash((op, dtype, shape)) % 2**32)
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    if shape[0] >= 4 and shape[1] >= 3:
        x[1, 1] = -np.inf  # one -inf: a zero of softmax
        x[2, :] = -np.inf  # a row of -inf: nan (softmax), -inf (logsumexp)
        x[3, 0] = np.nan  # nan propagates through the max
    out = host.empty(shape[:1] if op == "logsumexp" else shape, dtype)
    be.fused(op, (host.put(x),), out, {})
    got = host.get(out).astype(np.float64)
    want = generic(op, x)
    tol = 4e-3 if dtype == "float16" else 2e-6
    np.testing.assert_allclose(got, want.astype(dtype).astype(np.float64), rtol=tol, atol=tol, equal_nan=True)
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want.astype(dtype)))


def test_fused_rows_through_the_public_api():
    import ndplane as nd
    from ndplane.composite import log_softmax, logsumexp, softmax

    x = np.random.default_rng(0).standard_normal((4, 3, 5)).astype(np.float32)
    a, b = nd.asarray(x, device="webgpu"), nd.asarray(x, device="numpy")
    for fn in (softmax, log_softmax, logsumexp):
        for axis in (-1, 0, 1):
            got = np.asarray(fn(a, axis=axis).to_device("numpy"))
            np.testing.assert_allclose(got, np.asarray(fn(b, axis=axis)), rtol=2e-6, atol=2e-6)
