"""nn, optim and composites against NumPy references and finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import ndplane as nd
from ndplane import nn
from ndplane.autograd import gradcheck
from ndplane.nn import functional as F


def _x(shape, seed=0):  # type: ignore[no-untyped-def]
    return nd.asarray(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


def _conv_ref(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride : i * stride + kh, j * stride : j * stride + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return out


@pytest.mark.parametrize(("stride", "pad"), [(1, 0), (1, 1), (2, 1)])
def test_conv2d_matches_direct_loop(stride: int, pad: int) -> None:
    x, w = _x((2, 3, 6, 5), 1), _x((4, 3, 3, 2), 2)
    got = F.conv2d(x, w, stride=stride, padding=pad).to_numpy()
    np.testing.assert_allclose(got, _conv_ref(x.to_numpy(), w.to_numpy(), stride, pad), rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda a, b: F.conv2d(a, b, stride=stride, padding=pad), [_x((1, 2, 4, 4), 3), _x((2, 2, 2, 2), 4)])


def test_pooling() -> None:
    host = np.random.default_rng(0).standard_normal((2, 3, 4, 6))
    x = nd.asarray(host, requires_grad=True)
    want_max = host.reshape(2, 3, 2, 2, 3, 2).max(axis=(3, 5))
    np.testing.assert_array_equal(F.max_pool2d(x, 2).to_numpy(), want_max)
    np.testing.assert_allclose(F.avg_pool2d(x, 2).to_numpy(), host.reshape(2, 3, 2, 2, 3, 2).mean(axis=(3, 5)))
    assert gradcheck(lambda t: F.avg_pool2d(t, (2, 3), stride=1), [_x((1, 2, 3, 4))])


@pytest.mark.parametrize("fn", ["softmax", "log_softmax", "logsumexp"])
def test_composites_match_numpy_and_gradcheck(fn: str) -> None:
    host = np.random.default_rng(1).standard_normal((3, 5)) * 10
    x = nd.asarray(host, requires_grad=True)
    m = host.max(axis=0, keepdims=True)
    lse = np.log(np.exp(host - m).sum(axis=0, keepdims=True)) + m
    want = {"softmax": np.exp(host - lse), "log_softmax": host - lse, "logsumexp": lse[0]}[fn]
    got = getattr(F, fn)(x, axis=0)
    np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-12)
    assert gradcheck(lambda t: getattr(F, fn)(t, axis=0), [x])


def test_layer_norm_and_batch_norm() -> None:
    x, w, b = _x((4, 6)), _x((6,), 1), _x((6,), 2)
    host = x.to_numpy()
    want = (host - host.mean(-1, keepdims=True)) / np.sqrt(host.var(-1, keepdims=True) + 1e-5) * w.to_numpy() + b.to_numpy()
    np.testing.assert_allclose(F.layer_norm(x, 6, w, b).to_numpy(), want, rtol=1e-10)
    assert gradcheck(lambda a, c, d: F.layer_norm(a, 6, c, d), [x, w, b])
    bn = nn.BatchNorm1d(6, dtype=nd.float64)
    y = bn(x)
    np.testing.assert_allclose(y.to_numpy(), (host - host.mean(0)) / np.sqrt(host.var(0) + 1e-5), rtol=1e-10)
    np.testing.assert_allclose(bn.running_mean.to_numpy(), 0.1 * host.mean(0), rtol=1e-12)
    bn.eval()
    assert bn(x).shape == (4, 6)


def test_losses() -> None:
    logits, target = _x((5, 4)), nd.asarray([0, 3, 1, 1, 2])
    host = logits.to_numpy()
    logp = host - np.log(np.exp(host).sum(1, keepdims=True))
    np.testing.assert_allclose(float(F.cross_entropy(logits, target)), -logp[np.arange(5), [0, 3, 1, 1, 2]].mean())
    assert gradcheck(lambda t: F.cross_entropy(t, target, reduction="sum"), [logits])
    y = nd.asarray(np.random.default_rng(3).uniform(0, 1, (5, 4)))
    want = np.mean(np.maximum(host, 0) - host * y.to_numpy() + np.log1p(np.exp(-np.abs(host))))
    np.testing.assert_allclose(float(F.binary_cross_entropy_with_logits(logits, y)), want)
    assert float(F.mse_loss(nd.ones(3), nd.zeros(3))) == 1.0
    with pytest.raises(TypeError, match="integer class indices"):
        F.nll_loss(logits, nd.zeros(5))


@pytest.mark.parametrize("device", ["numpy", "cpu", "webgpu"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bce_with_logits_at_the_extremes(device: str, dtype: str) -> None:
    # The far tails (where the loss is |x| or exp(-|x|)) through 0, inf, -inf and NaN. NOTE: the
    # one-kernel form logaddexp(x, 0) - x t fails here: a confident right answer cancels
    # (100 + 3.7e-44 - 100 = 0), where (1 - t) x is exactly 0 and the tail is added after. At
    # x = +inf the loss is its limit, inf, for t < 1 (max(x, 0) - x t gave inf - inf = NaN there);
    # 0 * inf (t = 1 at +inf, t = 0 at -inf) stays NaN, as in PyTorch.
    if device not in {d.split(":")[0] for d in map(str, nd.devices())}:
        pytest.skip(f"no {device} backend")
    x = np.array([-1e4, -100, -20, -1, -1e-8, 0, 1e-8, 1, 20, 100, 1e4, np.inf, -np.inf, np.nan], dtype=dtype)
    t = np.array([0, 0.3, 1], dtype=dtype)
    xs, ts = x[:, None], t[None, :]
    with np.errstate(all="ignore"):
        wide = xs.astype(np.float64)
        want = np.where(wide >= 0, (1 - ts) * wide, -ts * wide) + np.log1p(np.exp(-np.abs(wide)))
    assert np.isinf(want[11, :2]).all() and np.isnan(want[11, 2]) and np.isnan(want[12, 0])
    got = F.binary_cross_entropy_with_logits(nd.asarray(xs, device=device), nd.asarray(ts, device=device),
                                             reduction="none")  # fmt: skip
    assert got.dtype == getattr(nd, dtype) and got.shape == (14, 3)
    tiny = np.finfo(dtype).smallest_subnormal  # exp(-100) in float32 is a subnormal
    np.testing.assert_allclose(got.to_numpy(), want, rtol=2e-6 if dtype == "float32" else 1e-14, atol=64 * tiny)
    logits = nd.asarray(np.linspace(-30, 30, 12).reshape(3, 4), device=device, requires_grad=True)
    y = nd.asarray(np.random.default_rng(1).uniform(0, 1, (3, 4)), device=device)
    assert gradcheck(lambda z: F.binary_cross_entropy_with_logits(z, y, reduction="sum"), [logits])


@pytest.mark.parametrize("x_shape", [(3,), (4, 3), (2, 4, 3), (0, 3)])
@pytest.mark.parametrize("with_bias", [True, False])
def test_linear_one_node_matches_numpy_and_gradcheck(x_shape: tuple[int, ...], with_bias: bool) -> None:
    x, w, b = _x(x_shape, 5), _x((2, 3), 6), (_x((2,), 7) if with_bias else None)
    want = x.to_numpy() @ w.to_numpy().T + (b.to_numpy() if with_bias else 0.0)
    y = F.linear(x, w, b)
    np.testing.assert_allclose(y.to_numpy(), want, rtol=1e-12, atol=1e-12)
    assert y._node is not None and y._node.name == "linear"  # one node, not three
    args = [x, w] + ([b] if with_bias else [])
    assert gradcheck(lambda *t: F.linear(t[0], t[1], t[2] if with_bias else None), args)


def test_linear_transposed_inputs_promotion_complex_and_double_backward() -> None:
    x = _x((3, 4), 1)
    w = nd.asarray(np.random.default_rng(2).standard_normal((4, 2)), requires_grad=True)
    assert gradcheck(lambda a, c: F.linear(a.T, c.T), [_x((4, 3), 9), w])  # transposed operands
    x32 = nd.asarray(np.ones((2, 4), np.float32))
    y = F.linear(x32, w.T)  # float32 input, float64 weight: promoted; the gradient keeps w's dtype
    nd.sum(y).backward()
    assert y.dtype == nd.float64 and w.grad.dtype == nd.float64
    rng = np.random.default_rng(3)
    xc = nd.asarray(rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3)), requires_grad=True)
    wc = nd.asarray(rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3)), requires_grad=True)
    assert gradcheck(lambda a, c: nd.real(nd.sum(F.linear(a, c) * nd.conj(F.linear(a, c)))), [xc, wc])
    # double backward (the rule is made of differentiable ops) agrees with the matmul road's
    wt = nd.asarray(w.to_numpy().T, requires_grad=True)
    second = []
    for f in (lambda a, c: F.linear(a, c), lambda a, c: nd.matmul(a, c.mT)):
        (gx,) = nd.autograd.grad(nd.sum(f(x, wt) ** 2), [x], create_graph=True)
        second.append([g.to_numpy() for g in nd.autograd.grad(nd.sum(gx * gx), [x, wt])])
    for got, want in zip(*second):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ValueError, match="linear: weight must be 2-D"):
        F.linear(x, nd.ones(4))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_matches_numpy_and_gradcheck(reduction: str) -> None:
    a, b = _x((4, 3), 10), _x((3,), 11)  # the target broadcasts
    d = a.to_numpy() - b.to_numpy()
    want = {"mean": (d * d).mean(), "sum": (d * d).sum(), "none": d * d}[reduction]
    np.testing.assert_allclose(F.mse_loss(a, b, reduction).to_numpy(), want, rtol=1e-12)
    assert gradcheck(lambda s, t: F.mse_loss(s, t, reduction), [a, b])
    assert gradcheck(lambda s: F.mse_loss(s, 0.5, reduction), [a])  # a Python scalar target
    rng = np.random.default_rng(12)
    c = nd.asarray(rng.standard_normal(5) + 1j * rng.standard_normal(5), requires_grad=True)
    assert gradcheck(lambda s: nd.real(F.mse_loss(s, nd.zeros(5, dtype=nd.complex128), reduction)), [c])
    empty = nd.zeros((0, 3), requires_grad=True)
    loss = F.mse_loss(empty, nd.zeros((0, 3)), reduction)
    (loss if reduction != "none" else nd.sum(loss)).backward()
    assert empty.grad.shape == (0, 3)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_and_cross_entropy_reductions(reduction: str) -> None:
    logits, target = _x((5, 4), 8), nd.asarray([0, 3, 1, 1, 2])
    host = logits.to_numpy()
    logp = host - np.log(np.exp(host).sum(1, keepdims=True))
    rows = -logp[np.arange(5), [0, 3, 1, 1, 2]]
    want = {"mean": rows.mean(), "sum": rows.sum(), "none": rows}[reduction]
    np.testing.assert_allclose(F.cross_entropy(logits, target, reduction).to_numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(F.nll_loss(nd.asarray(logp), target, reduction).to_numpy(), want, rtol=1e-12)
    assert gradcheck(lambda t: F.cross_entropy(t, target, reduction), [logits])
    empty = F.cross_entropy(nd.zeros((0, 4), requires_grad=True), nd.zeros(0, dtype=nd.int64), reduction)
    assert empty.shape == ((0,) if reduction == "none" else ())
    if reduction == "mean":
        assert np.isnan(float(empty))  # the mean of no values, as NumPy and PyTorch give
    with pytest.raises(ValueError, match="reduction must be"):
        F.nll_loss(nd.asarray(logp), target, "avg")


@pytest.mark.parametrize("act", ["relu", "gelu", "sigmoid", "silu", "tanh"])
def test_activations(act: str) -> None:
    assert gradcheck(getattr(F, act), [nd.asarray([-2.5, -0.3, 0.4, 3.0], requires_grad=True)])
    from math import erf

    host = np.linspace(-4, 4, 17)
    want = {"relu": np.maximum(host, 0), "gelu": host * 0.5 * (1 + np.vectorize(erf)(host / np.sqrt(2))),
            "sigmoid": 1 / (1 + np.exp(-host)), "silu": host / (1 + np.exp(-host)), "tanh": np.tanh(host)}[act]  # fmt: skip
    np.testing.assert_allclose(getattr(F, act)(nd.asarray(host)).to_numpy(), want, rtol=1e-13, atol=1e-15)


def test_module_bookkeeping_and_state_dict() -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.Dropout(0.5), nn.Linear(4, 2, bias=False))
    names = [n for n, _ in model.named_parameters()]
    assert names == ["0.weight", "0.bias", "1.weight", "1.bias", "3.weight"]
    sd = model.state_dict()
    clone = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.Dropout(0.5), nn.Linear(4, 2, bias=False))
    clone.load_state_dict(sd)
    model.eval(), clone.eval()
    x = nd.ones((2, 3))
    np.testing.assert_array_equal(model(x).to_numpy(), clone(x).to_numpy())
    assert not model.training and not model[2].training
    with pytest.raises(KeyError, match="missing"):
        clone.load_state_dict({})
    moved = model.to_device("numpy:1")
    assert all(p.device == "numpy:1" for p in moved.parameters())
    emb = nn.Embedding(10, 3)
    assert emb(nd.asarray([[1, 2], [3, 1]])).shape == (2, 2, 3)


def test_optimizers_follow_pytorch_update_rules() -> None:
    g_host = np.array([0.5, -1.0, 2.0])
    for opt_cls, kwargs in [(nd.optim.SGD, {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
                            (nd.optim.Adam, {"lr": 0.01}), (nd.optim.AdamW, {"lr": 0.01})]:  # fmt: skip
        p = nd.asarray([1.0, 2.0, 3.0], requires_grad=True)
        opt = opt_cls([p], **kwargs)
        ref = np.array([1.0, 2.0, 3.0])
        m = v = buf = np.zeros(3)
        for t in range(1, 4):
            p.grad = nd.asarray(g_host * t)
            opt.step()
            g = g_host * t
            if opt_cls is nd.optim.SGD:
                g = g + 0.01 * ref
                buf = g if t == 1 else 0.9 * buf + g
                ref = ref - 0.1 * (g + 0.9 * buf)
            else:
                if opt_cls is nd.optim.AdamW:
                    ref = ref * (1 - 0.01 * 0.01)
                m = 0.9 * m + 0.1 * g
                v = 0.999 * v + 0.001 * g * g
                ref = ref - 0.01 * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
        np.testing.assert_allclose(p.to_numpy(), ref, rtol=1e-10, err_msg=opt_cls.__name__)


def test_optimizer_state_is_per_parameter_when_some_grads_are_missing() -> None:
    def run(together: bool) -> list[list[float]]:
        a = nd.asarray([1.0, 2.0], requires_grad=True)
        b = nd.asarray([[3.0]], requires_grad=True)
        opts = [nd.optim.Adam([a, b], lr=0.1)] if together else [nd.optim.Adam([a], lr=0.1), nd.optim.Adam([b], lr=0.1)]
        for with_b in (False, True, True):
            loss = nd.sum(a * a) + (nd.sum(b * b) if with_b else 0.0)
            loss.backward()
            for o in opts:
                o.step()
                o.zero_grad()
        return [a.tolist(), b.tolist()]

    assert run(True) == run(False)


def test_optimizer_refuses_a_parameter_listed_twice() -> None:
    w = nd.ones(3, requires_grad=True)
    with pytest.raises(ValueError, match="appears more than once"):
        nd.optim.Adam([w, w])


@pytest.mark.parametrize("loss", ["mse", "mse_scalar", "cross_entropy", "linear", "relu"])
def test_one_node_losses_and_layers_differentiate_twice(loss: str, hvp_check) -> None:  # type: ignore[no-untyped-def]
    # the single-node rules read intermediates computed without a graph; a recorded backward
    # must still see their dependence on the inputs (Hessian-vector product vs differences)
    x = _x((4, 3), 13)
    t, w, target = _x((4, 3), 14), _x((2, 3), 15), nd.asarray([0, 2, 1, 2])
    f = {
        "mse": lambda a: F.mse_loss(a * a, t), "mse_scalar": lambda a: F.mse_loss(nd.sin(a), 0.25, "sum"),
        "cross_entropy": lambda a: F.cross_entropy(a * 2.0, target),
        "linear": lambda a: nd.sum(F.linear(a, w, None) ** 3), "relu": lambda a: nd.sum(F.relu(a) ** 3),
    }[loss]  # fmt: skip
    hvp_check(f, x, seed=16)


def test_batch_norm_any_spatial_rank() -> None:
    """(N, C), (N, C, L) and (N, C, H, W): statistics over every axis but the channels."""
    rng = np.random.default_rng(0)
    for shape in ((6, 3), (4, 3, 5), (4, 3, 2, 5)):
        v = rng.standard_normal(shape)
        axes = (0, *range(2, len(shape)))
        bshape = (1, 3) + (1,) * (len(shape) - 2)
        w, b = rng.standard_normal(3), rng.standard_normal(3)
        want = (v - v.mean(axis=axes, keepdims=True)) / np.sqrt(v.var(axis=axes, keepdims=True) + 1e-5)
        want = want * w.reshape(bshape) + b.reshape(bshape)
        got = F.batch_norm(nd.asarray(v), None, None, nd.asarray(w), nd.asarray(b), training=True)
        np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="batch_norm"):
        F.batch_norm(nd.ones((3,)), None, None, training=True)


@pytest.mark.parametrize("device", ["numpy", "cpu"])
def test_batch_norm_training_float16_statistics_as_var(device: str) -> None:
    """float16 training batch_norm takes var's statistics (float32, each rounded once): channels
    of equal values normalise to exactly 0, and the running statistics are NumPy's float32 ones
    rounded to float16."""
    rng = np.random.default_rng(5)
    v = np.repeat(rng.standard_normal((1, 257, 1)).astype(np.float16), 7, axis=0).repeat(9, axis=2)
    v[:, 256] = rng.standard_normal((7, 9)).astype(np.float16)  # one channel of random values
    rm, rv = nd.zeros((257,), dtype=nd.float16, device=device), nd.ones((257,), dtype=nd.float16, device=device)
    y = F.batch_norm(nd.asarray(v, device=device), rm, rv, training=True, momentum=1.0).to_numpy()
    assert (y[:, :256] == 0).all()
    wide = v.astype(np.float32)
    np.testing.assert_array_equal(rm.to_numpy(), wide.mean(axis=(0, 2)).astype(np.float16))
    want = (wide.var(axis=(0, 2)).astype(np.float16).astype(np.float32) * (63 / 62)).astype(np.float16)
    np.testing.assert_allclose(rv.to_numpy().astype(np.float32), want.astype(np.float32), rtol=1e-3)


@pytest.mark.parametrize("device", ["numpy", "cpu"])
def test_batch_norm_training_one_node_gradcheck(device: str) -> None:
    """Training-mode batch_norm records one node: its rule against finite differences for x,
    weight and bias (each present or not, (N, C) and (N, C, H, W)), and differentiated again
    (create_graph) against the pieces' own autograd."""
    rng = np.random.default_rng(3)

    def arr(shape: tuple[int, ...]) -> nd.Array:
        return nd.asarray(rng.standard_normal(shape), device=device, requires_grad=True)

    for shape in ((5, 3), (3, 3, 2, 4)):
        x, w, b = arr(shape), arr((3,)), arr((3,))
        y = F.batch_norm(x, None, None, w, b, training=True)
        assert y._node is not None and y._node.name == "batch_norm"
        assert gradcheck(lambda a, c, d: F.batch_norm(a, None, None, c, d, training=True), [x, w, b])
        assert gradcheck(lambda a: F.batch_norm(a, None, None, training=True), [x])
        assert gradcheck(lambda a, d: F.batch_norm(a, None, None, None, d, training=True), [x, b])
        # second order: the gradient of sum(gx ** 2) + sum(gw ** 3) as the pieces differentiate it
        axes = (0, *range(2, len(shape)))
        bshape = (1, 3) + (1,) * (len(shape) - 2)

        def pieces(a: nd.Array, c: nd.Array, d: nd.Array, axes: tuple[int, ...] = axes,
                   bshape: tuple[int, ...] = bshape) -> nd.Array:  # fmt: skip
            m, v = nd.mean(a, axis=axes), nd.var(a, axis=axes)
            return (a - nd.reshape(m, bshape)) / nd.sqrt(nd.reshape(v, bshape) + 1e-5) * nd.reshape(c, bshape) \
                + nd.reshape(d, bshape)  # fmt: skip

        cot = nd.asarray(rng.standard_normal(shape), device=device)
        got, want = [], []
        for fn, out in ((lambda a, c, d: F.batch_norm(a, None, None, c, d, training=True), got), (pieces, want)):
            gx, gw = nd.autograd.grad(nd.sum(fn(x, w, b) * cot), [x, w], create_graph=True)
            out.extend(g.to_numpy() for g in nd.autograd.grad(nd.sum(gx * gx) + nd.sum(gw * gw * gw), [x, w]))
        for g1, g2 in zip(got, want):
            np.testing.assert_allclose(g1, g2, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("device", ["numpy", "cpu"])
def test_batch_norm_gradient_through_a_cotangent_in_the_graph(device: str) -> None:
    """Under create_graph, a broadcast cotangent that depends on a leaf stays in the graph: the
    gradient of the input gradient with respect to that leaf, against the pieces' autograd."""
    rng = np.random.default_rng(4)
    x = nd.asarray(rng.standard_normal((4, 3, 5)), device=device, requires_grad=True)
    c = nd.asarray(rng.standard_normal((4, 1, 5)), device=device, requires_grad=True)

    def pieces(a: nd.Array) -> nd.Array:
        m, v = nd.mean(a, axis=(0, 2), keepdims=True), nd.var(a, axis=(0, 2), keepdims=True)
        return (a - m) / nd.sqrt(v + 1e-5)

    got = []
    for fn in (lambda a: F.batch_norm(a, None, None, training=True), pieces):
        (gx,) = nd.autograd.grad(fn(x), [x], grad_outputs=nd.broadcast_to(c * 1.0, (4, 3, 5)), create_graph=True)
        (gc,) = nd.autograd.grad(nd.sum(gx * gx), [c])
        got.append(gc.to_numpy())
    assert np.abs(got[0]).max() > 1e-3
    np.testing.assert_allclose(got[0], got[1], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "flipped"])
