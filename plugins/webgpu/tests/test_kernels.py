"""reduce, scan, matmul, take, scatter_add, sort and random_bits against the reference kernels."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from ndplane_webgpu import _kernels as Kn
from webgpu_helpers import ALL, random_array, whole

import ndplane
from ndplane.backend import Ref
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
    # Column reductions whose row starts keep the 16-byte grid (reduce_cols4 for 32-bit dtypes):
    # chunked or not, rows off the grid at either end, reversed either way, a zero stride.
    "cols4": ((300, 8), lambda a: a.T),
    "cols4_offset": ((70, 12), lambda a: a[:, 1:].T),
    "cols4_flipped": ((130, 16), lambda a: a[::-1, ::-1][:, 2:].T),
    "cols4_short": ((9, 20), lambda a: a[1:, 3:18].T),
    "cols4_broadcast": ((12,), lambda a: np.broadcast_to(a[1:10], (100, 9)).T),
    "cols4_wide": ((70, 1028), lambda a: a[:, 3:].T),
    # Rows on the 16-byte grid (16-byte loads in reduce's main for 32-bit dtypes): whole words,
    # a partial last word, chunks of a long row, one row.
    "rows4": ((6, 400), lambda a: a),
    "rows4_tail": ((300, 100), lambda a: a[:, 4:99]),
    "rows4_chunked": ((2, 10004), lambda a: a[:, 4:10003]),
    "rows4_one": ((1, 9001), lambda a: a[:, 4:]),
    "rows4_reversed": ((6, 400), lambda a: a[::-1, 4:]),
}


def supported(be, *names):
    have = {d.name for d in be.dtypes}
    for n in names:
        if n not in have:
            pytest.skip(f"{n} unsupported here")


def close(got, want, rtol):
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "c":
        # relative to the modulus (one part may cancel where the other does not); NaN and
        # infinities part by part (NumPy's allclose mishandles complex infinities)
        fin = np.isfinite(got) & np.isfinite(want)
        assert np.all(np.abs(got - want)[fin] <= rtol * np.abs(want)[fin] + rtol), (got, want)
        g, w = got.view(got.real.dtype), want.view(want.real.dtype)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        np.testing.assert_array_equal(np.where(np.isinf(g), g, 0), np.where(np.isinf(w), w, 0))
    elif want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def _sum_dtype(d):
    return {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32", "uint16": "uint32"}.get(d, d)


@pytest.mark.parametrize("view", sorted(VIEWS2))
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "argmax", "argmin", "any", "all"])
@pytest.mark.parametrize("dtype", ALL)
def test_reduce(be, host, monkeypatch, op, dtype, view):
    supported(be, dtype)
    if "4" in view:
        monkeypatch.setattr(Kn, "VEC4_LOADS", True)  # NOTE: software adapters skip reduce_cols4 by default
    rng = np.random.default_rng(hash((op, dtype, view)) % 2**32)
    shape, fn = VIEWS2[view]
    base = random_array(rng, shape, dtype, special=op not in ("sum", "prod") or view == "contig")
    if op == "prod" and np.dtype(dtype).kind in "fc":
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
    if op == "sum" and np.dtype(dtype).kind in "fc" and not np.isnan(want).any():
        # Summation order differs from NumPy's: bound the error by the magnitudes summed.
        wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
        exact = x.astype(wide).sum(axis=-1)
        bound = np.abs(x.astype(wide)).sum(axis=-1) * (1e-3 if dtype == "float16" else 1e-6) + 1e-6
        assert np.all((np.abs(got - exact) <= bound) | (np.isinf(got) & (got == want))), (got, exact)
    else:
        close(got, want, 2e-2 if dtype == "float16" else 1e-4)


@pytest.mark.parametrize("view,dtype,cols4", [("cols4", "float32", True), ("cols4_flipped", "int32", True),
                                               ("cols4_broadcast", "uint32", True), ("cols4", "float64", False),
                                               ("cols4", "int16", False), ("transposed", "float32", False)])
def test_column_reductions_read_four_rows_a_thread(be, host, monkeypatch, view, dtype, cols4):
    """The cols4 views take reduce_cols4 on 32-bit dtypes (the others, reduce_rows), chunked into
    enough threads, and both roads agree with NumPy on the same data."""
    supported(be, dtype)
    shape, fn = VIEWS2[view]
    base = random_array(np.random.default_rng(7), shape, dtype)
    x = fn(base)
    ref = host.view(base, x)
    want = np.empty(x.shape[:1], dtype)
    R.reduce("max", x, want)
    entries = []
    run = be.rt.run
    monkeypatch.setattr(be.rt, "run", lambda *a, **k: entries.append(a[5] if len(a) > 5 else "main") or run(*a, **k))
    for road in (True, False):
        monkeypatch.setattr(Kn, "VEC4_LOADS", road)
        out = host.empty(x.shape[:1], dtype)
        be.reduce("max", ref, out)
        close(host.get(out), want, 0)
    first = "reduce_cols4" if cols4 else "reduce_rows"
    assert entries == [first, "reduce_rows_final", "reduce_rows", "reduce_rows_final"]
    entries.clear()
    monkeypatch.setattr(Kn, "VEC4_LOADS", None)
    be.reduce("max", ref, host.empty(x.shape[:1], dtype))
    assert entries[0] == ("reduce_cols4" if cols4 and not be.rt.software else "reduce_rows")


@pytest.mark.parametrize("view,dtype,chunks", [("rows4", "float32", 1), ("rows4_tail", "int32", 1),
                                               ("rows4_chunked", "uint32", 3), ("rows4_one", "float32", 3),
                                               ("rows4", "int16", 1), ("long_row", "float32", 2)])
def test_row_reductions_read_16_byte_words(be, host, monkeypatch, view, dtype, chunks):
    """The rows4 views of 32-bit dtypes take reduce's 16-byte loads (P[9] = 1), in chunks that
    start on the 16-byte grid; both loads agree with NumPy."""
    supported(be, dtype)
    shape, fn = VIEWS2[view]
    base = random_array(np.random.default_rng(8), shape, dtype)
    x = fn(base)
    ref = host.view(base, x)
    want = np.empty(x.shape[:1], "int32")
    R.reduce("argmax", x, want)
    words = []
    run = be.rt.run
    monkeypatch.setattr(be.rt, "run", lambda *a, **k: words.append(a[2][9]) or run(*a, **k))
    for vec4 in (True, False):
        monkeypatch.setattr(Kn, "VEC4_LOADS", vec4)
        out = host.empty(x.shape[:1], "int32")
        be.reduce("argmax", ref, out)
        close(host.get(out), want, 0)
    fits = "4" in view and dtype != "int16"
    assert words == [int(fits)] * (1 + (chunks > 1)) + [0] * (1 + (chunks > 1))


@pytest.mark.parametrize("cols4", [False, True])
@pytest.mark.parametrize("dtype,od", [("int32", "int64"), ("uint32", "uint64"), ("float32", "float64")])
def test_column_sum_accumulates_in_the_out_dtype(be, host, monkeypatch, dtype, od, cols4):
    """Sums past the 32-bit range (and past float32's precision) come out as in the wide dtype."""
    supported(be, dtype, od)
    monkeypatch.setattr(Kn, "VEC4_LOADS", cols4)
    base = np.full((300, 12), np.iinfo(np.int32).max if dtype != "float32" else 1 + 2**-20, dtype)
    base[::7] = 3
    x = base[:, 1:].T
    out = host.empty(x.shape[:1], od)
    be.reduce("sum", host.view(base, x), out)
    np.testing.assert_array_equal(host.get(out), x.astype(od).sum(axis=1))


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
    if np.dtype(dtype).kind in "fc":
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


# (rows, K, x offset, out offset): 16-byte words (K and both offsets multiples of 4) with one and
# several words a thread, then off the grid by K, by x's offset and by out's.
ROWS = [(5, 40, 0, 0), (4, 2056, 4, 8), (1, 4, 0, 0), (3, 37, 0, 0), (5, 40, 1, 0), (5, 40, 0, 2), (1, 1, 0, 0)]


def _rows_reference(op, x):
    """The composite's algorithm in float64 (NaN-propagating max, logsumexp's shift 0 where the
    max is not finite)."""
    x = x.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        m = x.max(axis=1, keepdims=True)
        if op == "logsumexp":
            m = np.where(np.isfinite(m), m, 0.0)
        s = np.exp(x - m).sum(axis=1, keepdims=True)
        return {"softmax": np.exp(x - m) / s, "log_softmax": (x - m) - np.log(s),
                "logsumexp": (np.log(s) + m)[:, 0]}[op]  # fmt: skip


@pytest.mark.parametrize("vec4", [False, True])
@pytest.mark.parametrize("M,K,xo,oo", ROWS)
@pytest.mark.parametrize("op", ["softmax", "log_softmax", "logsumexp"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_fused_rows(be, host, monkeypatch, dtype, op, M, K, xo, oo, vec4):
    """softmax, log_softmax and logsumexp rows with NaN, inf and all -inf rows, by either load."""
    supported(be, dtype)
    monkeypatch.setattr(Kn, "VEC4_LOADS", vec4)
    rng = np.random.default_rng(M * K + xo + oo)
    base = random_array(rng, (xo + M * K + 3,), dtype, special=False) * 3
    x = base[xo : xo + M * K].reshape(M, K)
    if M * K > 8:
        x[0, 1], x[1, :], x[-1, 2] = np.nan, -np.inf, np.inf
    shape = (M,) if op == "logsumexp" else (M, K)
    obase = np.zeros(oo + int(np.prod(shape)) + 3, dtype)
    out = host.view(obase, obase[oo : oo + int(np.prod(shape))].reshape(shape))
    keys = []
    run = be.rt.run
    monkeypatch.setattr(be.rt, "run", lambda *a, **k: keys.append(a[0]) or run(*a, **k))
    be.fused(op, (host.view(base, x),), out, {})
    words = vec4 and dtype == "float32" and K % 4 == xo % 4 == 0 and (op == "logsumexp" or oo % 4 == 0)
    assert keys == [("rows", op, dtype, dtype, 4 if words else 1)]
    want = _rows_reference(op, x).astype(dtype)
    rtol = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-13}[dtype]
    got = be.to_host(whole(out, obase))
    np.testing.assert_allclose(got[oo : oo + want.size].reshape(shape), want, rtol=rtol, atol=rtol, equal_nan=True)
    assert not got[:oo].any() and not got[oo + want.size :].any()


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
    if np.dtype(dtype).kind in "fc":
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


# The tiled kernel (kernels/matmul_tiled.wgsl), float16, float32 and float64: shapes at and
# around its tiles, both layouts of each operand, word loads where the layout allows them and
# scalar loads where it does not.
TILED = ["float16", "float32", "float64"]
TILES = [(128, 128, 8), (64, 64, 8)]
TILE_SHAPES = [(1, 1, 1), (1, 257, 1), (3, 1, 129), (127, 129, 128), (128, 128, 128), (129, 3, 127),
               (257, 127, 3), (1, 128, 257), (64, 257, 65)]  # (M, K, N)  # fmt: skip


@pytest.fixture
def mm_keys(monkeypatch):
    """The pipeline keys of the matmuls dispatched while the fixture is active."""
    keys = []
    real = Kn._mm_dispatch

    def spy(rt, key, *args):
        keys.append(key)
        real(rt, key, *args)

    monkeypatch.setattr(Kn, "_mm_dispatch", spy)
    return keys


def close_tiled(got, a, b):
    """``got`` against ``a @ b`` in float64: within the sums of |a| |b| times the unit roundoff of
    the compute type (float32 for float16 and float32), plus float16's one rounding of the result."""
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert got.dtype == a.dtype and got.shape == want.shape
    eps = {np.float16: 1e-5, np.float32: 1e-5, np.float64: 1e-13}[a.dtype.type]
    bound = np.matmul(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64))) * eps + 1e-30
    if a.dtype == np.float16:
        bound += np.abs(want) * 2.0**-11 + 2.0**-24  # round to nearest float16, subnormals
    assert np.all(np.abs(got - want) <= bound), np.abs(got - want).max()


