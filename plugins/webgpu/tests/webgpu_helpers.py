"""Helpers for testing the WebGPU kernels directly on Refs built by hand.

Every test compares a kernel with :mod:`ndplane.backend.reference` run on the same
NumPy view, so the layouts (strided, negative and zero strides, offsets, empty and
0-d shapes) are exactly the ones the kernel saw.
"""

from __future__ import annotations

import numpy as np

from ndplane._dtypes import FROM_NUMPY
from ndplane.backend import Ref


class Host:
    """Uploads NumPy views as Refs into their base array, and builds fresh outputs."""

    def __init__(self, be):
        self.be = be
        self.bufs = []

    def view(self, base: np.ndarray, view: np.ndarray) -> Ref:
        """A Ref for ``view``, a NumPy view of the contiguous ``base``, uploaded whole."""
        assert base.flags.c_contiguous
        buf = self.be.from_host(base)
        self.bufs.append(buf)
        isz = base.itemsize
        start = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
        offset = start // isz if view.size else 0
        strides = tuple(s // isz for s in view.strides)
        return Ref(buf, FROM_NUMPY[view.dtype], view.shape, strides, offset, view.size,
                   view.flags.c_contiguous)  # fmt: skip

    def put(self, arr: np.ndarray) -> Ref:
        base = np.ascontiguousarray(arr)
        return self.view(base, base)

    def empty(self, shape: tuple[int, ...], dtype) -> Ref:
        dt = np.dtype(dtype)
        n = int(np.prod(shape, dtype=np.int64))
        buf = self.be.alloc(n * dt.itemsize)
        self.bufs.append(buf)
        strides = tuple(int(np.prod(shape[i + 1 :], dtype=np.int64)) for i in range(len(shape)))
        return Ref(buf, FROM_NUMPY[dt], tuple(shape), strides, 0, n, True)

    def get(self, ref: Ref) -> np.ndarray:
        return self.be.to_host(ref)

    def free(self):
        for b in self.bufs:
            self.be.free(b)
        self.bufs.clear()


# The 64-bit dtypes last: only adapters with shader-int64 (and shader-f64) declare them
# (complex64 is declared everywhere; complex128 with float64).
ALL = ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16", "float32", "complex64",
       "int64", "uint64", "float64", "complex128"]  # fmt: skip


def random_array(rng: np.random.Generator, shape, dtype: str, special: bool = True) -> np.ndarray:
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dt.kind == "c":  # independent real and imaginary parts, each with the special values
        part = np.float32 if dt == np.complex64 else np.float64
        z = np.empty(shape, dt)
        z.real, z.imag = random_array(rng, shape, part, special), random_array(rng, shape, part, special)
        return z
    if dt.kind == "b":
        return np.asarray(rng.random(n).reshape(shape) < 0.5)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = max(info.min, -(2**31)), min(info.max, 2**31 - 1)
        wide = np.uint64 if dt == np.uint64 else np.int64
        if dt.itemsize == 8:  # the whole range, with its ends
            lo, hi = info.min, info.max
            vals = rng.integers(lo, hi, size=n, endpoint=True, dtype=wide)
            ends = np.array([lo, hi], dtype=wide)[rng.integers(0, 2, size=n)]
            vals = np.where(rng.random(n) < 0.05, ends, vals)
        else:
            vals = rng.integers(lo, hi, size=n, endpoint=True, dtype=np.int64)
        small = rng.integers(-8 if dt.kind == "i" else 0, 9, size=n).astype(wide)
        vals = np.where(rng.random(n) < 0.5, small, vals)
        return vals.astype(dt).reshape(shape)
    vals = rng.standard_normal(n) * np.where(rng.random(n) < 0.2, 100.0, 2.0)
    if special and n:
        specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5])
        mask = rng.random(n) < 0.15
        vals[mask] = rng.choice(specials, size=int(mask.sum()))
    return vals.astype(dt).reshape(shape)


VIEWS = {
    # name: (base shape, view function)
    "contig": ((3, 5), lambda a: a),
    "zero_d": ((), lambda a: a),
    "empty": ((0, 4), lambda a: a),
    "transposed": ((4, 6), lambda a: a.T),
    "stepped": ((7, 9), lambda a: a[1::2, ::3]),
    "negative": ((5, 6), lambda a: a[::-1, ::-2]),
    "offset": ((40,), lambda a: a[3:29]),
    "broadcast": ((5,), lambda a: np.broadcast_to(a, (3, 5))),
    "bcast_col": ((4, 1), lambda a: np.broadcast_to(a, (4, 3))),
    "three_d": ((2, 3, 4), lambda a: a.transpose(2, 0, 1)[:, ::-1]),
    "large": ((70001,), lambda a: a[::-1]),
    # Contiguous and long enough for the four-per-thread kernel of 32-bit dtypes, a partial
    # last vector included; then one element off the 16-byte grid (the one-per-thread kernel).
    "vec4": ((4103,), lambda a: a[4:4103]),
    "vec4_misaligned": ((4103,), lambda a: a[3:4101]),
}


def whole(ref: Ref, base: np.ndarray) -> Ref:
    """A Ref of the whole contiguous ``base`` in ``ref``'s buffer (to read what a write touched)."""
    strides = tuple(s // base.itemsize for s in base.strides)
    return Ref(ref.buffer, ref.dtype, base.shape, strides, 0, base.size, True)
