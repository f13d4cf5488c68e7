"""The ``linalg`` extension, differential against NumPy, on every backend.

Factorisations and solvers run the backend's ``linalg`` kernels where it declares
them and the host fallback elsewhere; either way the answers must match NumPy's
(within a tolerance scaled for the algorithm) on batched, transposed and empty
inputs of every floating dtype the device supports. The composites (norms,
trace, diagonal, outer, cross, matrix_power, matrix_rank, pinv) are checked the
same way.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ndplane as nd
from ndplane.autograd import gradcheck
from ndplane.conformance import _helpers as h

FLOATS = ("float", "complex")


def _float_dtypes(device: nd.Device) -> list[nd.DType]:
    # NOTE: float16 is computed in float32 and rounded back; its tolerance would say nothing here.
    return [d for d in h.supported(device, FLOATS) if d is not nd.float16]


def _tol(dtype: nd.DType, scale: float = 1.0) -> tuple[float, float]:
    if dtype is nd.float16:
        return (2e-2 * scale, 2e-2 * scale)
    single = dtype in (nd.float32, nd.complex64)
    return (2e-3 * scale, 2e-3 * scale) if single else (1e-8 * scale, 1e-8 * scale)


def _matrices(rng: np.random.Generator, dtype: nd.DType, shape: tuple[int, ...], kind: str) -> np.ndarray:
    """Random matrices: ``general``, ``invertible`` (diagonally dominant) or ``spd`` (Hermitian PD)."""
    a = rng.uniform(-1, 1, shape)
    if dtype.kind == "complex":
        a = a + 1j * rng.uniform(-1, 1, shape)
    if kind in ("invertible", "spd") and shape[-1]:
        n = shape[-1]
        if kind == "spd":
            a = a @ np.conj(np.swapaxes(a, -1, -2))
        a = a + n * np.eye(n)
    return a.astype(h.np_dtype(dtype))


def _put(device: nd.Device, a: np.ndarray, transpose: bool) -> nd.Array:
    """``a`` on the device, as a transposed view of a contiguous array when asked (strided input)."""
    if transpose and a.ndim >= 2:
        return nd.asarray(np.ascontiguousarray(np.swapaxes(a, -1, -2)), device=device).mT
    return nd.asarray(a, device=device)


def _ref(fn, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wide = [a.astype(np.complex128 if a.dtype.kind == "c" else np.float64) for a in args]
        return fn(*wide)


@st.composite
def _case(draw, square: bool = True, min_side: int = 0):
    batch = draw(st.lists(st.integers(0, 3), max_size=2).map(tuple))
    n = draw(st.integers(min_side, 4))
    m = n if square else draw(st.integers(min_side, 4))
    return batch + (m, n), draw(st.booleans()), draw(st.integers(0, 2**32 - 1))


@pytest.fixture(autouse=True)
def _no_fallback_noise():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", nd.FallbackWarning)
        yield


@h.hyp()
@given(case=_case())
def test_inv_solve_det_slogdet(device: nd.Device, case) -> None:
    shape, transpose, seed = case
    rng = np.random.default_rng(seed)
    for dtype in _float_dtypes(device):
        a = _matrices(rng, dtype, shape, "invertible")
        x = _put(device, a, transpose)
        h.assert_same(nd.linalg.inv(x), _ref(np.linalg.inv, a), dtype, tol=_tol(dtype))
        h.assert_same(nd.linalg.det(x), _ref(np.linalg.det, a), dtype, tol=_tol(dtype, 10))
        sign, logabs = nd.linalg.slogdet(x)
        rs, rl = _ref(np.linalg.slogdet, a)
        h.assert_same(sign, rs, dtype, tol=_tol(dtype))
        h.assert_same(logabs, rl, h.REAL_OF.get(dtype, dtype), tol=_tol(dtype))
        n = shape[-1]
        b = _matrices(rng, dtype, shape[:-1] + (2,), "general")
        h.assert_same(nd.linalg.solve(x, nd.asarray(b, device=device)), _ref(np.linalg.solve, a, b), dtype,
                      tol=_tol(dtype, 10))  # fmt: skip
        v = _matrices(rng, dtype, (n,), "general")
        expected = _ref(lambda p, q: np.linalg.solve(p, q[..., None])[..., 0], a, v)
        h.assert_same(nd.linalg.solve(x, nd.asarray(v, device=device)), expected, dtype, tol=_tol(dtype, 10))


@h.hyp()
@given(case=_case())
def test_cholesky_eigh(device: nd.Device, case) -> None:
    shape, transpose, seed = case
    rng = np.random.default_rng(seed)
    for dtype in _float_dtypes(device):
        a = _matrices(rng, dtype, shape, "spd")
        x = _put(device, a, transpose)
        low = _ref(np.linalg.cholesky, a)
        h.assert_same(nd.linalg.cholesky(x), low, dtype, tol=_tol(dtype, 10))
        h.assert_same(nd.linalg.cholesky(x, upper=True), np.conj(np.swapaxes(low, -1, -2)), dtype,
                      tol=_tol(dtype, 10))  # fmt: skip
        real = h.REAL_OF.get(dtype, dtype)
        w_ref = _ref(np.linalg.eigvalsh, a)
        h.assert_same(nd.linalg.eigvalsh(x), w_ref, real, tol=_tol(dtype, 10))
        w, v = nd.linalg.eigh(x)
        h.assert_same(w, w_ref, real, tol=_tol(dtype, 10))
        rebuilt = (v * nd.astype(w, dtype)[..., None, :]) @ nd.conj(v.mT)
        h.assert_same(rebuilt, a, dtype, tol=_tol(dtype, 100))


@h.hyp()
@given(case=_case(square=False), mode=st.sampled_from(["reduced", "complete"]), full=st.booleans())
def test_qr_svd_svdvals(device: nd.Device, case, mode: str, full: bool) -> None:
    shape, transpose, seed = case
    rng = np.random.default_rng(seed)
    m, n = shape[-2:]
    k = min(m, n)
    for dtype in _float_dtypes(device):
        a = _matrices(rng, dtype, shape, "general")
        x = _put(device, a, transpose)
        q, r = nd.linalg.qr(x, mode=mode)
        kq = m if mode == "complete" else k
        assert q.shape == shape[:-2] + (m, kq) and r.shape == shape[:-2] + (kq, n), (q.shape, r.shape)
        h.assert_same(q @ r, a, dtype, tol=_tol(dtype, 100))
        h.assert_same(nd.conj(q.mT) @ q, np.broadcast_to(np.eye(kq), shape[:-2] + (kq, kq)), dtype,
                      tol=_tol(dtype, 100))  # fmt: skip
        h.assert_same(r, np.triu(h.host(r)), dtype, exact=True)
        real = h.REAL_OF.get(dtype, dtype)
        s_ref = _ref(lambda p: np.linalg.svd(p, compute_uv=False), a)
        h.assert_same(nd.linalg.svdvals(x), s_ref, real, tol=_tol(dtype, 10))
        u, s, vh = nd.linalg.svd(x, full_matrices=full)
        ju, jv = (m, n) if full else (k, k)
        assert u.shape == shape[:-2] + (m, ju) and vh.shape == shape[:-2] + (jv, n), (u.shape, vh.shape)
        h.assert_same(s, s_ref, real, tol=_tol(dtype, 10))
        us = u[..., :, :k] * nd.astype(s, dtype)[..., None, :]
        h.assert_same(us @ vh[..., :k, :], a, dtype, tol=_tol(dtype, 100))


@h.hyp()
@given(case=_case(square=False), rtol=st.sampled_from([None, 0.1]))
def test_pinv_matrix_rank(device: nd.Device, case, rtol: float | None) -> None:
    shape, transpose, seed = case
    rng = np.random.default_rng(seed)
    for dtype in _float_dtypes(device):
        a = _matrices(rng, dtype, shape, "general")
        if shape[-1] > 1:
            a[..., -1] = a[..., 0]  # rank-deficient on purpose
        x = _put(device, a, transpose)
        if min(shape[-2:]) == 0:
            assert nd.linalg.pinv(x).shape == shape[:-2] + (shape[-1], shape[-2])
            continue
        expected = _ref(lambda p: np.linalg.pinv(p, rtol=rtol if rtol else max(shape[-2:]) * np.finfo(
            h.np_dtype(h.REAL_OF.get(dtype, dtype))).eps), a)  # fmt: skip  # noqa: B023
        h.assert_same(nd.linalg.pinv(x, rtol=rtol), expected, dtype, tol=_tol(dtype, 1000))
        if rtol is not None:
            rank = nd.linalg.matrix_rank(x, rtol=rtol)
            assert rank.dtype is h.default(device, "integral")
            h.assert_same(rank, _ref(lambda p: np.linalg.matrix_rank(p, rtol=rtol), a))


@h.hyp()
@given(case=_case(square=False, min_side=1), keepdims=st.booleans(),
       ord=st.sampled_from(["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]))  # fmt: skip
def test_matrix_norm(device: nd.Device, case, keepdims: bool, ord) -> None:
    shape, transpose, seed = case
    rng = np.random.default_rng(seed)
    for dtype in _float_dtypes(device):
        a = _matrices(rng, dtype, shape, "general")
        got = nd.linalg.matrix_norm(_put(device, a, transpose), ord=ord, keepdims=keepdims)
        expected = _ref(lambda p: np.linalg.norm(p, ord=ord, axis=(-2, -1), keepdims=keepdims), a)
        h.assert_same(got, expected, h.REAL_OF.get(dtype, dtype), tol=_tol(dtype, 10))


@h.hyp()
@given(data=st.data(), keepdims=st.booleans(),
       ord=st.sampled_from([2, 1, 0, -1, math.inf, -math.inf, 3, 0.5]))  # fmt: skip
def test_vector_norm(device: nd.Device, data: st.DataObject, keepdims: bool, ord) -> None:
    shape = data.draw(h.shapes(min_dims=1, max_dims=3, min_side=1), label="shape")
    axis = data.draw(st.sampled_from([None, -1, tuple(range(len(shape)))]), label="axis")
    for dtype in _float_dtypes(device):
        a = data.draw(h.arrays(device, dtype, shape, h.Values(-4, 4, special=False)), label=f"x {dtype.name}")
        got = nd.linalg.vector_norm(a.x, axis=axis, keepdims=keepdims, ord=ord)
        ref = a.ref.reshape(-1) if axis is None else a.ref
        ax = None if axis is None else axis
        # NOTE: NumPy's stubs have no vector_norm overload for an axis that may be None with keepdims
        expected = _ref(lambda p: np.linalg.vector_norm(p, axis=ax,  # type: ignore[arg-type]  # noqa: B023
                                                        keepdims=keepdims, ord=ord), ref)  # fmt: skip
        if axis is None and keepdims:
            expected = np.reshape(expected, (1,) * len(shape))
        h.assert_same(got, expected, h.REAL_OF.get(dtype, dtype), tol=_tol(dtype, 10))


@h.hyp()
@given(data=st.data(), offset=st.integers(-5, 5))
def test_trace_diagonal_matrix_power(device: nd.Device, data: st.DataObject, offset: int) -> None:
    shape = data.draw(h.shapes(min_dims=2, max_dims=4), label="shape")
    for dtype in h.supported(device, ("int", "float", "complex")):
        a = data.draw(h.arrays(device, dtype, shape, h.Values(-3, 3, special=False)), label=f"x {dtype.name}")
        h.assert_same(nd.linalg.diagonal(a.x, offset=offset), np.diagonal(a.ref, offset, -2, -1), dtype, exact=True)
        acc = nd.sum(nd.linalg.diagonal(a.x, offset=offset), axis=-1).dtype
        expected = np.trace(a.ref, offset, axis1=-2, axis2=-1, dtype=h.np_dtype(acc))
        h.assert_same(nd.linalg.trace(a.x, offset=offset), expected, acc, tol=_tol(acc) if acc.is_floating else None)
    square = data.draw(st.integers(0, 3), label="n")
    for dtype in h.supported(device, ("int", "float", "complex")):
        a = data.draw(h.arrays(device, dtype, (2, square, square), h.Values(-2, 2, special=False)), label="m")
        for p in (0, 1, 3):
            h.assert_same(nd.linalg.matrix_power(a.x, p), np.linalg.matrix_power(a.ref, p), dtype,
                          tol=_tol(dtype, 10) if dtype.is_floating else None)  # fmt: skip


@h.hyp()
@given(data=st.data())
def test_outer_cross(device: nd.Device, data: st.DataObject) -> None:
    for dtype in h.supported(device, ("int", "float", "complex")):
        vals = h.Values(-10, 10, special=False)
        a = data.draw(h.arrays(device, dtype, (3,), vals), label="a")
        b = data.draw(h.arrays(device, dtype, (2, 3), vals), label="b")
        h.assert_same(nd.linalg.outer(a.x, b.x[0]), np.outer(a.ref, b.ref[0]), dtype, exact=not dtype.is_floating)
        h.assert_same(nd.linalg.cross(a.x, b.x), np.cross(a.ref, b.ref), dtype, exact=not dtype.is_floating)
        c = data.draw(h.arrays(device, dtype, (3, 2), vals), label="c")
        h.assert_same(nd.linalg.cross(c.x, c.x[:, ::-1], axis=-2), np.cross(c.ref, c.ref[:, ::-1], axis=-2), dtype,
                      exact=not dtype.is_floating)  # fmt: skip


def _cross_values(rng: np.random.Generator, dtype: nd.DType, shape: tuple[int, ...]) -> np.ndarray:
    npd = h.np_dtype(dtype)
    if dtype.kind == "float":
        v = (rng.standard_normal(shape) * 100).astype(npd)
        v.flat[::97] = np.inf  # with 0 * inf and inf - inf: NaN where NumPy has it
        v.flat[5::89] = np.nan
        return v
    info = np.iinfo(npd)
    return rng.integers(info.min, info.max, shape, dtype=npd, endpoint=True)  # products that wrap


@pytest.mark.parametrize("n", [0, 1, 7, 40_000])
def test_cross_layouts(device: nd.Device, n: int) -> None:
    """``linalg.cross`` against NumPy's (the same products and differences, each rounded to the
    dtype; integers wrap) for every real dtype: contiguous, one operand broadcast, operands that
    no (M, 3) view covers, the vectors along another axis, reversed rows and components, and a
    mixed pair. Bit for bit where the backend declares ``fused:cross`` (and on numpy, whose
    composite is NumPy's arithmetic)."""
    rng = np.random.default_rng(21)
    exact = "fused:cross" in device.backend.capabilities or device.backend.name == "numpy"
    dtypes = h.supported(device, ("int", "float"))
    for dtype in dtypes:
        a, b = _cross_values(rng, dtype, (n, 3)), _cross_values(rng, dtype, (n, 3))
        c, d = _cross_values(rng, dtype, (3,)), _cross_values(rng, dtype, (4, 1, 3))
        e = _cross_values(rng, dtype, (1, 5, 3))
        x, y = nd.asarray(a, device=device), nd.asarray(b, device=device)
        xt = nd.permute_dims(nd.asarray(np.ascontiguousarray(a.T), device=device), (1, 0))  # a, transposed strides
        cases = [
            ("contiguous", nd.linalg.cross(x, y), np.cross(a, b)),
            ("broadcast", nd.linalg.cross(nd.asarray(c, device=device), y), np.cross(c, b)),
            ("no (M, 3) view", nd.linalg.cross(nd.asarray(d, device=device), nd.asarray(e, device=device)),
             np.cross(d, e)),
            ("axis -2", nd.linalg.cross(nd.permute_dims(x, (1, 0)), nd.permute_dims(y, (1, 0)), axis=-2),
             np.cross(a.T, b.T, axis=-2)),
            ("transposed strides", nd.linalg.cross(xt, y[::-1]), np.cross(a, b[::-1])),
            ("reversed components", nd.linalg.cross(x[:, ::-1], y), np.cross(a[:, ::-1], b)),
            ("3-d, axis -3", nd.linalg.cross(nd.reshape(x, (3, n, 1)), nd.reshape(y, (3, n, 1)), axis=-3),
             np.cross(a.reshape(3, n, 1), b.reshape(3, n, 1), axis=-3)),
        ]  # fmt: skip
        for name, got, want in cases:
            h.assert_same(got, want, dtype, exact=exact or dtype.kind != "float", tol=None if exact else _tol(dtype, 8),
                          msg=f"{dtype.name} {name}: ")  # fmt: skip
    for p, q in ((nd.int16, nd.float32), (nd.uint8, nd.int8), (nd.int32, nd.float64)):
        if p in dtypes and q in dtypes and h.promotes(p, q):
            a, b = _cross_values(rng, p, (n, 3)), _cross_values(rng, q, (n, 3))
            r = nd.result_type(p, q)
            want = np.cross(a.astype(h.np_dtype(r)), b.astype(h.np_dtype(r)))
            got = nd.linalg.cross(nd.asarray(a, device=device), nd.asarray(b, device=device))
            h.assert_same(got, want, r, exact=exact or r.kind != "float", tol=None if exact else _tol(r, 8),
                          msg=f"{p.name} x {q.name}: ")  # fmt: skip


def test_cross_gradient(device: nd.Device) -> None:
    """With a gradient to record, ``linalg.cross`` takes the composite road: its gradients."""
    h.require(device, nd.float64)
    rng = np.random.default_rng(22)
    a = nd.asarray(rng.standard_normal((4, 3)), device=device, requires_grad=True)
    b = nd.asarray(rng.standard_normal((3,)), device=device, requires_grad=True)
    assert gradcheck(lambda p, q: nd.linalg.cross(p, q), (a, b))


def test_errors(device: nd.Device) -> None:
    dt = _float_dtypes(device)[0]
    with pytest.raises(ValueError, match="square"):
        nd.linalg.inv(nd.zeros((2, 3), dtype=dt, device=device))
    with pytest.raises(ValueError, match="at least 2-D"):
        nd.linalg.det(nd.zeros((3,), dtype=dt, device=device))
    with pytest.raises(TypeError, match="floating"):
        nd.linalg.cholesky(nd.zeros((2, 2), dtype=h.default(device, "integral"), device=device))
    with pytest.raises(ValueError, match="mode"):
        nd.linalg.qr(nd.zeros((2, 2), dtype=dt, device=device), mode="r")
    with pytest.raises(ValueError, match="size 3"):
        nd.linalg.cross(nd.zeros((2,), dtype=dt, device=device), nd.zeros((2,), dtype=dt, device=device))
    assert nd.linalg.matmul is nd.matmul and nd.linalg.tensordot is nd.tensordot


def test_gradients(device: nd.Device) -> None:
    """inv, solve, det and slogdet have VJP rules; the composites differentiate through them."""
    h.require(device, nd.float64)
    rng = np.random.default_rng(0)
    a = nd.asarray(rng.normal(size=(2, 3, 3)) + 3 * np.eye(3), device=device, requires_grad=True)
    b = nd.asarray(rng.normal(size=(3, 2)), device=device, requires_grad=True)
    assert gradcheck(lambda p: nd.linalg.inv(p), (a,))
    assert gradcheck(lambda p, q: nd.linalg.solve(p, q), (a, b))
    assert gradcheck(lambda p: nd.linalg.det(p), (a,))
    assert gradcheck(lambda p: nd.linalg.slogdet(p).logabsdet, (a,))
    assert gradcheck(lambda p: nd.linalg.matrix_power(p, -2), (a,))
    assert gradcheck(lambda p: nd.linalg.trace(p, offset=1) + nd.linalg.matrix_norm(p, ord=1), (a,))
