"""reduce and scan over the last axis against the reference, every dtype and layout."""

from __future__ import annotations

import numpy as np
import pytest
from cpu_helpers import DTYPES, assert_close

import ndplane
from ndplane.backend import REDUCE_OPS
from ndplane.backend import reference as K


def out_dtypes(op: str, dtype: ndplane.DType) -> list[ndplane.DType]:
    if op in ("any", "all"):
        return [ndplane.bool]
    if op in ("argmax", "argmin"):
        return [ndplane.int64, ndplane.int32]
    if op in ("max", "min"):
        return [dtype]
    # sum/prod: the dtype itself, the default integer for small ints, floating for means
    outs = [dtype]
    if dtype.kind in ("bool", "int"):
        outs.append(ndplane.int64)
    if dtype.kind == "uint":
        outs.append(ndplane.uint64)
    if dtype.kind != "complex":
        outs.append(ndplane.float64)
    return outs


def check_reduce(h, op, view, base, out_dtype, what, ulps=None):
    want = np.empty(view.shape[:1], out_dtype.dtype)
    K.reduce(op, view, want)
    out = h.empty(view.shape[:1], out_dtype)
    h.be.reduce(op, h.put(view, base), out)
    if ulps is None:
        ulps = 8 + view.shape[1] / 8 if op in ("sum", "prod") else 1
    scale = 1.0
    if op == "sum" and out_dtype.kind in ("float", "complex") and view.size:
        # NOTE: summation error is relative to sum(|x|), not to the (cancelled) result; so
        # also for integers summed in floating point (int64 -> float64 cancels as well).
        with np.errstate(all="ignore"):
            mags = np.abs(view.astype(np.complex128 if view.dtype.kind == "c" else np.float64))
        scale = max(1.0, float(np.nanmax(np.where(np.isinf(mags), 0, mags).sum(axis=-1))))
    assert_close(h.get(out), want, what, ulps=ulps, scale=scale)


@pytest.mark.parametrize("op", sorted(REDUCE_OPS))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_reduce_every_dtype_and_layout(h, op, dtype):
    special = op not in ("sum", "prod")  # nan/inf are tested separately for sums
    for shape in [(4, 9), (3, 1), (1, 40), (2, 300)]:
        for name, view, base in h.layouts(shape, dtype, special=special, small=op == "prod"):
            for od in out_dtypes(op, dtype):
                check_reduce(h, op, view, base, od, f"{op} {dtype.name}->{od.name} {shape} {name}")


@pytest.mark.parametrize("op", ["sum", "prod", "any", "all"])
def test_reduce_empty_axis(h, op):
    for dtype in (ndplane.bool, ndplane.int8, ndplane.float32, ndplane.complex64):
        x = np.zeros((3, 0), dtype.dtype)
        for od in out_dtypes(op, dtype):
            check_reduce(h, op, x, x, od, f"{op} empty {dtype.name}")


def test_reduce_empty_axis_without_identity_raises(h):
    x = h.put(np.zeros((3, 0), np.float32))
    with pytest.raises(ValueError, match="max"):
        h.be.reduce("max", x, h.empty((3,), ndplane.float32))


@pytest.mark.parametrize("dtype", [ndplane.float16, ndplane.float32, ndplane.float64,
                                   ndplane.complex64], ids=lambda d: d.name)  # fmt: skip
def test_nan_and_inf_propagate(h, dtype):
    x = h.data((6, 50), dtype, special=False)
    x[0, 3] = np.nan
    x[1, 7] = np.inf
    x[2, 0] = -np.inf
    x[3, 49] = np.nan
    x[3, 10] = np.inf
    for op in ("sum", "prod", "max", "min", "argmax", "argmin"):
        od = ndplane.int64 if op.startswith("arg") else dtype
        check_reduce(h, op, x, x, od, f"{op} {dtype.name} specials", ulps=64)
        t = np.ascontiguousarray(x.T)
        check_reduce(h, op, t.T, t, od, f"{op} {dtype.name} specials T", ulps=64)


@pytest.mark.parametrize("dtype", [ndplane.float32, ndplane.float64, ndplane.int32],
                         ids=lambda d: d.name)  # fmt: skip
def test_large_reductions_match_in_every_path(h, dtype):
    # rows (horizontal, threads over rows), one long row (split), columns (vertical)
    for shape in [(300, 700), (1, 200_003), (2, 150_001)]:
        x = h.data(shape, dtype, special=False, small=True)
        for op in ("sum", "max", "min", "argmax", "argmin", "any", "all"):
            od = out_dtypes(op, dtype)[0]
            check_reduce(h, op, x, x, od, f"{op} {shape}", ulps=64)
            t = np.ascontiguousarray(x.T)
            if shape[0] > 1:
                check_reduce(h, op, t.T, t, od, f"{op} {shape} vertical", ulps=64)


