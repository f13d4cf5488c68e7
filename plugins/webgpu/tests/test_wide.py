"""The 64-bit dtypes (int64, uint64 with shader-int64; float64 with shader-f64 too): exact integer
results at the edges (wraparound, INT64_MIN / -1, negative remainders, shifts past the width,
scalars with a high word), float64 against NumPy float64, casts that would round twice, and the
public API on the device (default dtypes, random streams, the binding-size limit)."""

from __future__ import annotations

import numpy as np
import pytest

import ndplane as nd

I64 = np.iinfo(np.int64)
U64 = np.iinfo(np.uint64)


def need(be, *names):
    have = {d.name for d in be.dtypes}
    missing = [n for n in names if n not in have]
    if missing:
        pytest.skip(f"{', '.join(missing)} unsupported here (adapter features)")


def run_binary(be, host, op, a, b, rdt=None):
    out = host.empty(a.shape if isinstance(a, np.ndarray) else b.shape, rdt or (a.dtype if isinstance(a, np.ndarray) else b.dtype))
    be.binary(op, host.put(a) if isinstance(a, np.ndarray) else a, host.put(b) if isinstance(b, np.ndarray) else b, out)
    return host.get(out)


def pairs(vals):
    return np.repeat(vals, vals.size), np.tile(vals, vals.size)


EDGE_I64 = np.array([I64.min, I64.min + 1, -(2**32) - 1, -(2**31), -7, -3, -1, 0, 1, 3, 7, 2**31, 2**32 + 5,
                     I64.max - 1, I64.max], np.int64)  # fmt: skip
EDGE_U64 = np.array([0, 1, 3, 7, 2**31, 2**32 - 1, 2**32, 2**32 + 5, 2**63 - 1, 2**63, U64.max - 1, U64.max],
                    np.uint64)  # fmt: skip


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "floor_divide", "remainder", "maximum", "minimum",
                                "bitwise_and", "bitwise_or", "bitwise_xor", "equal", "less", "greater_equal"])
@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_integer_edges_exact(be, host, op, dtype):
    """Every pair of edge values: wraparound, MIN / -1 (floor_divide MIN, remainder 0), zero
    divisors (0, as NumPy), negative remainders with the divisor's sign."""
    need(be, dtype)
    a, b = pairs(EDGE_I64 if dtype == "int64" else EDGE_U64)
    with np.errstate(all="ignore"):
        want = getattr(np, op)(a, b)
    np.testing.assert_array_equal(run_binary(be, host, op, a, b, want.dtype), want, err_msg=op)


@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_shifts_past_the_width_and_negative_counts(be, host, dtype):
    need(be, dtype)
    vals = EDGE_I64 if dtype == "int64" else EDGE_U64
    counts = np.array([0, 1, 31, 32, 33, 63, 64, 65, 127, 1000] + ([-1, -64] if dtype == "int64" else []), dtype)
    a, b = np.repeat(vals, counts.size), np.tile(counts, vals.size)
    for op, fn in (("bitwise_left_shift", np.left_shift), ("bitwise_right_shift", np.right_shift)):
        want = fn(a, b)
        # NOTE: shifts by >= the width (or negative) give 0, or -1 for negative >> n, as NumPy on
        # x86 does not promise (it masks the count): the Array API leaves them to the library.
        big = (b >= 64) | (b < 0) if dtype == "int64" else b >= 64
        sat = np.zeros_like(a)
        if dtype == "int64" and op == "bitwise_right_shift":
            sat = np.where(a < 0, np.int64(-1), np.int64(0))
        want = np.where(big, sat, want)
        np.testing.assert_array_equal(run_binary(be, host, op, a, b), want, err_msg=op)


@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_pow_sign_abs_negative_wrap(be, host, dtype):
    need(be, dtype)
    a = np.array([3, 2, 7, 0, 1, 5], dtype)
    b = np.array([41, 63, 23, 0, 1000, 28], dtype)
    np.testing.assert_array_equal(run_binary(be, host, "pow", a, b), np.power(a, b))
    x = EDGE_I64 if dtype == "int64" else EDGE_U64
    for op, fn in (("negative", np.negative), ("abs", np.abs), ("sign", np.sign), ("bitwise_invert", np.invert),
                   ("square", np.square)):  # fmt: skip
        out = host.empty(x.shape, dtype)
        be.unary(op, host.put(x), out)
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(host.get(out), fn(x), err_msg=op)


