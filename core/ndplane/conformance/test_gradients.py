"""Values and gradients on every backend agree with the numpy reference backend.

Autograd rules are written with core ops, so a backend gets gradients without
writing a backward kernel; these tests hold each backend's kernels to giving
the same gradients as the reference, in float32 (every backend has it).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import ndplane as nd
from ndplane.nn import functional as F

Loss = Callable[[list[nd.Array]], nd.Array]


def _ramp(x: nd.Array, n: int) -> nd.Array:
    """A fixed weight 0.5, 0.6, ... of the last axis' length: every output element counts."""
    return 0.5 + nd.arange(float(n), device=x.device, dtype=x.dtype) / 10


def _spd(x: nd.Array) -> nd.Array:
    return x @ x.mT + x.shape[-1] * nd.eye(x.shape[-1], device=x.device, dtype=x.dtype)


def _eigh_loss(x: nd.Array) -> nd.Array:
    w, v = nd.linalg.eigh(x + x.mT)  # squares and gaps: eigenvectors' signs do not matter
    return nd.sum(w * _ramp(x, 3)) + nd.sum(v * v * _ramp(x, 3)) + nd.sum(nd.linalg.eigvalsh(_spd(x)) ** 2)


def _svd_loss(x: nd.Array) -> nd.Array:
    u, s, vh = nd.linalg.svd(x, full_matrices=False)
    return nd.sum(u * u * _ramp(x, 3)) + nd.sum(s * s) + nd.sum(vh * vh * _ramp(x, vh.shape[-1]))


def _qr_loss(x: nd.Array) -> nd.Array:
    q, r = nd.linalg.qr(x)
    return nd.sum(q * q * _ramp(x, q.shape[-1])) + nd.sum(r * r * _ramp(x, r.shape[-1]))

def _losses(y: nd.Array) -> nd.Array:
    dev, index = y.device, y.device.backend.default_dtypes["indexing"]
    labels = nd.asarray([0, 4, 1, 2], dtype=index, device=dev)
    target = nd.astype(F.one_hot(labels, 5, dtype=nd.float32) > 0, nd.float32)
    return (F.mse_loss(y, target) + F.binary_cross_entropy_with_logits(y, target, reduction="sum")
            + F.nll_loss(F.log_softmax(y), labels) + F.mse_loss(y, target * 2, reduction="none")[1, 2])  # fmt: skip


def _embedding_dropout(w: nd.Array) -> nd.Array:
    dev, index = w.device, w.device.backend.default_dtypes["indexing"]
    e = F.embedding(nd.asarray([[5, 0], [2, 2]], dtype=index, device=dev), w)
    kept = F.dropout(e, 0.5, generator=nd.random.default_rng(3, device=dev))  # the same stream everywhere
    return nd.sum(kept * e) + nd.sum(F.dropout(e, 0.5, training=False))