def _normal(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", TILED)
@pytest.mark.parametrize("tile", TILES)
@pytest.mark.parametrize("at,bt", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("shape", TILE_SHAPES)
def test_matmul_tiled_edges(be, host, mm_keys, monkeypatch, shape, at, bt, tile, dtype):
    supported(be, dtype)
    monkeypatch.setattr(Kn, "_mm_tile", lambda limits, M, N, size: tile)
    (M, K, N), B = shape, 2
    rng = np.random.default_rng(hash((shape, at, bt)) % 2**32)
    abase = _normal(rng, (B, K, M) if at else (B, M, K), dtype)
    bbase = _normal(rng, (B, N, K) if bt else (B, K, N), dtype)
    a = abase.transpose(0, 2, 1) if at else abase
    b = bbase.transpose(0, 2, 1) if bt else bbase
    out = host.empty((B, M, N), dtype)
    be.matmul(host.view(abase, a), host.view(bbase, b), out)
    close_tiled(host.get(out), a, b)
    assert [k[:3] for k in mm_keys] == [("matmul_tiled", dtype, tile)]


def _mT(x):
    return x.transpose(0, 2, 1)


# name: (a base shape, a view, b base shape, b view,
#        the key's (a along k, a word, b along k, b word, out word))
TILED_LAYOUTS = {
    "row_major": ((2, 20, 36), lambda x: x, (2, 36, 44), lambda y: y, (True, True, False, True, True)),
    "transposed": ((2, 36, 20), _mT, (2, 44, 36), _mT, (False, True, True, True, True)),
    "rows_not_aligned": ((2, 20, 37), lambda x: x[..., :-1], (2, 36, 45), lambda y: y[..., :-1],
                         (True, False, False, False, True)),
    "offset_not_aligned": ((2, 721), lambda x: x.reshape(-1)[1:1441].reshape(2, 20, 36),
                           (2, 36, 45), lambda y: y[..., 1:], (True, False, False, False, True)),
    "offset_aligned": ((2, 724), lambda x: x.reshape(-1)[4:1444].reshape(2, 20, 36),
                       (2, 36, 48), lambda y: y[..., 4:], (True, True, False, True, True)),
    "batch_broadcast": ((1, 20, 36), lambda x: np.broadcast_to(x, (3, 20, 36)),
                        (1, 36, 44), lambda y: np.broadcast_to(y, (3, 36, 44)), (True, True, False, True, True)),
    "negative": ((2, 20, 36), lambda x: x[:, ::-1], (2, 36, 44), lambda y: y[..., ::-1],
                 (True, True, False, False, True)),
    "stepped": ((2, 20, 72), lambda x: x[..., ::2], (2, 108, 88), lambda y: y[:, ::3, ::2],
                (True, False, False, False, True)),
    "odd_n": ((2, 20, 36), lambda x: x, (2, 36, 43), lambda y: y, (True, True, False, False, False)),
}  # fmt: skip


@pytest.mark.parametrize("dtype", TILED)
@pytest.mark.parametrize("case", sorted(TILED_LAYOUTS))
def test_matmul_tiled_layouts(be, host, mm_keys, case, dtype):
    supported(be, dtype)
    ashape, aview, bshape, bview, flags = TILED_LAYOUTS[case]
    rng = np.random.default_rng(7)
    abase, bbase = _normal(rng, ashape, dtype), _normal(rng, bshape, dtype)
    a, b = aview(abase), bview(bbase)
    out = host.empty(a.shape[:2] + b.shape[2:], dtype)
    be.matmul(host.view(abase, a), host.view(bbase, b), out)
    close_tiled(host.get(out), a, b)
    assert [k[3:] for k in mm_keys] == [flags]


@pytest.mark.parametrize("dtype", TILED)
def test_matmul_tiled_strided_out(be, host, mm_keys, dtype):
    supported(be, dtype)
    rng = np.random.default_rng(3)
    a, b = _normal(rng, (2, 9, 16), dtype), _normal(rng, (2, 16, 12), dtype)
    obase = np.zeros((2, 12, 9), dtype)
    out = host.view(obase, obase.transpose(0, 2, 1))  # column-major: scalar stores
    be.matmul(host.put(a), host.put(b), out)
    got = be.to_host(whole(out, obase)).transpose(0, 2, 1)
    close_tiled(np.ascontiguousarray(got), a, b)
    assert mm_keys[0][-1] is False


@pytest.mark.parametrize("dtype", TILED)
def test_matmul_tiled_nan_inf_and_edge_padding(be, host, mm_keys, dtype):
    """NaN and inf propagate as in NumPy, and those just past the matrix (read by the edge
    word loads) never leak in."""
    supported(be, dtype)
    rng = np.random.default_rng(5)
    abase, bbase = _normal(rng, (131, 136), dtype), _normal(rng, (133, 132), dtype)
    abase[:, 129:] = np.nan  # a = abase[:, :129]: each row's last word runs into them
    bbase[129:] = np.inf
    bbase[:, 130:] = np.nan
    a, b = abase[:, :129], bbase[:129, :130]
    a[5, 7], a[6, 8], a[7, 9] = np.nan, np.inf, -np.inf
    b[9, 3], b[10, 4], b[8, 100] = np.inf, np.nan, -np.inf
    out = host.empty((1, 131, 130), dtype)
    be.matmul(host.view(abase, a[None]), host.view(bbase, b[None]), out)
    got = host.get(out)[0]
    with np.errstate(invalid="ignore"):
        want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(want))
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(want))
    assert np.isnan(want).any() and np.isinf(want).any() and np.isfinite(want).any()
    fin = np.isfinite(want)
    rtol = 2e-2 if dtype == "float16" else 1e-4
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, atol=rtol)
    assert mm_keys[0][3:7] == (True, True, False, True)  # word loads, masked past the edges


