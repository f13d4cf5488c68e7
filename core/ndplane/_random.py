"""Seeded random numbers built on the ``random_bits`` primitive.

Every backend produces the same Philox-4x32-10 words for a key and counter, so
a seed gives the same numbers on every device (up to float rounding of the
transforms below, which are computed with ordinary elementwise ops). A backend
with ``fused:uniform`` makes float32/float64 uniforms in one pass, bit for bit
the composite's.
"""

from __future__ import annotations

import math
import operator
import os
from collections.abc import Sequence
from typing import cast

import numpy as np

from . import _dispatch, _dtypes, _layout, _manipulation, _sorting
from ._array import Array
from ._devices import Device, as_device
from ._dtypes import DType, as_dtype

__all__ = ["Generator", "default_rng"]

_MASK64 = (1 << 64) - 1


def _shape(shape: int | Sequence[int]) -> tuple[int, ...]:
    dims = (operator.index(cast(int, shape)),) if not isinstance(shape, (tuple, list)) else tuple(
        operator.index(n) for n in shape
    )
    if any(n < 0 for n in dims):
        raise ValueError(f"random: negative dimensions are not allowed; got {dims}.")
    return dims


class Generator:
    """A counter-based random generator: a 64-bit key (the seed) and a 128-bit counter.

    >>> import ndplane as nd
    >>> rng = nd.random.default_rng(0)
    >>> x = rng.random((2, 3))
    >>> x.shape, bool(nd.all((x >= 0) & (x < 1)))
    ((2, 3), True)
    >>> nd.random.default_rng(0).random((2, 3)).tolist() == x.tolist()
    True
    """

    def __init__(self, seed: int | None = None, *, device: str | Device | None = None) -> None:
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "little")
        seed = operator.index(seed)
        if not 0 <= seed <= _MASK64:
            raise ValueError(f"Generator: seed must be an integer in [0, 2**64); got {seed}.")
        self.key = seed
        self.counter = 0
        self.device = None if device is None else as_device(device)

    def __repr__(self) -> str:
        return f"Generator(key={self.key:#x}, counter={self.counter})"

    def _device(self, device: str | Device | None) -> Device:
        return as_device(device if device is not None else self.device)

    def bits(self, n: int, *, device: str | Device | None = None) -> Array:
        """``n`` random uint32 words (the raw stream); advances the counter.

        >>> import ndplane as nd
        >>> nd.random.default_rng(0).bits(4).tolist()
        [1713891541, 3781805453, 3159862348, 2600524760]
        """
        dev = self._device(device)
        out = _dispatch.random_bits(dev, self.key, self.counter, n)
        self._advance(n)
        return out

    def _advance(self, words: int) -> None:
        """Move the counter past the Philox blocks that ``words`` words used."""
        self.counter = (self.counter + -(-words // 4)) & ((1 << 128) - 1)

    def random(self, shape: int | Sequence[int] = (), *, dtype: DType | None = None,
               device: str | Device | None = None) -> Array:  # fmt: skip
        """Uniform floats in ``[0, 1)``, with all the mantissa bits of ``dtype`` random.

        >>> import ndplane as nd
        >>> x = nd.random.default_rng(0).random((1000,), dtype=nd.float32)
        >>> x.dtype, 0.0 <= float(nd.min(x)) and float(nd.max(x)) < 1.0, 0.45 < float(nd.mean(x)) < 0.55
        (ndplane.float32, True, True)
        """
        return self._uniform(shape, dtype, device, 0.0, 1.0, "random")

    def uniform(self, low: float = 0.0, high: float = 1.0, shape: int | Sequence[int] = (), *,
                dtype: DType | None = None, device: str | Device | None = None) -> Array:  # fmt: skip
        """Uniform floats in ``[low, high)``.

        >>> import ndplane as nd
        >>> x = nd.random.default_rng(1).uniform(-2.0, 2.0, (1000,))
        >>> bool(nd.all((x >= -2) & (x < 2)))
        True
        """
        return self._uniform(shape, dtype, device, float(low), float(high), "uniform")

    def _uniform(self, shape: int | Sequence[int], dtype: DType | None, device: str | Device | None,
                 low: float, high: float, name: str) -> Array:  # fmt: skip
        """``random`` scaled to ``[low, high)``: ``u * (high - low) + low``, two roundings."""
        dev = self._device(device)
        dt = dev.backend.default_dtypes["real floating"] if dtype is None else as_dtype(dtype, name)
        if dt.kind != "float":
            raise TypeError(f"{name}: dtype must be a real floating dtype; got {dt.name}.")
        _dispatch.check_dtype(dev, dt, name)  # NOTE: before any bits are drawn
        dims = _shape(shape)
        n = _layout.prod(dims)
        words = 2 * n if dt is _dtypes.float64 else n
        if dt in (_dtypes.float32, _dtypes.float64) and "fused:uniform" in dev.backend.capabilities:
            # NOTE: one pass, where the composite below is a uint32 array and eight kernels
            u = _dispatch.fused_random("uniform", dev, dt, n, {"key": self.key, "counter": self.counter, "low": low, "high": high})
            self._advance(words)
            return _manipulation.reshape(u, dims)
        binary, cast = _dispatch.binary, _dispatch.cast
        w = self.bits(words, device=dev)
        if dt is _dtypes.float64:
            pairs = _manipulation.reshape(w, (n, 2))
            hi = cast(binary("bitwise_right_shift", pairs[:, 0], 5), dt)
            lo = cast(binary("bitwise_right_shift", pairs[:, 1], 6), dt)
            u = binary("multiply", binary("add", binary("multiply", hi, 67108864.0), lo), 2.0**-53)
        else:
            mant = 24 if dt is _dtypes.float32 else 11
            top = cast(binary("bitwise_right_shift", w, 32 - mant), _dtypes.float32)
            u = binary("multiply", top, 2.0**-mant)
            u = u if dt is _dtypes.float32 else cast(u, dt)
        if (low, high) != (0.0, 1.0):  # NOTE: u * 1.0 + 0.0 is u
            u = binary("add", binary("multiply", u, high - low), low)
        return _manipulation.reshape(u, dims)

    def normal(self, loc: float = 0.0, scale: float = 1.0, shape: int | Sequence[int] = (), *,
               dtype: DType | None = None, device: str | Device | None = None) -> Array:  # fmt: skip
        """Normally distributed floats (Box-Muller on two uniforms per value).

        >>> import ndplane as nd
        >>> z = nd.random.default_rng(2).normal(0.0, 1.0, (20000,))
        >>> abs(float(nd.mean(z))) < 0.05, abs(float(nd.std(z)) - 1) < 0.05
        (True, True)
        """
        dims = _shape(shape)
        u1 = self.random(dims, dtype=dtype, device=device)
        u2 = self.random(dims, dtype=dtype, device=device)
        unary, binary = _dispatch.unary, _dispatch.binary
        radius = unary("sqrt", binary("multiply", unary("log", binary("subtract", 1.0, u1)), -2.0))
        z = binary("multiply", radius, unary("cos", binary("multiply", u2, 2 * math.pi)))
        return binary("add", binary("multiply", z, float(scale)), float(loc))

    def integers(self, low: int, high: int | None = None, shape: int | Sequence[int] = (), *,
                 dtype: DType | None = None, device: str | Device | None = None) -> Array:  # fmt: skip
        """Uniform integers in ``[low, high)`` (``[0, low)`` if ``high`` is omitted).

        >>> import ndplane as nd
        >>> x = nd.random.default_rng(3).integers(-5, 5, (1000,), dtype=nd.int8)
        >>> int(nd.min(x)) >= -5 and int(nd.max(x)) < 5, x.dtype
        (True, ndplane.int8)
        """
        if high is None:
            low, high = 0, low
        low, high = operator.index(low), operator.index(high)
        if high <= low:
            raise ValueError(f"integers: need low < high; got low={low}, high={high}.")
        dev = self._device(device)
        dt = dev.backend.default_dtypes["integral"] if dtype is None else as_dtype(dtype, "integers")
        if dt.kind not in ("int", "uint"):
            raise TypeError(f"integers: dtype must be an integer dtype; got {dt.name}.")
        _dispatch.check_dtype(dev, dt, "integers")  # NOTE: before any bits are drawn
        info_lo, info_hi = np.iinfo(dt.dtype).min, np.iinfo(dt.dtype).max
        if low < info_lo or high - 1 > info_hi:
            raise ValueError(f"integers: [{low}, {high}) does not fit in {dt.name}.")
        dims = _shape(shape)
        n = _layout.prod(dims)
        span = high - low
        if span > 1 << 64:
            raise ValueError("integers: the range must be at most 2**64 wide.")
        narrow = span <= 1 << 32 and dt.itemsize <= 4  # one 32-bit word per value, else two
        if "fused:integers" in dev.backend.capabilities:
            # NOTE: the backend's one pass, bit for bit the composite below
            params = {"key": self.key, "counter": self.counter, "top": span - 1, "low": low}
            v = _dispatch.fused_random("integers", dev, dt, n, params)
            self._advance(n if narrow else 2 * n)
            return _manipulation.reshape(v, dims)
        binary, cast = _dispatch.binary, _dispatch.cast
        # NOTE: (bits mod span) + low, computed modulo 2**W in an unsigned type of width W >= the
        # target's, then cast: exact for any low, and the modulo bias is at most span / 2**32.
        # NOTE: low is added after the cast, in dt: the same bits (both wrap modulo 2**W), and no
        # pass at all for low == 0, in place otherwise
        if narrow:
            w = self.bits(n, device=dev)
            v = w if span == 1 << 32 else binary("remainder", w, span)
        else:
            pairs = _manipulation.reshape(self.bits(2 * n, device=dev), (n, 2))
            u64 = _dtypes.uint64
            w = binary("bitwise_or", binary("bitwise_left_shift", cast(pairs[:, 0], u64), 32), cast(pairs[:, 1], u64))
            v = w if span == 1 << 64 else binary("remainder", w, span)
        v = cast(v, dt)
        if low and not _dispatch.binary_inplace("add", v, low):
            v = binary("add", v, low)
        return _manipulation.reshape(v, dims)

    def permutation(self, n: int, *, device: str | Device | None = None) -> Array:
        """A random permutation of ``arange(n)`` (argsort of random keys).

        >>> import ndplane as nd
        >>> sorted(nd.random.default_rng(4).permutation(5).tolist())
        [0, 1, 2, 3, 4]
        """

        dev = self._device(device)
        return _sorting.argsort(self.bits(n, device=dev))


def default_rng(seed: int | None = None, *, device: str | Device | None = None) -> Generator:
    """A new :class:`Generator` (NumPy's spelling).

    >>> import ndplane as nd
    >>> nd.random.default_rng(42).integers(10, shape=(3,)).shape
    (3,)
    """
    return Generator(seed, device=device)
