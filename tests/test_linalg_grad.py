"""Gradients of the linalg factorisations (cholesky, qr, svd, svdvals, eigh, eigvalsh):
finite differences (float64, complex128 through its real and imaginary parts), closed forms
(PyTorch's conventions), compositions and the errors of the cases without a gradient."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import ndplane as nd
from ndplane.autograd import gradcheck

la = nd.linalg
RNG = np.random.default_rng(11)
W33 = RNG.standard_normal((2, 3, 3))
SHAPES = [(2, 4, 3), (2, 3, 4), (2, 3, 3)]


def _leaf(host: np.ndarray) -> nd.Array:
    return nd.asarray(host, requires_grad=True)


def _real_inputs(shape: tuple[int, ...], seed: int = 0) -> list[nd.Array]:
    return [_leaf(np.random.default_rng(seed).standard_normal(shape))]


def _complex_inputs(shape: tuple[int, ...], seed: int = 0) -> list[nd.Array]:
    rng = np.random.default_rng(seed)
    return [_leaf(rng.standard_normal(shape)), _leaf(rng.standard_normal(shape))]


def _complex(fn: Callable[[nd.Array], nd.Array]) -> Callable[..., nd.Array]:
    # NOTE: `b * 1j` with a Python scalar would do, but the multiply rule does not conjugate a
    # complex *scalar* operand; an array 1j keeps this test about the linalg rules.
    j = nd.asarray(1j)
    return lambda a, b: fn(a + b * j)


def _check(fn: Callable[[nd.Array], nd.Array], shape: tuple[int, ...], kind: str, seed: int = 0) -> None:
    if kind == "real":
        assert gradcheck(fn, _real_inputs(shape, seed))
    else:
        assert gradcheck(_complex(fn), _complex_inputs(shape, seed))


def _abs2(v: nd.Array) -> nd.Array:
    return nd.real(v * nd.conj(v)) if v.dtype.kind == "complex" else v * v


def _spd_host(n: int, batch: int = 2, complex_: bool = False, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, n, n)) + (1j * rng.standard_normal((batch, n, n)) if complex_ else 0)
    return x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n)


KINDS = ["real", "complex"]


# ---------------------------------------------------------------------------
# finite differences, each output alone and together
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_gradcheck_with_a_general_perturbation(kind: str, upper: bool) -> None:
    # Around an SPD matrix, but every element (upper triangle too) perturbed independently: the
    # rule is the gradient of the function as implemented (lower triangle read).
    spd = _spd_host(3, complex_=kind == "complex")
    noise = 0.1 * np.random.default_rng(4).standard_normal(spd.shape)
    inputs = [_leaf(spd.real + noise)] + ([_leaf(spd.imag - noise)] if kind == "complex" else [])
    fn = lambda a: la.cholesky(a, upper=upper)  # noqa: E731
    assert gradcheck(fn if kind == "real" else _complex(fn), inputs)
    grads = nd.autograd.grad(nd.sum(_abs2(fn(inputs[0] if kind == "real" else inputs[0] + 0j))), [inputs[0]])
    assert np.all(np.triu(grads[0].to_numpy(), 1) == 0)  # the strict upper triangle is never read


EIGH = {
    "values": lambda a: la.eigh(a).eigenvalues,
    "vectors": lambda a: _abs2(la.eigh(a).eigenvectors),
    "both": lambda a: (lambda r: _abs2(r.eigenvectors) * nd.asarray(W33) + r.eigenvalues[..., None])(la.eigh(a)),
    "eigvalsh": lambda a: la.eigvalsh(a),
}  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", sorted(EIGH))
def test_eigh_gradcheck(kind: str, case: str) -> None:
    _check(EIGH[case], (2, 3, 3), kind)


def _rank1(r: la.SVDResult) -> nd.Array:
    # u_1 v_1^H is phase-invariant although U and Vh alone are not
    p = r.U[..., :, :1] @ r.Vh[..., :1, :]
    return nd.real(p) + nd.imag(p) if p.dtype.kind == "complex" else p


SVD = {
    "U": lambda a: _abs2(la.svd(a, full_matrices=False).U),
    "S": lambda a: la.svd(a, full_matrices=False).S,
    "Vh": lambda a: _abs2(la.svd(a, full_matrices=False).Vh),
    "rank1+S": lambda a: (lambda r: nd.sum(_rank1(r), axis=-1) + r.S[..., :1] ** 2)(la.svd(a, full_matrices=False)),
    "svdvals": lambda a: la.svdvals(a),
}  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("case", sorted(SVD))
def test_svd_gradcheck(kind: str, shape: tuple[int, ...], case: str) -> None:
    _check(SVD[case], shape, kind)


def _parts(x: nd.Array) -> nd.Array:
    return nd.real(x) + 2 * nd.imag(x) if x.dtype.kind == "complex" else x


QR = {
    "Q": lambda a: _parts(la.qr(a).Q),
    "R": lambda a: _parts(la.qr(a).R),
    "both": lambda a: (lambda r: nd.concat([nd.reshape(_parts(r.Q), (2, -1)), nd.reshape(_parts(r.R), (2, -1))],
                                           axis=-1))(la.qr(a)),
}  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("case", sorted(QR))
def test_qr_gradcheck(kind: str, shape: tuple[int, ...], case: str) -> None:
    _check(QR[case], shape, kind)


# ---------------------------------------------------------------------------
# the triangle convention against PyTorch's symmetric gradient
# ---------------------------------------------------------------------------


def _h(x: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(x, -1, -2))


def _torch_eigh(a: np.ndarray, gw: np.ndarray, gv: np.ndarray) -> np.ndarray:
    """PyTorch's linalg_eig_backward (hermitian): V (skew(V^H gV) / 2 / E + diag(gw)) V^H."""
    w, v = np.linalg.eigh(a)
    e = w[..., None, :] - w[..., :, None]
    np.einsum("...ii->...i", e)[...] = 1.0
    vhgv = _h(v) @ gv
    inner = 0.5 * (vhgv - _h(vhgv)) / e
    np.einsum("...ii->...i", inner)[...] = gw
    return v @ inner @ _h(v)


