"""Helpers (imported by the tests) for testing the cpu backend's kernels directly against the reference.

A host NumPy array is uploaded once; any NumPy view of it (strided, flipped,
broadcast, offset) becomes a Ref with the same layout over the uploaded
buffer, so each kernel sees exactly the layout the reference sees.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import ndplane_cpu.backend as ndplane_cpu_backend
import numpy as np

import ndplane
from ndplane.backend import Ref

DTYPES = list(ndplane.ALL_DTYPES)
BY_NP = {d.dtype: d for d in DTYPES}
INTS = [d for d in DTYPES if d.kind in ("int", "uint")]
FLOATS = [ndplane.float16, ndplane.float32, ndplane.float64]
COMPLEX = [ndplane.complex64, ndplane.complex128]


@contextlib.contextmanager
def native_threads(n: int) -> Iterator[None]:
    """The cpu backend's thread count set to ``n`` inside the block, then put back."""
    native = ndplane_cpu_backend._native()
    before = native.num_threads()
    native.set_num_threads(n)
    try:
        yield
    finally:
        native.set_num_threads(before)


class Helper:
    def __init__(self) -> None:
        self.be = ndplane_cpu_backend.backend_class()(0)
        self.rng = np.random.default_rng(1234)
        self._live: list[Any] = []

    # -- moving data -----------------------------------------------------------
    def ref_of(self, view: np.ndarray, base: np.ndarray, buf: Any) -> Ref:
        size = base.dtype.itemsize
        offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
        strides = tuple(s // size for s in view.strides)
        return Ref(buf, BY_NP[view.dtype], view.shape, strides, offset // size, view.size,
                   view.flags.c_contiguous)  # fmt: skip

    def upload(self, base: np.ndarray) -> Any:
        buf = self.be.from_host(np.ascontiguousarray(base))
        self._live.append(buf)
        return buf

    def put(self, view: np.ndarray, base: np.ndarray | None = None) -> Ref:
        """A Ref with `view`'s layout; `base` (C-contiguous) is what gets uploaded."""
        if base is None:
            base = np.array(view, order="C")  # NOTE: ascontiguousarray makes 0-d arrays 1-d
            view = base
        assert base.flags.c_contiguous
        return self.ref_of(view, base, self.upload(base))

    def empty(self, shape: tuple[int, ...], dtype: Any) -> Ref:
        dtype = BY_NP[np.dtype(dtype)] if not isinstance(dtype, ndplane.DType) else dtype
        size = int(np.prod(shape))
        buf = self.be.alloc(size * dtype.itemsize)
        self._live.append(buf)
        strides = tuple(int(np.prod(shape[i + 1:])) for i in range(len(shape)))
        return Ref(buf, dtype, tuple(shape), strides, 0, size, True)

    def get(self, ref: Ref) -> np.ndarray:
        return np.array(self.be.to_host(ref))

    def free_all(self) -> None:
        for buf in self._live:
            self.be.free(buf)
        self._live.clear()

    # -- data ----------------------------------------------------------------------
    def data(self, shape: tuple[int, ...], dtype: Any, special: bool = True,
             small: bool = False) -> np.ndarray:  # fmt: skip
        dt = np.dtype(dtype.dtype if isinstance(dtype, ndplane.DType) else dtype)
        n = int(np.prod(shape))
        r = self.rng
        if dt.kind == "b":
            a = r.random(n) < 0.5
        elif dt.kind in "iu":
            info = np.iinfo(dt)
            lo, hi = (max(info.min, -8), min(info.max, 8)) if small else (info.min, info.max)
            a = r.integers(lo, hi, n, dtype=dt, endpoint=True)
        elif dt.kind == "f":
            a = (r.standard_normal(n) * 3).astype(dt)
            if special and n >= 8:
                idx = r.choice(n, size=min(n, 6), replace=False)
                a[idx] = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0])[: len(idx)]
        else:
            a = (r.standard_normal(n) + 1j * r.standard_normal(n)).astype(dt)
            if special and n >= 8:
                idx = r.choice(n, size=4, replace=False)
                a[idx] = np.array([complex(np.nan, 1), complex(np.inf, 0), 0j, complex(1, -np.inf)])
        return a.reshape(shape)

    def layouts(self, shape: tuple[int, ...], dtype: Any, **kw: Any):
        """(name, view, base) triples: the same logical shape in several layouts."""
        nd = len(shape)
        base = self.data(shape, dtype, **kw)
        yield "contiguous", base, base
        if nd >= 2:
            t = np.ascontiguousarray(self.data(shape[::-1], dtype, **kw))
            yield "transposed", t.T, t
        if nd >= 1:
            big = self.data(shape[:-1] + (2 * shape[-1] + 1,), dtype, **kw)
            yield "step2+offset", big[..., 1::2], big
            flipped = self.data(shape, dtype, **kw)
            yield "negative", flipped[tuple(slice(None, None, -1) for _ in shape)], flipped
            one = self.data((1,) + shape[1:], dtype, **kw)
            yield "broadcast0", np.broadcast_to(one, shape), one


def assert_close(got: np.ndarray, want: np.ndarray, what: str = "", ulps: float = 4,
                 scale: float = 1.0) -> None:  # fmt: skip
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    kind = want.dtype.kind
    if kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    if kind == "c":  # parts separately: NumPy calls inf+1j and inf+2j an inf mismatch
        assert_close(got.real, want.real, what + " (real)", ulps, scale)
        assert_close(got.imag, want.imag, what + " (imag)", ulps, scale)
        return
    eps = {2: 1e-3, 4: 1.2e-7, 8: 2.3e-16}[want.real.dtype.itemsize]
    np.testing.assert_allclose(got, want, rtol=eps * ulps, atol=eps * ulps * scale, equal_nan=True,
                               err_msg=what)  # fmt: skip


_HELD: list[ndplane.Array] = []


def held(a: ndplane.Array) -> Ref:
    """``a``'s Ref, with ``a`` kept alive to the end of the session: a Ref does not own its
    buffer, and the kernels refuse one whose last array died ("the Ref's buffer was freed")."""
    _HELD.append(a)
    return a._ref