def test_nll_loss_gathers_against_torch(reduction: str, layout: str) -> None:
    # one gather of N values (no one-hot): values and gradients as PyTorch's, on views too
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(21)
    base = rng.standard_normal((5, 7) if layout == "transposed" else (7, 5))
    view = {"contiguous": lambda a: a, "transposed": lambda a: a.T, "flipped": lambda a: a[:, ::-1]}[layout]
    host = np.ascontiguousarray(view(base))
    labels = np.array([0, 4, 4, 2, 1, 3, 0])
    for tdtype in (nd.int64, nd.int32, nd.uint8):
        leaf = nd.asarray(base, requires_grad=True)
        x = nd.flip(leaf, axis=1) if layout == "flipped" else view(leaf)
        target = nd.asarray(labels, dtype=tdtype)
        tx = torch.tensor(host.copy(), requires_grad=True)
        for f, tf in ((F.nll_loss, torch.nn.functional.nll_loss), (F.cross_entropy, torch.nn.functional.cross_entropy)):
            leaf.grad = tx.grad = None
            got, want = f(x, target, reduction), tf(tx, torch.from_numpy(labels), reduction=reduction)
            np.testing.assert_allclose(got.to_numpy(), want.detach().numpy(), rtol=1e-12)
            nd.sum(got * 1.5).backward()
            (want * 1.5).sum().backward()
            np.testing.assert_allclose(view(leaf.grad.to_numpy()), tx.grad.numpy(), rtol=1e-12, atol=1e-15)
    assert gradcheck(lambda t: F.nll_loss(t, nd.asarray(labels), reduction), [nd.asarray(host, requires_grad=True)])


def test_nll_loss_float32_empty_and_bad_targets() -> None:
    logp = nd.asarray(np.log(np.full((3, 4), 0.25, np.float32)))
    loss = F.nll_loss(logp, nd.asarray([1, 2, 3]))
    assert loss.dtype == nd.float32 and abs(float(loss) - np.log(4)) < 1e-6
    for reduction, shape in (("mean", ()), ("sum", ()), ("none", (0,))):
        assert F.nll_loss(nd.zeros((0, 4)), nd.zeros(0, dtype=nd.int64), reduction).shape == shape
    for bad in ([0, 4, 1], [0, -1, 1]):
        with pytest.raises(IndexError, match=r"nll_loss: target -?[14] is out of bounds for 4 classes"):
            F.nll_loss(logp, nd.asarray(bad))
        with pytest.raises(IndexError, match="out of bounds"):
            F.cross_entropy(nd.asarray(np.zeros((3, 4)), requires_grad=True), nd.asarray(bad))
