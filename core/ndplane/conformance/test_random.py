"""Random numbers: the Philox-4x32-10 stream bit for bit on every backend, and the
transforms on top of it (same seed, same numbers on every device; ranges)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ndplane as nd
from ndplane.backend.reference import philox4x32
from ndplane.conformance import _helpers as h


def _needs_uint32(device: nd.Device) -> None:
    # NOTE: the random_bits primitive writes uint32 words; a backend without uint32 has no RNG.
    h.require(device, nd.uint32)


def _philox_words(key: int, counter: int, n: int) -> np.ndarray:
    """Word i is word i % 4 of Philox(key, counter + i // 4), the counter a 128-bit integer."""
    blocks = -(-n // 4)
    ctr = np.array([[(c >> (32 * j)) & 0xFFFFFFFF for j in range(4)]
                    for c in ((counter + i) % (1 << 128) for i in range(blocks))], np.uint32).reshape(blocks, 4)  # fmt: skip
    return philox4x32(key, ctr).reshape(-1)[:n]


def test_philox_known_answer() -> None:
    """The reference generator itself: the Random123 known-answer vectors for Philox-4x32-10."""
    zeros = philox4x32(0, np.zeros((1, 4), np.uint32))[0]
    assert [f"{w:08x}" for w in zeros] == ["6627e8d5", "e169c58d", "bc57ac4c", "9b00dbd8"]
    ones = philox4x32(0xFFFFFFFFFFFFFFFF, np.full((1, 4), 0xFFFFFFFF, np.uint32))[0]
    assert [f"{w:08x}" for w in ones] == ["408f276d", "41c83b0e", "a20bc7c6", "6d5451fd"]
    pi = np.array([[0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344]], np.uint32)
    words = philox4x32(0xA4093822 | (0x299F31D0 << 32), pi)[0]
    assert [f"{w:08x}" for w in words] == ["d16cfe09", "94fdcceb", "5001e420", "24126ea1"]


@h.hyp(scale=2)
@given(seed=st.integers(0, 2**64 - 1), sizes=st.lists(st.integers(0, 37), min_size=1, max_size=4))
def test_bits_match_philox(device: nd.Device, seed: int, sizes: list[int]) -> None:
    """``bits(n)`` is the Philox stream from counter 0; each call advances by ceil(n / 4) blocks."""
    _needs_uint32(device)
    rng = nd.random.default_rng(seed, device=device)
    counter = 0
    for n in sizes:
        got = rng.bits(n)
        h.assert_same(
            got, _philox_words(seed, counter, n), nd.uint32, msg=f"bits({n}) at counter {counter}: "
        )
        counter += -(-n // 4)


def test_bits_carry_across_64_bits(device: nd.Device) -> None:
    """The counter is 128-bit: blocks past 2**64 - 1 carry into the high half."""
    _needs_uint32(device)
    rng = nd.random.default_rng(12345, device=device)
    rng.counter = 2**64 - 2
    h.assert_same(rng.bits(16), _philox_words(12345, 2**64 - 2, 16), nd.uint32)
    rng.counter = 2**128 - 1
    h.assert_same(rng.bits(8), _philox_words(12345, 2**128 - 1, 8), nd.uint32)


def test_same_seed_same_numbers_on_every_device(device: nd.Device) -> None:
    """bits and integers are bit-identical across devices; floats too (exact transforms);
    normal agrees within rounding (it uses log and cos)."""
    _needs_uint32(device)
    other = h.other_device(device)
    h.require(other, nd.uint32)
    rngs = [nd.random.default_rng(7, device=d) for d in (device, other)]
    bits = [r.bits(101).to_numpy() for r in rngs]
    assert np.array_equal(bits[0], bits[1])
    for dtype in h.supported(device, ("float",)):
        if dtype in other.backend.dtypes:
            u = [r.random((5, 7), dtype=dtype).to_numpy() for r in rngs]
            assert np.array_equal(u[0], u[1]), f"random({dtype.name}) differs between {device} and {other}"
    for dtype in h.supported(device, ("int", "uint")):
        if dtype in other.backend.dtypes:
            v = [r.integers(0, 100, (9,), dtype=dtype).to_numpy() for r in rngs]
            assert np.array_equal(v[0], v[1]), f"integers({dtype.name}) differs"
    fdt = h.default(device, "real floating")
    if fdt in other.backend.dtypes:
        z = [r.normal(1.0, 2.0, (50,), dtype=fdt).to_numpy() for r in rngs]
        rtol = h.TOLERANCE[fdt][0] * 10
        np.testing.assert_allclose(z[0], z[1], rtol=rtol, atol=rtol)


def _uniform_algorithm(words: np.ndarray, dtype: nd.DType, low: float, high: float) -> np.ndarray:
    """Generator.uniform's composite on the host: the exact transform of the words, then a
    multiply and an add rounded to ``dtype`` (scalars rounded to it first)."""
    if dtype is nd.float64:
        hi, lo = (words[0::2] >> 5).astype(np.float64), (words[1::2] >> 6).astype(np.float64)
        u = (hi * 67108864.0 + lo) * 2.0**-53
    else:
        mant = 24 if dtype is nd.float32 else 11
        u = ((words >> (32 - mant)).astype(np.float32) * np.float32(2.0**-mant)).astype(h.np_dtype(dtype))
    if (low, high) == (0.0, 1.0):
        return u
    t = h.np_dtype(dtype).type
    return u * t(high - low) + t(low)


@pytest.mark.parametrize("n", [0, 1, 3, 5, 17, 1001, 5003])
def test_uniform_matches_its_algorithm(device: nd.Device, n: int) -> None:
    """random() and uniform() bit for bit the documented transform of the Philox words (through
    a backend's fused:uniform or the composite), at counters that cross a 32-bit word of the
    counter and wrap its 128 bits, with odd lengths; the counter moves past the blocks used."""
    _needs_uint32(device)
    seed = 0x1234_5678_9ABC_DEF0
    for dtype in h.supported(device, ("float",)):
        # NOTE: float16 unscaled only: its multiply and add may round in float32 first
        ranges = [(0.0, 1.0)] if dtype is nd.float16 else [(0.0, 1.0), (-2.0, 3.0), (0.1, 0.7), (-1e30, 1e30)]
        words = 2 * n if dtype is nd.float64 else n
        for counter in (0, 2**32 - 3, 2**128 - 2):
            for low, high in ranges:
                rng = nd.random.default_rng(seed, device=device)
                rng.counter = counter
                got = rng.random((n,), dtype=dtype) if (low, high) == (0.0, 1.0) else \
                    rng.uniform(low, high, (n,), dtype=dtype)  # fmt: skip
                want = _uniform_algorithm(_philox_words(seed, counter, words), dtype, low, high)
                assert np.array_equal(got.to_numpy(), want), \
                    f"uniform({low}, {high}) {dtype.name} n={n} at counter {counter:#x}"  # fmt: skip
                assert rng.counter == (counter + -(-words // 4)) % 2**128


def _integers_algorithm(words: np.ndarray, dtype: nd.DType, low: int, high: int) -> np.ndarray:
    """Generator.integers' composite on the host: a 32-bit word per value where the span fits
    in 32 bits and the dtype has at most 4 bytes, else (w[2i] << 32) | w[2i + 1]; that modulo the
    span, plus low, modulo 2**64, truncated to ``dtype``."""
    span = high - low
    npd = h.np_dtype(dtype)
    if span <= 2**32 and npd.itemsize <= 4:
        x = words.astype(np.uint64)
    else:
        x = (words[0::2].astype(np.uint64) << np.uint64(32)) | words[1::2].astype(np.uint64)
    v = x if span == 2**64 else x % np.uint64(span % 2**64)
    return (v + np.uint64(low % 2**64)).astype(npd)


@pytest.mark.parametrize("n", [0, 1, 3, 1023, 1025, 5003])
def test_integers_matches_its_algorithm(device: nd.Device, n: int) -> None:
    """integers() bit for bit the documented algorithm of the Philox words (through a backend's
    fused:integers or the composite) in every integer dtype, for spans of 1, small, 2**32 and
    more, the whole dtype and negative lows, at counters that carry and wrap; the counter moves
    past the blocks used."""
    _needs_uint32(device)
    seed = 0x0FED_CBA9_8765_4321
    for dtype in h.supported(device, ("int", "uint")):
        info = np.iinfo(h.np_dtype(dtype))
        lo, hi = int(info.min), int(info.max) + 1
        ranges = [(0, 10), (lo, hi), (hi - 1, hi), (lo, lo + 3), (0, 2**32), (0, 2**32 + 1), (-(2**40), 2**40 + 7),
                  (-5, 5), (3, 2**20 + 3)]  # fmt: skip
        for low, high in [(a, b) for a, b in ranges if lo <= a < b <= hi]:
            words = n if high - low <= 2**32 and info.bits <= 32 else 2 * n
            for counter in (0, 2**32 - 3, 2**128 - 2):
                rng = nd.random.default_rng(seed, device=device)
                rng.counter = counter
                got = rng.integers(low, high, (n,), dtype=dtype)
                want = _integers_algorithm(_philox_words(seed, counter, words), dtype, low, high)
                assert np.array_equal(got.to_numpy(), want), \
                    f"integers({low}, {high}) {dtype.name} n={n} at counter {counter:#x}"  # fmt: skip
                assert rng.counter == (counter + -(-words // 4)) % 2**128


@pytest.mark.parametrize("dtype_name", ["float16", "float32", "float64"])
def test_random_uniform_ranges(device: nd.Device, dtype_name: str) -> None:
    _needs_uint32(device)
    dtype = h.skip_unless(device, dtype_name)
    rng = nd.random.default_rng(3, device=device)
    u = rng.random((2000,), dtype=dtype)
    assert u.dtype is dtype and u.device == device and u.shape == (2000,)
    v = u.to_numpy().astype(np.float64)
    assert (v >= 0).all() and (v < 1).all() and 0.4 < v.mean() < 0.6
    w = rng.uniform(-2.0, 3.0, (4, 500), dtype=dtype).to_numpy().astype(np.float64)
    assert w.shape == (4, 500) and (w >= -2).all() and (w <= 3).all() and 0.2 < w.mean() < 0.8
    z = rng.normal(1.0, 2.0, (4000,), dtype=dtype).to_numpy().astype(np.float64)
    assert np.isfinite(z).all() and abs(z.mean() - 1.0) < 0.2 and abs(z.std() - 2.0) < 0.2


@pytest.mark.parametrize(
    "dtype_name", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
)
def test_integers_ranges(device: nd.Device, dtype_name: str) -> None:
    _needs_uint32(device)
    dtype = h.skip_unless(device, dtype_name)
    info = np.iinfo(h.np_dtype(dtype))
    rng = nd.random.default_rng(11, device=device)
    for low, high in (
        (0, 1),
        (0, 10),
        (int(info.min), int(info.max) + 1),
        (int(info.max) - 3, int(info.max) + 1),
    ):
        x = rng.integers(low, high, (500,), dtype=dtype)
        assert x.dtype is dtype and x.device == device
        v = x.to_numpy()
        assert int(v.min()) >= low and int(v.max()) < high, (low, high, v.min(), v.max())
        if high - low <= 10:
            assert len(np.unique(v)) == high - low, f"integers({low}, {high}) misses values"
    with pytest.raises(ValueError):
        rng.integers(5, 5, dtype=dtype)
    with pytest.raises(ValueError):
        rng.integers(int(info.min) - 1, 0, dtype=dtype)


def test_permutation(device: nd.Device) -> None:
    _needs_uint32(device)
    for n in (0, 1, 17):
        p = nd.random.default_rng(5, device=device).permutation(n)
        assert p.device == device and sorted(p.tolist()) == list(range(n))
    a = nd.random.default_rng(5, device=device).permutation(50).tolist()
    assert a == nd.random.default_rng(5, device=device).permutation(50).tolist()