def test_matmul_tiled_float16_subnormal_and_overflowing_results(be, host, mm_keys):
    """float16 products accumulate in float32: a sum whose terms overflow float16 but not its
    total, and results that round to float16 subnormals, come out as NumPy's float32 matmul
    rounded once."""
    supported(be, "float16")
    a = np.array([[[300.0, -300.0, 200.0, 1e-4, 2e-4, 0.0, 0.0, 0.0]]], np.float16)
    b = np.array([[[300.0], [300.0], [100.0], [1e-3], [-1e-3], [0.0], [0.0], [0.0]]], np.float16)
    out = host.empty((1, 1, 1), "float16")
    be.matmul(host.put(a), host.put(b), out)
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    with np.errstate(over="ignore"):
        assert np.isinf(a * b.mT).any() and np.isfinite(want).all()  # terms overflow float16, sums not
    np.testing.assert_array_equal(host.get(out), want)
    small = np.full((1, 4, 4), 2.0**-12, np.float16)
    be.matmul(host.put(small), host.put(small), out4 := host.empty((1, 4, 4), "float16"))
    np.testing.assert_array_equal(host.get(out4), np.full((1, 4, 4), 2.0**-22, np.float16))  # subnormal
    assert {k[1] for k in mm_keys} == {"float16"}


