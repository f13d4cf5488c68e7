"""The LAPACK linalg kernels against the reference (NumPy), per op and dtype, over batches."""

from __future__ import annotations

import numpy as np
import pytest
from cpu_helpers import COMPLEX

import ndplane
from ndplane.backend import reference as K
from ndplane.backend.ops import LINALG, LINALG_OPS

LAPACK = [ndplane.float32, ndplane.float64, *COMPLEX]
# 600: the threaded path; 3 x 100: over the pool on a one-thread OpenBLAS for the panel-bound ops,
# one at a time on OpenBLAS's threads for the others; 1 x 300: OpenBLAS's threads for every op
SHAPES = [(1, 3, 3), (4, 5, 5), (2, 1, 1), (3, 0, 0), (1, 40, 40), (600, 4, 4), (3, 100, 100), (1, 300, 300)]


def real_of(dtype):
    return {ndplane.complex64: ndplane.float32, ndplane.complex128: ndplane.float64}.get(dtype, dtype)


def tol(dtype, scale=1.0):
    single = dtype in (ndplane.float32, ndplane.complex64)
    return (1e-4 if single else 1e-11) * scale


def matrices(h, dtype, shape, kind="general"):
    a = h.rng.uniform(-1, 1, shape)
    if dtype.kind == "complex":
        a = a + 1j * h.rng.uniform(-1, 1, shape)
    if kind != "general" and shape[-1]:
        n = shape[-1]
        if kind == "spd":
            a = a @ _h(a)
        a = a + n * np.eye(n)
    return a.astype(dtype.dtype)


def run(h, op, inputs, outputs):
    """The cpu kernel and the reference on the same inputs: (got, want) lists."""
    shapes = [(s, dt) for s, dt in outputs]
    want = [np.empty(s, dt.dtype) for s, dt in shapes]
    K.linalg(op, tuple(inputs), tuple(want))
    refs = tuple(h.empty(s, dt) for s, dt in shapes)
    h.be.linalg(op, tuple(h.put(x) for x in inputs), refs)
    return [h.get(r) for r in refs], want


def _h(x):
    """The conjugate transpose of the last two axes."""
    return np.conj(np.swapaxes(x, -1, -2))


def orthonormal_columns(x, dtype, what):
    """x^H x is the identity, for each matrix of the batch x (B, m, k)."""
    k = x.shape[-1]
    close(_h(x) @ x, np.broadcast_to(np.eye(k), (*x.shape[:-2], k, k)), dtype, 100, what)


def close(got, want, dtype, scale=1.0, what=""):
    np.testing.assert_allclose(got, want, rtol=tol(dtype, scale), atol=tol(dtype, scale), err_msg=what)


def test_declared(h):
    assert LINALG in h.be.capabilities and LINALG_OPS <= h.be.ops
    for op in LINALG_OPS:
        assert {d for d in ndplane.ALL_DTYPES if h.be.supports(op, d)} == set(LAPACK), op


