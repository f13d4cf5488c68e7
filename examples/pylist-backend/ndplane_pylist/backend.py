"""The pylist backend: ndplane's protocol in pure Python over the standard library.

Buffers are ``bytearray`` objects; kernels read and write them through typed
``memoryview`` casts and the ``array`` module.  NumPy appears only where the
protocol hands over or asks for an ``ndarray`` (``from_host``, ``to_host``), and
only to convert bytes.

What it shows (see docs/backend-authors.md, which walks through this file):

- the required memory primitives, with ``copy``, ``fill`` and ``to_host``
  walking any strides (zero, negative, with an offset);
- native kernels for a few ops on bool/int64/float64, and ``supports()`` for
  per-dtype gaps (``matmul`` on bool takes the host fallback);
- no ``strided`` capability: the core compacts every operand of a compute
  kernel first, so those kernels only ever see C-contiguous Refs.
"""

from __future__ import annotations

import math
import operator
import os
from array import array
from collections.abc import Callable
from itertools import repeat
from typing import Any

import numpy as np

import ndplane
from ndplane.backend import HOST_RESIDENT, Backend, BackendSpec, Ref, hookimpl

__all__ = ["PylistBackend", "ndplane_register_backends"]
__version__ = "0.1.0"

BOOL, INT64, FLOAT64 = ndplane.bool, ndplane.int64, ndplane.float64
_FORMAT = {BOOL: "?", INT64: "q", FLOAT64: "d"}  # memoryview/array format of each dtype
_INT64_MIN, _INT64_SPAN = -(1 << 63), 1 << 64
_ALL = frozenset(_FORMAT)
_NUMBERS = frozenset({INT64, FLOAT64})

# ---------------------------------------------------------------------------
# reading and writing Refs
# ---------------------------------------------------------------------------


def _typed(ref: Ref) -> memoryview:
    return memoryview(ref.buffer).cast(_FORMAT[ref.dtype])


def _positions(ref: Ref) -> range | list[int]:
    """Element positions of ``ref`` in C order; strides may be 0 or negative."""
    if ref.contiguous:
        return range(ref.offset, ref.offset + ref.size)
    pos = [ref.offset]
    for n, s in zip(ref.shape, ref.strides):
        pos = [p + i * s for p in pos for i in range(n)]
    return pos


def _read(ref: Ref) -> list[Any]:
    """The values of ``ref`` (any layout) as a flat list of Python scalars."""
    view = _typed(ref)
    if ref.contiguous:
        return view[ref.offset : ref.offset + ref.size].tolist()
    return [view[p] for p in _positions(ref)]


def _wrap(v: int) -> int:
    return (v - _INT64_MIN) % _INT64_SPAN + _INT64_MIN


def _pack(dtype: Any, values: list[Any]) -> bytes:
    """Python scalars of ``dtype``'s kind as packed machine values."""
    if dtype is BOOL:
        return bytes(map(bool, values))
    if dtype is FLOAT64:
        return array("d", values).tobytes()
    try:
        return array("q", values).tobytes()
    except OverflowError:
        # NOTE: Python ints never overflow; int64 results wrap around as in NumPy and C.
        return array("q", map(_wrap, values)).tobytes()


def _write(ref: Ref, values: list[Any]) -> None:
    """Store ``values`` (C order) into ``ref`` (any layout)."""
    if ref.contiguous:
        start = ref.offset * ref.dtype.itemsize
        data = _pack(ref.dtype, values)
        ref.buffer[start : start + len(data)] = data
        return
    view = _typed(ref)
    for p, v in zip(_positions(ref), values):
        view[p] = v


# ---------------------------------------------------------------------------
# scalar kernels: one Python function per op, applied elementwise
# ---------------------------------------------------------------------------


def _exp(v: float) -> float:
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


def _divide(a: float, b: float) -> float:
    try:
        return a / b
    except ZeroDivisionError:  # NOTE: IEEE 754, not Python: x / 0.0 is +-inf or nan
        if a != a or a == 0:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _to_int(v: Any) -> int:
    # NOTE: NumPy's float -> int64 cast gives INT64_MIN for nan, inf and out-of-range values (x86).
    if type(v) is float and not -9223372036854775808.0 <= v < 9223372036854775808.0:
        return _INT64_MIN
    return int(v)


def _extreme(pick: Callable[[list[Any]], Any]) -> Callable[[list[Any]], Any]:
    def reduce_row(row: list[Any]) -> Any:
        for v in row:
            if v != v:  # NaN propagates
                return v
        return pick(row)

    return reduce_row


_UNARY: dict[str, Callable[[Any], Any]] = {"negative": operator.neg, "exp": _exp}
_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul, "divide": _divide,
    "equal": operator.eq, "less": operator.lt,
}  # fmt: skip
_CONVERT: dict[Any, Callable[[Any], Any]] = {BOOL: bool, INT64: _to_int, FLOAT64: float}
_REDUCE: dict[str, Callable[[list[Any]], Any]] = {
    "sum": sum, "prod": math.prod, "max": _extreme(max), "min": _extreme(min), "any": any, "all": all,
}  # fmt: skip