def test_matmul_tiled_tile_per_adapter():
    core = {"max-compute-invocations-per-workgroup": 256, "max-compute-workgroup-storage-size": 16384}
    compat = {"max-compute-invocations-per-workgroup": 128, "max-compute-workgroup-storage-size": 16384}
    small = {"max-compute-invocations-per-workgroup": 256, "max-compute-workgroup-storage-size": 8192}
    assert Kn._mm_tile(core, 65, 1000, 4) == Kn._mm_tile(core, 65, 1000, 8) == (128, 128, 8)
    assert Kn._mm_tile(core, 1000, 64, 4) == Kn._mm_tile(core, 1, 1, 4) == (64, 64, 8)  # thin outputs
    assert Kn._mm_tile(compat, 1000, 1000, 4) == (64, 64, 8)
    assert Kn._mm_tile(small, 1000, 1000, 4) == (128, 128, 8)
    assert Kn._mm_tile(small, 1000, 1000, 8) == (64, 64, 8)  # f64 tiles of 128 need 16 KiB


@pytest.mark.parametrize("dtype,unit", [("float16", 8), ("float32", 16), ("float64", 16)])
def test_matmul_tiled_words_only_over_whole_words(dtype, unit):
    """A binding of words ends at the buffer's last whole word: a capacity that is not a
    multiple of the word takes scalar loads."""
    assert Kn._WORDS[dtype].nbytes == unit
    for cap, word in ((unit * 60 + 4, False), (unit * 60, True)):
        ref = Ref(SimpleNamespace(cap=cap), getattr(ndplane, dtype), (1, 4, 4), (0, 4, 1), 0, 16, True)
        assert Kn._mm_layout(ref, 0, 4, 1, unit) == (True, word)