def _torch_cholesky(a: np.ndarray, gl: np.ndarray) -> np.ndarray:
    """PyTorch's cholesky_backward, made Hermitian: L^{-H} herm(Phi(L^H gL)) L^{-1}."""
    low = np.linalg.cholesky(a)
    phi = np.tril(_h(low) @ gl)
    np.einsum("...ii->...i", phi)[...] *= 0.5
    linv = np.linalg.inv(low)
    return _h(linv) @ (0.5 * (phi + _h(phi))) @ linv


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("build", ["x+xh", "x@xh+nI"])
def test_hermitian_inputs_get_pytorchs_gradient(kind: str, build: str) -> None:
    rng = np.random.default_rng(8)
    xs = rng.standard_normal((2, 3, 3)) + (1j * rng.standard_normal((2, 3, 3)) if kind == "complex" else 0)
    gw, gv, gl = (rng.standard_normal(s) for s in ((2, 3), (2, 3, 3), (2, 3, 3)))
    x = _leaf(xs)
    a = x + nd.conj(x.mT) if build == "x+xh" else x @ nd.conj(x.mT) + 3 * nd.eye(3)
    w, v = la.eigh(a)
    vs = v.to_numpy()
    im = np.einsum("...ii->...i", _h(vs) @ gv).imag
    gv = gv - vs * (1j * im[..., None, :]) if kind == "complex" else gv  # a phase-invariant cotangent
    cot = [nd.asarray(gw), nd.asarray(gv, dtype=v.dtype)]
    (gx,) = nd.autograd.grad([w, v], [x], cot, retain_graph=True)
    ah = a.to_numpy()
    want = _torch_eigh(ah, gw, cot[1].to_numpy())
    # A = X + X^H gives gX = G + G^H; A = X X^H + n I gives gX = (G + G^H) X.
    chain = (lambda g: g + _h(g)) if build == "x+xh" else (lambda g: (g + _h(g)) @ xs)
    np.testing.assert_allclose(gx.to_numpy(), chain(want), atol=1e-10)
    if build == "x@xh+nI":
        (gx,) = nd.autograd.grad(la.cholesky(a), [x], nd.asarray(gl, dtype=a.dtype))
        np.testing.assert_allclose(gx.to_numpy(), chain(_torch_cholesky(ah, gl.astype(ah.dtype))), atol=1e-10)


# ---------------------------------------------------------------------------
# compositions and closed forms
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_svdvals_agrees_with_eigvalsh_of_gram(kind: str, shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(9)
    host = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if kind == "complex" else 0)
    cot = nd.asarray(rng.standard_normal(shape[:-2] + (min(shape[-2:]),)))
    x = _leaf(host)
    (g1,) = nd.autograd.grad(la.svdvals(x), [x], cot)
    gram = nd.conj(x.mT) @ x if shape[-2] >= shape[-1] else x @ nd.conj(x.mT)
    ev = nd.flip(nd.sqrt(la.eigvalsh(gram)), axis=-1)  # ascending -> descending
    (g2,) = nd.autograd.grad(ev, [x], cot)
    np.testing.assert_allclose(g1.to_numpy(), g2.to_numpy(), atol=1e-9)


