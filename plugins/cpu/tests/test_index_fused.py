"""fused take_axis / put_axis (take along a leading axis, ``x[int array] = y``), the blocked
argmax/argmin, fused count_nonzero, minmax and nonzero and the pooling kernels, through the public API against
NumPy, and the kernels' own checks (conformance holds pooling to its composite)."""

from __future__ import annotations

import numpy as np
import pytest
from cpu_helpers import DTYPES, held

import ndplane as nd

LAYOUTS = ("c", "transposed", "sliced", "reversed")


def host(rng, shape, dtype):
    if dtype.kind == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind == "complex":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype.dtype)
    if dtype.kind == "float":
        return rng.standard_normal(shape).astype(dtype.dtype)
    return rng.integers(0, 100, shape).astype(dtype.dtype)


def layout(a, kind):
    """``a`` (NumPy) and the same values as an ndplane view of the given layout."""
    if kind == "c":
        return a, nd.asarray(a, device="cpu")
    if kind == "transposed":
        base = nd.asarray(np.ascontiguousarray(np.swapaxes(a, 0, -1)), device="cpu")
        perm = list(range(a.ndim))
        perm[0], perm[-1] = perm[-1], perm[0]
        return a, nd.permute_dims(base, tuple(perm))
    if kind == "sliced":
        big = np.zeros((a.shape[0] * 2,) + a.shape[1:-1] + (a.shape[-1] * 3,), a.dtype)
        big[::2, ..., 1::3] = a
        return a, nd.asarray(big, device="cpu")[::2, ..., 1::3]
    rev = np.ascontiguousarray(a[::-1])
    return a, nd.flip(nd.asarray(rev, device="cpu"), axis=0)


def test_the_capabilities_are_declared():
    caps = nd.asarray([1], device="cpu").device.backend.capabilities
    assert {"fused:take_axis", "fused:put_axis"} <= caps


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("kind", LAYOUTS)
def test_take_along_leading_axes(dtype, kind):
    rng = np.random.default_rng(0)
    for shape in [(7, 5), (6, 4, 3), (40, 300), (1, 1), (5, 0), (3, 2, 1)]:
        a, x = layout(host(rng, shape, dtype), kind)
        for ax in range(a.ndim - 1):
            n = a.shape[ax]
            for idx in [rng.integers(-n, n, 9) if n else np.zeros(0, np.int64), np.zeros(0, np.int64)]:
                got = nd.take(x, nd.asarray(idx, device="cpu"), axis=ax)
                want = np.take(a, idx, axis=ax)
                assert got.shape == want.shape
                np.testing.assert_array_equal(np.asarray(got), want)
                if kind == "c":
                    assert got._ref.contiguous, "a take along a leading axis comes out C-contiguous"


@pytest.mark.parametrize("dtype", [nd.float32, nd.int8, nd.uint16, nd.complex128], ids=lambda d: d.name)
def test_getitem_rows_and_index_dtypes(dtype):
    rng = np.random.default_rng(1)
    a = host(rng, (50, 13), dtype)
    x = nd.asarray(a, device="cpu")
    for idt in (np.int8, np.int32, np.uint8, np.int64):
        idx = rng.integers(0, 50, 30).astype(idt)
        np.testing.assert_array_equal(np.asarray(x[nd.asarray(idx, device="cpu")]), a[idx])
    idx2 = rng.integers(-50, 50, (4, 3))
    np.testing.assert_array_equal(np.asarray(x[nd.asarray(idx2, device="cpu")]), a[idx2])
    np.testing.assert_array_equal(np.asarray(x[nd.asarray(idx2, device="cpu"), 2:9:3]), a[idx2, 2:9:3])