def test_matmul_other_dtypes_and_switch_keep_the_generic_kernel(be, host, mm_keys, monkeypatch):
    rng = np.random.default_rng(4)
    a, b = rng.integers(-9, 9, (1, 5, 7)).astype(np.int32), rng.integers(-9, 9, (1, 7, 3)).astype(np.int32)
    out = host.empty((1, 5, 3), np.int32)
    be.matmul(host.put(a), host.put(b), out)
    np.testing.assert_array_equal(host.get(out), a @ b)
    monkeypatch.setattr(Kn, "TILED", False)  # what benchmarks use to time the generic kernel
    af, bf = a.astype(np.float32), b.astype(np.float32)
    out = host.empty((1, 5, 3), np.float32)
    be.matmul(host.put(af), host.put(bf), out)
    close_tiled(host.get(out), af, bf)
    assert [k[0] for k in mm_keys] == ["matmul", "matmul"]


@pytest.mark.parametrize("dtype", TILED)
def test_matmul_tiled_public_api_transposed_operands(be, mm_keys, dtype):
    supported(be, dtype)
    rng = np.random.default_rng(6)
    xn = _normal(rng, (130, 68), dtype)
    x = ndplane.asarray(xn, device="webgpu")
    x3, xn3 = ndplane.permute_dims(ndplane.reshape(x, (2, 65, 68)), (0, 2, 1)), _mT(xn.reshape(2, 65, 68))
    for got, a, b in ((x.mT @ x, xn.T, xn), (x @ x.mT, xn, xn.T), (x3 @ x[:65], xn3, xn[:65])):
        close_tiled(np.asarray(got.to_device("numpy")), a, b)
    assert [k[:2] for k in mm_keys] == [("matmul_tiled", dtype)] * 3
    assert all(k[4] and k[6] for k in mm_keys), mm_keys  # word loads of both operands, no copies