@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_scalars_use_both_words(be, host, dtype):
    """A Python scalar operand with a high word (2**40 + 3), on either side."""
    need(be, dtype)
    x = (EDGE_I64 if dtype == "int64" else EDGE_U64)[:6]
    s = 2**40 + 3
    for op in ("add", "subtract", "multiply", "remainder", "bitwise_xor"):
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(run_binary(be, host, op, x, s), getattr(np, op)(x, x.dtype.type(s)))
            np.testing.assert_array_equal(run_binary(be, host, op, s, x), getattr(np, op)(x.dtype.type(s), x))
    out = host.empty((5, 3), dtype)
    be.fill(out, U64.max if dtype == "uint64" else I64.min)
    assert (host.get(out) == (U64.max if dtype == "uint64" else I64.min)).all()


def test_integer_casts_extend_and_wrap(be, host):
    need(be, "int64", "uint64")
    src = {"int32": np.array([-(2**31), -1, 0, 7, 2**31 - 1], np.int32),
           "uint32": np.array([0, 1, 2**31, 2**32 - 1], np.uint32), "int64": EDGE_I64, "uint64": EDGE_U64,
           "int8": np.array([-128, -1, 0, 127], np.int8), "bool": np.array([True, False])}  # fmt: skip
    for sname, x in src.items():
        for dname in ("int8", "uint16", "int32", "uint32", "int64", "uint64", "float32", "bool"):
            out = host.empty(x.shape, dname)
            be.cast(host.put(x), out)
            np.testing.assert_array_equal(host.get(out), x.astype(dname), err_msg=f"{sname} -> {dname}")


def test_float64_to_float16_rounds_once(be, host):
    """float64 -> float16 directly, not through float32 (which rounds twice): values just above
    a float16 halfway point that float32 rounds onto it."""
    need(be, "float64")
    h = np.arange(0x3C00, 0x3C40, dtype=np.uint16).view(np.float16).astype(np.float64)
    ulp = 2.0**-10
    x = np.concatenate([h + ulp / 2 + 2.0**-40, h + ulp / 2 - 2.0**-40, h + ulp / 2, -(h + ulp / 2 + 2.0**-40),
                        [1e-9, 70000.0, 65519.99, 65520.0, np.nan, -np.inf, 5.96e-8, 2.98e-8, 2.99e-8]])  # fmt: skip
    with np.errstate(over="ignore"):
        want, twice = x.astype(np.float16), x.astype(np.float32).astype(np.float16)
    assert (twice != want).any()  # the cases exist
    out = host.empty(x.shape, "float16")
    be.cast(host.put(x), out)
    np.testing.assert_array_equal(host.get(out), want)


def test_float64_exact_arithmetic(be, host):
    """+ - * / and the rounding functions are exact (one IEEE rounding), as NumPy's."""
    need(be, "float64")
    rng = np.random.default_rng(0)
    a = rng.standard_normal(4000) * 10.0 ** rng.integers(-30, 30, 4000)
    b = rng.standard_normal(4000) * 10.0 ** rng.integers(-30, 30, 4000)
    for op in ("add", "subtract", "multiply", "divide", "maximum", "nextafter", "copysign"):
        np.testing.assert_array_equal(run_binary(be, host, op, a, b), getattr(np, op)(a, b), err_msg=op)
    halves = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 2.0**52 + 1, -0.0, 1e300, 3.5, 4.5, 0.49999999999999994])
    x = np.concatenate([a, halves])
    x = np.concatenate([x, [-0.0, 0.0, np.nan, -np.inf, np.inf, -0.25]])
    for op in ("floor", "ceil", "trunc", "round", "negative", "abs", "square", "reciprocal", "sqrt", "sign"):
        out = host.empty(x.shape, "float64")
        be.unary(op, host.put(np.abs(x) if op == "sqrt" else x), out)
        with np.errstate(all="ignore"):
            want = getattr(np, op)(np.abs(x) if op == "sqrt" else x)
        got = host.get(out)
        np.testing.assert_array_equal(got, want, err_msg=op)
        nan = np.isnan(want)
        np.testing.assert_array_equal(np.signbit(got)[~nan], np.signbit(want)[~nan], err_msg=f"{op} signs")


