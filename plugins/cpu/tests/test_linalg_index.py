"""matmul, take, scatter_add, sort and random_bits against the reference."""

from __future__ import annotations

import numpy as np
import pytest
from cpu_helpers import DTYPES, INTS, assert_close

import ndplane
from ndplane.backend import Ref
from ndplane.backend import reference as K


def mats(h, dtype, B, M, Kd, N, a_layout, b_layout):
    def make(rows, cols, layout):
        if layout == "row":
            base = h.data((B, rows, cols), dtype, special=False, small=True)
            return base, base
        if layout == "col":
            base = np.ascontiguousarray(h.data((B, cols, rows), dtype, special=False, small=True))
            return base.transpose(0, 2, 1), base
        if layout == "bcast":
            base = h.data((1, rows, cols), dtype, special=False, small=True)
            return np.broadcast_to(base, (B, rows, cols)), base
        base = h.data((B, rows, 2 * cols), dtype, special=False, small=True)  # strided
        return base[:, :, ::2], base

    return make(M, Kd, a_layout), make(Kd, N, b_layout)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_matmul_layouts(h, dtype):
    # vector shapes (M or N of 1) go to BLAS's dot and gemv where it is BLAS's dtype
    for B, M, Kd, N in [(1, 3, 4, 5), (2, 1, 7, 1), (3, 6, 1, 2), (2, 4, 0, 3), (1, 0, 3, 2), (2, 33, 70, 19),
                        (2, 1, 9, 5), (3, 6, 11, 1), (1, 1, 1000, 1), (2, 1, 1, 4)]:  # fmt: skip
        for la in ("row", "col", "bcast", "step"):
            for lb in ("row", "col", "bcast", "step"):
                (va, ba), (vb, bb) = mats(h, dtype, B, M, Kd, N, la, lb)
                want = np.empty((B, M, N), dtype.dtype)
                K.matmul(va, vb, want)
                out = h.empty((B, M, N), dtype)
                h.be.matmul(h.put(va, ba), h.put(vb, bb), out)
                assert_close(h.get(out), want, f"{dtype.name} {B, M, Kd, N} {la}@{lb}",
                             ulps=8 * max(Kd, 1))  # fmt: skip