@pytest.mark.parametrize("idx_dtype", ["int32", "uint8", "int16", "int64", "uint64"])
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


@pytest.mark.parametrize("idx_dtype", ["int32", "int64"])
@pytest.mark.parametrize("dtype", ALL)
def test_scatter_add(be, host, dtype, idx_dtype):
    supported(be, dtype, idx_dtype)
    rng = np.random.default_rng(2)
    obase = random_array(rng, (7, 11), dtype, special=False)
    if np.dtype(dtype).kind in "fc":
        obase = (obase / 10).astype(dtype)
    out_view = obase[1:6, ::-2]  # (5, 6), a user view
    idx = rng.integers(0, 6, 300).astype(idx_dtype)  # many repeats
    values = random_array(rng, (5, 300), dtype, special=False)
    if np.dtype(dtype).kind in "fc":
        values = (values / 10).astype(dtype)
    expect = obase.copy()
    R.scatter_add(expect[1:6, ::-2], idx, values)
    ref = host.view(obase, out_view)
    be.scatter_add(ref, host.put(idx), host.put(values))
    got = be.to_host(whole(ref, obase))
    if dtype != "float16":
        close(got, expect, 1e-4)
        return
    # NOTE: the 16/32-bit kernel adds with an atomic compare-and-swap per element, so repeated
    # indices are summed in whatever order the threads run (on an H100 one element of 50 terms
    # came out 0.047 from NumPy's sequential float16 sum). Each float16 add rounds once, in any
    # order, so the recursive-summation bound holds for both: |sum - exact| <= gamma_n S with
    # n the adds into the element, S = |out0| + sum of |values| added, gamma_n = n u / (1 - n u),
    # u = 2^-11 + 2^-24 (float16's unit roundoff, the kernel's float32 add rounding first). So:
    # against the exact (float64) sums, within gamma_n S element by element (0 where untouched).
    exact, mag, adds = obase.astype(np.float64), np.abs(obase.astype(np.float64)), np.zeros(obase.shape)
    R.scatter_add(exact[1:6, ::-2], idx, values.astype(np.float64))
    R.scatter_add(mag[1:6, ::-2], idx, np.abs(values.astype(np.float64)))
    R.scatter_add(adds[1:6, ::-2], idx, np.ones(values.shape))
    u = 2.0**-11 + 2.0**-24
    bound = adds * u / (1 - adds * u) * mag
    err = np.abs(got.astype(np.float64) - exact)
    assert (err <= bound).all(), (got[err > bound], exact[err > bound], bound[err > bound])


