"""sort (sort.cc): the radix sort of real dtypes against NumPy's stable sort, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from cpu_helpers import BY_NP, native_threads
from ndplane_cpu.backend import _native

import ndplane
from ndplane.backend import reference as K

REAL = [d for d in ndplane.ALL_DTYPES if d.kind != "complex"]
# around the switch from std::sort to the radix sort (64)
LENGTHS = [0, 1, 2, 5, 63, 64, 65, 300, 2049]
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def nans(dt: np.dtype) -> np.ndarray:
    """NaNs with several payloads, negative ones too."""
    u = UINT[dt.itemsize]
    bits = {2: [0x7E00, 0x7C01, 0xFE00, 0xFD55], 4: [0x7FC00000, 0x7F800001, 0xFFC00000, 0xFF812345],
            8: [0x7FF8000000000000, 0x7FF0000000000001, 0xFFF8000000000000, 0xFFF0000000ABCDEF]}  # fmt: skip
    return np.array(bits[dt.itemsize], u).view(dt)


def dupes(rng: np.random.Generator, shape: tuple[int, ...], dt: np.dtype) -> np.ndarray:
    """Random values with many duplicates; floats mix in NaNs, infinities, zeros of both signs and subnormals."""
    n = int(np.prod(shape))
    if dt.kind == "b":
        return (rng.random(n) < 0.5).reshape(shape)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        pool = np.array([info.min, info.max, 0, 1, info.max // 3, info.min // 5, 7, 200 % info.max], dt)
        pool = np.concatenate([pool, rng.integers(info.min, info.max, 24, dtype=dt, endpoint=True)])
        return rng.choice(pool, n).reshape(shape)
    tiny = np.finfo(dt).smallest_subnormal
    pool = np.concatenate([nans(dt), np.array([np.inf, -np.inf, 0.0, -0.0, 1.5, -1.5, tiny, -tiny, 1e-3], dt),
                           (rng.standard_normal(16) * 100).astype(dt)])  # fmt: skip
    return rng.choice(pool, n).reshape(shape)


def want(x: np.ndarray, descending: bool) -> tuple[np.ndarray, np.ndarray]:
    """The stable order: NumPy's stable argsort, reversed rows and back when descending."""
    if descending:
        idx = (x.shape[-1] - 1 - np.argsort(x[..., ::-1], axis=-1, kind="stable"))[..., ::-1]
    else:
        idx = np.argsort(x, axis=-1, kind="stable")
    return np.take_along_axis(x, idx, axis=-1), idx


def bits(a: np.ndarray) -> np.ndarray:
    return a.view(UINT[a.dtype.itemsize]) if a.dtype.kind == "f" else a


def check(h, view, base, descending, stable=True, index=np.int64, what=""):
    wv, wi = want(view, descending)
    x = h.put(view, base)
    shape, dt = view.shape, BY_NP[view.dtype]
    got_v, got_i = h.empty(shape, dt), h.empty(shape, index)
    h.be.sort(x, got_v, got_i, descending, stable)
    np.testing.assert_array_equal(h.get(got_i), wi.astype(index), err_msg=f"{what} indices")
    np.testing.assert_array_equal(bits(h.get(got_v)), bits(wv), err_msg=f"{what} values")
    only_v, only_i = h.empty(shape, dt), h.empty(shape, index)
    h.be.sort(x, only_v, None, descending, stable)
    h.be.sort(x, None, only_i, descending, stable)
    if stable:
        np.testing.assert_array_equal(bits(h.get(only_v)), bits(wv), err_msg=f"{what} values only")
        np.testing.assert_array_equal(h.get(only_i), wi.astype(index), err_msg=f"{what} indices only")
    else:  # any order of equal values: the same values, and a permutation that sorts
        v, i = h.get(only_v), h.get(only_i).astype(np.int64)
        np.testing.assert_array_equal(v, wv, err_msg=f"{what} values only")
        np.testing.assert_array_equal(np.sort(bits(v), axis=-1), np.sort(bits(view), axis=-1))
        np.testing.assert_array_equal(np.sort(i, axis=-1), np.broadcast_to(np.arange(shape[-1]), shape))
        np.testing.assert_array_equal(np.take_along_axis(view, i, axis=-1), wv, err_msg=f"{what} indices only")


@pytest.mark.parametrize("dtype", REAL, ids=lambda d: d.name)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_matches_numpy_stable_bit_for_bit(h, dtype, descending):
    rng = np.random.default_rng(7)
    for n in LENGTHS:
        for m in (1, 3):
            x = dupes(rng, (m, n), dtype.dtype)
            check(h, x, x, descending, True, what=f"{m}x{n}")
            check(h, x, x, descending, False, what=f"{m}x{n} unstable")


