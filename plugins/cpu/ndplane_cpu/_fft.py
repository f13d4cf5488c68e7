"""The cpu backend's FFT kernels: FFTW and ducc0, whichever runs a transform faster here.

Two well-kept libraries, both run on the backend's own buffers without copies:

- **FFTW** (3.3, the library inside the pyFFTW wheel, called through FFTW's own C API with
  ``ctypes``): plans made once per layout and run with the new-array execute functions, which
  hold no reference to the buffers. Each plan runs on one thread; a large batch is cut into one
  chunk of rows per thread of the backend's pool (``_native._call_chunks``). It wins at powers
  of two and in small batches.
- **ducc0** (pocketfft's maintained successor, the FFT of NumPy, SciPy and PyTorch's CPU path),
  through its Python API on NumPy views: it wins at large lengths that are not powers of two,
  and it scales in the same pass where FFTW needs a second one.

The first transform of a layout (op, norm, dtype, shape, alignment, threads) plans FFTW with
``FFTW_MEASURE`` and times both engines on scratch arrays of that layout; the faster one runs
every later transform of the layout (``Plans``). Small transforms take FFTW's ``FFTW_ESTIMATE``
plan without a measurement; very large ones take ducc0 (a measurement would need a second copy
of the data). With one library installed, that one runs everything; ``NDPLANE_CPU_FFT`` pins one.

``fft-axes`` (declared where ducc0 is installed): a transform along an inner axis, or over
several, comes as one call on the operand as it lies. The first such call on a layout times the
ways on the operands themselves: ducc0 over all the axes at once; one axis at a time as rows
on the planned engine (each axis moved last in a C-contiguous copy, the last step written
straight into ``out``, which the core lays out with that axis innermost); where the other axes
merge into one, each axis's transforms where they lie (FFTW's strided plans), and the same with
the columns' steps run a block of columns at a time through a scratch (``_ColumnRunner``); the
fastest runs every later call (``Plans.over_axes``). ``NDPLANE_CPU_FFT=fftw`` pins the strides
where the layout allows, else the rows; ``ducc0`` ducc0.
docs/performance.md ("FFT on the cpu backend") has the measurements behind each choice.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import itertools
import math
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import ndplane
from ndplane.backend import Ref

# op -> (kind, minus sign in the exponent, "backward" scales by 1/n).
# NOTE: hfft and ihfft are the c2r/r2c transforms with the other sign, as NumPy's
# hfft(x) = irfft(conj(x)) and ihfft(x) = conj(rfft(x)).
_OPS = {
    "fft": ("c2c", True, False), "ifft": ("c2c", False, True),
    "rfft": ("r2c", True, False), "ihfft": ("r2c", False, True),
    "irfft": ("c2r", False, True), "hfft": ("c2r", True, False),
}  # fmt: skip
OPS = frozenset(_OPS)
#: fft/ifft of a real signal (FFT_REAL_INPUT): the r2c op that gives the first n // 2 + 1 terms;
#: the rest are their conjugate mirror (out[k] = conj(out[n - k])).
_HALF = {"fft": "rfft", "ifft": "ihfft"}
# norm -> the scaling (0: none, 1: 1/sqrt(n), 2: 1/n; ducc0's inorm) of a forward and an inverse op
_INORM = {"backward": (0, 2), "ortho": (1, 1), "forward": (2, 0)}


def _factor(inorm: int, n: int) -> float:
    """The scale of ``inorm`` (ducc0's: 0 none, 1 ``1/sqrt(n)``, 2 ``1/n``) for length ``n``."""
    return (1.0, 1.0 / math.sqrt(n), 1.0 / n)[inorm]


_PAIR: dict[np.dtype[Any], np.dtype[Any]] = {
    np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128),
}  # fmt: skip
_REAL = {v: k for k, v in _PAIR.items()}
_ND = {d.dtype: d for d in (ndplane.float32, ndplane.float64, ndplane.complex64, ndplane.complex128)}

#: Below this many elements (rows x length) a transform takes FFTW's estimated plan, unmeasured:
#: there the call's fixed cost (a few us) outweighs any difference between plans.
SMALL = 1 << 14
#: Above this many bytes of input and output, ducc0 runs the transform unmeasured: measuring
#: would need scratch arrays as large as the operands (and FFTW_MEASURE several passes).
LARGE = 64 << 20
#: Bytes of each row a block of ``_ColumnRunner`` gathers: four cache lines (128 to 1024 measured
#: within 5 % of each other up to 256 x 256, 256 and 512 the best at 1024 x 1024).
BLOCK_BYTES = 256
#: Layouts kept (least recently used dropped first); a plan holds FFTW's twiddles, no buffers.
PLANS = 128
#: ``auto`` (the default), ``fftw`` or ``ducc0``: the engine of every layout planned after it is set
#: (one engine gives the same bits run after run and machine after machine).
ENGINE_VARIABLE = "NDPLANE_CPU_FFT"


def _ducc_available() -> bool:
    return importlib.util.find_spec("ducc0") is not None


@functools.cache
def _fftw_libraries() -> dict[str, Path]:
    """By precision ("f": single, "": double), FFTW's library inside pyFFTW's wheel (looked up
    once: available(), engines() and each precision's first load all ask)."""
    spec = importlib.util.find_spec("pyfftw")
    if spec is None or not spec.submodule_search_locations:
        return {}
    pkg = Path(next(iter(spec.submodule_search_locations)))
    found = {}
    # NOTE: auditwheel puts them beside the package as pyfftw.libs/libfftw3f-<hash>.so.3.x,
    # delocate (macOS) in pyfftw/.dylibs. Only FFTW itself: its threads (OpenMP) stay unloaded.
    for folder in (pkg.parent / "pyfftw.libs", pkg / ".dylibs"):
        for precision in ("f", ""):
            hits = sorted(folder.glob(f"libfftw3{precision}[-.]*")) if folder.is_dir() else []
            if hits and precision not in found:
                found[precision] = hits[0]
    return found