def test_matmul_large_blas(h):
    a = h.data((1, 300, 257), ndplane.float32, special=False)
    b = h.data((1, 257, 129), ndplane.float32, special=False)
    out = h.empty((1, 300, 129), ndplane.float32)
    h.be.matmul(h.put(a), h.put(b), out)
    np.testing.assert_allclose(h.get(out), a @ b, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dtype", [ndplane.float32, ndplane.float64], ids=lambda d: d.name)
def test_matmul_of_a_matrix_and_its_transpose_is_symmetric(dtype):
    """x @ x.T and x.T @ x (one buffer, transposed strides) take BLAS's syrk and mirror the
    triangle: exactly symmetric, as NumPy's; batched, strided rows and a 1-row x included."""
    rng = np.random.default_rng(5)
    tol = 1e-4 if dtype is ndplane.float32 else 1e-12
    for shape in [(5, 3), (3, 5), (200, 70), (130, 130), (1, 8), (2, 40, 20)]:
        x = rng.standard_normal(shape).astype(dtype.dtype)
        a = ndplane.asarray(x, device="cpu")
        xt, at = np.swapaxes(x, -1, -2), ndplane.matrix_transpose(a)
        cases = [(a @ at, x @ xt), (at @ a, xt @ x)]
        if x.ndim == 2 and shape[0] > 2:
            cases.append((a[::2] @ a[::2].T, x[::2] @ x[::2].T))
        for got, want in cases:
            g = np.asarray(got)
            np.testing.assert_allclose(g, want, rtol=tol, atol=tol, err_msg=str(shape))
            np.testing.assert_array_equal(g, np.swapaxes(g, -1, -2))


def test_matmul_shape_errors(h):
    a, b = h.put(np.ones((1, 2, 3), np.float32)), h.put(np.ones((1, 4, 2), np.float32))
    with pytest.raises(ValueError, match="matmul"):
        h.be.matmul(a, b, h.empty((1, 2, 2), ndplane.float32))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_take(h, dtype):
    for name, view, base in h.layouts((5, 9), dtype):
        for idt in (np.int64, np.int32, np.uint8):
            idx = np.array([0, 8, 3, 3, 1, 8], idt)
            want = np.empty((5, 6), dtype.dtype)
            K.take(view, idx, want)
            out = h.empty((5, 6), dtype)
            h.be.take(h.put(view, base), h.put(idx), out)
            np.testing.assert_array_equal(h.get(out), want, err_msg=f"{name} {idt}")


@pytest.mark.parametrize("bad", [-1, 9, 2**40, -(2**63)])
def test_take_and_scatter_add_check_bounds(h, bad):
    x = h.put(np.zeros((2, 9), np.float32))
    idx = h.put(np.array([0, bad, 1], np.int64))
    with pytest.raises(IndexError, match=str(bad)):
        h.be.take(x, idx, h.empty((2, 3), ndplane.float32))
    with pytest.raises(IndexError, match="out of bounds"):
        h.be.scatter_add(x, idx, h.put(np.ones((2, 3), np.float32)))
    np.testing.assert_array_equal(h.get(x), 0)  # nothing was written before the check
    huge = h.put(np.array([2**64 - 1], np.uint64))
    with pytest.raises(IndexError):
        h.be.take(x, huge, h.empty((2, 1), ndplane.float32))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_scatter_add_into_views(h, dtype):
    idx = np.array([2, 0, 2, 5, 2], np.int64)
    for name, vvals, bvals in h.layouts((4, 5), dtype, small=True, special=False):
        base = h.data((6, 14), dtype, small=True, special=False)
        view = base[1:5, 12:0:-2]  # (4, 6), negative stride, offset
        want = base.copy()
        K.scatter_add(want[1:5, 12:0:-2], idx, vvals)
        ref = h.put(base)
        h.be.scatter_add(h.ref_of(view, base, ref.buffer), h.put(idx), h.put(vvals, bvals))
        assert_close(h.get(ref), want, f"{dtype.name} {name}")


@pytest.mark.parametrize("dtype", [ndplane.float64, ndplane.int32, ndplane.float32, ndplane.complex128],
                         ids=lambda d: d.name)  # fmt: skip
def test_scatter_add_past_the_cache(h, dtype):
    """One row of many indices into an `out` of more than 16 MB: the bucketed road gives the
    sequential loop's result to the bit (each position's values added in k order), into a
    negatively strided view too, with repeats and the first and last positions hit."""
    n = (17 << 20) // np.dtype(dtype.dtype).itemsize + 11
    rng = np.random.default_rng(21)
    idx = np.concatenate([rng.integers(0, n, 150_000), [0, n - 1, 0, n - 1], rng.integers(0, 50, 1000)])
    vals = h.data((1, idx.size), dtype, small=True, special=False)
    for step in (1, -1):
        base = h.data((1, n), dtype, small=True, special=False)
        view = base[:, ::step]
        want = base.copy()
        np.add.at(want[:, ::step], (0, idx), vals[0])
        ref = h.put(base)
        h.be.scatter_add(h.ref_of(view, base, ref.buffer), h.put(idx), h.put(vals))
        np.testing.assert_array_equal(h.get(ref), want, err_msg=f"step {step}")


def test_scatter_add_into_its_own_indices(h):
    """``out`` and ``indices`` in one buffer (the kernel must read the indices as they were, not
    as its writes change them); disjoint parts of one buffer are read in place."""
    base = np.array([[1, 3, 0, 2, 7, 7, 7, 7]], np.int64)
    buf = h.upload(base)
    out = h.ref_of(base, base, buf)  # (1, 8): the indices are its first four elements
    idx = h.ref_of(base[0, :4], base, buf)
    h.be.scatter_add(out, idx, h.put(np.full((1, 4), 10, np.int64)))
    want = base.copy()
    K.scatter_add(want, base[0, :4].copy(), np.full((1, 4), 10, np.int64))
    np.testing.assert_array_equal(h.get(out), want)
    base = np.array([[0, 3, 3, 1, 5, 5, 5, 5]], np.int64)
    buf = h.upload(base)
    whole = h.ref_of(base, base, buf)
    disjoint = h.ref_of(base[:, 4:], base, buf)  # (1, 4) out beside its (4,) indices
    h.be.scatter_add(disjoint, h.ref_of(base[0, :4], base, buf), h.put(np.ones((1, 4), np.int64)))
    want = base.copy()
    K.scatter_add(want[:, 4:], base[0, :4].copy(), np.ones((1, 4), np.int64))
    np.testing.assert_array_equal(h.get(whole), want)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_stable_matches_reference_exactly(h, dtype, descending):
    for name, view, base in h.layouts((4, 30), dtype, small=True):
        vals = np.empty(view.shape, dtype.dtype)
        idx = np.empty(view.shape, np.int64)
        K.sort(view, vals, idx, descending, True)
        got_v, got_i = h.empty(view.shape, dtype), h.empty(view.shape, ndplane.int64)
        h.be.sort(h.put(view, base), got_v, got_i, descending, True)
        np.testing.assert_array_equal(h.get(got_i), idx, err_msg=f"{name} indices")
        np.testing.assert_array_equal(h.get(got_v), vals, err_msg=f"{name} values")
        # unstable, values only: the same values
        only = h.empty(view.shape, dtype)
        h.be.sort(h.put(view, base), only, None, descending, False)
        np.testing.assert_array_equal(h.get(only), vals)


def test_sort_nans_last_and_int32_indices(h):
    x = np.array([[3.0, np.nan, -0.0, 0.0, -np.inf, np.nan, 1.0]])
    vals, idx = np.empty_like(x), np.empty(x.shape, np.int32)
    K.sort(x, vals, idx, False, True)
    got_v, got_i = h.empty(x.shape, ndplane.float64), h.empty(x.shape, ndplane.int32)
    h.be.sort(h.put(x), got_v, got_i, False, True)
    np.testing.assert_array_equal(h.get(got_i), idx)
    assert np.isnan(h.get(got_v)[0, -2:]).all()


@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 17, 64, 67, 129, 100_003])
def test_random_bits_bit_identical(h, n):
    # NOTE: counters whose low words carry inside a group of 16 blocks (the AVX-512 loop's
    # width), and a strided out (through the kernel's buffer)
    for key, counter in [(0, 0), (2**64 - 1, 2**64 - 2), (0x1234, 2**128 - 1), (99, 12345 << 64),
                         (7, 2**32 - 5), (8, 2**64 - 7), (9, (2**96 - 3) | (1 << 127))]:  # fmt: skip
        want = np.empty(n, np.uint32)
        K.random_bits(key, counter, want)
        out = h.empty((n,), ndplane.uint32)
        h.be.random_bits(key, counter, out)
        np.testing.assert_array_equal(h.get(out), want, err_msg=f"{key} {counter}")
        wide = h.empty((2 * n,), ndplane.uint32)
        h.be.fill(wide, 0)
        h.be.random_bits(key, counter, Ref(wide.buffer, ndplane.uint32, (n,), (2,), 0, n, n <= 1))
        got = h.get(wide)
        np.testing.assert_array_equal(got[::2], want, err_msg=f"strided {key} {counter}")
        assert not got[1::2].any()


def test_integer_matmul_wraps(h):
    for dtype in INTS:
        info = np.iinfo(dtype.dtype)
        a = np.full((1, 2, 3), info.max, dtype.dtype)
        b = np.full((1, 3, 2), info.max, dtype.dtype)
        want = np.empty((1, 2, 2), dtype.dtype)
        K.matmul(a, b, want)
        out = h.empty((1, 2, 2), dtype)
        h.be.matmul(h.put(a), h.put(b), out)
        np.testing.assert_array_equal(h.get(out), want, err_msg=dtype.name)