@pytest.mark.parametrize("kind", KINDS)
def test_matrix_norms_through_svdvals(kind: str) -> None:
    rng = np.random.default_rng(10)
    host = rng.standard_normal((2, 4, 3)) + (1j * rng.standard_normal((2, 4, 3)) if kind == "complex" else 0)
    u, _, vh = np.linalg.svd(host, full_matrices=False)
    x = _leaf(host)
    (gnuc,) = nd.autograd.grad(nd.sum(la.matrix_norm(x, ord="nuc")), [x])
    np.testing.assert_allclose(gnuc.to_numpy(), u @ vh, atol=1e-10)  # d||A||_* = U Vh
    (g2,) = nd.autograd.grad(nd.sum(la.matrix_norm(x, ord=2)), [x])
    np.testing.assert_allclose(g2.to_numpy(), u[..., :, :1] @ vh[..., :1, :], atol=1e-10)  # u_1 v_1^H
    assert gradcheck(lambda t: la.matrix_norm(t, ord=-2), _real_inputs((2, 4, 3), seed=10))


@pytest.mark.parametrize("kind", KINDS)
def test_cholesky_logdet_matches_slogdet(kind: str) -> None:
    x = _leaf(_spd_host(4, complex_=kind == "complex", seed=12) / 4)
    a = x @ nd.conj(x.mT) + nd.eye(4)
    (g1,) = nd.autograd.grad(nd.sum(2 * nd.log(nd.real(la.diagonal(la.cholesky(a))))), [x], retain_graph=True)
    (g2,) = nd.autograd.grad(nd.sum(la.slogdet(a).logabsdet), [x])
    np.testing.assert_allclose(g1.to_numpy(), g2.to_numpy(), atol=1e-10)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_reconstruction_gradient_is_the_identity(shape: tuple[int, ...]) -> None:
    # U diag(S) Vh = A and Q R = A: through every output at once, complex phases included.
    rng = np.random.default_rng(13)
    host = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    cot = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    x = _leaf(host)
    u, s, vh = la.svd(x, full_matrices=False)
    q, r = la.qr(x)
    for recon in ((u * s[..., None, :]) @ vh, q @ r):
        (g,) = nd.autograd.grad(recon, [x], nd.asarray(cot))
        np.testing.assert_allclose(g.to_numpy(), cot, atol=1e-10)


def test_eigh_reconstruction_gives_the_folded_gradient() -> None:
    # V diag(w) V^H is the Hermitian matrix built from A's lower triangle and real diagonal.
    rng = np.random.default_rng(14)
    host = rng.standard_normal((2, 3, 3)) + 1j * rng.standard_normal((2, 3, 3))
    cot = rng.standard_normal((2, 3, 3)) + 1j * rng.standard_normal((2, 3, 3))
    x = _leaf(host)
    w, v = la.eigh(x)
    (g,) = nd.autograd.grad((v * nd.astype(w, v.dtype)[..., None, :]) @ nd.conj(v.mT), [x], nd.asarray(cot))
    s = cot + _h(cot)
    want = np.tril(s, -1) + np.einsum("...ii->...i", cot).real[..., None] * np.eye(3)
    np.testing.assert_allclose(g.to_numpy(), want, atol=1e-10)


# ---------------------------------------------------------------------------
# the phase, extra columns, dtypes and the engine
# ---------------------------------------------------------------------------


def test_phase_dependent_losses_raise() -> None:
    rng = np.random.default_rng(15)
    x = _leaf(rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)))
    with pytest.raises(RuntimeError, match=r"linalg.eigh backward: complex eigenvectors .* phase"):
        nd.autograd.grad(nd.sum(nd.imag(la.eigh(x).eigenvectors)), [x])
    with pytest.raises(RuntimeError, match=r"linalg.svd backward: complex singular vectors .* phase"):
        nd.autograd.grad(nd.sum(nd.imag(la.svd(x).U)), [x])


def test_svd_full_matrices() -> None:
    host = np.random.default_rng(16).standard_normal((2, 4, 3))
    for t in (host, np.swapaxes(host, -1, -2).copy()):
        x = _leaf(t)
        full, thin = la.svd(x), la.svd(x, full_matrices=False)
        gf = nd.autograd.grad(nd.sum(full.U[..., :3] ** 4) + nd.sum(full.Vh[..., :3, :] ** 4) + nd.sum(full.S), [x],
                              retain_graph=True)
        gt = nd.autograd.grad(nd.sum(thin.U ** 4) + nd.sum(thin.Vh ** 4) + nd.sum(thin.S), [x])
        np.testing.assert_allclose(gf[0].to_numpy(), gt[0].to_numpy(), atol=1e-12)
        extra = full.U if t.shape[-2] == 4 else full.Vh
        with pytest.raises(NotImplementedError, match=r"linalg.svd backward: .*first 3 .* full_matrices=False"):
            nd.autograd.grad(nd.sum(extra ** 3), [x])


