"""VJP rules of the ``linalg`` kernels, written with core ops (so every backend has them).

Differentiable: ``inv``, ``solve``, ``det``, ``slogdet`` (both outputs), ``cholesky``,
``qr``, ``svd``, ``svdvals``, ``eigh`` and ``eigvalsh``; composites over them (norms, pinv,
matrix_power, ...) are differentiated through their decomposition. Complex inputs follow
PyTorch's convention (conjugate Wirtinger derivative), as in :mod:`rules`. The formulas are
PyTorch's (``cholesky_backward``, ``linalg_qr_backward``, ``svd_backward``,
``linalg_eig_backward``); what differs, or is a choice, is below.

- **Triangle (cholesky, eigh, eigvalsh).** The kernels read only the lower triangle of the
  input (and the real part of its diagonal). The rules return the exact gradient of the
  function *as implemented*: with ``G`` PyTorch's Hermitian gradient, ``tril(G + G^H, -1) +
  Re(diag G)``, zero in the strict upper triangle. So ``gradcheck`` passes on the raw
  function with any perturbation, and for an input built Hermitian (``X + X^H``,
  ``X @ X^H + n*I``) the gradient reaching ``X`` is the same as with PyTorch's symmetric one
  (both give ``gA + gA^H = 2G``).
- **Eigen/singular vectors' phase (complex).** They are defined up to ``v -> v e^{i phi}``; a
  loss that depends on the phase has no gradient, and the rule raises (PyTorch's check:
  ``Im diag(V^H gV)``, resp. ``Im diag(U^H gU + V^H gV)``, within 1e-2 of zero). Losses of
  ``V * conj(V)`` or of ``U @ diag(S) @ Vh`` are phase-invariant.
- **Extra columns.** ``svd(full_matrices=True)`` with M != N, and ``qr(mode="complete")`` with
  M > N, return columns of U/Vh/Q that are an arbitrary basis: their gradient must be zero
  (e.g. the loss slices them away), else the rule raises. The rest is the reduced case.
- Higher orders: a rule that reads its op's own outputs gets them joined to the graph again
  under ``create_graph`` (``Node.saved_values``), so second derivatives flow through them.
- Eigenvalues (eigh, with ``gV``) and singular values (svd, with ``gU``/``gVh``) must be
  distinct, and ``R``/``S`` nonsingular, as in PyTorch: otherwise the gradient is inf/nan.
"""

from __future__ import annotations

from typing import Any, cast

from .. import _namespace as nd
from .._graph import RULES, Node


def _h(x: nd.Array) -> nd.Array:
    """The conjugate transpose of the last two axes."""
    t = nd.matrix_transpose(x)
    return nd.conj(t) if t.dtype.kind == "complex" else t


def _inv(g: Any, node: Node) -> tuple[Any]:
    (y,) = node.saved_values()
    return (-(_h(y) @ g @ _h(y)),)


def _solve(g: Any, node: Node) -> tuple[Any, Any]:
    a, x = node.saved_values()
    gb = nd.linalg.solve(_h(a), g)
    return -(gb @ _h(x)), gb


def _det(g: Any, node: Node) -> tuple[Any]:
    a, d = node.saved_values()
    scale = g * (nd.conj(d) if d.dtype.kind == "complex" else d)
    return (scale[..., None, None] * _h(nd.linalg.inv(a)),)


def _slogdet(gs: tuple[Any, Any], node: Node) -> tuple[Any]:
    # d log det A = tr(A^-1 dA) = d logabsdet + i d arg, and d sign = i sign d arg: with
    # c = g_logabsdet - i Im(conj(g_sign) sign), the gradient is c A^-H. A real sign is +-1
    # (piecewise constant): no gradient flows from it.
    a, sign = node.saved_values()
    g_sign, g_log = gs
    if a.dtype.kind != "complex":
        if g_log is None:
            return (None,)
        c = g_log
    else:
        c = nd.astype(g_log, a.dtype) if g_log is not None else nd.zeros(sign.shape, dtype=a.dtype, device=a.device)
        if g_sign is not None:
            c = c - 1j * nd.astype(nd.imag(nd.conj(g_sign) * sign), a.dtype)
    return (c[..., None, None] * _h(nd.linalg.inv(a)),)


# ---------------------------------------------------------------------------
# factorisations: helpers
# ---------------------------------------------------------------------------