def test_float32_sum_is_pairwise_accurate(h):
    n = 1_000_000
    x = np.full((1, n), 0.1, np.float32)
    out = h.empty((1,), ndplane.float32)
    h.be.reduce("sum", h.put(x), out)
    exact = n * float(np.float32(0.1))
    assert abs(float(h.get(out)[0]) - exact) / exact < 1e-5
    t = np.full((n // 100, 100), 0.1, np.float32)  # axis-0 sums of 10_000 rows
    out = h.empty((100,), ndplane.float32)
    h.be.reduce("sum", h.put(t.T, np.ascontiguousarray(t)), out)
    assert np.all(np.abs(h.get(out) - 1000 * np.float32(0.1) * 10) / 1000 < 1e-5)


@pytest.mark.parametrize("op", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_scan(h, op, dtype):
    for shape in [(3, 8), (2, 1), (1, 0), (0, 5)]:
        for name, view, base in h.layouts(shape, dtype, special=True, small=True):
            for od in out_dtypes("sum", dtype):
                want = np.empty(view.shape, od.dtype)
                K.scan(op, view, want)
                out = h.empty(view.shape, od)
                h.be.scan(op, h.put(view, base), out)
                assert_close(h.get(out), want, f"{op} {dtype.name}->{od.name} {name}", ulps=16)


def _views(x):
    """(name, view, base): x contiguous, as a transposed view (the vertical kernels), and
    every other column of a wider array (strided)."""
    yield "contiguous", x, x
    t = np.ascontiguousarray(x.T)
    yield "vertical", t.T, t
    wide = np.repeat(x, 2, axis=1)
    yield "step2", wide[:, ::2], wide


@pytest.mark.parametrize("shape", [(300, 700), (1, 200_003), (2, 150_001), (5, 3000), (3, 1)])
def test_sum_of_bools_counts_in_every_path(h, shape):
    # a sum of bools into an integer is a count (no int64 copy of x): rows, one long row
    # (split), columns split over rows, strided; every integer out dtype wraps as a cast does
    for fill in ("random", "true", "false"):
        x = h.data(shape, ndplane.bool) if fill == "random" else np.full(shape, fill == "true")
        for name, view, base in _views(x):
            for od in (ndplane.int64, ndplane.int32, ndplane.uint8, ndplane.uint64):
                check_reduce(h, "sum", view, base, od, f"count {shape} {fill} {name} -> {od.name}")


@pytest.mark.parametrize("dtype", [ndplane.bool, ndplane.int8, ndplane.float32, ndplane.float64,
                                   ndplane.complex64], ids=lambda d: d.name)  # fmt: skip
def test_any_all_find_one_element_in_any_block(h, dtype):
    # the contiguous rows are tested in blocks of 1024: one differing element anywhere
    n = 5000
    for pos in (0, 1023, 1024, 2047, n - 1):
        for op, fill, other in (("any", 0, 1), ("all", 1, 0)):
            x = np.full((3, n), fill, dtype.dtype)
            x[1, pos] = other
            for name, view, base in _views(x):
                check_reduce(h, op, view, base, ndplane.bool, f"{op} one at {pos} {name}")
    if dtype.kind == "float":  # NaN is true, -0.0 false
        x = np.full((2, n), -0.0, dtype.dtype)
        x[1, 3000] = np.nan
        check_reduce(h, "any", x, x, ndplane.bool, "any nan")
        y = np.where(x == 0, 1, x).astype(dtype.dtype)
        check_reduce(h, "all", y, y, ndplane.bool, "all nan")


@pytest.mark.parametrize("dtype", [ndplane.int8, ndplane.uint16, ndplane.int32, ndplane.uint64,
                                   ndplane.float32, ndplane.float64, ndplane.float16],
                         ids=lambda d: d.name)  # fmt: skip
def test_max_min_lanes_every_length_and_nan_position(h, dtype):
    # the contiguous rows run in eight vectors of lanes, then whole vectors, then a tail: every
    # length around those sizes (8 vectors: 32 to 256 elements by dtype), the extreme and a NaN
    # in the vectors, in the lane reduction and the tail
    for n in (1, 15, 16, 31, 32, 33, 63, 64, 65, 129, 255, 256, 257, 300, 1000):
        x = h.data((4, n), dtype, special=False)
        if dtype.kind == "float":
            x[1, n // 2] = np.nan
            x[2, n - 1] = np.nan
            x[3, 0] = np.nan
        for name, view, base in _views(x):
            for op in ("max", "min"):
                check_reduce(h, op, view, base, dtype, f"{op} {dtype.name} n={n} {name}")
    info = np.iinfo(dtype.dtype) if dtype.kind in ("int", "uint") else np.finfo(dtype.dtype)
    x = np.zeros((2, 200), dtype.dtype)
    x[0, 77], x[1, 199] = info.max, info.min
    for op in ("max", "min"):
        check_reduce(h, op, x, x, dtype, f"{op} {dtype.name} limits")


@pytest.mark.parametrize("n", [1, 7, 8, 9, 2047, 2048, 2049, 4095, 4096, 4097, 6145, 200_003])
def test_float16_chunks_every_length_and_path(h, n):
    """float16 rows and columns go through float32 chunks of 2048 (reduce.cc's HALF_CHUNK,
    pairwise_sum_halves): lengths around the chunks, the extreme tied in two chunks (the first
    index wins), a NaN in a later chunk than the extreme, on rows, columns and strided rows."""
    rng = np.random.default_rng(n)
    x = (rng.uniform(-4, 4, (3, n)) / max(1, n / 4096)).astype(np.float16)  # sum(|x|) stays finite
    if n > 2:
        x[:, [n // 3, n - 1]] = 7.0  # a tie: argmax takes the first
        x[:, [n // 2, n - 2]] = -7.0
    x[1, -1] = np.nan
    near_one = (1 + rng.uniform(-1e-3, 1e-3, (3, n))).astype(np.float16)  # products stay finite
    for name, view, base in _views(x):
        for op in ("max", "min", "argmax", "argmin", "any", "all"):
            od = out_dtypes(op, ndplane.float16)[0]
            check_reduce(h, op, view, base, od, f"{op} float16 n={n} {name}")
        for od in (ndplane.float16, ndplane.float32):
            check_reduce(h, "sum", view, base, od, f"sum float16->{od.name} n={n} {name}", ulps=64)
    for name, view, base in _views(near_one):
        # NOTE: against float64, not the reference, which rounds to float16 after every step
        # as NumPy's prod does (the cpu backend multiplies in float32 and rounds once)
        out = h.empty((3,), ndplane.float16)
        h.be.reduce("prod", h.put(view, base), out)
        want = np.prod(view.astype(np.float64), axis=1)
        np.testing.assert_allclose(h.get(out).astype(np.float64), want, rtol=2e-3, err_msg=f"prod n={n} {name}")


@pytest.mark.parametrize("dtype", [ndplane.float16, ndplane.float32, ndplane.float64], ids=lambda d: d.name)
def test_sumsq_every_path(h, dtype):
    """fused sumsq: each row's sum of (x - c)^2, without and with centres, on rows (threads over
    rows), one long row and two (split), and columns (vertical); within the pairwise sum's
    error of the float64 sum of the float64 squares."""
    rng = np.random.default_rng(3)
    tol = {ndplane.float16: 4e-3, ndplane.float32: 1e-5, ndplane.float64: 1e-12}[dtype]
    for shape in [(300, 700), (1, 200_003), (2, 150_001), (5, 3)]:
        x = (rng.standard_normal(shape) * 0.05 + 0.1).astype(dtype.name)
        c = x.astype(np.float64).mean(axis=1).astype(dtype.name)
        columns = np.ascontiguousarray(x.T)
        for centre in (None, c):
            shift = 0.0 if centre is None else centre.astype(np.float64)[:, None]
            want = np.sum((x.astype(np.float64) - shift) ** 2, axis=1)
            for label, view, base in [("rows", x, x), ("vertical", columns.T, columns)]:
                out = h.empty((shape[0],), dtype)
                inputs = (h.put(view, base),) if centre is None else (h.put(view, base), h.put(centre))
                h.be.fused("sumsq", inputs, out, {})
                np.testing.assert_allclose(h.get(out).astype(np.float64), want, rtol=tol, err_msg=f"{shape} {label}")


def test_sumsq_kernel_checks(h):
    x = h.put(np.ones((3, 4), np.float32))
    out = h.empty((3,), ndplane.float32)
    h.be.fused("sumsq", (x,), out, {})
    assert h.get(out).tolist() == [4.0, 4.0, 4.0]
    with pytest.raises(TypeError, match="real floating"):
        h.be.fused("sumsq", (h.put(np.ones((3, 4), np.int32)),), h.empty((3,), ndplane.int32), {})
    with pytest.raises(TypeError, match="out"):
        h.be.fused("sumsq", (x,), h.empty((3,), ndplane.float64), {})
    with pytest.raises(ValueError, match="shape"):
        h.be.fused("sumsq", (x,), h.empty((4,), ndplane.float32), {})
    with pytest.raises(ValueError, match="centres of shape"):
        h.be.fused("sumsq", (x, h.put(np.zeros(4, np.float32))), out, {})
    with pytest.raises(TypeError, match="centres"):
        h.be.fused("sumsq", (x, h.put(np.zeros(3, np.float64))), out, {})
    with pytest.raises(TypeError, match="inputs"):
        h.be.fused("sumsq", (), out, {})
