"""reduce, scan, matmul, take, scatter_add, sort and random_bits against the reference kernels."""

from __future__ import annotations

import numpy as np
import pytest
from webgpu_helpers import ALL, random_array, whole

from ndplane.backend import reference as R

# 2-D (M, K) views of a base array: the kernels take the last axis of any layout.
VIEWS2 = {
    "contig": ((5, 37), lambda a: a),
    "transposed": ((300, 3), lambda a: a.T),
    "negative": ((6, 520), lambda a: a[::-2, ::-1]),
    "long_row": ((2, 5000), lambda a: a[:, 3:]),
    "many_rows": ((70000, 2), lambda a: a),
    "one": ((1, 1), lambda a: a),
    "no_rows": ((0, 5), lambda a: a),
    "broadcast": ((9,), lambda a: np.broadcast_to(a, (4, 9))),
    "huge_row": ((1, 300000), lambda a: a[:, ::-1]),  # split into chunks + a second pass
}


def supported(be, *names):
    have = {d.name for d in be.dtypes}
    for n in names:
        if n not in have:
            pytest.skip(f"{n} unsupported here")


def close(got, want, rtol):
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def _sum_dtype(d):
    return {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32", "uint16": "uint32"}.get(d, d)


@pytest.mark.parametrize("view", sorted(VIEWS2))
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "argmax", "argmin", "any", "all"])
@pytest.mark.parametrize("dtype", ALL)
def test_reduce(be, host, op, dtype, view):
    supported(be, dtype)
    rng = np.random.default_rng(hash((op, dtype, view)) % 2**32)
    shape, fn = VIEWS2[view]
    base = random_array(rng, shape, dtype, special=op not in ("sum", "prod") or view == "contig")
    if op == "prod" and np.dtype(dtype).kind == "f":
        base = (1 + base / 1000).astype(dtype) if view != "contig" else base
    x = fn(base)
    if x.shape[1] == 0 and op not in ("sum", "prod", "any", "all"):
        pytest.skip("K = 0 only for sum/prod/any/all")
    od = {"sum": _sum_dtype(dtype), "prod": _sum_dtype(dtype), "any": "bool", "all": "bool",
          "argmax": "int32", "argmin": "int32"}.get(op, dtype)  # fmt: skip
    want = np.empty(x.shape[:1], od)
    R.reduce(op, x, want)
    out = host.empty(x.shape[:1], od)
    be.reduce(op, host.view(base, x), out)
    got = host.get(out)
    if op == "sum" and np.dtype(dtype).kind == "f" and not np.isnan(want).any():
        # Summation order differs from NumPy's: bound the error by the magnitudes summed.
        exact = x.astype(np.float64).sum(axis=-1)
        bound = np.abs(x.astype(np.float64)).sum(axis=-1) * (1e-3 if dtype == "float16" else 1e-6) + 1e-6
        assert np.all((np.abs(got - exact) <= bound) | (np.isinf(got) & (got == want))), (got, exact)
    else:
        close(got, want, 2e-2 if dtype == "float16" else 1e-4)


@pytest.mark.parametrize("op", ["sum", "prod", "any", "all"])
def test_reduce_empty_rows(be, host, op):
    x = np.zeros((3, 0), np.float32)
    od = "bool" if op in ("any", "all") else "float32"
    want = np.empty((3,), od)
    R.reduce(op, x, want)
    out = host.empty((3,), od)
    be.reduce(op, host.put(x), out)
    close(host.get(out), want, 0)


@pytest.mark.parametrize("view", ["contig", "transposed", "negative", "long_row", "broadcast", "no_rows",
                                  "many_rows"])