def _eye(x: nd.Array) -> nd.Array:
    return nd.eye(x.shape[-1], dtype=nd.real(x).dtype if x.dtype.kind == "complex" else x.dtype, device=x.device)


def _diag_embed(d: nd.Array) -> nd.Array:
    return d[..., None, :] * _eye(d)


def _half_diag(x: nd.Array) -> nd.Array:
    """``x`` with its diagonal halved."""
    return x - 0.5 * _diag_embed(nd.linalg.diagonal(x))


def _fold(g: nd.Array) -> nd.Array:
    """The gradient of a function of the Hermitian matrix read from ``A``'s lower triangle (and
    real diagonal), from any ``G`` of it: ``tril(G + G^H, -1) + Re diag(G)``."""
    return _half_diag(nd.tril(g + _h(g)))


def _gap_inverse(w: nd.Array) -> nd.Array:
    """``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal, 0 on it."""
    eye = _eye(w)
    return 1 / (w[..., None, :] - w[..., :, None] + eye) - eye


def _check_phase(im_diag: nd.Array, name: str, vectors: str) -> None:
    if bool(nd.any(nd.abs(im_diag) > 1e-2)):
        raise RuntimeError(
            f"linalg.{name} backward: complex {vectors} are defined only up to a phase (v -> v e^(i phi)) "
            f"and the loss depends on that phase, so its gradient is ill-defined; use a phase-invariant "
            f"loss (e.g. of v * conj(v) or of the reconstructed matrix)."
        )


def _narrow(x: nd.Array, g: Any, axis: int, k: int, name: str, what: str, hint: str) -> tuple[nd.Array, Any]:
    """The first ``k`` columns (axis -1) or rows (-2) of ``x`` and ``g``; the rest of ``g`` must be 0."""
    key = (..., slice(None), slice(0, k)) if axis == -1 else (..., slice(0, k), slice(None))
    if g is not None:
        rest = g[(..., slice(None), slice(k, None)) if axis == -1 else (..., slice(k, None), slice(None))]
        if bool(nd.any(rest != 0)):
            raise NotImplementedError(
                f"linalg.{name} backward: the gradient is defined only for the first {k} {what}, which "
                f"span the input; the loss depends on the others (an arbitrary basis). Use {hint}, "
                f"or slice those away before the loss."
            )
        g = g[key]
    return x[key], g


# ---------------------------------------------------------------------------
# factorisations: rules
# ---------------------------------------------------------------------------


def _cholesky(g: Any, node: Node) -> tuple[Any]:
    # gA = fold(L^{-H} Phi(L^H gL) L^{-1}); fold depends only on G + G^H, so no symmetrising here.
    (low,) = node.saved_values()
    phi = _half_diag(nd.tril(_h(low) @ g))
    left = nd.linalg.solve(_h(low), phi)
    return (_fold(nd.linalg.solve(_h(low), _h(left))),)


def _eigh(gs: tuple[Any, Any], node: Node) -> tuple[Any]:
    # NOTE: V (F o V^H gV) V^H needs no skew projection: _fold symmetrises (F is antisymmetric).
    w, v = node.saved_values()
    gw, gv = gs
    inner: nd.Array | None = None
    if gv is not None:
        vhgv = _h(v) @ gv
        if v.dtype.kind == "complex":
            _check_phase(nd.imag(nd.linalg.diagonal(vhgv)), "eigh", "eigenvectors")
        inner = _gap_inverse(w) * vhgv
    if gw is not None:
        inner = _diag_embed(gw) if inner is None else inner + _diag_embed(gw)
    assert inner is not None  # the engine calls a rule with some gradient: gW, gV or both
    return (_fold(v @ inner @ _h(v)),)


