"""The cpu backend's FFT kernels: ducc0 (the maintained successor of pocketfft, the FFT of NumPy,
SciPy and PyTorch's CPU path) run on zero-copy NumPy views of the backend's own buffers.

Every length runs in O(n log n) (mixed radix 2..11 passes, Bluestein for large prime factors),
single precision stays single, and the work is spread over the backend's thread count.
docs/performance.md ("FFT") says why ducc0 through its Python API, not our own kernels or
ducc0's C++ compiled into ``_native``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np

from ndplane.backend import Ref

# op -> (ducc0.fft function, minus sign in the exponent, "backward" scales by 1/n).
# NOTE: hfft and ihfft are the c2r/r2c transforms with the other sign, as NumPy's
# hfft(x) = irfft(conj(x)) and ihfft(x) = conj(rfft(x)) (ducc0 conjugates, no extra pass).
_OPS = {
    "fft": ("c2c", True, False), "ifft": ("c2c", False, True),
    "rfft": ("r2c", True, False), "ihfft": ("r2c", False, True),
    "irfft": ("c2r", False, True), "hfft": ("c2r", True, False),
}  # fmt: skip
OPS = frozenset(_OPS)
# norm -> ducc0's inorm (0: none, 1: 1/sqrt(n), 2: 1/n) for a forward and an inverse op
_INORM = {"backward": (0, 2), "ortho": (1, 1), "forward": (2, 0)}
_PAIR: dict[np.dtype[Any], np.dtype[Any]] = {
    np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128),
}  # fmt: skip


def available() -> bool:
    """Whether ducc0 is installed (without importing it: the cpu backend starts faster)."""
    return importlib.util.find_spec("ducc0") is not None


def _view(ref: Ref) -> np.ndarray:
    dtype = ref.dtype.dtype
    size = dtype.itemsize
    return np.ndarray(ref.shape, dtype, buffer=ref.buffer, offset=ref.offset * size,
                      strides=tuple(s * size for s in ref.strides))  # fmt: skip


def _check(op: str, x: np.ndarray, out: np.ndarray) -> None:
    kind, _, _ = _OPS[op]
    name = f"fft.{op}"
    if x.ndim != 2 or out.ndim != 2 or not (x.flags.c_contiguous and out.flags.c_contiguous):
        raise ValueError(f"{name}: expected C-contiguous x (M, N) and out (M, K).")
    real = {v: k for k, v in _PAIR.items()}
    want: np.dtype[Any]
    if kind == "r2c":
        if x.dtype not in _PAIR:
            raise TypeError(f"{name}: x must be float32 or float64; got {x.dtype.name}.")
        want = _PAIR[x.dtype]
    else:
        if x.dtype not in real:
            raise TypeError(f"{name}: x must be complex64 or complex128; got {x.dtype.name}.")
        want = x.dtype if kind == "c2c" else real[x.dtype]
    if out.dtype != want:
        raise TypeError(f"{name}: out must be {want.name} for x of {x.dtype.name}; got {out.dtype.name}.")
    (m, n), (m2, k) = x.shape, out.shape
    fits = {"c2c": k == n, "r2c": k == n // 2 + 1, "c2r": n == k // 2 + 1}[kind]
    if m2 != m or not fits:
        raise ValueError(f"{name}: x ({m}, {n}) and out ({m2}, {k}) do not match the transform's shapes.")


def _scratch(out: np.ndarray) -> np.ndarray | None:
    """A padded stand-in for ``out`` where writing it directly would thrash the L1 cache."""
    # NOTE: ducc0 transforms a bunch of rows at once, 16 in single precision with AVX-512. When
    # out's rows lie a multiple of 4 KiB apart, element k of all 16 rows maps to one L1 set and
    # the writes evict each other: c2c of 1024 x 1024 complex64 took 4.9 ms on one thread, 3.0 ms
    # into rows padded by 16 elements (+0.6 ms for the copy back); c2r to float32 3.8 -> 1.2 ms
    # with the copy. Double precision (8 rows at once) measured no gain, so it writes directly.
    m, k = out.shape
    if m < 16 or out.strides[0] % 4096 or out.dtype not in (np.float32, np.complex64):
        return None
    return np.empty((m, k + 16), out.dtype)[:, :k]


def make_fft(num_threads: Callable[[], int]) -> Callable[[str, Ref, Ref, str], None]:
    """``Backend.fft`` on ducc0, with ``num_threads()`` threads (the backend's own count)."""
    ducc: Any = None

    def fft(op: str, x: Ref, out: Ref, norm: str) -> None:
        nonlocal ducc
        if op not in _OPS:
            raise ValueError(f"fft: unknown op {op!r}; expected one of {sorted(_OPS)}.")
        if norm not in _INORM:
            raise ValueError(f"fft: unknown norm {norm!r}; expected one of {list(_INORM)}.")
        a, o = _view(x), _view(out)
        _check(op, a, o)
        if a.size == 0 or o.size == 0:
            return
        if ducc is None:
            import ducc0.fft as ducc  # type: ignore[import-not-found]  # NOTE: on first use: 40 MB
        kind, forward, inverse = _OPS[op]
        inorm = _INORM[norm][inverse]
        dst = _scratch(o) if kind != "r2c" else None
        args = {"axes": (1,), "forward": forward, "inorm": inorm, "out": o if dst is None else dst,
                "nthreads": num_threads()}  # fmt: skip
        if kind == "c2r":
            # NOTE: never allow_overwriting_input: x may be the caller's array (compact()
            # hands a contiguous one over as it is).
            ducc.c2r(a, lastsize=o.shape[1], **args)
        else:
            getattr(ducc, kind)(a, **args)
        if dst is not None:
            np.copyto(o, dst)

    return fft