@pytest.mark.parametrize("op", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("dtype", ALL)
def test_scan(be, host, op, dtype, view):
    supported(be, dtype)
    rng = np.random.default_rng(hash((op, dtype, view)) % 2**32)
    shape, fn = VIEWS2[view]
    base = random_array(rng, shape, dtype, special=False)
    if np.dtype(dtype).kind == "f":
        base = (1 + base / 500).astype(dtype) if op == "cumulative_prod" else (base / 100).astype(dtype)
    x = fn(base)
    od = _sum_dtype(dtype)
    want = np.empty(x.shape, od)
    if dtype == "float16":  # the kernel accumulates in float32, which the protocol allows
        wide = np.empty(x.shape, np.float32)
        R.scan(op, x.astype(np.float32), wide)
        want[...] = wide
    else:
        R.scan(op, x, want)
    out = host.empty(x.shape, od)
    be.scan(op, host.view(base, x), out)
    close(host.get(out), want, 2e-2 if dtype == "float16" else 2e-4)


MATMUL = {
    "square": (1, 64, 64, 64, False, False),
    "odd": (3, 17, 33, 65, False, False),
    "a_colmajor": (2, 70, 9, 130, True, False),
    "b_colmajor": (1, 5, 100, 3, False, True),
    "both_colmajor": (2, 66, 66, 66, True, True),
    "vector": (4, 1, 300, 1, False, False),
}


@pytest.mark.parametrize("case", sorted(MATMUL))
@pytest.mark.parametrize("dtype", ALL)
def test_matmul(be, host, dtype, case):
    supported(be, dtype)
    B, M, K, N, at, bt = MATMUL[case]
    rng = np.random.default_rng(hash((dtype, case)) % 2**32)
    abase = random_array(rng, (B, K, M) if at else (B, M, K), dtype, special=False)
    bbase = random_array(rng, (B, N, K) if bt else (B, K, N), dtype, special=False)
    if np.dtype(dtype).kind == "f":
        abase, bbase = (abase / 10).astype(dtype), (bbase / 10).astype(dtype)
    a = abase.transpose(0, 2, 1) if at else abase
    b = bbase.transpose(0, 2, 1) if bt else bbase
    want = np.empty((B, M, N), dtype)
    R.matmul(a, b, want)
    out = host.empty((B, M, N), dtype)
    be.matmul(host.view(abase, a), host.view(bbase, b), out)
    close(host.get(out), want, 2e-2 if dtype == "float16" else 1e-4)


def test_matmul_broadcast_batch(be, host):
    rng = np.random.default_rng(0)
    abase = rng.standard_normal((1, 8, 5)).astype(np.float32)
    a = np.broadcast_to(abase, (3, 8, 5))
    b = rng.standard_normal((3, 5, 7)).astype(np.float32)
    want = np.empty((3, 8, 7), np.float32)
    R.matmul(a, b, want)
    out = host.empty((3, 8, 7), np.float32)
    be.matmul(host.view(abase, a), host.put(b), out)
    close(host.get(out), want, 1e-5)


@pytest.mark.parametrize("idx_dtype", ["int32", "uint8", "int16"])
@pytest.mark.parametrize("dtype", ALL)
def test_take(be, host, dtype, idx_dtype):
    supported(be, dtype, idx_dtype)
    rng = np.random.default_rng(1)
    base = random_array(rng, (9, 6), dtype)
    x = base.T[::-1]  # (6, 9), strided
    ibase = rng.integers(0, 9, 40).astype(idx_dtype)
    idx = ibase[::-2]
    want = np.empty((6, idx.size), dtype)
    R.take(x, idx, want)
    out = host.empty((6, idx.size), dtype)
    be.take(host.view(base, x), host.view(ibase, idx), out)
    close(host.get(out), want, 0)


@pytest.mark.parametrize("dtype", ALL)
def test_scatter_add(be, host, dtype):
    supported(be, dtype)
    rng = np.random.default_rng(2)
    obase = random_array(rng, (7, 11), dtype, special=False)
    if np.dtype(dtype).kind == "f":
        obase = (obase / 10).astype(dtype)
    out_view = obase[1:6, ::-2]  # (5, 6), a user view
    idx = rng.integers(0, 6, 300).astype(np.int32)  # many repeats
    values = random_array(rng, (5, 300), dtype, special=False)
    if np.dtype(dtype).kind == "f":
        values = (values / 10).astype(dtype)
    expect = obase.copy()
    R.scatter_add(expect[1:6, ::-2], idx, values)
    ref = host.view(obase, out_view)
    be.scatter_add(ref, host.put(idx), host.put(values))
    close(be.to_host(whole(ref, obase)), expect, 2e-2 if dtype == "float16" else 1e-4)


SORT = {"small": (3, 7), "block": (2, 2048), "multi_block": (2, 5000), "one": (4, 1), "rows": (300, 33)}


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("case", sorted(SORT))
@pytest.mark.parametrize("dtype", ALL)
def test_sort(be, host, dtype, case, descending):
    supported(be, dtype)
    rng = np.random.default_rng(hash((dtype, case, descending)) % 2**32)
    M, K = SORT[case]
    base = random_array(rng, (K, M), dtype)
    if np.dtype(dtype).kind in "iu":
        base = (base % 5).astype(dtype)  # many ties: stability matters
    x = base.T  # (M, K) strided
    vals, idx = np.empty(x.shape, dtype), np.empty(x.shape, np.int32)
    R.sort(x, vals, idx, descending, True)
    vo, io = host.empty(x.shape, dtype), host.empty(x.shape, np.int32)
    be.sort(host.view(base, x), vo, io, descending, True)
    close(host.get(io), idx, 0)
    close(host.get(vo), vals, 0)


def test_sort_values_only_and_indices_only(be, host):
    x = np.array([[3, 1, 2, 1]], np.int32)
    vo = host.empty((1, 4), np.int32)
    be.sort(host.put(x), vo, None, False, True)
    np.testing.assert_array_equal(host.get(vo), [[1, 1, 2, 3]])
    io = host.empty((1, 4), np.int32)
    be.sort(host.put(x), None, io, True, True)
    np.testing.assert_array_equal(host.get(io), [[0, 2, 1, 3]])


@pytest.mark.parametrize("n", [1, 3, 4, 1001, 300000])
@pytest.mark.parametrize("key,counter", [(0, 0), (0xDEADBEEFCAFEF00D, 2**64 - 2), (7, 2**128 - 3), (12345, 99)])
def test_random_bits(be, host, n, key, counter):
    want = np.empty((n,), np.uint32)
    R.random_bits(key, counter, want)
    out = host.empty((n,), np.uint32)
    be.random_bits(key, counter, out)
    np.testing.assert_array_equal(host.get(out), want)
