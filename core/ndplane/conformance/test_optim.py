"""Optimizer updates against their formulas computed in float64 NumPy.

A backend that declares ``"fused:adam"`` takes the fused road for contiguous parameters; a
transposed (non-contiguous) parameter takes the generic road; both must give the formula's
values, as must a backend without the fused kernel.
"""

from __future__ import annotations

import numpy as np
import pytest

import ndplane as nd

SHAPES = [(3, 4), (5,), (1, 1), (0, 2), (70, 600)]  # (70, 600): above the cpu pool's threshold


def _adam_reference(p, grads, lr, betas, eps, wd, decoupled):  # type: ignore[no-untyped-def]
    p = p.astype(np.float64)
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        g = g.astype(np.float64)
        if wd and not decoupled:
            g = g + wd * p
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        step = lr / (1 - betas[0] ** t) * m / (np.sqrt(v) / np.sqrt(1 - betas[1] ** t) + eps)
        p = p - step - (lr * wd * p if decoupled else 0.0)
    return p


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
@pytest.mark.parametrize("wd", [0.0, 0.1])
@pytest.mark.parametrize("dtype_name", ["float32", "float64", "float16"])
def test_adam_matches_formula(device: nd.Device, name: str, wd: float, dtype_name: str) -> None:
    dtype = getattr(nd, dtype_name)
    if dtype not in device.backend.dtypes:
        pytest.skip(f"{device} has no {dtype_name}")
    rng = np.random.default_rng(0)
    hosts = [rng.standard_normal(s).astype(dtype.dtype) for s in SHAPES]
    # the last parameter is a transposed view: the generic road for its group on every backend
    params = [nd.asarray(h, device=device).requires_grad_() for h in hosts[:-1]]
    params.append(nd.asarray(np.ascontiguousarray(hosts[-1].T), device=device).T.detach().requires_grad_())
    grads = [[rng.standard_normal(s).astype(dtype.dtype) for s in SHAPES] for _ in range(3)]
    if dtype_name == "float16":
        # NOTE: (1 - beta2) * g**2 of a small g underflows float16's range, and Adam divides by
        # its square root: a property of float16 state, whichever road; keep |g| in [0.5, 2].
        grads = [[(np.sign(g) * (0.5 + np.abs(g) % 1.5)).astype(dtype.dtype) for g in step] for step in grads]
    kwargs = {"lr": 0.05, "betas": (0.8, 0.95), "eps": 1e-6, "weight_decay": wd}
    opt = getattr(nd.optim, name)(params[:-1], **kwargs)
    opt_t = getattr(nd.optim, name)(params[-1:], **kwargs)
    for step in grads:
        for p, g in zip(params, step):
            p.grad = nd.asarray(g, device=device)
        opt.step()
        opt_t.step()
    rtol, atol = {"float16": (2e-2, 2e-2), "float32": (2e-5, 2e-6), "float64": (1e-12, 1e-13)}[dtype_name]
    for p, h, i in zip(params, hosts, range(len(hosts))):
        want = _adam_reference(h, [s[i] for s in grads], kwargs["lr"], kwargs["betas"], kwargs["eps"], wd,
                               name == "AdamW")  # fmt: skip
        np.testing.assert_allclose(p.to_numpy().astype(np.float64), want, rtol=rtol, atol=atol)
        assert p.dtype == dtype and p.requires_grad and p.grad is not None


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_float16_computes_in_float32_on_both_roads(device: nd.Device, name: str) -> None:
    """float16 parameters with the default eps (0 in float16) and gradients small enough that
    (1 - beta2) * g**2 underflows float16: the update is computed in float32 and rounded once
    per step, so the fused road (contiguous) and the generic one (transposed) agree and stay
    finite (the generic rule in float16 gave NaN here where the fused kernels did not)."""
    if nd.float16 not in device.backend.dtypes:
        pytest.skip(f"{device} has no float16")
    rng = np.random.default_rng(5)
    w0 = rng.standard_normal((40, 30)).astype(np.float16)
    g0 = (rng.standard_normal((40, 30)) * np.where(rng.random((40, 30)) < 0.1, 1e-4, 1.0)).astype(np.float16)
    a = nd.asarray(w0, device=device).requires_grad_()
    b = nd.asarray(np.ascontiguousarray(w0.T), device=device).T.detach().requires_grad_()
    opts = [getattr(nd.optim, name)([p], lr=1e-2, weight_decay=0.1) for p in (a, b)]
    for step in range(3):
        for p, opt in zip((a, b), opts):
            p.grad = nd.asarray(g0 * (step + 1), device=device)
            opt.step()
    got_a, got_b = a.to_numpy(), b.to_numpy()
    assert np.isfinite(got_a).all() and np.isfinite(got_b).all()
    np.testing.assert_allclose(got_a.astype(np.float64), got_b.astype(np.float64), rtol=2e-3, atol=2e-3)


def test_adam_skips_parameters_without_gradients_and_counts_steps_per_parameter(device: nd.Device) -> None:
    if nd.float32 not in device.backend.dtypes:
        pytest.skip(f"{device} has no float32")
    a = nd.ones((4,), dtype=nd.float32, device=device, requires_grad=True)
    b = nd.ones((2, 2), dtype=nd.float32, device=device, requires_grad=True)
    opt = nd.optim.Adam([a, b], lr=0.1)
    a.grad = nd.ones((4,), dtype=nd.float32, device=device)
    opt.step()  # b has no gradient: untouched, its step count stays 0
    np.testing.assert_array_equal(b.to_numpy(), np.ones((2, 2), np.float32))
    b.grad = nd.ones((2, 2), dtype=nd.float32, device=device)
    opt.step()  # b's first step (bias correction with t = 1) and a's second
    want_b = _adam_reference(np.ones((2, 2)), [np.ones((2, 2))], 0.1, (0.9, 0.999), 1e-8, 0.0, False)
    want_a = _adam_reference(np.ones(4), [np.ones(4)] * 2, 0.1, (0.9, 0.999), 1e-8, 0.0, False)
    np.testing.assert_allclose(b.to_numpy(), want_b, rtol=1e-5)
    np.testing.assert_allclose(a.to_numpy(), want_a, rtol=1e-5)


def test_adam_update_is_seen_by_the_version_counter(device: nd.Device) -> None:
    if nd.float32 not in device.backend.dtypes:
        pytest.skip(f"{device} has no float32")
    w = nd.ones((3,), dtype=nd.float32, device=device, requires_grad=True)
    loss = nd.sum(w * w)  # saves w for the gradient
    opt = nd.optim.Adam([w], lr=0.1)
    w.grad = nd.ones((3,), dtype=nd.float32, device=device)
    opt.step()  # modifies w in place after the graph saved it
    with pytest.raises(RuntimeError, match="modified in place"):
        loss.backward()
