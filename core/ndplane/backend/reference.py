"""Reference kernels on host NumPy arrays.

These are the semantics every backend is held to, written once: the NumPy
backend runs them on its own buffers and the core's host fallback runs them on
copies brought to the host.  Each function writes into ``out`` (a NumPy array
of the exact result dtype) and never allocates its result itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np

__all__ = [
    "UNARY", "BINARY", "unary", "binary", "where", "cast", "reduce", "scan", "matmul",
    "take", "scatter_add", "sort", "philox4x32", "random_bits",
]  # fmt: skip


# The elementwise kernels by op name: each op's row (``ndplane._elementwise``) registers its
# NumPy kernel here when the core is imported, so an op is named in one place.
UNARY: dict[str, Callable[..., Any]] = {}
BINARY: dict[str, Callable[..., Any]] = {}


def _typed_scalar(value: Any, dtype: np.dtype) -> Any:
    # NOTE: a NumPy scalar of the operand dtype, so NumPy does not promote.
    return dtype.type(value)


def unary(op: str, x: np.ndarray, out: np.ndarray) -> None:
    with np.errstate(all="ignore"):
        UNARY[op](x, out=out)


def binary(op: str, a: Any, b: Any, out: np.ndarray) -> None:
    if not isinstance(a, np.ndarray):
        a = _typed_scalar(a, b.dtype)
    elif not isinstance(b, np.ndarray):
        b = _typed_scalar(b, a.dtype)
    fn = BINARY[op]
    with np.errstate(all="ignore"):
        if op == "pow" and np.dtype(out.dtype).kind in "iu":
            # NOTE: NumPy raises on negative integer exponents; 1/x**n truncates to 0 (or +-1).
            exp = np.asarray(b)
            if (exp < 0).any():
                base = np.asarray(a)
                r = np.power(base, np.where(exp < 0, 0, exp), dtype=out.dtype)
                neg = np.where(base == 1, 1, np.where(base == -1, np.where(exp % 2 == 0, 1, -1), 0))
                np.copyto(out, np.where(exp < 0, neg, r), casting="unsafe")
                return
        fn(a, b, out=out)
        if op == "pow" and np.dtype(out.dtype).kind == "f":
            # NOTE: NumPy (2.x) computes x ** 0.5 as sqrt(x) whenever the exponent is a scalar or
            # 0-d: sqrt(-inf) = nan and sqrt(-0.0) = -0.0, where pow (C99, the Array API) gives
            # +inf and +0 for any exponent > 0 that is not an odd integer.
            half = np.asarray(b) == 0.5
            if half.any():
                x = np.asarray(a)
                np.copyto(out, np.where(np.isneginf(x), np.inf, 0.0), where=half & ((x == 0) | np.isneginf(x)),
                          casting="unsafe")  # fmt: skip


def where(cond: np.ndarray, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    np.copyto(out, np.where(cond, a, b))


def cast(x: np.ndarray, out: np.ndarray) -> None:
    with np.errstate(all="ignore"):
        if x.dtype.kind == "c" and out.dtype.kind != "c":
            x = x.real if out.dtype.kind != "b" else (x != 0)
        np.copyto(out, x, casting="unsafe")


def reduce(op: str, x: np.ndarray, out: np.ndarray) -> None:
    with np.errstate(all="ignore"):
        if op == "sum" or op == "prod":
            getattr(np, op)(x, axis=-1, dtype=out.dtype, out=out)
        elif op == "max" or op == "min":
            getattr(np, op)(x, axis=-1, out=out)
        elif op == "argmax" or op == "argmin":
            np.copyto(out, getattr(np, op)(x, axis=-1), casting="unsafe")
        elif op == "any" or op == "all":
            getattr(np, op)(x, axis=-1, out=out)
        else:
            raise ValueError(f"reference.reduce: unknown op {op!r}")


def scan(op: str, x: np.ndarray, out: np.ndarray) -> None:
    fn = np.cumsum if op == "cumulative_sum" else np.cumprod
    with np.errstate(all="ignore"):
        fn(x, axis=-1, dtype=out.dtype, out=out)


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    with np.errstate(all="ignore"):
        if a.dtype.kind == "b":
            # NOTE: a wide integer count of true products; uint8 would wrap at 256
            np.copyto(out, np.matmul(a.astype(np.intp), b.astype(np.intp)) != 0)
        else:
            # NOTE: not out=: NumPy then skips BLAS for transposed operands (100x slower).
            np.copyto(out, np.matmul(a, b))


def take(x: np.ndarray, indices: np.ndarray, out: np.ndarray) -> None:
    np.take(x, indices, axis=-1, out=out, mode="raise")


def scatter_add(out: np.ndarray, indices: np.ndarray, values: np.ndarray) -> None:
    # NOTE: NumPy's stubs type ufunc.at's index as an integer array; a tuple index is valid too.
    if out.dtype.kind == "b":
        np.logical_or.at(out, (slice(None), indices), values)  # type: ignore[arg-type]
    else:
        np.add.at(out, (slice(None), indices), values)  # type: ignore[arg-type]


def sort(
    x: np.ndarray, values_out: np.ndarray | None, indices_out: np.ndarray | None,
    descending: bool, stable: bool,
) -> None:
    kind: Literal["stable"] | None = "stable" if stable else None
    if indices_out is None:
        assert values_out is not None  # the caller asks for the values, the indices or both
        # NOTE: sorted values show stability only through -0.0 and 0.0 (equal, distinguishable),
        # so the much faster unstable sort serves unless such ties exist. Descending is the
        # reverse, which puts NaNs first.
        tie_visible = stable and x.dtype.kind in "fc" and bool((x == 0).any())
        if not (tie_visible and descending):
            v = np.sort(x, axis=-1, kind="stable" if tie_visible else None)
            np.copyto(values_out, v[..., ::-1] if descending else v)
            return
    if descending:
        # NOTE: sorting the reversed rows and reversing back keeps equal elements in input order.
        n = x.shape[-1]
        idx = np.argsort(x[..., ::-1], axis=-1, kind=kind)
        idx = (n - 1 - idx)[..., ::-1]
    else:
        idx = np.argsort(x, axis=-1, kind=kind)
    if indices_out is not None:
        np.copyto(indices_out, idx, casting="unsafe")
    if values_out is not None:
        np.copyto(values_out, np.take_along_axis(x, idx, axis=-1))


# ---------------------------------------------------------------------------
# Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11).
# ---------------------------------------------------------------------------
_PHILOX_M0 = np.uint64(0xD2511F53)
_PHILOX_M1 = np.uint64(0xCD9E8D57)
_PHILOX_W0 = 0x9E3779B9
_PHILOX_W1 = 0xBB67AE85
_MASK32 = np.uint64(0xFFFFFFFF)
_SHIFT32 = np.uint64(32)


def philox4x32(key: int, counters: np.ndarray) -> np.ndarray:
    """Philox-4x32-10 of ``counters`` (N, 4) uint32 words, little word first, under a 64-bit key.

    >>> import numpy as np
    >>> words = philox4x32(0, np.zeros((1, 4), np.uint32))
    >>> [f"{w:08x}" for w in words[0]]
    ['6627e8d5', 'e169c58d', 'bc57ac4c', '9b00dbd8']
    """
    c = [counters[:, i].astype(np.uint64) for i in range(4)]
    k0, k1 = key & 0xFFFFFFFF, (key >> 32) & 0xFFFFFFFF
    for _ in range(10):
        p0 = _PHILOX_M0 * c[0]
        p1 = _PHILOX_M1 * c[2]
        c = [
            (p1 >> _SHIFT32) ^ c[1] ^ np.uint64(k0),
            p1 & _MASK32,
            (p0 >> _SHIFT32) ^ c[3] ^ np.uint64(k1),
            p0 & _MASK32,
        ]
        k0 = (k0 + _PHILOX_W0) & 0xFFFFFFFF
        k1 = (k1 + _PHILOX_W1) & 0xFFFFFFFF
    return np.stack(c, axis=1).astype(np.uint32)


def random_bits(key: int, counter: int, out: np.ndarray) -> None:
    n = out.shape[0]
    blocks = -(-n // 4)
    ctr = np.empty((blocks, 4), np.uint32)
    # A 128-bit counter plus a block index: add in 64-bit halves with a carry.
    lo = np.uint64(counter & 0xFFFFFFFFFFFFFFFF) + np.arange(blocks, dtype=np.uint64)
    carry = (lo < np.uint64(counter & 0xFFFFFFFFFFFFFFFF)).astype(np.uint64)
    hi = np.uint64((counter >> 64) & 0xFFFFFFFFFFFFFFFF) + carry
    ctr[:, 0] = lo & _MASK32
    ctr[:, 1] = lo >> _SHIFT32
    ctr[:, 2] = hi & _MASK32
    ctr[:, 3] = hi >> _SHIFT32
    out[...] = philox4x32(key, ctr).reshape(-1)[:n]


# ---------------------------------------------------------------------------
# Optional extensions: linalg and fft (see Backend.linalg / Backend.fft for the contracts).
# ---------------------------------------------------------------------------


def _svd(a: np.ndarray, outs: tuple[np.ndarray, ...]) -> None:
    u, s, vh = outs
    full = u.shape[-1] == a.shape[-2] and vh.shape[-2] == a.shape[-1]  # reduced == full when M == N
    ru, rs, rvh = np.linalg.svd(a, full_matrices=full)
    np.copyto(u, ru)
    np.copyto(s, rs)
    np.copyto(vh, rvh)


def _qr(a: np.ndarray, outs: tuple[np.ndarray, ...]) -> None:
    q, r = outs
    rq, rr = np.linalg.qr(a, mode="complete" if q.shape[-1] == a.shape[-2] else "reduced")
    np.copyto(q, rq)
    np.copyto(r, rr)


def _eigh(a: np.ndarray, outs: tuple[np.ndarray, ...]) -> None:
    w, v = np.linalg.eigh(a)
    np.copyto(outs[0], w)
    np.copyto(outs[1], v)


def _slogdet(a: np.ndarray, outs: tuple[np.ndarray, ...]) -> None:
    sign, logabs = np.linalg.slogdet(a)
    np.copyto(outs[0], sign)
    np.copyto(outs[1], logabs)


def _solve(a: np.ndarray, b: np.ndarray, outs: tuple[np.ndarray, ...]) -> None:
    np.copyto(outs[0], np.linalg.solve(a, b))


LINALG: dict[str, Callable[..., None]] = {
    "cholesky": lambda a, outs: np.copyto(outs[0], np.linalg.cholesky(a)),
    "qr": _qr,
    "svd": _svd,
    "svdvals": lambda a, outs: np.copyto(outs[0], np.linalg.svd(a, compute_uv=False)),
    "eigh": _eigh,
    "eigvalsh": lambda a, outs: np.copyto(outs[0], np.linalg.eigvalsh(a)),
    "solve": _solve,
    "inv": lambda a, outs: np.copyto(outs[0], np.linalg.inv(a)),
    "det": lambda a, outs: np.copyto(outs[0], np.linalg.det(a)),
    "slogdet": _slogdet,
}  # fmt: skip


def linalg(op: str, inputs: tuple[np.ndarray, ...], outputs: tuple[np.ndarray, ...]) -> None:
    with np.errstate(all="ignore"):
        LINALG[op](*inputs, outputs)


def fft(op: str, x: np.ndarray, out: np.ndarray, norm: str, axes: tuple[int, ...] | None = None) -> None:
    if x.size == 0 or out.size == 0:
        return
    axes = (x.ndim - 1,) if axes is None else axes
    last = axes[-1]
    n = out.shape[last] if op in ("irfft", "hfft") else x.shape[last]
    if len(axes) == 1:
        result = getattr(np.fft, op)(x, n=n, axis=last, norm=norm)
    else:  # fft-axes: the n-dimensional transform, the output's lengths (irfftn's last too) as s
        s = [out.shape[a] if op == "irfft" else x.shape[a] for a in axes]
        result = getattr(np.fft, op + "n")(x, s=s, axes=axes, norm=norm)
    # NOTE: NumPy >= 2 keeps single precision; cast in case an older NumPy widens.
    np.copyto(out, result, casting="unsafe")