def test_float64_remainder_and_floor_divide_specials(be, host):
    need(be, "float64")
    vals = np.array([-7.5, -3.0, -0.0, 0.0, 1e-300, 2.5, 7.0, 1e300, np.inf, -np.inf, np.nan, 5e-324 * 2**60])
    a, b = pairs(vals)
    for op in ("remainder", "floor_divide"):
        with np.errstate(all="ignore"):
            want = getattr(np, op)(a, b)
        got = run_binary(be, host, op, a, b)
        np.testing.assert_array_equal(got, want, err_msg=op)
        nan = np.isnan(want)  # a NaN's sign is not specified
        np.testing.assert_array_equal(np.signbit(got)[~nan], np.signbit(want)[~nan], err_msg=f"{op} signs")


def test_float64_reductions_and_matmul_keep_double_precision(be, host):
    """Sums of terms a float32 accumulator would lose (1 + 2**-40)."""
    need(be, "float64")
    x = np.full((3, 5000), 2.0**-40)
    x[:, 0] = 1.0
    out = host.empty((3,), "float64")
    be.reduce("sum", host.put(x), out)
    np.testing.assert_allclose(host.get(out), x.sum(axis=1), rtol=1e-15)
    a = np.random.default_rng(1).standard_normal((1, 40, 70))
    b = np.random.default_rng(2).standard_normal((1, 70, 30))
    out = host.empty((1, 40, 30), "float64")
    be.matmul(host.put(a), host.put(b), out)
    np.testing.assert_allclose(host.get(out), a @ b, rtol=1e-13, atol=1e-13)


def test_int64_matmul_and_sum_wrap(be, host):
    need(be, "int64")
    a = np.full((1, 2, 3), 2**62, np.int64)
    b = np.full((1, 3, 2), 3, np.int64)
    out = host.empty((1, 2, 2), "int64")
    be.matmul(host.put(a), host.put(b), out)
    np.testing.assert_array_equal(host.get(out), a @ b)
    s = host.empty((2,), "int64")
    be.reduce("sum", host.put(a[0]), s)
    np.testing.assert_array_equal(host.get(s), a[0].sum(axis=1))


def test_public_api_defaults_random_and_indices(be):  # be: skipped without an adapter
    """The device's defaults are float64 / int64 with the features; random streams match numpy's
    device bit for bit (Philox words, integers through uint64 arithmetic, float64 uniforms)."""
    dev = nd.Device("webgpu")
    if nd.int64 not in dev.backend.dtypes or nd.float64 not in dev.backend.dtypes:
        pytest.skip("adapter without shader-int64 / shader-f64")
    assert nd.asarray([1.5], device=dev).dtype == nd.float64
    assert nd.asarray([1], device=dev).dtype == nd.int64
    assert nd.argmax(nd.asarray([1.0, 3.0, 2.0], device=dev)).dtype == nd.int64
    for make in (lambda d: nd.random.default_rng(5).random((1000,), device=d),
                 lambda d: nd.random.default_rng(5).integers(-(2**62), 2**62, (1000,), dtype=nd.int64, device=d),
                 lambda d: nd.random.default_rng(5).integers(0, 2**64 - 1, (99,), dtype=nd.uint64, device=d)):
        np.testing.assert_array_equal(np.asarray(make(dev).to_device("numpy")), np.asarray(make("numpy")))
    # normal: Box-Muller through log and cos (f64math.wgsl, within a few ulp of the host's libm)
    normal = [np.asarray(nd.random.default_rng(5).normal(shape=(1000,), device=d).to_device("numpy"))
              for d in (dev, "numpy")]  # fmt: skip
    np.testing.assert_allclose(normal[0], normal[1], rtol=1e-14, atol=1e-15)
    x = nd.asarray(np.arange(10.0), device=dev)
    i = nd.asarray(np.array([9, 0, 9, 3], np.int64), device=dev)
    np.testing.assert_array_equal(np.asarray(nd.take(x, i).to_device("numpy")), [9.0, 0.0, 9.0, 3.0])


def test_arrays_past_the_binding_limit_are_refused_naming_it(be):
    """At 8 bytes an element the limit comes at half the elements: refused before any work."""
    need(be, "float64")
    n = be.rt.max_binding // 8 + 1
    before = be.memory_stats()
    with pytest.raises(nd.OutOfMemoryError, match="max_storage_buffer_binding_size"):
        nd.zeros((n,), dtype=nd.float64, device="webgpu")
    assert be.memory_stats() == before