def _svd(gs: tuple[Any, Any, Any], node: Node) -> tuple[Any]:
    u, s, vh = node.saved_values()
    gu, gsv, gvh = gs
    m, n, k = u.shape[-2], vh.shape[-1], s.shape[-1]
    if u.shape[-1] != k:
        u, gu = _narrow(u, gu, -1, k, "svd", "columns of U", "full_matrices=False")
    if vh.shape[-2] != k:
        vh, gvh = _narrow(vh, gvh, -2, k, "svd", "rows of Vh", "full_matrices=False")
    if gu is None and gvh is None:
        return ((u * gsv[..., None, :]) @ vh,)
    inner = _svd_inner(u, s, vh, gu, gsv, gvh)
    if m > n and gu is not None:  # gA = [U inner + (I - U U^H) gU S^{-1}] Vh
        gus = gu / s[..., None, :]
        return ((u @ inner + gus - u @ (_h(u) @ gus)) @ vh,)
    if m < n and gvh is not None:  # gA = U [inner Vh + S^{-1} gVh (I - V V^H)]
        sgv = gvh / s[..., :, None]
        return (u @ (inner @ vh + sgv - (sgv @ _h(vh)) @ vh),)
    return (u @ inner @ vh,)


def _svd_inner(u: nd.Array, s: nd.Array, vh: nd.Array, gu: Any, gsv: Any, gvh: Any) -> nd.Array:
    """``U^H gA V``: skew(U^H gU) S / E + S skew(V^H gV) / E + diag(gS) (+ the phase term)."""
    uhgu = vhgv = None
    off: nd.Array | int = 0
    if gu is not None:
        uhgu = _h(u) @ gu
        off = (uhgu - _h(uhgu)) * s[..., None, :]
    if gvh is not None:
        vhgv = vh @ _h(gvh)
        off = off + s[..., :, None] * (vhgv - _h(vhgv))
    inner = _gap_inverse(s * s) * off  # 1 / (s_j^2 - s_i^2), 0 on the diagonal
    if u.dtype.kind == "complex":
        # gU or gVh is set (else _svd returned earlier): a sum of arrays, not the start 0
        im = cast(nd.Array, sum(nd.imag(nd.linalg.diagonal(x)) for x in (uhgu, vhgv) if x is not None))
        _check_phase(im, "svd", "singular vectors")
        if uhgu is not None:  # the phase gauge: i Im diag(U^H gU) / S
            inner = inner + _diag_embed(nd.astype(nd.imag(nd.linalg.diagonal(uhgu)) / s, u.dtype) * 1j)
    return inner if gsv is None else inner + _diag_embed(gsv)


def _qr(gs: tuple[Any, Any], node: Node) -> tuple[Any]:
    q, r = node.saved_values()
    gq, gr = gs
    m, n = q.shape[-2], r.shape[-1]
    if q.shape[-1] > n:  # mode="complete", M > N: Q's last M - N columns are arbitrary, R's rows 0
        q, gq = _narrow(q, gq, -1, n, "qr", "columns of Q", "mode='reduced'")
        r, gr = r[..., :n, :], (gr[..., :n, :] if gr is not None else None)
    if m >= n:
        return (_qr_square(q, r, gq, gr),)
    # M < N: A = [A1 | A2] = Q [R1 | R2] with R1 square and R2 = Q^H A2, so A2 feeds Q's gradient.
    r1, r2 = r[..., :m], r[..., m:]
    gr1, gr2 = (gr[..., :m], gr[..., m:]) if gr is not None else (None, None)
    if gr2 is not None:
        gq = q @ r2 @ _h(gr2) if gq is None else gq + q @ r2 @ _h(gr2)
    ga2 = q @ gr2 if gr2 is not None else nd.zeros_like(r2)
    return (nd.concat([_qr_square(q, r1, gq, gr1), ga2], axis=-1),)


def _qr_square(q: nd.Array, r: nd.Array, gq: Any, gr: Any) -> nd.Array:
    """M >= N reduced: gA = (gQ + Q herm(triu(M))) R^{-H}, M = gR R^H - Q^H gQ, where herm(T)
    is the Hermitian matrix with T's strict upper triangle and real diagonal."""
    mm = gr @ _h(r) if gr is not None else 0
    if gq is not None:
        mm = mm - _h(q) @ gq
    t = _half_diag(nd.triu(cast(nd.Array, mm)))  # gR or gQ is set: an array
    x = q @ (t + _h(t))
    x = x if gq is None else x + gq
    return _h(nd.linalg.solve(r, _h(x)))


RULES.update({
    "linalg_inv": _inv, "linalg_solve": _solve, "linalg_det": _det, "linalg_slogdet": _slogdet,
    "linalg_cholesky": _cholesky, "linalg_eigh": _eigh, "linalg_svd": _svd, "linalg_qr": _qr,
})  # fmt: skip