SORT = {"small": (3, 7), "block": (2, 2048), "multi_block": (2, 5000), "one": (4, 1), "rows": (300, 33)}


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("case", sorted(SORT))
@pytest.mark.parametrize("dtype", ALL)
def test_sort(be, host, dtype, case, descending):
    supported(be, dtype)
    if np.dtype(dtype).kind == "c":
        pytest.skip("the core orders no complex values (sort is not declared for them)")
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


def _sort_data(rng, shape, dtype):
    """Random values with many duplicates; floats with NaN (both signs), +-inf and +-0.0."""
    x = random_array(rng, shape, dtype)
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        return np.where(rng.random(shape) < 0.7, x % 7, x).astype(dt)
    if dt.kind == "f":
        pool = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5], dt)
        return np.where(rng.random(shape) < 0.6, rng.choice(pool, shape), x).astype(dt)
    return x


def _check_sort(be, host, x_base, x, descending, values=True, indices=True):
    """Sort the view x of x_base into strided views of larger outputs; compare with the
    reference's stable sort, and check the kernel wrote nothing between the output elements."""
    M, K = x.shape
    vals, idx = np.empty(x.shape, x.dtype), np.empty(x.shape, np.int32)
    R.sort(x, vals, idx, descending, True)
    vbase = np.zeros((M, 2 * K + 1), x.dtype)
    ibase = np.full((2 * K + 1, M), -7, np.int32)
    vo = host.view(vbase, vbase[:, 1::2]) if values else None
    io = host.view(ibase, ibase[-2::-2].T) if indices else None  # transposed, negative strides
    be.sort(host.view(x_base, x), vo, io, descending, True)
    if indices:
        got = be.to_host(whole(io, ibase))
        want = ibase.copy()
        want[-2::-2] = idx.T
        np.testing.assert_array_equal(got, want)
    if values:
        got = be.to_host(whole(vo, vbase))
        want = vbase.copy()
        want[:, 1::2] = vals
        # NOTE: bitwise, for -0.0 and 0.0; but float16 values pass through float32, which quiets
        # signalling NaNs (as every webgpu float16 copy does), so NaNs match as NaNs.
        nan = np.isnan(got) & np.isnan(want) if x.dtype.kind == "f" else False
        u = f"u{x.itemsize}"
        np.testing.assert_array_equal(np.where(nan, 0, got.view(u)), np.where(nan, 0, want.view(u)))


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("items", [8, 16])
@pytest.mark.parametrize("dtype", ALL)
def test_radix_sort(be, host, monkeypatch, dtype, items, descending):
    """Rows around the tile size (256 * items keys), several rows, strided input and outputs."""
    supported(be, dtype)
    if np.dtype(dtype).kind == "c":
        pytest.skip("the core orders no complex values (sort is not declared for them)")
    monkeypatch.setattr(Kn, "RADIX_MIN_K", 1)
    monkeypatch.setattr(Kn, "RADIX_ITEMS", items)
    rng = np.random.default_rng([ALL.index(dtype), items, descending])
    tile = 256 * items
    for K in (1, 5, tile - 1, tile, tile + 1, 3 * tile + 7):
        base = _sort_data(rng, (K, 3), dtype)
        _check_sort(be, host, base, base.T, descending)
        host.free()