@pytest.mark.parametrize("dtype", LAPACK, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_inv_det_slogdet_solve(h, dtype, shape):
    B, n, _ = shape
    a = matrices(h, dtype, shape, "invertible")
    got, want = run(h, "inv", [a], [(shape, dtype)])
    close(got[0], want[0], dtype, what="inv")
    got, want = run(h, "det", [a], [((B,), dtype)])
    np.testing.assert_allclose(got[0], want[0], rtol=tol(dtype, 10 * max(n, 1)), err_msg="det")
    got, want = run(h, "slogdet", [a], [((B,), dtype), ((B,), real_of(dtype))])
    close(got[0], want[0], dtype, what="sign")
    close(got[1], want[1], dtype, 10, "logabsdet")
    for k in (1, 3):
        b = matrices(h, dtype, (B, n, k))
        got, want = run(h, "solve", [a, b], [((B, n, k), dtype)])
        close(got[0], want[0], dtype, 10, f"solve k={k}")


@pytest.mark.parametrize("dtype", LAPACK, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cholesky_eigh(h, dtype, shape):
    B, n, _ = shape
    a = matrices(h, dtype, shape, "spd")
    upper_noise = a + np.triu(np.full(shape, 7.0), 1).astype(dtype.dtype)  # only the lower triangle is read
    got, want = run(h, "cholesky", [upper_noise], [(shape, dtype)])
    close(got[0], want[0], dtype, 10, "cholesky")
    assert (np.triu(got[0], 1) == 0).all()
    got, want = run(h, "eigvalsh", [upper_noise], [((B, n), real_of(dtype))])
    close(got[0], want[0], dtype, 10 * max(n, 1), "eigvalsh")
    (w, v), (rw, _) = run(h, "eigh", [upper_noise], [((B, n), real_of(dtype)), (shape, dtype)])
    close(w, rw, dtype, 10 * max(n, 1), "eigh values")
    close((v * w[:, None, :]) @ _h(v), a, dtype, 100 * max(n, 1), "eigh rebuild")


@pytest.mark.parametrize("dtype", LAPACK, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(2, 5, 3), (2, 3, 5), (1, 4, 4), (2, 0, 3), (2, 3, 0), (300, 6, 2), (1, 50, 30)],
                         ids=str)  # fmt: skip
def test_qr_svd_svdvals(h, dtype, shape):
    B, m, n = shape
    k = min(m, n)
    a = matrices(h, dtype, shape)
    for kq in {k, m}:
        (q, r), (_, rr) = run(h, "qr", [a], [((B, m, kq), dtype), ((B, kq, n), dtype)])
        close(q @ r, a, dtype, 100, f"qr kq={kq}")
        orthonormal_columns(q, dtype, "q orthonormal")
        assert (np.triu(r) == r).all()
        close(np.abs(r), np.abs(rr), dtype, 100, "|r| as LAPACK's geqrf in NumPy")
    got, want = run(h, "svdvals", [a], [((B, k), real_of(dtype))])
    close(got[0], want[0], dtype, 10, "svdvals")
    for full in (False, True):
        ju, jv = (m, n) if full else (k, k)
        (u, s, vh), (_, rs, _) = run(
            h, "svd", [a], [((B, m, ju), dtype), ((B, k), real_of(dtype)), ((B, jv, n), dtype)]
        )
        close(s, rs, dtype, 10, "svd s")
        close((u[..., :k] * s[:, None, :]) @ vh[:, :k], a, dtype, 100, f"svd rebuild full={full}")
        orthonormal_columns(u, dtype, "u unitary")
        orthonormal_columns(_h(vh), dtype, "vh unitary")  # vh @ vh^H


def test_failures_raise_linalg_error_naming_the_matrix(h):
    sing = np.stack([np.eye(3), np.ones((3, 3))])
    for op, outs in [("inv", [((2, 3, 3), ndplane.float64)]), ("solve", [((2, 3, 1), ndplane.float64)])]:
        ins = [h.put(sing)] + ([h.put(np.ones((2, 3, 1)))] if op == "solve" else [])
        with pytest.raises(
            np.linalg.LinAlgError, match=rf"linalg\.{op}: the matrix is singular \(matrix 1 of"
        ):
            h.be.linalg(op, tuple(ins), tuple(h.empty(s, d) for s, d in outs))
    with pytest.raises(ValueError, match="not positive definite"):
        h.be.linalg("cholesky", (h.put(-np.eye(3)[None]),), (h.empty((1, 3, 3), ndplane.float64),))
    # singular is not an error for det/slogdet: 0, and (0, -inf) as in NumPy
    got, want = run(h, "slogdet", [np.ones((1, 3, 3))], [((1,), ndplane.float64), ((1,), ndplane.float64)])
    assert got[0][0] == 0 and got[1][0] == -np.inf and want[1][0] == -np.inf
    assert run(h, "det", [np.ones((1, 3, 3))], [((1,), ndplane.float64)])[0][0][0] == 0


def test_non_finite_input_gives_nan_not_a_hang(h):
    for op, outs in [("svdvals", [((1, 3), ndplane.float64)]), ("eigvalsh", [((1, 3), ndplane.float64)]),
                     ("eigh", [((1, 3), ndplane.float64), ((1, 3, 3), ndplane.float64)])]:  # fmt: skip
        refs = tuple(h.empty(s, d) for s, d in outs)
        h.be.linalg(op, (h.put(np.full((1, 3, 3), np.nan)),), refs)
        assert all(np.isnan(h.get(r)).all() for r in refs), op


def test_det_does_not_overflow_early(h):
    a = np.diag([1e200, 1e200, 1e-300])[None]
    got, _ = run(h, "det", [a], [((1,), ndplane.float64)])
    np.testing.assert_allclose(got[0], [1e100], rtol=1e-14)
    a = np.diag([1e200, -1e200, 1e200])[None]
    assert run(h, "det", [a], [((1,), ndplane.float64)])[0][0][0] == -np.inf


def test_bad_arguments(h):
    f64, i64 = ndplane.float64, ndplane.int64
    a = h.put(np.eye(3)[None])
    with pytest.raises(ValueError, match="square"):
        h.be.linalg("inv", (h.put(np.ones((1, 2, 3))),), (h.empty((1, 2, 3), f64),))
    with pytest.raises(ValueError, match="wrong shape"):
        h.be.linalg("inv", (a,), (h.empty((1, 3, 2), f64),))
    with pytest.raises(TypeError, match="float32, float64, complex64 and complex128"):
        h.be.linalg("det", (h.put(np.eye(3, dtype=np.int64)[None]),), (h.empty((1,), i64),))
    with pytest.raises(TypeError, match="dtype float64"):
        h.be.linalg("det", (a,), (h.empty((1,), ndplane.float32),))
    with pytest.raises(ValueError, match="C-contiguous"):
        base = np.arange(9.0).reshape(1, 3, 3)
        h.be.linalg("inv", (h.put(base.transpose(0, 2, 1), base),), (h.empty((1, 3, 3), f64),))
    with pytest.raises(ValueError, match="expected 1 inputs and 1 outputs"):
        h.be.linalg("inv", (a, a), (h.empty((1, 3, 3), f64),))
    with pytest.raises(ValueError, match="unknown op 'lu'"):
        h.be.linalg("lu", (a,), (h.empty((1, 3, 3), f64),))


def test_openblas_thread_count_restored(h):
    """The small and panel-bound matrices run on a one-thread OpenBLAS (run_batch); its thread count
    is the backend's again afterwards, also when LAPACK fails inside (a LinAlgError)."""
    import ctypes
    import glob
    import os

    import scipy_openblas32

    path = glob.glob(os.path.join(scipy_openblas32.get_lib_dir(), "libscipy_openblas*.so"))[0]
    openblas = ctypes.CDLL(path)
    before = openblas.scipy_openblas_get_num_threads()
    a = np.eye(128)[None] * 2.0
    run(h, "qr", [a], [((1, 128, 128), ndplane.float64), ((1, 128, 128), ndplane.float64)])
    assert openblas.scipy_openblas_get_num_threads() == before
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        h.be.linalg("solve", (h.put(np.zeros((2, 100, 100))), h.put(np.ones((2, 100, 1)))),
                    (h.empty((2, 100, 1), ndplane.float64),))  # fmt: skip
    assert openblas.scipy_openblas_get_num_threads() == before