CASES: dict[str, tuple[list[tuple[int, ...]], Loss]] = {
    "elementwise": ([(3, 4), (4,)], lambda t: nd.sum(nd.tanh(t[0] * t[1]) + nd.exp(t[0] / 4) - t[1] ** 2)),
    "broadcast+where": ([(3, 1), (1, 4)], lambda t: nd.sum(nd.where(t[0] > t[1], t[0] - t[1], t[0] * t[1]))),
    "reductions": ([(2, 3, 4)], lambda t: nd.sum(nd.max(t[0], axis=1) * nd.mean(t[0], axis=1)) + nd.std(t[0])),
    "matmul": ([(2, 5, 3), (3, 4)], lambda t: nd.sum(nd.sin(t[0] @ t[1]))),
    "views": ([(4, 6)], lambda t: nd.sum(t[0].T[::-2, 1:] * nd.flip(t[0], axis=0).T[::-2, 1:] ** 2)),
    "roll+shift": ([(4, 6)], lambda t: nd.sum(nd.roll(t[0], (1, -2, 7), axis=(0, 1, 1)) * _ramp(t[0], 6))
                   + nd.sum(nd.fft.fftshift(t[0].T[:, ::-1]) ** 2 * _ramp(t[0], 4))),
    "indexing": ([(5, 3)], lambda t: nd.sum(nd.take(t[0], nd.asarray([4, 0, 4], device=t[0].device), axis=0) ** 2)
                 + nd.sum(t[0][t[0] > 0])),
    "cumulative": ([(3, 5)], lambda t: nd.sum(nd.cumulative_sum(t[0], axis=1) * t[0])),
    "sort": ([(4, 5)], lambda t: nd.sum(nd.sort(t[0], axis=1) * nd.arange(5.0, device=t[0].device, dtype=nd.float32))),
    "softmax+ce": ([(6, 4)], lambda t: F.cross_entropy(t[0], nd.asarray([0, 3, 1, 2, 2, 0], device=t[0].device,
                                                                         dtype=t[0].device.backend.default_dtypes["indexing"]))),
    "layer_norm": ([(3, 8), (8,)], lambda t: nd.sum(F.layer_norm(t[0], 8, t[1]) ** 3)),
    "conv": ([(1, 2, 5, 5), (3, 2, 3, 3)], lambda t: nd.sum(F.max_pool2d(F.conv2d(t[0], t[1], padding=1), 2) ** 2)),
    "nn:activations": ([(3, 5)], lambda t: nd.sum(F.relu(t[0]) * _ramp(t[0], 5) + F.gelu(t[0]) + F.sigmoid(t[0]) ** 2 + F.silu(t[0])
                                                  + F.gelu(t[0], approximate="tanh") * F.log_softmax(t[0], axis=0)
                                                  + nd.special.erf(t[0]) * t[0])
                       + nd.sum(F.logsumexp(t[0], axis=1, keepdims=True) * t[0])),
    "nn:linear+losses": ([(4, 3), (5, 3), (5,)], lambda t: _losses(F.linear(t[0], t[1], t[2]))),
    "nn:pooling": ([(2, 3, 5, 5)], lambda t: nd.sum(F.avg_pool2d(F.pad2d(t[0], 1), 2) ** 2)
                   + nd.sum(F.unfold2d(t[0], (2, 3), (2, 1)) * F.unfold2d(t[0] ** 2, (2, 3), (2, 1)))),
    "nn:batch_norm": ([(4, 3, 2, 2), (3,), (3,)], lambda t: nd.sum(F.batch_norm(t[0], None, None, t[1], t[2],
                                                                                 training=True) ** 3)),
    "nn:embedding+dropout": ([(6, 3)], lambda t: _embedding_dropout(t[0])),
    "linalg:cholesky": ([(2, 3, 3)], lambda t: nd.sum(nd.linalg.cholesky(_spd(t[0])) * _ramp(t[0], 3))),
    "linalg:eigh": ([(2, 3, 3)], lambda t: _eigh_loss(t[0])),
    "linalg:svd": ([(2, 4, 3)], lambda t: _svd_loss(t[0]) + _svd_loss(t[0].mT)),
    "linalg:svdvals": ([(2, 3, 4)], lambda t: nd.sum(nd.linalg.svdvals(t[0]) * _ramp(t[0], 3))
                       + nd.sum(nd.linalg.matrix_norm(t[0], ord="nuc"))),
    "linalg:qr": ([(2, 4, 3), (3, 5)], lambda t: _qr_loss(t[0]) + _qr_loss(t[1])),
    "fft": ([(3, 5)], lambda t: nd.sum(nd.abs(nd.fft.rfft(t[0], n=6, norm="ortho")) ** 2 * _ramp(t[0], 4))
            + nd.sum(nd.fft.irfft(nd.fft.fft(t[0], axis=0), n=7) * _ramp(t[0], 7))
            + nd.sum(nd.real(nd.fft.ihfft(t[0])) * nd.imag(nd.fft.ifft(t[0], norm="forward"))[..., :3])),
}  # fmt: skip


def _grads(device: nd.Device | str, shapes: list[tuple[int, ...]], loss: Loss) -> list[np.ndarray]:
    """The loss value, then the gradient of each input."""
    rng = np.random.default_rng(7)
    inputs = [nd.asarray(rng.standard_normal(s).astype(np.float32), device=device, requires_grad=True)
              for s in shapes]  # fmt: skip
    value = loss(inputs)
    value.backward()
    out = [value.to_numpy()]
    for x in inputs:
        assert x.grad is not None, "backward() reached every input"
        out.append(x.grad.to_numpy())
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradients_match_reference_backend(device: nd.Device, case: str) -> None:
    if nd.float32 not in device.backend.dtypes:
        pytest.skip(f"{device} has no float32")
    if case == "fft" and nd.complex64 not in device.backend.dtypes:
        pytest.skip(f"{device} has no complex64 (the spectra's dtype)")
    shapes, loss = CASES[case]
    want = _grads("numpy", shapes, loss)
    got = _grads(device, shapes, loss)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5)


def test_double_backward(device: nd.Device) -> None:
    if nd.float32 not in device.backend.dtypes:
        pytest.skip(f"{device} has no float32")
    x = nd.asarray([0.5, -1.0, 2.0], dtype=nd.float32, device=device, requires_grad=True)
    (g,) = nd.autograd.grad(nd.sum(x * x * x), x, create_graph=True)
    assert g is not None
    (gg,) = nd.autograd.grad(nd.sum(g), x)
    assert gg is not None
    np.testing.assert_allclose(gg.to_numpy(), 6 * np.array([0.5, -1.0, 2.0]), rtol=1e-6)