def _check_setitem(rng, dtype, a, ax, idx):
    """``x[:, ..., idx] = y`` on axis ``ax`` of an ndplane copy of ``a`` against NumPy's."""
    b = host(rng, a.shape[:ax] + idx.shape + a.shape[ax + 1 :], dtype)
    x = nd.asarray(a, device="cpu")
    x[(slice(None),) * ax + (nd.asarray(idx, device="cpu"),)] = nd.asarray(b, device="cpu")
    want = a.copy()
    want[(slice(None),) * ax + (idx,)] = b
    np.testing.assert_array_equal(np.asarray(x), want, err_msg=f"{a.shape} axis {ax}")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_setitem_rows(dtype):
    rng = np.random.default_rng(2)
    for shape, ax in [((20, 7), 0), ((5, 6, 4), 1), ((8, 300), 0), ((3, 4, 2), 0), ((300, 5), 0)]:
        a = host(rng, shape, dtype)
        n = shape[ax]
        idx = rng.permutation(n)[: max(1, n // 2)] - n * (rng.random(max(1, n // 2)) < 0.5)
        _check_setitem(rng, dtype, a, ax, idx)


@pytest.mark.parametrize("dtype", [nd.float64, nd.int32, nd.bool, nd.float16], ids=lambda d: d.name)
def test_setitem_rows_broadcast_scalar_views_and_duplicates(dtype):
    rng = np.random.default_rng(3)
    a = host(rng, (10, 6), dtype)
    # a broadcast row, a Python scalar, a 0-d array and a transposed value
    for value in [host(rng, (6,), dtype), host(rng, (), dtype)]:
        x = nd.asarray(a, device="cpu")
        x[nd.asarray([1, 4, 9], device="cpu")] = nd.asarray(value, device="cpu")
        want = a.copy()
        want[[1, 4, 9]] = value
        np.testing.assert_array_equal(np.asarray(x), want)
    x = nd.asarray(a, device="cpu")
    one = True if dtype == nd.bool else 1
    x[nd.asarray([2, 3], device="cpu")] = one
    want = a.copy()
    want[[2, 3]] = one
    np.testing.assert_array_equal(np.asarray(x), want)
    vt = host(rng, (6, 3), dtype)
    x = nd.asarray(a, device="cpu")
    x[nd.asarray([0, 5, 7], device="cpu")] = nd.permute_dims(nd.asarray(vt, device="cpu"), (1, 0))
    want = a.copy()
    want[[0, 5, 7]] = vt.T
    np.testing.assert_array_equal(np.asarray(x), want)
    # repeated indices: the last one wins (NumPy's order too)
    b = host(rng, (4, 6), dtype)
    x = nd.asarray(a, device="cpu")
    x[nd.asarray([3, 1, 3, 3], device="cpu")] = nd.asarray(b, device="cpu")
    want = a.copy()
    want[[1]] = b[1]
    want[[3]] = b[3]
    np.testing.assert_array_equal(np.asarray(x), want)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_setitem_small_rows(dtype):
    """Rows of at most 16 bytes (a 1-D x, or a short last axis) take one in-order pass: every
    dtype, repeated indices (the last wins), negative ones, along a middle axis too."""
    rng = np.random.default_rng(17)
    idx = rng.integers(-40, 40, 300)
    for shape, axis in [((40,), 0), ((3, 40, 2), 1), ((40, 1), 0)]:
        _check_setitem(rng, dtype, host(rng, shape, dtype), axis, idx)


def test_setitem_rows_through_views_and_from_itself():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((12, 8))
    # a contiguous view with an offset: written in place, the rest untouched
    base = nd.asarray(a, device="cpu")
    v = base[3:9]
    v[nd.asarray([0, -1], device="cpu")] = nd.asarray(np.ones((2, 8)), device="cpu")
    want = a.copy()
    want[[3, 8]] = 1
    np.testing.assert_array_equal(np.asarray(base), want)
    # non-contiguous views take the generic road: same answer
    for sl in [(slice(None, None, 2),), (slice(None), slice(None, None, -1)), (slice(None), slice(1, 7, 2))]:
        base = nd.asarray(a, device="cpu")
        w = a.copy()
        view, wview = base[sl], w[sl]
        idx = [0, 2, -1]
        val = rng.standard_normal((3,) + wview.shape[1:])
        view[nd.asarray(idx, device="cpu")] = nd.asarray(val, device="cpu")
        wview[idx] = val
        np.testing.assert_array_equal(np.asarray(base), w)
    # the value is the array written (every value read before any write)
    x = nd.asarray(a[:4].copy(), device="cpu")
    x[nd.asarray([3, 2, 1, 0], device="cpu")] = x
    np.testing.assert_array_equal(np.asarray(x), a[:4][::-1])
    x = nd.asarray(a, device="cpu")
    x[nd.asarray([1, 0], device="cpu")] = x[:2]
    want = a.copy()
    want[[1, 0]] = a[:2]
    np.testing.assert_array_equal(np.asarray(x), want)


def test_setitem_rows_empty_and_gradient():
    x = nd.asarray(np.arange(6.0).reshape(3, 2), device="cpu")
    x[nd.asarray(np.zeros(0, np.int64), device="cpu")] = nd.asarray(np.zeros((0, 2)), device="cpu")
    np.testing.assert_array_equal(np.asarray(x), np.arange(6.0).reshape(3, 2))
    e = nd.asarray(np.zeros((0, 4)), device="cpu")
    e[nd.asarray(np.zeros(0, np.int64), device="cpu")] = 1.0
    w = nd.asarray(np.arange(6.0).reshape(3, 2), device="cpu", requires_grad=True)
    y = w * 1.0
    v = nd.asarray(np.ones((2, 2)), device="cpu", requires_grad=True)
    y[nd.asarray([0, 2], device="cpu")] = v * 3.0
    nd.sum(y * y).backward()
    np.testing.assert_allclose(np.asarray(w.grad), [[0, 0], [4, 6], [0, 0]])
    np.testing.assert_allclose(np.asarray(v.grad), np.full((2, 2), 18.0))


def test_bad_input_raises_before_the_kernel():
    x = nd.asarray(np.zeros((4, 3)), device="cpu")
    with pytest.raises(IndexError, match="out of bounds"):
        nd.take(x, nd.asarray([0, 4], device="cpu"), axis=0)
    with pytest.raises(IndexError, match="out of bounds"):
        x[nd.asarray([-5], device="cpu")] = 1.0
    with pytest.raises(TypeError, match="integer"):
        nd.take(x, nd.asarray([0.0], device="cpu"), axis=0)
    with pytest.raises(ValueError):
        x[nd.asarray([0, 1], device="cpu")] = nd.asarray(np.zeros((3, 3)), device="cpu")
    np.testing.assert_array_equal(np.asarray(x), np.zeros((4, 3)))


@pytest.mark.parametrize("dtype", [nd.float32, nd.int8, nd.int64, nd.complex128, nd.bool], ids=lambda d: d.name)
def test_put_axis_distinct_writes_every_row_once(dtype):
    """put_axis with the core's ``distinct`` promise (threads split the indices): each index of a
    permutation, or of part of one, gets its own row; rows of one element to whole matrices."""
    be = nd.asarray([1], device="cpu").device.backend
    rng = np.random.default_rng(11)
    for a_, n, b_, k in [(1, 300_000, 1, 300_000), (2, 70_000, 1, 50_000), (1, 5000, 3, 5000),
                         (3, 2000, 40, 1500), (1, 1, 1, 1), (1, 7, 2, 0)]:  # fmt: skip
        idx = rng.permutation(n)[:k].astype(np.int64)
        target = host(rng, (a_, n, b_), dtype)
        values = host(rng, (a_, k, b_), dtype)
        want = target.copy()
        want[:, idx, :] = values
        out = nd.asarray(target, device="cpu")
        be.fused("put_axis", (held(nd.asarray(idx, device="cpu")), held(nd.asarray(values, device="cpu"))),
                 out._ref, {"distinct": True})  # fmt: skip
        np.testing.assert_array_equal(np.asarray(out), want)


def test_put_axis_distinct_broken_promise_stays_in_bounds():
    """Repeated indices under ``distinct``: which value lands is unspecified, but each written
    element holds one of its candidates and nothing else changes."""
    be = nd.asarray([1], device="cpu").device.backend
    n = 400_000
    idx = np.repeat(np.arange(0, n, 2), 2)  # every even index twice
    values = np.arange(idx.size, dtype=np.int64)
    out = nd.asarray(np.full(n, -1, np.int64), device="cpu")
    be.fused("put_axis", (held(nd.asarray(idx, device="cpu")), held(nd.asarray(values.reshape(1, -1, 1), device="cpu"))),
             held(nd.reshape(out, (1, n, 1))), {"distinct": True})  # fmt: skip
    got = np.asarray(out)
    assert (got[1::2] == -1).all()
    assert np.isin(got[0::2], [2 * np.arange(n // 2), 2 * np.arange(n // 2) + 1]).all()
    assert ((got[0::2] // 2) == np.arange(n // 2)).all()
    with pytest.raises(TypeError, match="distinct"):
        be.fused("put_axis", (held(nd.asarray(idx[:2], device="cpu")), held(nd.asarray(values[:2].reshape(1, 2, 1), device="cpu"))),
                 held(nd.reshape(out, (1, n, 1))), {"distinct": 1})  # fmt: skip


def test_the_kernels_check_their_operands():
    be = nd.asarray([1], device="cpu").device.backend
    x = nd.asarray(np.zeros((2, 3, 4), np.float32), device="cpu")
    i = nd.asarray(np.asarray([0, 5]), device="cpu")
    out = nd.asarray(np.zeros((2, 2, 4), np.float32), device="cpu")
    with pytest.raises(IndexError, match="out of bounds"):
        be.fused("take_axis", (x._ref, i._ref), out._ref, {})
    with pytest.raises(IndexError, match="out of bounds"):
        be.fused("put_axis", (i._ref, out._ref), x._ref, {})
    with pytest.raises(ValueError, match="expected"):
        be.fused("take_axis", (x._ref, i._ref), x._ref, {})
    o64 = nd.asarray(np.zeros((2, 2, 4)), device="cpu")
    with pytest.raises(TypeError):
        be.fused("take_axis", (x._ref, held(nd.asarray([0, 1], device="cpu"))), o64._ref, {})
    with pytest.raises(TypeError):
        be.fused("put_axis", (i._ref,), x._ref, {})


ARG_DTYPES = [nd.float32, nd.float64, nd.int8, nd.int32, nd.int64, nd.uint16, nd.float16]


@pytest.mark.parametrize("dtype", ARG_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_argmax_argmin_long_rows(dtype, op):
    rng = np.random.default_rng(5)
    for n in [1, 7, 255, 256, 257, 1000, 4099, 300_000]:
        a = host(rng, (3, n), dtype) if dtype.kind != "float" else rng.standard_normal((3, n)).astype(dtype.dtype)
        if dtype.kind == "int" or dtype.kind == "uint":
            a = rng.integers(0, 5, (3, n)).astype(dtype.dtype)  # many ties: the first index wins
        for kind in ("c", "reversed"):
            b, x = layout(a, kind)
            np.testing.assert_array_equal(np.asarray(getattr(nd, op)(x, axis=-1)), getattr(np, op)(b, axis=-1))
            assert int(getattr(nd, op)(x)) == int(getattr(np, op)(b))
        xt = nd.permute_dims(nd.asarray(np.ascontiguousarray(a.T), device="cpu"), (1, 0))
        np.testing.assert_array_equal(np.asarray(getattr(nd, op)(xt, axis=-1)), getattr(np, op)(a, axis=-1))


@pytest.mark.parametrize("dtype", [nd.float32, nd.float64], ids=lambda d: d.name)
@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_argmax_argmin_nan_zero_sign_and_inf(dtype, op):
    rng = np.random.default_rng(6)
    for n in [300, 1000, 5000, 200_000]:
        for pos in [0, 255, 256, n // 2, n - 1]:
            a = rng.standard_normal(n).astype(dtype.dtype)
            a[pos] = np.nan
            a[min(n - 1, pos + 3)] = np.nan
            assert int(getattr(nd, op)(nd.asarray(a, device="cpu"))) == int(getattr(np, op)(a)), (n, pos)
            b = -np.abs(rng.standard_normal(n)).astype(dtype.dtype) if op == "argmax" else np.abs(
                rng.standard_normal(n)).astype(dtype.dtype)
            b[pos] = -0.0
            b[n - 1 - pos // 2] = 0.0
            assert int(getattr(nd, op)(nd.asarray(b, device="cpu"))) == int(getattr(np, op)(b)), (n, pos)
            c = rng.standard_normal(n).astype(dtype.dtype)
            c[pos] = np.inf if op == "argmax" else -np.inf
            c[-1] = c[pos]
            assert int(getattr(nd, op)(nd.asarray(c, device="cpu"))) == pos


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("kind", LAYOUTS)
def test_count_nonzero(dtype, kind):
    rng = np.random.default_rng(7)
    for shape in [(5, 7), (3, 300_001), (0, 4), (4, 0), (1000, 3)]:
        a = host(rng, shape, dtype)
        if a.size:
            a.reshape(-1)[:: 3] = 0
        if dtype.kind == "float" and a.size:
            a.reshape(-1)[1] = np.nan
            a.reshape(-1)[2] = -0.0
        b, x = layout(a, kind)
        for axis in (None, 0, 1, -1, (0, 1)):
            got = nd.count_nonzero(x, axis=axis)
            want = np.count_nonzero(b, axis=axis)
            np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"{shape} {axis}")
            assert got.dtype == nd.int64
        kd = nd.count_nonzero(x, axis=1, keepdims=True)
        np.testing.assert_array_equal(np.asarray(kd), np.count_nonzero(b, axis=1, keepdims=True))
    z = nd.asarray(np.zeros((), dtype.dtype), device="cpu")
    assert int(nd.count_nonzero(z)) == 0
    assert int(nd.count_nonzero(nd.asarray(np.ones((), dtype.dtype), device="cpu"))) == 1


def test_count_nonzero_kernel_checks():
    be = nd.asarray([1], device="cpu").device.backend
    x = nd.asarray(np.ones((2, 3), np.float32), device="cpu")
    with pytest.raises(TypeError, match="integer"):
        be.fused("count_nonzero", (x._ref,), held(nd.asarray(np.zeros(2, np.float32), device="cpu")), {})
    with pytest.raises(ValueError, match="expected"):
        be.fused("count_nonzero", (x._ref,), held(nd.asarray(np.zeros(3, np.int64), device="cpu")), {})
    out = nd.asarray(np.zeros(2, np.int32), device="cpu")
    be.fused("count_nonzero", (x._ref,), out._ref, {})
    assert np.asarray(out).tolist() == [3, 3]


def test_pool_kernel_checks():
    be = nd.asarray([1], device="cpu").device.backend
    assert {"fused:max_pool2d", "fused:avg_pool2d", "fused:count_nonzero"} <= be.capabilities
    x = nd.asarray(np.ones((1, 1, 4, 4), np.float32), device="cpu")
    out = nd.asarray(np.zeros((1, 1, 2, 2), np.float32), device="cpu")
    be.fused("max_pool2d", (x._ref,), out._ref, {"kernel": (2, 2), "stride": (2, 2)})
    assert np.asarray(out).tolist() == [[[[1, 1], [1, 1]]]]
    with pytest.raises(ValueError, match="shape"):
        be.fused("avg_pool2d", (x._ref,), out._ref, {"kernel": (2, 2), "stride": (1, 1)})
    with pytest.raises(ValueError, match="positive"):
        be.fused("avg_pool2d", (x._ref,), out._ref, {"kernel": (0, 2), "stride": (2, 2)})
    with pytest.raises(TypeError, match="pair"):
        be.fused("max_pool2d", (x._ref,), out._ref, {"kernel": 2, "stride": (2, 2)})
    with pytest.raises(TypeError, match="Ref"):
        be.fused("max_pool2d", (out._ref,), x._ref, {"kernel": (2, 2), "stride": (2, 2), "grad": "input"})
    i32 = nd.asarray(np.ones((1, 1, 4, 4), np.int32), device="cpu")
    with pytest.raises(TypeError, match="float32"):
        be.fused("max_pool2d", (i32._ref,), out._ref, {"kernel": (2, 2), "stride": (2, 2)})
    with pytest.raises(ValueError, match="larger"):
        be.fused("max_pool2d", (x._ref,), out._ref, {"kernel": (5, 2), "stride": (2, 2)})


@pytest.mark.parametrize("op", ["max_pool2d", "avg_pool2d"])
def test_pooling_float16_and_ints_take_the_generic_road(op):
    rng = np.random.default_rng(8)
    a = rng.standard_normal((2, 3, 6, 6))
    f = getattr(nd.nn.functional, op)
    for dt in (np.float16,):
        got = np.asarray(f(nd.asarray(a.astype(dt), device="cpu"), 2)).astype(np.float64)
        want = np.asarray(f(nd.asarray(a, device="cpu"), 2))
        np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d.kind in ("int", "uint")], ids=lambda d: d.name)
@pytest.mark.parametrize("kind", LAYOUTS)
def test_minmax(dtype, kind):
    """fused minmax (the index bounds check): each row's extremes, every layout, a row of one."""
    rng = np.random.default_rng(11)
    info = np.iinfo(dtype.dtype)
    be = nd.asarray([1], device="cpu").device.backend
    for shape in [(4, 9), (3, 70_001), (1, 1), (6, 1)]:
        a = rng.integers(info.min, info.max, shape, dtype=dtype.dtype, endpoint=True)
        a[0, -1], a[-1, 0] = info.max, info.min
        b, x = layout(a, kind)  # strided as it comes: reduce's kernels take any 2-D layout
        out = nd.empty((shape[0], 2), dtype=dtype, device="cpu")
        be.fused("minmax", (x._ref,), out._ref, {})
        want = np.stack([b.min(axis=1), b.max(axis=1)], axis=1)
        np.testing.assert_array_equal(np.asarray(out), want, err_msg=f"{shape} {kind}")


def test_minmax_kernel_checks():
    be = nd.asarray([1], device="cpu").device.backend
    x = nd.asarray(np.ones((2, 3), np.float32), device="cpu")
    i = nd.asarray(np.ones((2, 3), np.int32), device="cpu")
    with pytest.raises(TypeError, match="integer"):
        be.fused("minmax", (x._ref,), held(nd.empty((2, 2), dtype=nd.float32, device="cpu")), {})
    with pytest.raises(ValueError, match="expected"):
        be.fused("minmax", (i._ref,), held(nd.empty((2, 3), dtype=nd.int32, device="cpu")), {})
    with pytest.raises(ValueError, match="empty"):
        be.fused("minmax", (held(nd.empty((2, 0), dtype=nd.int32, device="cpu")),),
                 held(nd.empty((2, 2), dtype=nd.int32, device="cpu")), {})  # fmt: skip
    with pytest.raises(TypeError, match="dtype"):
        be.fused("minmax", (i._ref,), held(nd.empty((2, 2), dtype=nd.int64, device="cpu")), {})


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("kind", LAYOUTS)
def test_nonzero(dtype, kind):
    """fused nonzero: the positions of the truthy elements of one row, every layout, rows of
    many blocks (threads), of none, all-false and all-true."""
    rng = np.random.default_rng(13)
    be = nd.asarray([1], device="cpu").device.backend
    for shape in [(2, 9), (3, 70_001), (1, 1), (2, 0)]:
        a = host(rng, shape, dtype)
        if a.size:
            a.reshape(-1)[::3] = 0
            a.reshape(-1)[a.size // 4 : a.size // 2] = 0
            if dtype.kind == "float" and a.size > 2:
                a.reshape(-1)[1], a.reshape(-1)[-1] = np.nan, -0.0
        b, x = layout(a, kind)
        flat = nd.reshape(x, (1, -1))  # a view where one exists (sliced, reversed), else a copy
        want = np.flatnonzero(b)
        out = nd.empty((want.size,), dtype=nd.int64, device="cpu")
        be.fused("nonzero", (flat._ref,), out._ref, {})
        np.testing.assert_array_equal(np.asarray(out), want, err_msg=f"{shape} {kind}")


def test_nonzero_kernel_checks():
    be = nd.asarray([1], device="cpu").device.backend
    x = nd.asarray(np.array([[0, 1, 2, 0, 3]], np.float32), device="cpu")
    with pytest.raises(ValueError, match="room for 2 positions but x has 3"):
        be.fused("nonzero", (x._ref,), held(nd.empty((2,), dtype=nd.int64, device="cpu")), {})
    with pytest.raises(ValueError, match="room for 4 positions but x has 3"):
        be.fused("nonzero", (x._ref,), held(nd.empty((4,), dtype=nd.int64, device="cpu")), {})
    with pytest.raises(TypeError, match="dtype"):
        be.fused("nonzero", (x._ref,), held(nd.empty((3,), dtype=nd.int32, device="cpu")), {})
    with pytest.raises(ValueError, match="expected"):
        be.fused("nonzero", (held(nd.reshape(x, (5, 1))),), held(nd.empty((3,), dtype=nd.int64, device="cpu")), {})


def test_searchsorted_kernel_checks():
    be = nd.asarray([1], device="cpu").device.backend
    a = nd.asarray(np.array([[1.0, 2.0, 3.0]]), device="cpu")
    v = nd.asarray(np.array([[0.5, 2.0]]), device="cpu")
    out = nd.empty((2,), dtype=nd.int64, device="cpu")
    be.fused("searchsorted", (a._ref, v._ref), out._ref, {"right": True})
    assert out.tolist() == [0, 2]
    with pytest.raises(TypeError, match="right"):
        be.fused("searchsorted", (a._ref, v._ref), out._ref, {})
    with pytest.raises(TypeError, match="a tuple"):
        be.fused("searchsorted", (a._ref,), out._ref, {"right": False})
    with pytest.raises(TypeError, match="dtype"):  # v not of a's dtype
        be.fused("searchsorted", (a._ref, held(nd.astype(v, nd.float32))), out._ref, {"right": False})
    with pytest.raises(TypeError, match="dtype"):  # out not int64
        be.fused("searchsorted", (a._ref, v._ref), held(nd.empty((2,), dtype=nd.int32, device="cpu")), {"right": False})
    with pytest.raises(ValueError, match="expected"):  # out of the wrong length
        be.fused("searchsorted", (a._ref, v._ref), held(nd.empty((3,), dtype=nd.int64, device="cpu")), {"right": False})
    c = nd.asarray(np.array([[1j]]), device="cpu")
    with pytest.raises(TypeError, match="real"):
        be.fused("searchsorted", (c._ref, c._ref), held(nd.empty((1,), dtype=nd.int64, device="cpu")), {"right": False})


def test_arange_kernel_checks():
    be = nd.asarray([1], device="cpu").device.backend
    out = nd.empty((4,), dtype=nd.int32, device="cpu")
    be.fused("arange", (), out._ref, {"start": -3, "step": 2})
    assert out.tolist() == [-3, -1, 1, 3]
    f = nd.empty((3,), dtype=nd.float32, device="cpu")
    be.fused("arange", (), f._ref, {"start": 0.5, "step": 0.25})
    assert f.tolist() == [0.5, 0.75, 1.0]
    with pytest.raises(TypeError, match="must be ints for a int32 out"):
        be.fused("arange", (), out._ref, {"start": 0.5, "step": 1})
    with pytest.raises(TypeError, match="must be floats"):
        be.fused("arange", (), f._ref, {"start": 0, "step": 1})
    with pytest.raises(TypeError, match="inputs"):
        be.fused("arange", (f._ref,), f._ref, {"start": 0.0, "step": 1.0})
    with pytest.raises(TypeError, match="integer or real floating"):
        be.fused("arange", (), held(nd.empty((2,), dtype=nd.bool, device="cpu")), {"start": 0.0, "step": 1.0})
    with pytest.raises(ValueError, match="1-D"):
        be.fused("arange", (), held(nd.empty((2, 2), dtype=nd.float32, device="cpu")), {"start": 0.0, "step": 1.0})
    with pytest.raises(OverflowError):
        be.fused("arange", (), out._ref, {"start": 2**70, "step": 1})


def test_uniform_kernel_checks():
    be = nd.asarray([1], device="cpu").device.backend
    params = {"key": 7, "counter": 2**64 + 5, "low": -1.0, "high": 1.0}
    f = nd.empty((9,), dtype=nd.float64, device="cpu")
    be.fused("uniform", (), f._ref, params)
    rng = nd.random.default_rng(7, device="numpy")
    rng.counter = 2**64 + 5
    assert f.tolist() == rng.uniform(-1.0, 1.0, (9,), dtype=nd.float64).tolist()  # the composite
    with pytest.raises(TypeError, match="inputs"):
        be.fused("uniform", (f._ref,), f._ref, params)
    with pytest.raises(TypeError, match="params"):
        be.fused("uniform", (), f._ref, {**params, "low": -1})
    with pytest.raises(TypeError, match="params"):
        be.fused("uniform", (), f._ref, {"key": 7, "low": 0.0, "high": 1.0})
    with pytest.raises(TypeError, match="float32 or float64"):
        be.fused("uniform", (), held(nd.empty((2,), dtype=nd.float16, device="cpu")), params)
    with pytest.raises(ValueError, match="1-D"):
        be.fused("uniform", (), held(nd.empty((2, 2), dtype=nd.float32, device="cpu")), params)
    with pytest.raises(ValueError, match="contiguous"):
        be.fused("uniform", (), held(nd.empty((4,), dtype=nd.float32, device="cpu")[::2]), params)


def test_batch_norm_kernel_checks():
    be = nd.asarray([1], device="cpu").device.backend
    x = nd.asarray(np.arange(24.0).reshape(2, 3, 4), device="cpu")
    m, v = nd.asarray([1.0, 2.0, 3.0], device="cpu"), nd.asarray([1.0, 4.0, 9.0], device="cpu")
    out = nd.empty((2, 3, 4), dtype=nd.float64, device="cpu")
    be.fused("batch_norm", (x._ref, m._ref, v._ref, None, None), out._ref, {"eps": 0.0})
    want = (np.arange(24.0).reshape(2, 3, 4) - [[[1.0], [2.0], [3.0]]]) / [[[1.0], [2.0], [3.0]]]
    np.testing.assert_allclose(out.to_numpy(), want, rtol=1e-15)
    with pytest.raises(TypeError, match="inputs"):
        be.fused("batch_norm", (x._ref, m._ref, v._ref), out._ref, {"eps": 0.0})
    with pytest.raises(TypeError, match="eps"):
        be.fused("batch_norm", (x._ref, m._ref, v._ref, None, None), out._ref, {"eps": 0})
    with pytest.raises(ValueError, match=r"mean must be contiguous of shape \(C,\)"):
        be.fused("batch_norm", (x._ref, v[:2]._ref, v._ref, None, None), out._ref, {"eps": 0.0})
    with pytest.raises(ValueError, match="bias"):
        be.fused("batch_norm", (x._ref, m._ref, v._ref, None, held(v[::-1])), out._ref, {"eps": 0.0})
    with pytest.raises(TypeError, match="var"):
        be.fused("batch_norm", (x._ref, m._ref, held(nd.astype(v, nd.float32)), None, None), out._ref, {"eps": 0.0})
    with pytest.raises(TypeError, match="float32 or float64"):
        xi = nd.astype(x, nd.int32)
        be.fused("batch_norm", (xi._ref, m._ref, v._ref, None, None), held(nd.astype(out, nd.int32)), {"eps": 0.0})
    with pytest.raises(ValueError, match="A, C, B"):
        be.fused("batch_norm", (held(x[:, :, ::2]), m._ref, v._ref, None, None), out._ref, {"eps": 0.0})
    with pytest.raises(ValueError):  # out of another shape
        be.fused("batch_norm", (x._ref, m._ref, v._ref, None, None), held(out[:1]), {"eps": 0.0})


def test_clip_kernel_checks():
    be = nd.asarray([1], device="cpu").device.backend
    x = nd.asarray([-2.0, -0.0, 0.5, float("nan"), 3.0], dtype=nd.float32, device="cpu")
    out = nd.empty((5,), dtype=nd.float32, device="cpu")
    be.fused("clip", (x._ref,), out._ref, {"min": -1.0, "max": None})
    assert [str(v) for v in out.tolist()] == ["-1.0", "-0.0", "0.5", "nan", "3.0"]
    be.fused("clip", (x._ref,), out._ref, {"min": None, "max": 0.25})
    assert [str(v) for v in out.tolist()] == ["-2.0", "-0.0", "0.25", "nan", "0.25"]
    with pytest.raises(TypeError, match="must be a float or None"):
        be.fused("clip", (x._ref,), out._ref, {"min": 1, "max": None})
    with pytest.raises(TypeError, match="'min' and 'max'"):
        be.fused("clip", (x._ref,), out._ref, {"min": 1.0})
    with pytest.raises(ValueError, match="NaN bound"):
        be.fused("clip", (x._ref,), out._ref, {"min": float("nan"), "max": None})
    with pytest.raises(TypeError, match="real floating"):
        i = nd.asarray([1, 2], device="cpu")
        be.fused("clip", (i._ref,), i._ref, {"min": 0.0, "max": 1.0})
    with pytest.raises(TypeError, match="out"):
        be.fused("clip", (x._ref,), held(nd.empty((5,), dtype=nd.float64, device="cpu")), {"min": 0.0, "max": 1.0})
    with pytest.raises(ValueError, match="shape"):
        be.fused("clip", (x._ref,), held(nd.empty((4,), dtype=nd.float32, device="cpu")), {"min": 0.0, "max": 1.0})


@pytest.mark.parametrize("args", [(1000003,), (0.5, 1000003.7, 1.3), (-5.0, 5.0, 0.001), (3.0, -2.0, -0.25),
                                  (2**40, 2**40 + 70000, 1)])
def test_fused_arange_of_floats_matches_the_host_values(args):
    """The float loop counts each chunk from its start (an int32 offset: no per-element int64
    conversion); the values are the reference backend's to the bit, large offsets too."""
    for dt in (nd.float16, nd.float32, nd.float64):
        got, want = nd.arange(*args, dtype=dt, device="cpu"), nd.arange(*args, dtype=dt, device="numpy")
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=f"{args} {dt.name}")


def test_nll_kernel_checks():
    """fused nll (conformance holds it to the composite on every layout and dtype): what the
    kernel itself checks, and its exact gather, sign flips included."""
    be = nd.asarray([1], device="cpu").device.backend
    assert "fused:nll" in be.capabilities
    x = nd.asarray([[0.5, -0.0, float("nan")], [2.0, 4.0, -1.0]], dtype=nd.float32, device="cpu")
    t = nd.asarray([1, 2], dtype=nd.int8, device="cpu")
    out2, out1 = (nd.empty(s, dtype=nd.float32, device="cpu") for s in ((2,), (1,)))
    be.fused("nll", (x._ref, t._ref), out2._ref, {"reduction": "none"})
    assert [str(v) for v in out2.tolist()] == ["0.0", "1.0"]
    for reduction, want in (("sum", -(-0.0 - 1.0)), ("mean", 0.5)):
        be.fused("nll", (x._ref, t._ref), out1._ref, {"reduction": reduction})
        assert out1.tolist() == [want]
    with pytest.raises(IndexError, match="out of bounds"):
        be.fused("nll", (x._ref, held(nd.asarray([0, 3], device="cpu"))), out2._ref, {"reduction": "none"})
    with pytest.raises(IndexError, match="out of bounds"):
        be.fused("nll", (x._ref, held(nd.asarray([2**63 + 5, 0], dtype=nd.uint64, device="cpu"))), out1._ref,
                 {"reduction": "sum"})  # fmt: skip
    with pytest.raises(TypeError, match="'reduction'"):
        be.fused("nll", (x._ref, t._ref), out1._ref, {"reduction": "avg"})
    with pytest.raises(TypeError, match="'reduction'"):
        be.fused("nll", (x._ref, t._ref), out1._ref, {})
    with pytest.raises(ValueError, match=r"\(1,\)"):
        be.fused("nll", (x._ref, t._ref), out2._ref, {"reduction": "mean"})
    with pytest.raises(ValueError, match="expected"):
        be.fused("nll", (x._ref, held(nd.asarray([1, 2, 0], device="cpu"))), out2._ref, {"reduction": "none"})
    with pytest.raises(TypeError, match="real floating"):
        i = nd.asarray([[1, 2]], device="cpu")
        be.fused("nll", (i._ref, held(nd.asarray([0], device="cpu"))), held(nd.empty((1,), dtype=nd.int64, device="cpu")),
                 {"reduction": "none"})  # fmt: skip
    with pytest.raises(TypeError, match="out"):
        be.fused("nll", (x._ref, t._ref), held(nd.empty((2,), dtype=nd.float64, device="cpu")), {"reduction": "none"})
    with pytest.raises(TypeError, match="integer"):
        be.fused("nll", (x._ref, held(nd.asarray([1.0, 0.0], device="cpu"))), out2._ref, {"reduction": "none"})
    with pytest.raises(ValueError, match="M >= 1"):
        e = held(nd.empty((0, 3), dtype=nd.float32, device="cpu"))
        be.fused("nll", (e, held(nd.empty((0,), dtype=nd.int64, device="cpu"))), out1._ref, {"reduction": "sum"})
    with pytest.raises(TypeError, match="inputs"):
        be.fused("nll", (x._ref,), out2._ref, {"reduction": "none"})


def test_every_fused_op_refuses_malformed_inputs_and_params():
    """Each fused op the cpu backend declares, called with inputs that are no tuple, a tuple of
    the wrong length, or params of the wrong type: a Python error naming the op, never a crash
    (one parsing path in module.cc serves them all)."""
    be = nd.asarray([1], device="cpu").device.backend
    ops = sorted(c.removeprefix("fused:") for c in be.capabilities if c.startswith("fused:"))
    xa, outa = nd.ones((2, 3, 4, 4), device="cpu"), nd.zeros((2, 3, 4, 4), device="cpu")
    x, out = xa._ref, outa._ref
    too_many = (x,) * 6
    for op in ops:
        name = "fused" if op in ("softmax", "log_softmax", "logsumexp", "layer_norm") else f"fused {op}"
        for inputs in (x, too_many):
            with pytest.raises(TypeError, match=f"{name}: inputs must be"):
                be.fused(op, inputs, out, {"kernel": (2, 2), "stride": (2, 2), "part": "sums"})
    bad_params = {  # op: (inputs, params, error, message)
        "adam": ((x, x, x), {"lr": "fast"}, TypeError, r"fused adam: params\['lr'\] must be a number"),
        "conv2d": ((x, x), {"stride": 1}, TypeError, r"fused conv2d: params\['stride'\] must be a pair of ints"),
        "conv2d ": ((x, x), {"grad": "everything"}, ValueError, r"fused conv2d: params\['grad'\] must be None, 'in"),
        "max_pool2d": ((x,), {"kernel": (2, 2)}, TypeError, r"fused max_pool2d: params\['stride'\] must be a pair"),
        "avg_pool2d": ((x,), {"kernel": (2, 2), "stride": (2, 2), "grad": 3}, ValueError, r"params\['grad'\] must be"),
        "searchsorted": ((x, x), {"right": 1}, TypeError, r"fused searchsorted: params\['right'\] must be a bool"),
        "clip": ((x,), {"min": 0.0}, TypeError, "fused clip: params must hold 'min' and 'max'"),
        "nll": ((x, x), {"reduction": "all"}, TypeError, r"fused nll: params\['reduction'\] must be"),
        "arange": ((), {"start": 0, "step": 1}, TypeError, r"fused arange: params\['start'\] and params\['step'\]"),
        "uniform": ((), {"key": 1, "counter": 0}, TypeError, "fused uniform: params must hold ints 'key'"),
        "integers": ((), {"key": 1, "counter": 0, "top": -1, "low": 0}, TypeError, "fused integers: params must hold"),
        "batch_norm": ((x, x, x, None, None), {"eps": "small"}, TypeError, r"fused batch_norm: params\['eps'\]"),
        "layer_norm": ((x, None, None), {"eps": "small"}, TypeError, r"fused: params\['eps'\] must be a number"),
        "batch_norm_grad": ((x, x, x), {"part": "all"}, TypeError, r"fused batch_norm_grad: params\['part'\] must be"),
    }
    for op, (inputs, params, error, message) in bad_params.items():
        with pytest.raises(error, match=message):
            be.fused(op.strip(), inputs, out, params)
    assert not nd.any(outa)  # nothing ran
    # a str UTF-8 cannot hold (a lone surrogate) is no name either: an error, not a crash
    for op, key, inputs in (("nll", "reduction", (x, x)), ("batch_norm_grad", "part", (x, x, x)),
                            ("conv2d", "grad", (x, x)), ("max_pool2d", "grad", (x,))):  # fmt: skip
        with pytest.raises((TypeError, ValueError), match=rf"params\['{key}'\] must be"):
            be.fused(op, inputs, out, {"kernel": (2, 2), "stride": (2, 2), key: "\ud800"})
    bits = nd.zeros((8,), dtype=nd.uint32, device="cpu")
    with pytest.raises(TypeError, match="random_bits: key and counter must be ints"):
        be.random_bits(1.5, 0, bits._ref)
    same = nd.zeros((8,), dtype=nd.uint32, device="cpu")
    be.random_bits(2**64 + 5, 2**129 + 2**128 - 1, bits._ref)  # a key modulo 2**64, a counter modulo 2**128
    be.random_bits(5, 2**128 - 1, same._ref)
    assert bits.tolist() == same.tolist() and nd.any(bits)


def test_batch_norm_grad_kernel_checks():
    """fused batch_norm_grad refuses what its kernel cannot take, before it runs."""
    be = nd.asarray([1], device="cpu").device.backend
    x, g = nd.ones((2, 3, 4), device="cpu"), nd.ones((2, 3, 4), device="cpu")
    m, coef, sums = nd.zeros((3,), device="cpu"), nd.ones((3, 3), device="cpu"), nd.zeros((2, 3), device="cpu")
    out = nd.zeros((2, 3, 4), device="cpu")
    be.fused("batch_norm_grad", (x._ref, g._ref, m._ref), sums._ref, {"part": "sums"})
    assert sums.tolist() == [[8.0] * 3, [8.0] * 3]  # the sum of g, and of g * (x - 0)
    be.fused("batch_norm_grad", (x._ref, g._ref, m._ref, coef._ref), out._ref, {"part": "input"})
    assert nd.all(out == -1)  # ((g - c0) - (x - mean) * c1) * c2 = ((1 - 1) - 1) * 1
    cases = [
        ((x._ref, g._ref, m._ref, coef._ref), sums._ref, "sums", TypeError, "inputs must be a tuple \\(x, g, mean\\)"),
        ((x._ref, held(g[:, :, ::2]), m._ref), sums._ref, "sums", ValueError, "C-contiguous"),
        ((x._ref, held(nd.astype(g, nd.float32)), m._ref), sums._ref, "sums", TypeError, "g of dtype float64"),
        ((x._ref, g._ref, held(m[:2])), sums._ref, "sums", ValueError, "mean must be contiguous of shape \\(C,\\)"),
        ((x._ref, g._ref, m._ref), held(sums[:1]), "sums", ValueError, "out must be contiguous of shape \\(2, C\\)"),
        ((x._ref, g._ref, m._ref, held(coef[:2])), out._ref, "input", ValueError, "coef must be contiguous"),
        ((x._ref, g._ref, m._ref, coef._ref), x._ref, "input", ValueError, "must not overlap"),
        ((held(nd.astype(x, nd.int32)), g._ref, m._ref), sums._ref, "sums", TypeError, "float32 or float64"),
    ]
    for inputs, o, part, error, message in cases:
        with pytest.raises(error, match=message):
            be.fused("batch_norm_grad", inputs, o, {"part": part})


def test_cross_kernel_checks():
    be = nd.asarray([1], device="cpu").device.backend
    a = nd.asarray([[1, 0, 0], [0, 2, 0]], dtype=nd.int8, device="cpu")
    b = nd.asarray([[0, 1, 0], [0, 0, 3]], dtype=nd.int8, device="cpu")
    out = nd.empty((2, 3), dtype=nd.int8, device="cpu")
    be.fused("cross", (a._ref, b._ref), out._ref, {})
    assert out.tolist() == [[0, 0, 1], [6, 0, 0]]
    be.fused("cross", (held(a[1:]), held(b[1:])), held(out[:1]), {})  # one row: its stride is not looked at
    assert out.tolist()[0] == [6, 0, 0]
    with pytest.raises(TypeError, match="fused cross: inputs must be a tuple"):
        be.fused("cross", (a._ref,), out._ref, {})
    with pytest.raises(ValueError, match=r"fused cross: expected a and b \(M, 3\)"):
        be.fused("cross", (held(a[:, :2]), held(b[:, :2])), held(out[:, :2]), {})
    with pytest.raises(ValueError, match=r"out \(M, 3\) C-contiguous"):
        be.fused("cross", (a._ref, b._ref), held(nd.empty((3, 2), dtype=nd.int8, device="cpu").mT), {})
    with pytest.raises(ValueError, match=r"\(M, 3\)"):  # rows that differ
        be.fused("cross", (a._ref, b[:1]._ref), out._ref, {})
    with pytest.raises(TypeError, match="fused cross: expected b of dtype int8; got int16"):
        be.fused("cross", (a._ref, held(nd.astype(b, nd.int16))), out._ref, {})
    with pytest.raises(TypeError, match="fused cross: expected out of dtype int8; got float32"):
        be.fused("cross", (a._ref, b._ref), held(nd.astype(out, nd.float32)), {})
    for dt in (nd.bool, nd.complex64):
        p = nd.astype(a, dt)
        with pytest.raises(TypeError, match=f"real numeric dtype; got {dt.name}"):
            be.fused("cross", (p._ref, p._ref), held(nd.astype(out, dt)), {})


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("kind", LAYOUTS)
def test_take_along_axis_through_the_fused_gather(dtype, kind):
    """take_along_axis on every axis of every layout, index dtype and sign (negative indices
    take the checked road's second try), against NumPy; the result C-contiguous."""
    rng = np.random.default_rng(2)
    assert "fused:take_along" in nd.asarray([1], device="cpu").device.backend.capabilities
    for shape in [(7, 5), (6, 4, 3), (40, 300), (1, 1), (3, 2, 1)]:
        a, x = layout(host(rng, shape, dtype), kind)
        for ax in range(a.ndim):
            n = a.shape[ax]
            ishape = list(a.shape)
            ishape[ax] = 4
            for idt, lo in ((np.int64, 0), (np.int64, -n), (np.int32, -n), (np.uint8, 0), (np.int16, 0)):
                idx = rng.integers(lo, n, ishape).astype(idt)
                got = nd.take_along_axis(x, nd.asarray(idx, device="cpu"), axis=ax)
                want = np.take_along_axis(a, idx.astype(np.int64), axis=ax)
                assert got.shape == want.shape
                np.testing.assert_array_equal(np.asarray(got), want)
                assert got._ref.contiguous


def test_take_along_axis_broadcasts_and_names_a_bad_index():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 1, 6))
    x = nd.asarray(a, device="cpu")
    idx = rng.integers(-6, 6, (1, 4, 3))
    np.testing.assert_array_equal(np.asarray(nd.take_along_axis(x, nd.asarray(idx, device="cpu"), axis=2)),
                                  np.take_along_axis(a, idx, axis=2))
    for bad in (6, -7):
        wrong = idx.copy()
        wrong[0, 2, 1] = bad
        with pytest.raises(IndexError, match=f"take_along_axis: index {bad} is out of bounds for size 6"):
            nd.take_along_axis(x, nd.asarray(wrong, device="cpu"), axis=2)


def test_take_along_kernel_checks():
    """fused take_along refuses what its kernel cannot take before it reads x: shapes, the
    layouts of indices and out, out's dtype, and any index outside [0, N) (a negative one too)."""
    be = nd.asarray([1], device="cpu").device.backend
    x = nd.asarray(np.arange(12.0).reshape(3, 4), device="cpu")
    idx = nd.asarray([[3, 0], [1, 1], [2, 3]], device="cpu")
    out = nd.zeros((3, 2), dtype=nd.float64, device="cpu")
    be.fused("take_along", (x._ref, idx._ref), out._ref, {})
    assert out.tolist() == [[3.0, 0.0], [5.0, 5.0], [10.0, 11.0]]
    be.fused("take_along", (held(x[:, ::-1]), idx._ref), out._ref, {})  # a strided x, rows reversed
    want = np.take_along_axis(np.arange(12.0).reshape(3, 4)[:, ::-1], np.asarray(idx), axis=1)
    np.testing.assert_array_equal(np.asarray(out), want)
    cases = [
        ((x._ref, held(idx[:2])), out._ref, ValueError, r"expected x \(M, N\), indices \(M, J\) and out \(M, J\)"),
        ((x._ref, idx._ref), held(nd.zeros((3, 3), dtype=nd.float64, device="cpu")), ValueError, "expected x"),
        ((x._ref, held(nd.asarray([[3, 0, 1, 2]] * 3, device="cpu")[:, ::2])), out._ref, ValueError, "C-contiguous"),
        ((x._ref, idx._ref), held(nd.zeros((3, 2), dtype=nd.float32, device="cpu")), TypeError, "float64"),
        ((x._ref, held(nd.asarray([[3, 0], [4, 1], [2, 3]], device="cpu"))), out._ref, IndexError, "index 4 is out"),
        ((x._ref, held(nd.asarray([[3, 0], [1, -1], [2, 3]], device="cpu"))), out._ref, IndexError, "index -1 is out"),
        ((x._ref, held(nd.asarray([[0.5, 0], [1, 1], [2, 3]], device="cpu"))), out._ref, TypeError, "integer dtype"),
    ]
    before = out.tolist()
    for inputs, o, error, message in cases:
        with pytest.raises(error, match=message):
            be.fused("take_along", inputs, o, {})
    assert out.tolist() == before