def available() -> bool:
    """Whether an FFT library is installed (without loading it: the cpu backend starts faster)."""
    return _ducc_available() or bool(_fftw_libraries())


def engines() -> list[str]:
    """The installed engines, for ``ndplane info cpu``."""
    return [name for name, ok in (("FFTW", bool(_fftw_libraries())), ("ducc0", _ducc_available())) if ok]


def _view(ref: Ref) -> np.ndarray:
    dtype = ref.dtype.dtype
    size = dtype.itemsize
    return np.ndarray(ref.shape, dtype, buffer=ref.buffer, offset=ref.offset * size,
                      strides=tuple(s * size for s in ref.strides))  # fmt: skip


def _address(ref: Ref) -> int:
    return ref.buffer.address + ref.offset * ref.dtype.dtype.itemsize


def _layout(x: Ref, out: Ref) -> tuple[Any, ...]:
    """What a plan depends on besides op, norm and threads: dtype, shapes, strides, 64-byte
    alignments."""
    return x.dtype, x.shape, x.strides, out.shape, out.strides, _address(x) % 64, _address(out) % 64


def _fits(kind: str, n_in: int, n_out: int) -> bool:
    """Whether lengths ``n_in`` -> ``n_out`` along the transformed axis fit a ``kind`` transform."""
    return {"c2c": n_out == n_in, "r2c": n_out == n_in // 2 + 1, "c2r": n_in == n_out // 2 + 1}[kind]


def _check(op: str, x: Ref, out: Ref) -> None:
    kind, _, _ = _OPS[op]
    name = f"fft.{op}"
    if len(x.shape) != 2 or len(out.shape) != 2 or not (x.contiguous and out.contiguous):
        raise ValueError(f"{name}: expected C-contiguous x (M, N) and out (M, K).")
    _check_dtypes(op, x, out)
    (m, n), (m2, k) = x.shape, out.shape
    if m2 != m or not _fits(kind, n, k):
        raise ValueError(f"{name}: x ({m}, {n}) and out ({m2}, {k}) do not match the transform's shapes.")


def _check_dtypes(op: str, x: Ref, out: Ref) -> None:
    kind, _, _ = _OPS[op]
    name = f"fft.{op}"
    dx, do = x.dtype.dtype, out.dtype.dtype
    want: np.dtype[Any]
    if kind == "r2c" or (op in _HALF and dx in _PAIR):  # fft/ifft of a real x: FFT_REAL_INPUT
        if dx not in _PAIR:
            raise TypeError(f"{name}: x must be float32 or float64; got {dx.name}.")
        want = _PAIR[dx]
    else:
        if dx not in _REAL:
            also = " (or float32 or float64)" if op in _HALF else ""
            raise TypeError(f"{name}: x must be complex64 or complex128{also}; got {dx.name}.")
        want = dx if kind == "c2c" else _REAL[dx]
    if do != want:
        raise TypeError(f"{name}: out must be {want.name} for x of {dx.name}; got {do.name}.")


# ---------------------------------------------------------------------------
# FFTW through its C API
# ---------------------------------------------------------------------------
_FORWARD, _BACKWARD = -1, 1  # fftw3.h
_MEASURE, _DESTROY_INPUT, _PRESERVE_INPUT, _ESTIMATE = 0, 1, 16, 64
_INT_MAX = (1 << 31) - 1


class _Fftw:
    """One precision of FFTW: ``prefix`` is ``fftwf`` (single) or ``fftw`` (double)."""

    def __init__(self, path: Path, prefix: str) -> None:
        lib = ctypes.CDLL(str(path))

        def fn(name: str, restype: Any, *argtypes: Any) -> Any:
            f = getattr(lib, f"{prefix}_{name}")
            f.restype, f.argtypes = restype, argtypes
            return f

        p, i, u = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint
        # (rank, n, howmany, in, inembed, istride, idist, out, onembed, ostride, odist[, sign], flags)
        many = (i, ctypes.POINTER(i), i, p, p, i, i, p, p, i, i)
        self.plans = {
            "c2c": fn("plan_many_dft", p, *many, i, u),
            "r2c": fn("plan_many_dft_r2c", p, *many, u),
            "c2r": fn("plan_many_dft_c2r", p, *many, u),
        }
        self.execute = {
            "c2c": fn("execute_dft", None, p, p, p),
            "r2c": fn("execute_dft_r2c", None, p, p, p),
            "c2r": fn("execute_dft_c2r", None, p, p, p),
        }
        #: the execute functions' addresses, for the backend's pool (_native._call_chunks)
        self.addresses = {kind: ctypes.cast(f, ctypes.c_void_p).value for kind, f in self.execute.items()}
        self._destroy = fn("destroy_plan", None, p)

    def plan(self, kind: str, sign: int, n: int, m: int, x: int, x_row: int, out: int, out_row: int,
             flags: int, out_step: int = 1, x_step: int = 1) -> int:  # fmt: skip
        """A plan of ``m`` transforms of length ``n`` from rows ``x_row`` elements apart at address
        ``x``, their elements ``x_step`` apart, into rows ``out_row`` apart at ``out``, their
        elements ``out_step`` apart (a "row" may be a column: ``x_row`` 1, ``x_step`` the row
        length); the addresses give the alignment (and their memory is overwritten unless
        ``FFTW_ESTIMATE``)."""
        length = (ctypes.c_int * 1)(n)
        args = (1, length, m, x, None, x_step, x_row, out, None, out_step, out_row)
        with _planner:  # NOTE: FFTW's planner (and destroy_plan) is not thread-safe
            plan = self.plans[kind](*args, sign, flags) if kind == "c2c" else self.plans[kind](*args, flags)
        if not plan:
            raise RuntimeError(f"fft: FFTW could not plan {m} {kind} transforms of length {n}.")
        return int(plan)

    def destroy(self, plan: int) -> None:
        with _planner:
            self._destroy(plan)


_fftw: dict[str, _Fftw | None] = {}
_planner = threading.Lock()


def _fftw_for(dtype: np.dtype[Any]) -> _Fftw | None:
    """FFTW in ``dtype``'s precision, loaded on first use; None where pyFFTW is not installed."""
    precision = "f" if dtype in (np.float32, np.complex64) else ""
    with _planner:
        if precision not in _fftw:
            path = _fftw_libraries().get(precision)
            _fftw[precision] = None if path is None else _Fftw(path, "fftwf" if precision else "fftw")
        return _fftw[precision]


# ---------------------------------------------------------------------------
# the two engines as runners: run(x, out) does the whole transform, scaling included
# ---------------------------------------------------------------------------
Runner = Callable[[Ref, Ref], None]


def _ducc_runner(op: str, inorm: int, threads: int, axes: tuple[int, ...] = (1,)) -> Runner:
    """ducc0 over ``axes``: the rows of (M, N) operands, or (``fft-axes``) any axes of strided
    operands of any rank, as they lie."""
    import ducc0.fft as ducc  # type: ignore[import-not-found]  # NOTE: on first use: 40 MB

    kind, forward, _ = _OPS[op]
    rows = axes == (1,)

    def run(x: Ref, out: Ref) -> None:
        a, o = _view(x), _view(out)
        dst = _scratch(o) if kind != "r2c" and rows and o.ndim == 2 else None
        args = {"axes": axes, "forward": forward, "inorm": inorm, "out": o if dst is None else dst,
                "nthreads": threads if rows or o.size >= SMALL else 1}  # fmt: skip
        if kind == "c2r":
            # NOTE: never allow_overwriting_input: x may be the caller's array (compact()
            # hands a contiguous one over as it is).
            ducc.c2r(a, lastsize=o.shape[axes[-1]], **args)
        else:
            getattr(ducc, kind)(a, **args)
        if dst is not None:
            np.copyto(o, dst)

    return run


def _scratch(out: np.ndarray) -> np.ndarray | None:
    """A padded stand-in for ``out`` where ducc0 writing it directly would thrash the L1 cache."""
    # NOTE: ducc0 transforms a bunch of rows at once, 16 in single precision with AVX-512. When
    # out's rows lie a multiple of 4 KiB apart, element k of all 16 rows maps to one L1 set and
    # the writes evict each other: c2c of 1024 x 1024 complex64 took 4.9 ms on one thread, 3.0 ms
    # into rows padded by 16 elements (+0.6 ms for the copy back); c2r to float32 3.8 -> 1.2 ms
    # with the copy. Double precision (8 rows at once) measured no gain, so it writes directly.
    m, k = out.shape
    if m < 16 or out.strides[0] % 4096 or out.dtype not in (np.float32, np.complex64):
        return None
    return np.empty((m, k + 16), out.dtype)[:, :k]


class _FftwRunner:
    """FFTW planned for the layout and alignment of ``x`` and ``out``, then run on any buffers
    of that layout and alignment; scaling (and hfft's/ihfft's conjugates) by the backend's own
    kernels.

    Each plan runs on one thread; a large batch is cut into one chunk of rows per thread of the
    backend's pool, each chunk a whole number of 64-byte steps long (so every chunk starts at the
    alignment its plan was made for), the last one with a plan of its own.
    """

    def __init__(self, op: str, inorm: int, n: int, x: Ref, out: Ref, threads: int, measure: bool,
                 native: Any) -> None:  # fmt: skip
        kind, forward, _ = _OPS[op]
        fftw = _fftw_for(x.dtype.dtype)
        assert fftw is not None
        self.fftw = fftw
        self.native = native
        # NOTE: FFTW's c2r and r2c have one sign each (+ and -): hfft conjugates its input into
        # a fresh buffer (64-byte aligned, as the backend allocates every buffer), ihfft its
        # output after.
        self.conj_in, self.conj_out = op == "hfft", op == "ihfft"
        flags = _MEASURE if measure else _ESTIMATE
        if kind == "c2r":
            flags |= _DESTROY_INPUT if self.conj_in else _PRESERVE_INPUT
        # NOTE: out may be the first n // 2 + 1 columns of a full-length out (fft of real input),
        # or columns of a C-contiguous array (fft-axes by rows: the last axis's transform written
        # in the operand's own order); with fft-axes by strides, x's and out's "rows" may be the
        # columns of C-contiguous arrays (row_step 1, their elements a row length apart)
        m = x.shape[0]
        (x_row, x_elem), (out_row, out_step) = x.strides, out.strides
        # NOTE: a size-1 axis's stride is arbitrary in a Ref (contiguous ignores it)
        x_row, x_elem = (x_row if m > 1 else x.shape[1]), (x_elem if x.shape[1] > 1 else 1)
        x_bytes, out_bytes = x_row * x.dtype.dtype.itemsize, out_row * out.dtype.dtype.itemsize
        step = max(64 // math.gcd(64, x_bytes), 64 // math.gcd(64, out_bytes))
        per = -(-m // threads) if threads > 1 and m * max(x.shape[1], out.shape[1]) >= SMALL else m
        rows = min(m, -(-per // step) * step)
        self.chunks = -(-m // rows)
        tail = m - (self.chunks - 1) * rows
        self.x_step, self.out_step = rows * x_bytes, rows * out_bytes
        src = self._fresh(x) if self.conj_in else None
        xa, oa = _address(x if src is None else src), _address(out)
        sign = _FORWARD if forward else _BACKWARD
        try:
            self.plan = fftw.plan(kind, sign, n, rows, xa, x_row, oa, out_row, flags, out_step, x_elem)
            self.tail = self.plan if tail == rows else fftw.plan(
                kind, sign, n, tail, xa + (self.chunks - 1) * self.x_step, x_row,
                oa + (self.chunks - 1) * self.out_step, out_row, flags, out_step, x_elem)  # fmt: skip
        finally:
            if src is not None:
                native.free(src.buffer)
        self.execute = fftw.execute[kind]
        self.address = fftw.addresses[kind]
        self.factor = _factor(inorm, n)
        self.width = 2 if out.dtype.dtype.kind == "c" else 1
        self.real = _ND[_REAL.get(out.dtype.dtype, out.dtype.dtype)]
        # NOTE: ihfft's rows of unit stride are conjugated and scaled in one pass (below)
        self.signed = self.conj_out and out.strides[-1] == 1

    def _fresh(self, x: Ref) -> Ref:
        buffer = self.native.alloc(x.size * x.dtype.dtype.itemsize)
        return Ref(buffer, x.dtype, x.shape, x.strides, 0, x.size, x.contiguous)

    def _run(self, xa: int, oa: int) -> None:
        if self.chunks == 1:
            self.execute(self.plan, xa, oa)
        else:
            self.native._call_chunks(self.address, self.plan, self.tail, xa, self.x_step, oa, self.out_step,
                                     self.chunks)  # fmt: skip

    def __call__(self, x: Ref, out: Ref) -> None:
        native = self.native
        if self.conj_in:
            src = self._fresh(x)
            try:
                native.unary("conj", x, src)
                self._run(_address(src), _address(out))
            finally:
                native.free(src.buffer)
        else:
            self._run(_address(x), _address(out))
        if self.signed:
            self._conj_scaled(out)
            return
        if self.conj_out:
            native.unary("conj", out, out)
        if self.factor != 1.0 and not out.contiguous:
            native.binary("multiply", out, self.factor, out)
        elif self.factor != 1.0:
            # NOTE: the backend's own threaded multiply, over out as real numbers
            size = out.size * self.width
            flat = Ref(out.buffer, self.real, (size,), (1,), out.offset * self.width, size, True)
            native.binary("multiply", flat, self.factor, flat)

    def _conj_scaled(self, out: Ref) -> None:
        """``out = conj(out) * factor`` in one pass: each row as reals, (re * factor, im *
        -factor), times a row of (factor, -factor) pairs made for the call (a broadcast
        operand of inner length 2 ran 7x slower than a multiply by a scalar)."""
        native, real = self.native, self.real
        (m, k), (step, _) = out.shape, out.strides
        pairs = Ref.over(native.alloc(2 * k * real.dtype.itemsize), real, (k, 2))
        try:
            native.fill(pairs, -self.factor)
            native.fill(Ref(pairs.buffer, real, (k,), (2,), 0, k, False), self.factor)
            rows = Ref(out.buffer, real, (m, 2 * k), (2 * step, 1), 2 * out.offset, 2 * m * k, out.contiguous)
            native.binary("multiply", rows, Ref(pairs.buffer, real, (m, 2 * k), (0, 1), 0, 2 * m * k, False), rows)
        finally:
            native.free(pairs.buffer)

    def __del__(self) -> None:
        # NOTE: the plans die with the runner, never when the cache drops it: a thread that took
        # the runner from the cache holds it until its transform has run.
        try:
            if getattr(self, "tail", None) not in (None, getattr(self, "plan", None)):
                self.fftw.destroy(self.tail)
            if getattr(self, "plan", None) is not None:
                self.fftw.destroy(self.plan)
        except Exception:  # noqa: BLE001 - at interpreter exit ctypes may be gone
            pass


class _ColumnRunner:
    """c2c transforms down adjacent columns, a block of columns at a time through a scratch
    (``_native._call_columns``), scaling included: FFTW planned on the columns as they lie reads
    elements a row apart, at power-of-two row lengths all in one cache set.

    ``x`` and ``out`` are (cols, n) "rows" whose rows are adjacent columns (strides (1, row)).
    Each block is ``BLOCK_BYTES`` of every row of x, gathered as rows of a scratch ``dist``
    elements apart (64-byte multiples, padded off multiples of 512 bytes), planned in place once
    on a scratch of that layout; the last, narrower block has a plan of its own.
    """

    def __init__(self, op: str, inorm: int, x: Ref, out: Ref, measure: bool, native: Any) -> None:
        kind, forward, _ = _OPS[op]
        assert kind == "c2c" and x.strides[0] == 1 and out.strides[0] == 1
        fftw = _fftw_for(x.dtype.dtype)
        assert fftw is not None
        self.fftw, self.native = fftw, native
        cols, n = x.shape
        self.itemsize = size = x.dtype.dtype.itemsize
        self.block = min(cols, BLOCK_BYTES // size)
        step = 64 // size
        self.dist = -(-n // step) * step
        if self.dist * size % 512 == 0:
            self.dist += step
        sign = _FORWARD if forward else _BACKWARD
        flags = _MEASURE if measure else _ESTIMATE
        scratch = native.alloc(self.block * self.dist * size)
        try:
            at, rest, dist = scratch.address, cols % self.block, self.dist
            self.plan = fftw.plan(kind, sign, n, self.block, at, dist, at, dist, flags)
            self.tail = self.plan if rest == 0 else fftw.plan(kind, sign, n, rest, at, dist, at, dist, flags)
        finally:
            native.free(scratch)
        self.address = fftw.addresses[kind]
        self.factor = _factor(inorm, n)

    def __call__(self, x: Ref, out: Ref) -> None:
        (cols, n), size = x.shape, self.itemsize
        self.native._call_columns(self.address, self.plan, self.tail, _address(x), x.strides[1] * size,
                                  _address(out), out.strides[1] * size, n, cols, self.block, self.dist, size,
                                  self.factor)  # fmt: skip

    __del__ = _FftwRunner.__del__


def _columns(op: str, x: Ref, out: Ref) -> bool:
    """Whether a 1-D step ``op`` from rows ``x`` into rows ``out`` is c2c down adjacent columns
    (what ``_ColumnRunner`` runs)."""
    return _OPS[op][0] == "c2c" and x.strides[0] == 1 == out.strides[0] and x.shape[0] > 1 and x.shape[1] > 1


def _halves(out: Ref) -> tuple[Ref, Ref, Ref]:
    """For an (M, N) ``out`` of fft of a real signal: its first h = N // 2 + 1 columns (the r2c
    op's), columns N - h .. 1 reversed (the mirror) and columns h .. N - 1 (their conjugates)."""
    (m, n), b, dt, at = out.shape, out.buffer, out.dtype, out.offset
    h = n // 2 + 1
    return (Ref(b, dt, (m, h), (n, 1), at, m * h, m == 1 or h == n),
            Ref(b, dt, (m, n - h), (n, -1), at + n - h, m * (n - h), False),
            Ref(b, dt, (m, n - h), (n, 1), at + h, m * (n - h), m == 1))  # fmt: skip


def _forced_engine() -> str:
    """``NDPLANE_CPU_FFT``: ``auto`` (unset or empty), ``fftw`` or ``ducc0``."""
    forced = os.environ.get(ENGINE_VARIABLE, "auto").strip().lower() or "auto"
    if forced not in ("auto", "fftw", "ducc0"):
        raise ValueError(f"fft: {ENGINE_VARIABLE} must be auto, fftw or ducc0; got {forced!r}.")
    return forced


def _fastest(candidates: dict[str, Runner], x: Ref, out: Ref, rounds: int = 3) -> str:
    """The name of the runner that took the least time, best of ``rounds``, on ``x`` and ``out``."""
    best = dict.fromkeys(candidates, math.inf)
    for _ in range(rounds):
        for name, run in candidates.items():
            start = time.perf_counter()
            run(x, out)
            best[name] = min(best[name], time.perf_counter() - start)
    return min(best, key=best.__getitem__)


# ---------------------------------------------------------------------------
# the plan cache: one engine per layout, chosen once
# ---------------------------------------------------------------------------
class Plans:
    """Per layout, the engine that runs it, least recently used dropped past ``PLANS``."""

    def __init__(self, native: Any) -> None:
        self.native = native
        self.lock = threading.Lock()
        self.runners: OrderedDict[tuple[Any, ...], tuple[str, Runner]] = OrderedDict()

    def get(self, op: str, inorm: int, x: Ref, out: Ref, threads: int) -> Runner:
        key = (op, inorm, _layout(x, out), threads)
        with self.lock:
            hit = self._hit(key)
            if hit is None:
                hit = self._keep(key, self._choose(op, inorm, x, out, threads))
            return hit

    def _hit(self, key: tuple[Any, ...]) -> Runner | None:
        """The cached runner of ``key`` (now the most recently used), or None; under the lock."""
        hit = self.runners.get(key)
        if hit is None:
            return None
        self.runners.move_to_end(key)
        return hit[1]

    def _keep(self, key: tuple[Any, ...], chosen: tuple[str, Runner]) -> Runner:
        """Cache ``chosen`` for ``key``, dropping the least recently used past ``PLANS``; under the lock."""
        self.runners[key] = chosen
        while len(self.runners) > PLANS:
            self.runners.popitem(last=False)
        return chosen[1]

    def over_axes(self, op: str, norm: str, x: Ref, out: Ref, axes: tuple[int, ...], threads: int) -> Runner:
        """``fft-axes`` on a layout that is not rows: ducc0 over the axes as the operands lie,
        one axis at a time as rows (``_by_rows``), or, where the layout allows, one axis at a
        time in place without copies (``_by_strides``; ``blocks``: its column steps through a
        scratch, with FFTW): the fastest measured on the operands themselves (x is only read,
        out only written), once per layout; above ``LARGE`` bytes
        ducc0, unmeasured. ``NDPLANE_CPU_FFT`` pins the way: ``fftw``'s is by strides where the
        layout allows, else by rows."""
        key = ("axes", op, norm, axes, x.dtype, x.shape, x.strides, out.shape, out.strides, _address(x) % 64,
               threads)  # fmt: skip
        with self.lock:
            hit = self._hit(key)
        if hit is not None:
            return hit
        forced = _forced_engine()
        candidates = {"ducc0": _ducc_runner(op, _INORM[norm][_OPS[op][2]], threads, axes),
                      "rows": _by_rows(self, op, norm, axes, threads)}  # fmt: skip
        if (steps := _strided_steps(op, x, out, axes)) is not None:
            candidates["strides"] = _by_strides(self, op, norm, steps, threads)
            if _fftw_for(x.dtype.dtype) is not None and any(_columns(s, a, o) for s, _, a, o in steps):
                candidates["blocks"] = _by_strides(self, op, norm, steps, threads, blocks=True)
        nbytes = x.size * x.dtype.dtype.itemsize + out.size * out.dtype.dtype.itemsize
        if forced in ("fftw", "ducc0"):
            name = "ducc0" if forced == "ducc0" else "strides" if "strides" in candidates else "rows"
        elif nbytes > LARGE:
            name = "ducc0"
        else:
            for run in candidates.values():  # NOTE: untimed: FFTW plans, ducc0 builds its twiddles
                run(x, out)
            name = _fastest(candidates, x, out, rounds=5)
        with self.lock:  # NOTE: measured outside it: the rows way plans through get()
            return self._keep(key, (name, candidates[name]))

    def columns(self, op: str, inorm: int, x: Ref, out: Ref) -> Runner:
        """The ``_ColumnRunner`` of ``op`` on this layout (``_columns``), planned once."""
        key = ("columns", op, inorm, x.dtype, x.shape, x.strides, out.strides)
        with self.lock:
            hit = self._hit(key)
            if hit is None:
                run = _ColumnRunner(op, inorm, x, out, x.size >= SMALL, self.native)
                hit = self._keep(key, ("fftw", run))
            return hit

    def fresh(self, dtype: Any, shape: tuple[int, ...]) -> Ref:
        """A C-contiguous Ref of ``shape`` over a new block of the backend's (cached) memory."""
        buffer = self.native.alloc(max(1, math.prod(shape)) * dtype.dtype.itemsize)
        return Ref.over(buffer, dtype, shape)

    def engine(self, op: str, x: Ref, out: Ref) -> str | None:
        """The engine chosen for ``op`` on this layout (any norm and thread count), if any yet."""
        where = _layout(x, out)
        hits = [name for key, (name, _) in self.runners.items() if key[0] == op and key[2] == where]
        return hits[-1] if hits else None

    def _choose(self, op: str, inorm: int, x: Ref, out: Ref, threads: int, inplace: bool = False) -> tuple[str, Runner]:
        if op in _HALF and x.dtype.dtype in _PAIR:
            return self._choose_real(op, inorm, x, out, threads)
        kind = _OPS[op][0]
        m, k = out.shape
        n = k if kind == "c2r" else x.shape[1]
        elements = m * max(x.shape[1], k)
        nbytes = x.size * x.dtype.dtype.itemsize + out.size * out.dtype.dtype.itemsize
        # NOTE: FFTW's plan_many counts in int
        has = {"fftw": 2 * elements <= _INT_MAX and _fftw_for(x.dtype.dtype) is not None,
               "ducc0": _ducc_available()}  # fmt: skip
        forced = _forced_engine()
        if forced != "auto" and not has[forced]:
            why = "is not installed" if forced == "ducc0" or _fftw_for(x.dtype.dtype) is None else \
                "counts elements in int and this transform has too many"
            raise ValueError(f"fft: {ENGINE_VARIABLE}={forced}, but {forced} {why}; install "
                             f"'ndplane-cpu[fft]' or set {ENGINE_VARIABLE}=auto.")  # fmt: skip
        engines = [forced] if forced != "auto" else [e for e in has if has[e]]
        if engines == ["ducc0"] or (engines == ["fftw", "ducc0"] and nbytes > LARGE):
            return "ducc0", _ducc_runner(op, inorm, threads)
        native = self.native
        if elements < SMALL or nbytes > LARGE:
            # NOTE: FFTW_ESTIMATE reads and writes no data: it plans on the operands themselves
            return "fftw", _FftwRunner(op, inorm, n, x, out, threads, False, native)
        # FFTW_MEASURE on scratch arrays of the operands' layout and alignment (one array where
        # the transform runs in place: FFTW plans in place or not), then both timed
        tx = self._scratch(x)
        to = tx if inplace else self._scratch(out)
        fftw_run = _FftwRunner(op, inorm, n, tx, to, threads, True, native)
        if engines == ["fftw"]:
            return "fftw", fftw_run
        a = _view(tx)
        a[...] = np.random.default_rng(0).standard_normal(a.shape).astype(a.dtype)
        candidates: dict[str, Runner] = {"fftw": fftw_run, "ducc0": _ducc_runner(op, inorm, threads)}
        name = _fastest(candidates, tx, to)
        return name, candidates[name]

    def _choose_real(self, op: str, inorm: int, x: Ref, out: Ref, threads: int) -> tuple[str, Runner]:
        """fft/ifft of a real signal (FFT_REAL_INPUT), the faster of two ways on this layout:

        - ``mirror``: the r2c op (rfft for fft, ihfft for ifft: the same signs and scaling) into
          out's first h = n // 2 + 1 columns, then the conjugate mirror of columns n - h .. 1 into
          columns h .. n - 1 (the backend's threaded conj on a reversed view): half the transform
          and no complex copy of x; it wins on long rows (1000 x 1000 float32: 0.65x the cast's time);
        - ``cast``: x cast into out, then the c2c op in place on out: FFTW's r2c of short rows is
          slower than its c2c (1000 rows of 64: 70 us against 49), and then the cast wins.

        Timed on the operands themselves (x is only read, out only written) after each way's own
        engine is chosen; above ``LARGE`` bytes the mirror runs unmeasured.
        """
        native = self.native
        half_engine, half_run = self._choose(_HALF[op], inorm, x, _halves(out)[0], threads)

        def by_mirror(x: Ref, out: Ref) -> None:
            half, mirror, rest = _halves(out)
            half_run(x, half)
            if rest.size:
                native.unary("conj", mirror, rest)

        if x.size * x.dtype.dtype.itemsize + out.size * out.dtype.dtype.itemsize > LARGE:
            return f"mirror:{half_engine}", by_mirror
        full_engine, full_run = self._choose(op, inorm, out, out, threads, inplace=True)

        def by_cast(x: Ref, out: Ref) -> None:
            native.cast(x, out)
            full_run(out, out)

        candidates: dict[str, Runner] = {f"mirror:{half_engine}": by_mirror, f"cast:{full_engine}": by_cast}
        name = _fastest(candidates, x, out)
        return name, candidates[name]

    def _scratch(self, like: Ref) -> Ref:
        """A Ref of ``like``'s layout and dtype over fresh host memory at the same 64-byte residue."""
        dtype = like.dtype.dtype
        span = (sum((n - 1) * st for n, st in zip(like.shape, like.strides)) + 1) * dtype.itemsize  # positive strides
        raw = np.empty(span + 128, np.uint8)
        start = (-raw.ctypes.data) % 64 + _address(like) % 64
        buffer = self.native.adopt_host(raw[start : start + span])
        return Ref(buffer, like.dtype, like.shape, like.strides, 0, like.size, like.contiguous)


def _rows(ref: Ref) -> Ref:
    """A C-contiguous Ref of any rank as its (M, N) rows."""
    n = ref.shape[-1]  # NOTE: callers pass non-empty Refs of rank >= 1
    return Ref(ref.buffer, ref.dtype, (ref.size // n, n), (n, 1), ref.offset, ref.size, True)


def _check_axes(op: str, x: Ref, out: Ref, axes: tuple[int, ...]) -> None:
    """``fft-axes``: distinct axes of equal-rank operands, shapes equal but on the last axis."""
    name = f"fft.{op}"
    nd_ = len(x.shape)
    if len(out.shape) != nd_ or not axes or len(set(axes)) != len(axes) or not all(0 <= a < nd_ for a in axes):
        raise ValueError(f"{name}: expected distinct axes of x and out, both {nd_}-D; got axes {axes} "
                         f"for x {x.shape} and out {out.shape}.")  # fmt: skip
    if len(axes) > 1 and op in ("hfft", "ihfft"):
        raise ValueError(f"{name}: transforms over one axis only; got axes {axes}.")
    last = axes[-1]
    kind = _OPS[op][0]
    for a, (nx, no) in enumerate(zip(x.shape, out.shape)):
        if not (_fits(kind, nx, no) if a == last else nx == no):
            raise ValueError(f"{name}: x {x.shape} and out {out.shape} do not match the transform's shapes "
                             f"over axes {axes}.")  # fmt: skip
    _check_dtypes(op, x, out)


def _steps(op: str, axes: tuple[int, ...]) -> list[tuple[str, int]]:
    """``op`` over ``axes`` as 1-D transforms, in the core's order (its out has the last step's
    axis innermost): rfftn's r2c over the last axis first, irfftn's c2r over it last."""
    last, rest = axes[-1], axes[:-1]
    if op == "rfft":
        return [("rfft", last)] + [("fft", a) for a in rest]
    if op == "irfft":
        return [("ifft", a) for a in rest] + [("irfft", last)]
    return [(op, a) for a in axes]


def _merged(ref: Ref) -> Ref | None:
    """``ref`` (..., N) as (M, N) rows where its leading axes merge into one, with positive
    strides; else None."""
    *lead, n = ref.shape
    *lead_strides, step = ref.strides
    dims = [(size, st) for size, st in zip(lead, lead_strides) if size != 1]
    if any(st_out != st_in * size_in for (_, st_out), (size_in, st_in) in itertools.pairwise(dims)):
        return None
    stride = dims[-1][1] if dims else n * step
    if stride <= 0 or step <= 0:
        return None
    m = math.prod(size for size, _ in dims)
    return Ref(ref.buffer, ref.dtype, (m, n), (stride, step), ref.offset, ref.size, step == 1 and stride == n)


def _by_rows(plans: Plans, op: str, norm: str, axes: tuple[int, ...], threads: int) -> Runner:
    """``op`` over ``axes`` one axis at a time, each moved last in a C-contiguous copy (the
    backend's threaded copy) and run as rows on the planned engine: what the core did before
    ``fft-axes``. The last step writes into ``out`` where its rows are out's (the core's layout);
    elsewhere into a fresh array copied into ``out`` after."""
    native = plans.native

    def run(x: Ref, out: Ref) -> None:
        ndim = len(x.shape)
        steps = _steps(op, axes)
        cur = x
        for i, (step, a) in enumerate(steps):
            order = tuple(j for j in range(ndim) if j != a) + (a,)
            src = cur.permuted(order)
            if not src.contiguous:
                moved = plans.fresh(src.dtype, src.shape)
                native.copy(src, moved)
                src = moved
            final = i == len(steps) - 1
            kind = _OPS[step][0]
            k = out.shape[a] if kind != "c2c" or final else src.shape[-1]
            dtype = out.dtype if final else _ND[_PAIR.get(src.dtype.dtype, src.dtype.dtype)]
            rows_in = _rows(src)
            # NOTE: the last step writes into out directly where out's other axes merge into one:
            # the core's out has this axis innermost, so these are its rows (FFTW writes strided
            # ones too; a real signal's fft, FFT_REAL_INPUT's mirror, takes unit-stride rows only)
            rows_out = _merged(out.permuted(order)) if final else None
            if rows_out is not None and not rows_out.contiguous and step in _HALF and src.dtype.dtype in _PAIR:
                rows_out = None
            dst = out
            if rows_out is None:
                dst = plans.fresh(dtype, src.shape[:-1] + (k,))
                rows_out = _rows(dst)
            plans.get(step, _INORM[norm][_OPS[step][2]], rows_in, rows_out, threads)(rows_in, rows_out)
            cur = out if dst is out else dst.permuted(tuple(order.index(j) for j in range(ndim)))
        if cur is not out:
            native.copy(cur, out)

    return run


def _strided_steps(op: str, x: Ref, out: Ref, axes: tuple[int, ...]) -> list[tuple[str, int, Ref, Ref]] | None:
    """``op`` over ``axes`` of a C-contiguous ``x`` as 1-D transforms that each read and write
    their operands where they lie, as (M, N) "rows" whose M axis merges every other axis (the
    columns of a C-contiguous array are rows of stride N, 1 apart): (step, axis, rows in, rows
    out) over ``x``, fresh C-contiguous intermediates (their buffers still None) and ``out``;
    None where a step's other axes do not merge into one (the middle axis of a 3-D array) or
    the fft of a real signal would need strided rows (its mirror writes unit-stride rows)."""
    if not x.contiguous:
        return None
    steps, cur, ndim = [], x, len(x.shape)
    plan = _steps(op, axes)
    for i, (step, a) in enumerate(plan):
        order = tuple(j for j in range(ndim) if j != a) + (a,)
        final = i == len(plan) - 1
        kind = _OPS[step][0]
        if final:
            dst = out
        else:
            k = out.shape[a] if kind == "c2r" else cur.shape[a] // 2 + 1 if kind == "r2c" else cur.shape[a]
            dtype = _ND[_PAIR.get(cur.dtype.dtype, cur.dtype.dtype)]
            dst = Ref.over(None, dtype, cur.shape[:a] + (k,) + cur.shape[a + 1 :])
        rows_in, rows_out = _merged(cur.permuted(order)), _merged(dst.permuted(order))
        if rows_in is None or rows_out is None:
            return None
        if step in _HALF and cur.dtype.dtype in _PAIR and not (rows_in.contiguous and rows_out.contiguous):
            return None
        steps.append((step, a, rows_in, rows_out))
        cur = dst
    return steps


def _by_strides(plans: Plans, op: str, norm: str, steps: list[tuple[str, int, Ref, Ref]], threads: int,
                blocks: bool = False) -> Runner:  # fmt: skip
    """``op`` as the 1-D transforms of ``_strided_steps``, each on the planned engine (FFTW plans
    strided rows as well as contiguous ones) straight from one operand into the next: no
    transposing copy, where ``_by_rows`` moves each axis last in a copy first. A 2-D ``fftn``
    is one pass over the rows and one over the columns. With ``blocks``, c2c steps down columns
    run a block of columns at a time through a scratch (``_ColumnRunner``)."""

    def on(ref: Ref, layout: Ref) -> Ref:
        return Ref(ref.buffer, layout.dtype, layout.shape, layout.strides, ref.offset, layout.size, layout.contiguous)

    def run(x: Ref, out: Ref) -> None:
        src, fresh = x, []
        try:
            for i, (step, _, rows_in, rows_out) in enumerate(steps):
                final = i == len(steps) - 1
                if final:
                    dst = out
                else:
                    dst = plans.fresh(rows_out.dtype, (rows_out.size,))
                    fresh.append(dst)
                a, o = on(src, rows_in), on(dst, rows_out)
                inorm = _INORM[norm][_OPS[step][2]]
                if blocks and _columns(step, a, o):
                    plans.columns(step, inorm, a, o)(a, o)
                else:
                    plans.get(step, inorm, a, o, threads)(a, o)
                src = dst
        finally:
            for ref in fresh:
                plans.native.free(ref.buffer)

    return run


def make_fft(num_threads: Callable[[], int], native: Any) -> tuple[Callable[..., None], Plans]:
    """``Backend.fft`` with ``num_threads()`` threads (the backend's own count, read at every
    call), and its plan cache. With ``axes`` (``fft-axes``, declared where ducc0 is installed):
    a transform over the last axis of C-contiguous operands runs as their (M, N) rows on the
    planned engine; any other layout or set of axes the faster measured of ducc0 as it lies and
    one axis at a time by rows (``Plans.over_axes``)."""
    plans = Plans(native)

    def fft(op: str, x: Ref, out: Ref, norm: str, axes: tuple[int, ...] | None = None) -> None:
        if op not in _OPS:
            raise ValueError(f"fft: unknown op {op!r}; expected one of {sorted(_OPS)}.")
        if norm not in _INORM:
            raise ValueError(f"fft: unknown norm {norm!r}; expected one of {list(_INORM)}.")
        if axes is not None:
            _check_axes(op, x, out, axes)
            if x.size == 0 or out.size == 0:
                return
            if axes != (len(x.shape) - 1,) or not (x.contiguous and out.contiguous):
                plans.over_axes(op, norm, x, out, axes, num_threads())(x, out)
                return
            x, out = _rows(x), _rows(out)
        _check(op, x, out)
        if x.size == 0 or out.size == 0:
            return
        plans.get(op, _INORM[norm][_OPS[op][2]], x, out, num_threads())(x, out)

    return fft, plans
