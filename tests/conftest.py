from __future__ import annotations

import gc
import sys
from pathlib import Path

import numpy as np
import pytest

import ndplane as nd

# The scripts under tools/ (the docs build's hooks import them the same way).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))


@pytest.fixture(autouse=True)
def _reference_default_device():  # type: ignore[no-untyped-def]
    """Core tests run on the reference backend unless they name a device (a cpu or GPU plugin
    installed beside it would otherwise become the default)."""
    with nd.default_device("numpy"):
        yield


@pytest.fixture
def numpy_device() -> nd.Device:
    return nd.Device("numpy")


@pytest.fixture
def no_leaks():
    """Fail a test that leaves buffers alive on any numpy device."""
    devs = [nd.Device(n) for n in ("numpy", "numpy:1", "numpy-nof64", "numpy-contig")]
    gc.collect()
    before = [d.backend.memory_stats() for d in devs]
    yield
    gc.collect()
    after = [d.backend.memory_stats() for d in devs]
    assert after == before


@pytest.fixture
def hvp_check():  # type: ignore[no-untyped-def]
    """``check(f, x, seed)``: the Hessian-vector product of ``sum(f(x))`` by double backward
    (``create_graph``) against central differences of the first-order gradient."""

    def check(f, x: nd.Array, seed: int = 7) -> None:  # type: ignore[no-untyped-def]
        v_host = np.random.default_rng(seed).standard_normal(x.shape)
        (g,) = nd.autograd.grad(nd.sum(f(x)), [x], create_graph=True)
        assert g.requires_grad, "the gradient of a create_graph backward must itself be differentiable"
        (hv,) = nd.autograd.grad(nd.sum(g * nd.asarray(v_host)), [x])
        eps, grads = 1e-6, []
        for sign in (1.0, -1.0):
            xp = nd.asarray(x.to_numpy() + sign * eps * v_host, requires_grad=True)
            grads.append(nd.autograd.grad(nd.sum(f(xp)), [xp])[0].to_numpy())
        np.testing.assert_allclose(hv.to_numpy(), (grads[0] - grads[1]) / (2 * eps), rtol=1e-5, atol=1e-6)

    return check