@pytest.mark.parametrize("which", ["values", "indices"])
@pytest.mark.parametrize("dtype", ["float32", "int16", "uint8"])
def test_radix_sort_one_output(be, host, monkeypatch, dtype, which):
    monkeypatch.setattr(Kn, "RADIX_MIN_K", 1)
    rng = np.random.default_rng(5)
    base = _sort_data(rng, (4, 5000), dtype)
    for descending in (False, True):
        _check_sort(be, host, base, base[::-1, ::-1], descending, which == "values", which == "indices")


@pytest.mark.parametrize("dtype", ["float32", "int16"])
def test_radix_sort_three_scan_levels(be, host, monkeypatch, dtype):
    """4200 rows of one 2048-key tile: 4200 * 256 digit counts, more than 1024^2, scanned in
    three levels."""
    monkeypatch.setattr(Kn, "RADIX_MIN_K", 1)
    monkeypatch.setattr(Kn, "RADIX_ITEMS", 8)
    assert len(Kn._scan_levels(4200 * 256)) == 3
    base = _sort_data(np.random.default_rng(6), (4200, 3), dtype)
    _check_sort(be, host, base, base, True)


def test_radix_sort_every_float16(be, host, monkeypatch):
    """All 65536 float16 bit patterns, shuffled: the 16-bit key orders each one as NumPy does."""
    supported(be, "float16")
    monkeypatch.setattr(Kn, "RADIX_MIN_K", 1)
    bits = np.random.default_rng(7).permutation(1 << 16).astype(np.uint16)
    base = bits.view(np.float16).reshape(2, -1)
    for descending in (False, True):
        _check_sort(be, host, base, base, descending)


def test_sort_threshold(be, host, monkeypatch):
    """Rows shorter than RADIX_MIN_K take the bitonic network, the others the radix sort."""
    seen = []
    for name in ("_sort_bitonic", "_sort_radix"):
        real = getattr(Kn, name)
        monkeypatch.setattr(Kn, name, lambda *a, real=real, name=name: (seen.append(name), real(*a)))
    rng = np.random.default_rng(8)
    for K in (Kn.RADIX_MIN_K - 1, Kn.RADIX_MIN_K):
        base = _sort_data(rng, (2, K), "float32")
        _check_sort(be, host, base, base, False)
    assert seen == ["_sort_bitonic", "_sort_radix"]


@pytest.mark.parametrize("n", [1, 3, 4, 1001, 300000])
@pytest.mark.parametrize("key,counter", [(0, 0), (0xDEADBEEFCAFEF00D, 2**64 - 2), (7, 2**128 - 3), (12345, 99)])
def test_random_bits(be, host, n, key, counter):
    want = np.empty((n,), np.uint32)
    R.random_bits(key, counter, want)
    out = host.empty((n,), np.uint32)
    be.random_bits(key, counter, out)
    np.testing.assert_array_equal(host.get(out), want)