def test_qr_complete_mode() -> None:
    rng = np.random.default_rng(17)
    x, wr = _leaf(rng.standard_normal((2, 4, 3))), nd.asarray(rng.standard_normal((4, 3)))
    (q, r), (_, r_thin) = la.qr(x, mode="complete"), la.qr(x)
    (g_complete,) = nd.autograd.grad(nd.sum(r * wr), [x])  # R's last row is a constant 0: no gradient
    (g_reduced,) = nd.autograd.grad(nd.sum(r_thin * wr[:3]), [x])
    np.testing.assert_allclose(g_complete.to_numpy(), g_reduced.to_numpy(), atol=1e-12)
    with pytest.raises(NotImplementedError, match=r"linalg.qr backward: .*first 3 columns of Q.*mode='reduced'"):
        nd.autograd.grad(nd.sum(q ** 3), [x])
    wide = _leaf(np.random.default_rng(18).standard_normal((3, 5)))
    assert gradcheck(lambda t: _parts(la.qr(t, mode="complete").Q) @ la.qr(t, mode="complete").R, [wide])


@pytest.mark.parametrize("dtype", [nd.float32, nd.complex64])
def test_single_precision_gradients_match_double(dtype: nd.DType) -> None:
    host = _spd_host(3, complex_=dtype == nd.complex64) / 3

    def loss(t: nd.Array) -> nd.Array:
        w, v = la.eigh(t)
        u, s, vh = la.svd(t)
        q, r = la.qr(t)
        return (nd.sum(_abs2(la.cholesky(t))) + nd.sum(w * w) + nd.sum(_abs2(v[..., :1]) * nd.real(w[..., None, :1]))
                + nd.sum(s ** 3) + nd.sum(_abs2(u * vh)) + nd.sum(_abs2(q * r)) + nd.sum(la.svdvals(t) * la.eigvalsh(t)))

    grads = []
    for dt in (dtype, nd.complex128 if dtype == nd.complex64 else nd.float64):
        x = nd.asarray(host, dtype=dt, requires_grad=True)
        loss(x).backward()
        assert x.grad.dtype == dt
        grads.append(x.grad.to_numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-3, atol=1e-4)


def test_multi_output_node_runs_once_and_frees() -> None:
    x = _leaf(np.random.default_rng(19).standard_normal((3, 3)))
    u, s, vh = la.svd(x)
    assert u._node is not vh._node and u._node.group[2] is vh._node.group[2]
    y = nd.sum(u[:, 0] * vh[0]) + nd.sum(s)
    y.backward(retain_graph=True)
    once = x.grad.to_numpy().copy()
    y.backward()
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * once)  # accumulates, the rule ran once per call
    with pytest.raises(RuntimeError, match="already freed"):
        y.backward()
    u, s, vh = la.svd(x)
    gu, gx = nd.autograd.grad(nd.sum(u * 2.0) + nd.sum(s), [u, x])  # u requested: its gradient stops there
    np.testing.assert_allclose(gu.to_numpy(), np.full((3, 3), 2.0))
    np.testing.assert_allclose(gx.to_numpy(), u.to_numpy() @ vh.to_numpy(), atol=1e-12)
    with nd.no_grad():
        assert not la.svd(x).U.requires_grad and not la.eigvalsh(x + x.mT).requires_grad


def test_slogdet_sign_of_a_complex_matrix_has_a_gradient() -> None:
    rng = np.random.default_rng(21)
    re = nd.asarray(rng.standard_normal((2, 3, 3)), requires_grad=True)
    im = nd.asarray(rng.standard_normal((2, 3, 3)), requires_grad=True)

    def f(a: nd.Array, b: nd.Array) -> nd.Array:
        sign, logabs = la.slogdet(a + nd.asarray(1j) * b)
        return nd.real(sign * nd.asarray(0.3 - 0.7j)) + 0.5 * logabs

    assert gradcheck(f, [re, im])
    # a real matrix's sign is +-1, piecewise constant: nothing flows from it
    x = nd.asarray(rng.standard_normal((3, 3)), requires_grad=True)
    (g,) = nd.autograd.grad(nd.sum(la.slogdet(x).sign) + 0.0 * nd.sum(x), [x])
    np.testing.assert_array_equal(g.to_numpy(), np.zeros((3, 3)))