# Which dtypes each native op accepts (the input dtype the core dispatches on).
_NATIVE: dict[str, frozenset[Any]] = {
    "negative": _NUMBERS, "exp": frozenset({FLOAT64}), "add": _NUMBERS, "subtract": _NUMBERS,
    "multiply": _NUMBERS, "divide": frozenset({FLOAT64}), "equal": _ALL, "less": _NUMBERS,
    "where": _ALL, "cast": _ALL, "matmul": _NUMBERS,
    **{op: _ALL for op in _REDUCE},
}  # fmt: skip


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 1 << 62


# ---------------------------------------------------------------------------
# the backend
# ---------------------------------------------------------------------------


class PylistBackend(Backend):
    """Pure-Python backend: bytearray buffers, bool/int64/float64, contiguous kernels."""

    name = "pylist"
    protocol_version = 1  # the protocol this file implements; never the installed core's default
    dtypes = _ALL
    # NOTE: no "complex floating" key: a default dtype must be a supported dtype.
    default_dtypes = {"real floating": FLOAT64, "integral": INT64, "indexing": INT64}  # noqa: RUF012
    capabilities = frozenset({HOST_RESIDENT})  # no "strided": compute kernels get contiguous refs
    ops = frozenset(_NATIVE)

    def __init__(self, index: int = 0) -> None:
        self.index = index
        self._buffers = 0
        self._bytes = 0
        self._limit = _physical_memory()

    def __repr__(self) -> str:
        return f"<PylistBackend pylist:{self.index}>"

    def supports(self, op: str, dtype: Any) -> bool:
        return dtype in _NATIVE.get(op, ())

    # -- memory ----------------------------------------------------------------

    def memory_stats(self) -> dict[str, int]:
        return {"buffers": self._buffers, "bytes": self._bytes}

    def alloc(self, nbytes: int) -> bytearray:
        try:
            # NOTE: bytearray zero-fills (touches every page), so refuse what cannot fit first.
            if nbytes > self._limit:
                raise MemoryError
            buf = bytearray(nbytes)
        except (MemoryError, OverflowError):
            raise ndplane.OutOfMemoryError(
                f"pylist:{self.index}: out of memory allocating {nbytes} bytes "
                f"({self._bytes} bytes in {self._buffers} live buffers)."
            ) from None
        self._buffers += 1
        self._bytes += nbytes
        return buf

    def free(self, buffer: bytearray) -> None:
        self._buffers -= 1
        self._bytes -= len(buffer)

    def from_host(self, host: np.ndarray) -> bytearray:
        buf = self.alloc(host.nbytes)
        buf[:] = host.tobytes()
        return buf

    def to_host(self, ref: Ref) -> np.ndarray:
        data = bytearray(_pack(ref.dtype, _read(ref)))
        return np.frombuffer(data, ref.dtype.dtype).reshape(ref.shape)

    def copy(self, src: Ref, dst: Ref) -> None:
        _write(dst, _read(src))

    def fill(self, dst: Ref, value: Any) -> None:
        _write(dst, [value] * dst.size)

    # -- compute: every input Ref is C-contiguous (no "strided") ---------------

    def unary(self, op: str, x: Ref, out: Ref) -> None:
        _write(out, list(map(_UNARY[op], _read(x))))

    def binary(self, op: str, a: Ref | Any, b: Ref | Any, out: Ref) -> None:
        # a, b: contiguous Refs of out's shape, or Python scalars of their dtype
        xs = _read(a) if type(a) is Ref else repeat(a, out.size)
        ys = _read(b) if type(b) is Ref else repeat(b, out.size)
        _write(out, list(map(_BINARY[op], xs, ys)))

    def where(self, cond: Ref, a: Ref, b: Ref, out: Ref) -> None:
        _write(out, [x if c else y for c, x, y in zip(_read(cond), _read(a), _read(b))])

    def cast(self, x: Ref, out: Ref) -> None:
        _write(out, list(map(_CONVERT[out.dtype], _read(x))))

    def reduce(self, op: str, x: Ref, out: Ref) -> None:
        # x: (M, K) contiguous; out: (M,), accumulate in out's dtype
        m, k = x.shape
        values = _read(x)
        if x.dtype is not out.dtype and op in ("sum", "prod"):
            values = list(map(_CONVERT[out.dtype], values))
            if out.dtype is BOOL:  # NumPy: a sum of bools in bool is "any", a product "all"
                op = "any" if op == "sum" else "all"
        fn = _REDUCE[op]
        _write(out, [fn(values[i * k : (i + 1) * k]) for i in range(m)])

    def matmul(self, a: Ref, b: Ref, out: Ref) -> None:
        # a: (B, M, K), b: (B, K, N), out: (B, M, N), all contiguous; K >= 1
        batch, m, k = a.shape
        n = b.shape[2]
        av, bv = _read(a), _read(b)
        result = []
        for t in range(batch):
            lhs, rhs = av[t * m * k : (t + 1) * m * k], bv[t * k * n : (t + 1) * k * n]
            for i in range(m):
                for j in range(n):
                    result.append(sum(lhs[i * k + p] * rhs[p * n + j] for p in range(k)))
        _write(out, result)


@hookimpl
def ndplane_register_backends() -> list[BackendSpec]:
    return [
        BackendSpec(
            name="pylist",
            factory=PylistBackend,
            distribution="ndplane-pylist",
            version=__version__,
            protocol_version=1,
            priority=-10,  # never the default device while a real backend is installed
            description="example third-party backend in pure Python (bool, int64, float64)",
        )
    ]