@pytest.mark.parametrize("dtype", [ndplane.float32, ndplane.int64, ndplane.float16, ndplane.uint8],
                         ids=lambda d: d.name)  # fmt: skip
@pytest.mark.parametrize("threads", [1, 3])
def test_sort_long_rows_on_several_threads(h, dtype, threads):
    with native_threads(threads):
        rng = np.random.default_rng(threads)
        for m, n in [(1, 70_001), (2, 65_536), (7, 20_000)]:
            x = dupes(rng, (m, n), dtype.dtype)
            for descending in (False, True):
                check(h, x, x, descending, what=f"{m}x{n} {threads} threads")


@pytest.mark.parametrize("dtype", [ndplane.float32, ndplane.int32, ndplane.uint32, ndplane.float64,
                                   ndplane.int64, ndplane.uint64], ids=lambda d: d.name)  # fmt: skip
def test_sort_values_of_many_short_rows(h, dtype):
    # values only, 16 (8 for 8-byte keys) rows at a time through the bitonic network: rows
    # padded to a power of two, the rows left over after the last group, strided rows
    rng = np.random.default_rng(13)
    for m, n in [(16, 1), (16, 2), (37, 15), (16, 16), (17, 17), (40, 100), (16, 512), (9, 1000),
                 (33, 2048), (16, 2049)]:  # fmt: skip
        x = dupes(rng, (m, n), dtype.dtype)
        for descending in (False, True):
            check(h, x, x, descending, what=f"{m}x{n}")
            check(h, x, x, descending, False, what=f"{m}x{n} unstable")
        base = dupes(rng, (2 * m, n + 3), dtype.dtype)
        check(h, base[::-2, 3:], base, True, what=f"{m}x{n} strided")


def test_sort_narrow_keys_that_vary_in_one_digit_only(h):
    # the radix passes whose digit is one value over the row are skipped
    rng = np.random.default_rng(3)
    for dt, lo, hi in [(np.int64, -3, 3), (np.int64, 2**40, 2**40 + 300), (np.uint32, 0, 255),
                       (np.float64, 1.0, 1.0 + 1e-12), (np.int16, -(2**15), -(2**15) + 2)]:  # fmt: skip
        for n in (100, 70_000):
            x = (rng.uniform(lo, hi, (2, n)) if dt == np.float64 else rng.integers(lo, hi, (2, n))).astype(dt)
            x[1] = x[1, 0]  # one value: no pass at all
            for descending in (False, True):
                check(h, x, x, descending, what=f"{dt.__name__} {lo} {n}")


@pytest.mark.parametrize("dtype", [ndplane.float32, ndplane.int16, ndplane.bool], ids=lambda d: d.name)
def test_sort_strided_inputs(h, dtype):
    rng = np.random.default_rng(11)
    for n in (40, 300):
        base = dupes(rng, (4, 2 * n + 1), dtype.dtype)
        wide = dupes(rng, (n, 4), dtype.dtype)
        one = dupes(rng, (1, n), dtype.dtype)
        views = {"step2+offset": (base[:, 1::2], base), "negative": (base[::-1, ::-2], base),
                 "transposed": (wide.T, wide), "broadcast rows": (np.broadcast_to(one, (3, n)), one),
                 "broadcast one value": (np.broadcast_to(one[:, :1], (2, n)), one)}  # fmt: skip
        for name, (view, b) in views.items():
            for descending in (False, True):
                check(h, view, b, descending, what=f"{name} {n}")


def test_sort_into_strided_outputs_and_narrow_index_dtypes(h):
    rng = np.random.default_rng(5)
    x = dupes(rng, (3, 200), np.dtype(np.float64))
    wv, wi = want(x, True)
    vbase = np.zeros((3, 403), np.float64)
    vref = h.put(vbase)
    ibase = np.zeros((200, 3), np.int32)
    iref = h.put(ibase)
    h.be.sort(h.put(x), h.ref_of(vbase[:, 400:0:-2], vbase, vref.buffer),
              h.ref_of(ibase.T, ibase, iref.buffer), True, True)  # fmt: skip
    v, i = h.get(vref), h.get(iref)
    np.testing.assert_array_equal(bits(v[:, 400:0:-2]), bits(wv))
    np.testing.assert_array_equal(v[:, 0], 0)
    np.testing.assert_array_equal(v[:, 1::2], 0)
    np.testing.assert_array_equal(i.T, wi)
    for index in (np.uint8, np.int8, np.int16, np.uint64):  # positions wrap as a cast does
        check(h, x, x, False, index=index, what=np.dtype(index).name)


