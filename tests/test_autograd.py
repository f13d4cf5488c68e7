"""Autograd: every VJP rule against finite differences (float64), and the engine's contract."""

from __future__ import annotations

import numpy as np
import pytest

import ndplane as nd
from ndplane.autograd import gradcheck
from ndplane.nn import functional as F


def _arr(shape, lo=-2.0, hi=2.0, seed=0):  # type: ignore[no-untyped-def]
    host = np.random.default_rng(seed).uniform(lo, hi, shape)
    return nd.asarray(host, requires_grad=True)


POS = {"lo": 0.3, "hi": 2.0}
UNIT = {"lo": -0.8, "hi": 0.8}
UNARY = {
    "negative": {}, "abs": {}, "exp": {}, "expm1": {}, "log": POS, "log1p": POS, "log2": POS, "log10": POS,
    "sqrt": POS, "square": {}, "reciprocal": POS, "sin": {}, "cos": {}, "tan": UNIT, "sinh": {}, "cosh": {},
    "tanh": {}, "asin": UNIT, "acos": UNIT, "atan": {}, "asinh": {}, "acosh": {"lo": 1.5, "hi": 3.0},
    "atanh": UNIT, "positive": {},
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_rules(name: str) -> None:
    fn = getattr(nd, name)
    assert gradcheck(fn, [_arr((2, 3), **UNARY[name])])


BINARY = {
    "add": {}, "subtract": {}, "multiply": {}, "divide": {"b": POS}, "pow": {"a": POS},
    "maximum": {}, "minimum": {}, "atan2": {"b": POS}, "hypot": {"a": POS}, "logaddexp": {},
    "remainder": {"a": POS, "b": {"lo": 2.5, "hi": 3.0}}, "copysign": {},
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_rules_with_broadcasting(name: str) -> None:
    fn = getattr(nd, name)
    a = _arr((2, 3), **BINARY[name].get("a", {}), seed=1)
    b = _arr((3,), **BINARY[name].get("b", {}), seed=2)
    assert gradcheck(fn, [a, b])
    assert gradcheck(lambda t: fn(t, 1.5), [a])
    assert gradcheck(lambda t: fn(2.5, t), [_arr((3,), **POS)]) if name in ("pow", "divide") else True


REDUCTIONS = {
    "sum": lambda x: nd.sum(x, axis=1), "sum_all": lambda x: nd.sum(x),
    "prod": lambda x: nd.prod(x, axis=0, keepdims=True), "max": lambda x: nd.max(x, axis=(0, 2)),
    "min": lambda x: nd.min(x, axis=-1), "mean": lambda x: nd.mean(x, axis=1),
    "var": lambda x: nd.var(x, axis=0, correction=1), "std": lambda x: nd.std(x),
    "cumsum": lambda x: nd.cumulative_sum(x, axis=1), "cumprod": lambda x: nd.cumulative_prod(x, axis=2),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_rules(name: str) -> None:
    assert gradcheck(REDUCTIONS[name], [_arr((2, 3, 4), lo=0.5, hi=2.0)])


def test_prod_with_zeros() -> None:
    x = nd.asarray([[0.0, 2.0, 3.0], [0.0, 0.0, 5.0]], requires_grad=True)
    nd.sum(nd.prod(x, axis=1)).backward()
    assert x.grad.tolist() == [[6.0, 0.0, 0.0], [0.0, 0.0, 0.0]]


MANIP = {
    "reshape": lambda x: nd.reshape(x.T, (4, 3)), "permute": lambda x: nd.permute_dims(x, (1, 0)) * 2,
    "getitem": lambda x: x[1:, ::-2], "getitem_int": lambda x: x[1] * x[:, 0][:, None],
    "take": lambda x: nd.take(x, nd.asarray([2, 0, 2, -1]), axis=1),
    "mask": lambda x: x[x > 0] ** 2, "int_array": lambda x: x[nd.asarray([0, 2, 0])],
    "broadcast": lambda x: nd.broadcast_to(x[:1], (4, 3, 4)), "flip": lambda x: nd.flip(x, axis=0),
    "expand_squeeze": lambda x: nd.squeeze(nd.expand_dims(x, axis=1), axis=1) + 0,
    "concat": lambda x: nd.concat([x, x[:, :2] * 3], axis=1), "stack": lambda x: nd.stack([x, -x]),
    "where": lambda x: nd.where(x > 0, x, x * x), "matmul": lambda x: x.T @ x,
    "matvec": lambda x: x @ nd.asarray([1.0, -1.0, 2.0, 0.5]), "vecmat": lambda x: nd.asarray([1.0, 2.0, 3.0]) @ x,
    "batched": lambda x: nd.matmul(nd.reshape(x, (3, 2, 2)), nd.reshape(x, (3, 2, 2))),
    "sort": lambda x: nd.sort(x, axis=0, descending=True), "mT": lambda x: x.mT @ x,
    "astype": lambda x: nd.astype(x, nd.float32).astype(nd.float64) * 1.0,
    "vecdot": lambda x: nd.vecdot(x, x[::-1] * 2), "vecdot_axis0": lambda x: nd.vecdot(x, x * x, axis=0),
    "vecdot_vector": lambda x: nd.vecdot(x, x[0]), "vecdot_batch": lambda x: nd.vecdot(x[:, None, :], x[:2]),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(MANIP))
def test_manipulation_and_indexing_rules(name: str) -> None:
    # float32 round trips quantise the function: take wider finite-difference steps there
    eps, atol = (1e-3, 1e-3) if name == "astype" else (1e-6, 1e-5)
    assert gradcheck(MANIP[name], [_arr((3, 4), seed=3)], eps=eps, atol=atol)


def test_double_backward() -> None:
    x = nd.asarray([0.5, -1.0, 2.0], requires_grad=True)
    (g,) = nd.autograd.grad(nd.sum(nd.sin(x) * x * x), x, create_graph=True)
    (gg,) = nd.autograd.grad(nd.sum(g), x)
    xs = np.array([0.5, -1.0, 2.0])
    want = -np.sin(xs) * xs**2 + 4 * xs * np.cos(xs) + 2 * np.sin(xs)
    np.testing.assert_allclose(gg.to_numpy(), want, rtol=1e-12)


def test_long_chain_has_no_recursion_limit() -> None:
    x = nd.asarray(1.0, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.backward()
    assert float(x.grad) == 1.0


def test_accumulation_and_reuse() -> None:
    x = nd.asarray([1.0, 2.0], requires_grad=True)
    y = x * x + x
    nd.sum(y).backward(retain_graph=True)
    nd.sum(y).backward()
    assert x.grad.tolist() == [6.0, 10.0]
    with pytest.raises(RuntimeError, match="already freed"):
        nd.sum(y).backward()


def test_nonscalar_backward_needs_a_gradient() -> None:
    x = nd.ones((2, 2), requires_grad=True)
    with pytest.raises(RuntimeError, match="single-element output"):
        (x * 2).backward()
    (x * 2).backward(nd.full((2, 2), 0.5))
    assert x.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_inplace_change_of_a_saved_array_is_detected() -> None:
    x = nd.asarray([1.0, 2.0], requires_grad=True)
    h = x * 1.0
    y = h * h  # saves h
    h += 1.0
    with pytest.raises(RuntimeError, match="modified in place"):
        nd.sum(y).backward()
    with pytest.raises(RuntimeError, match="leaf"):
        x += 1.0


def test_inplace_and_setitem_are_recorded() -> None:
    x = nd.asarray([1.0, 2.0, 3.0], requires_grad=True)
    w = nd.asarray([10.0], requires_grad=True)
    h = x * 2.0
    h += x  # h = 3x
    h[1:2] = w * w  # h = [3x0, w^2, 3x2]
    nd.sum(h * h).backward()
    assert x.grad.tolist() == [18.0, 0.0, 54.0]
    assert w.grad.tolist() == [2 * 100.0 * 2 * 10.0]


def test_a_write_after_a_read_keeps_the_read_on_the_old_value() -> None:
    # z[1:4] reads z after the first write; the second write gives z a new node, which must
    # not receive the gradient of that read (it went to the final z once: [8, 10, 6]).
    x = nd.asarray([1.0, 2.0, 3.0], requires_grad=True)
    z = nd.zeros(5)
    z[0:3] = z[0:3] + x
    z[1:4] = z[1:4] + x  # z = [x0, x1 + x0, x2 + x1, x2, 0]
    (g,) = nd.autograd.grad(nd.sum(z * z), [x])
    assert g.tolist() == [8.0, 16.0, 16.0]  # PyTorch's too
    h = x * 1.0
    y = h + 1.0  # reads h before the write (add saves nothing)
    h += x
    nd.sum(y * 3.0 + h).backward()
    assert x.grad.tolist() == [5.0, 5.0, 5.0]


def test_imatmul_under_autograd() -> None:
    # As for x *= w: matmul saves the value before the write, so the backward pass detects the
    # write; a leaf refuses it at once; under no_grad it is a plain write.
    x = nd.asarray([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    w = nd.asarray([[0.5, -1.0], [2.0, 1.0]], requires_grad=True)
    h = x * 1.0
    h @= w
    assert h.tolist() == [[4.5, 1.0], [9.5, 1.0]]
    with pytest.raises(RuntimeError, match="modified in place"):
        nd.sum(h).backward()
    with pytest.raises(RuntimeError, match="leaf"):
        x @= w
    with nd.no_grad():
        x @= w
    assert x.tolist() == [[4.5, 1.0], [9.5, 1.0]]


def test_no_grad_and_detach() -> None:
    x = nd.ones(3, requires_grad=True)
    with nd.no_grad():
        assert not (x * 2).requires_grad
        with nd.enable_grad():
            assert (x * 2).requires_grad
    assert not x.detach().requires_grad and x.detach()._storage is x._storage
    assert not nd.argmax(x * 2).requires_grad  # integer outputs carry no gradient


@pytest.mark.parametrize("device", ["numpy-nof64", "numpy-contig"])
def test_gradients_agree_across_devices(device: str) -> None:
    host = np.random.default_rng(5).standard_normal((4, 3)).astype(np.float32)

    def loss(dev: str) -> np.ndarray:
        x = nd.asarray(host, device=dev, requires_grad=True)
        w = nd.asarray(host.T.copy(), device=dev, requires_grad=True)
        y = nd.mean(nd.tanh(x @ w) * nd.sum(x, axis=1)[:, None])
        y.backward()
        return np.concatenate([x.grad.to_numpy().ravel(), w.grad.to_numpy().ravel()])

    np.testing.assert_allclose(loss(device), loss("numpy"), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn", ["exp", "tanh", "sqrt", "reciprocal", "abs", "divide", "maximum", "inv",
                                "log_softmax", "softmax", "det", "eigvalsh", "svdvals", "cholesky", "qr"])  # fmt: skip
def test_second_order_through_rules_that_read_their_output(fn: str, hvp_check) -> None:  # type: ignore[no-untyped-def]
    # NOTE: these rules read their own (saved) output; it must rejoin the graph under create_graph
    x = nd.asarray(np.random.default_rng(3).uniform(0.5, 2.0, (3, 3)) + 3 * np.eye(3), requires_grad=True)
    f = {
        "exp": nd.exp, "tanh": nd.tanh, "sqrt": nd.sqrt, "reciprocal": nd.reciprocal,
        "abs": lambda t: nd.abs(t - 1.5) ** 3, "divide": lambda t: nd.divide(t * t, t + 1.0),
        "maximum": lambda t: nd.maximum(t * t, 2.0 * t), "inv": nd.linalg.inv,
        "log_softmax": lambda t: F.log_softmax(t, axis=1) * nd.arange(3.0),
        "softmax": lambda t: F.softmax(t, axis=0) ** 2, "det": nd.linalg.det,
        "eigvalsh": lambda t: nd.linalg.eigvalsh(t + t.mT) ** 2,
        "svdvals": lambda t: nd.linalg.svdvals(t) ** 3, "cholesky": lambda t: nd.linalg.cholesky(t @ t.mT) ** 2,
        "qr": lambda t: nd.linalg.qr(t).R ** 2,
    }[fn]  # fmt: skip
    hvp_check(f, x)


def test_complex_abs_and_python_complex_scalars_follow_the_conjugate_convention() -> None:
    # Split into real inputs: gradcheck perturbs them directly, so the convention is checked.
    re, im = _arr((4,), seed=1), _arr((4,), seed=2)
    assert gradcheck(lambda a, b: nd.abs(a + 1j * b), [re, im])
    assert gradcheck(lambda a, b: nd.real((a + 1j * b) * (2.0 - 3.0j)) + nd.imag((a + 1j * b) / (1.0 + 2.0j)), [re, im])
    assert gradcheck(lambda a, b: nd.real((0.5 + 1.5j) - (a + 1j * b) * 1j), [re, im])


def _split(y: nd.Array) -> nd.Array:
    """Real and imaginary parts side by side: gradcheck's real cotangent then weighs both."""
    return nd.concat([nd.real(y), nd.imag(y)], axis=-1) if y.dtype.kind == "complex" else y


@pytest.mark.parametrize("op", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_fft_rules(op: str, norm: str) -> None:
    f = getattr(nd.fft, op)
    for m, n, axis in [(5, None, -1), (6, None, 0), (6, 4, -1), (5, 9, -1), (6, 7, 0)]:
        re, im = _arr((m, 3) if axis == 0 else (2, m), seed=m), _arr((m, 3) if axis == 0 else (2, m), seed=m + 1)
        if op in ("fft", "ifft", "irfft", "hfft"):  # complex input: perturb both parts
            assert gradcheck(lambda a, b: _split(f(a + nd.asarray(1j) * b, n=n, axis=axis, norm=norm)), [re, im])  # noqa: B023
        else:
            assert gradcheck(lambda a: _split(f(a, n=n, axis=axis, norm=norm)), [re])  # noqa: B023


def test_nd_fft_gradients() -> None:
    x = _arr((3, 4, 5), seed=4)
    assert gradcheck(lambda a: _split(nd.fft.rfftn(a, s=(4, 6), axes=(0, 2))), [x])
    assert gradcheck(lambda a: nd.fft.irfftn(nd.fft.fftn(a), s=(3, 4, 6)), [x])