def test_sort_in_place(h):
    # values_out is the input itself: it is read again after the values are written
    x = dupes(np.random.default_rng(2), (2, 500), np.dtype(np.float32))
    for descending, stable in [(False, True), (True, True), (False, False)]:
        ref = h.put(x)
        h.be.sort(ref, ref, None, descending, stable)
        np.testing.assert_array_equal(bits(h.get(ref)), bits(want(x, descending)[0]))


def test_sort_zero_ties_keep_input_order(h):
    x = np.array([[0.0, -0.0, 1.0, -0.0, 0.0, np.nan, -np.nan, -1.0] * 20], np.float32)
    for descending in (False, True):
        check(h, x, x, descending)
        vals, idx = np.empty_like(x), np.empty(x.shape, np.int64)
        K.sort(x, vals, idx, descending, True)
        _, wi = want(x, descending)
        np.testing.assert_array_equal(idx, wi)  # the reference agrees with NumPy's stable order


def test_sort_errors(h):
    x = h.put(np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError, match=r"sort: indices_out must have an integer dtype; got float32\."):
        h.be.sort(x, None, h.empty((2, 3), ndplane.float32), False, True)
    with pytest.raises(TypeError, match="values_out"):
        h.be.sort(x, h.empty((2, 3), ndplane.float64), None, False, True)
    with pytest.raises(ValueError, match="shape"):
        h.be.sort(x, h.empty((3, 2), ndplane.float32), None, False, True)


@pytest.mark.parametrize("threads", [1, 2])
def test_sort_many_long_rows_one_msd_pass_then_lsd(h, threads):
    # rows of 2^16 and more, more rows than threads: each row by one thread, one pass on the
    # highest varying digit, then each bucket by LSD passes (or std::sort under 64 items);
    # keys varying in the top digit only (that one pass), all in one bucket but one, and the
    # scratch blocks kept between sorts, given back by empty_cache and taken anew
    with native_threads(threads):
        rng = np.random.default_rng(7 + threads)
        n = 70_001
        top_only = (rng.integers(0, 256, (5, n)).astype(np.int64) << 56) + 3
        one_bucket = np.full((5, n), 12345, np.int64)
        one_bucket[:, 999] = -1
        one_bucket[:, 1000:1100] = rng.integers(0, 1 << 20, (5, 100))
        cases = [dupes(rng, (5, n), np.dtype(d)) for d in ("float32", "int64", "uint16", "float64")]
        for x in cases + [top_only, one_bucket]:
            for descending in (False, True):
                check(h, x, x, descending, what=f"{x.dtype} {threads} threads")
            _native().empty_cache()


@pytest.mark.parametrize("dtype", [ndplane.float32, ndplane.int32, ndplane.uint32, ndplane.float64,
                                   ndplane.int64, ndplane.uint64], ids=lambda d: d.name)  # fmt: skip
@pytest.mark.parametrize("threads", [1, 3])
def test_sort_values_of_keys_with_many_digits(h, dtype, threads):
    # values only, keys that need 3 radix digits or more: the AVX-512 quicksort where the CPU
    # has it (quicksort.h). Lengths around its leaves (256 / 128 keys) and its partitions
    # (multiples of the 16 / 8 lanes and not), long rows split between threads, and inputs
    # that trouble a quicksort: sorted, reversed, organ pipes, two values, all equal but one
    with native_threads(threads):
        rng = np.random.default_rng(11 + threads)
        dt = dtype.dtype
        u = UINT[dt.itemsize]
        for n in (17, 127, 128, 129, 255, 256, 257, 1000, 1031, 20_000, 150_001):
            full = rng.integers(0, np.iinfo(u).max, n, dtype=u, endpoint=True).view(dt)
            if dt.kind == "f":
                full = np.where(np.isfinite(full), full, dt.type(1.5))
                full[rng.random(n) < 0.01] = np.nan
                full[rng.random(n) < 0.01] = -0.0
                full[rng.random(n) < 0.01] = 0.0
            ramp = np.sort(full)
            pipe = np.concatenate([ramp[::2], ramp[1::2][::-1]])
            two = np.where(rng.random(n) < 0.5, full[0], full[-1])
            one = np.full(n, full[1])
            one[n // 3] = full[2]
            for x in (full, ramp, ramp[::-1], pipe, two, one):
                x = np.ascontiguousarray(x)[None]
                for descending in (False, True):
                    check(h, x, x, descending, what=f"{n} {threads} threads")
        base = rng.integers(0, np.iinfo(u).max, (3, 4003), dtype=u, endpoint=True).view(dt)
        base = np.where(np.isfinite(base), base, dt.type(-2.5)) if dt.kind == "f" else base
        check(h, base[::-1, ::-3], base, False, what="strided")
