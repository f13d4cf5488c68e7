"""The Array API ``fft`` extension: ``ndplane.fft``.

The one-dimensional transforms along the last axis (fft, ifft, rfft, irfft,
hfft, ihfft) are kernels of the optional ``"fft"`` backend capability
(``Backend.fft``); a backend without them runs them through the host fallback
with a :class:`~ndplane.FallbackWarning`.  The core does the rest once for
every backend: moving the axis last (a view), padding with zeros or
truncating to ``n`` (concat / slicing), the n-dimensional transforms (one axis
at a time), ``fftfreq``/``rfftfreq`` and the shifts (``roll``). A real signal reaches ``fft``
and ``ifft`` cast to complex, or as it is where the backend declares ``FFT_REAL_INPUT``. Every
transform is differentiable: a 1-D kernel records one node whose rule is the adjoint transform.
A backend declaring ``FFT_AXES`` gets a transform along any axis, and an n-dimensional one, as
one call on the operand as it lies (no axis moved, no copy), wherever no gradient is recorded.

>>> import ndplane as nd
>>> nd.fft.fft(nd.asarray([1.0, 0.0, 0.0, 0.0], dtype=nd.complex128)).tolist()
[(1+0j), (1+0j), (1+0j), (1+0j)]
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _creation, _dispatch, _dtypes, _graph, _layout
from ._array import Array, check_array
from ._devices import Device, as_device
from ._dtypes import DType
from ._manipulation import concat, moveaxis, roll
from .backend.ops import FFT_AXES, FFT_REAL_INPUT

__all__ = [
    "fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]  # fmt: skip

_NORMS = ("backward", "ortho", "forward")
# op -> (input is complex, output is complex)
_KINDS = {"fft": (True, True), "ifft": (True, True), "rfft": (False, True), "ihfft": (False, True),
          "irfft": (True, False), "hfft": (True, False)}  # fmt: skip
#: The complex transforms a backend declaring ``FFT_REAL_INPUT`` takes a real signal for, uncast.
_REAL_OK = frozenset({"fft", "ifft"})


def _input(op: str, x: Array) -> Array:
    check_array(f"fft.{op}", x)
    complex_in = _KINDS[op][0]
    kind = x.dtype.kind
    if not complex_in and kind == "complex":
        raise TypeError(f"fft.{op}: only real floating-point dtypes are allowed; got {x.dtype.name}.")
    if kind not in ("float", "complex"):
        raise TypeError(f"fft.{op}: only floating-point dtypes are allowed; got {x.dtype.name}.")
    if complex_in and kind == "float" and not (op in _REAL_OK and FFT_REAL_INPUT in x.device.backend.capabilities):
        return _dispatch.cast(x, _dtypes.complex_of(x.dtype))
    return x


def _resize(x: Array, n: int, axis: int = -1) -> Array:
    """``x`` truncated or zero-padded to length ``n`` along ``axis``."""
    m = x.shape[axis]
    if n == m:
        return x
    ax = axis % x.ndim
    if n < m:
        return x[(slice(None),) * ax + (slice(0, n),)]
    pad = x.shape[:ax] + (n - m,) + x.shape[ax + 1 :]
    return concat([x, _creation.zeros(pad, dtype=x.dtype, device=x.device)], axis=ax)


def _over_axes(op: str, x: Array) -> bool:
    """Whether ``op`` runs over any axes of ``x`` as it lies, in one call (``FFT_AXES``): the
    backend declares it and has the op natively, and no gradient is being recorded (autograd
    keeps one node per 1-D transform)."""
    backend = x._storage.backend
    return (
        FFT_AXES in backend.capabilities
        and op in backend.ops
        and not (x.requires_grad and _graph.is_grad_enabled())
    )


def _transform_axes(op: str, x: Array, axes: Sequence[int], sizes: Sequence[int | None], norm: str) -> Array:
    """``op`` over the distinct non-negative ``axes`` (the real-to-complex or complex-to-real
    step over the last) with lengths ``sizes`` (None: the input's), in one backend call on
    ``x`` as it lies: ``FFT_AXES``; the caller checked :func:`_over_axes`."""
    if norm not in _NORMS:
        raise ValueError(f"fft.{op}: norm must be one of {_NORMS}; got {norm!r}.")
    real_out = not _KINDS[op][1]
    half = op in ("rfft", "ihfft")  # real -> complex: the last axis keeps n // 2 + 1 terms
    last = axes[-1]
    src = x
    out_shape = list(x.shape)
    for a, k in zip(axes, sizes):
        m = x.shape[a]
        n = (2 * (m - 1) if real_out and a == last else m) if k is None else operator.index(k)
        if n < 1:
            raise ValueError(f"fft.{op}: the transform length n must be >= 1; got {n}.")
        src = _resize(src, n // 2 + 1 if real_out and a == last else n, a)
        out_shape[a] = n // 2 + 1 if half and a == last else n
    precision = _dtypes.real_of(x.dtype)
    if precision is _dtypes.float16:
        precision = _dtypes.float32
        src = _dispatch.cast(src, _dtypes.complex64 if src.dtype.kind == "complex" else precision)
    out_dtype = precision if real_out else _dtypes.complex_of(precision)
    # NOTE: out's innermost axis is the one the 1-D composite transforms last (rfftn's last
    # complex axis, else the last of axes), so a backend that runs it that way writes its
    # last step's rows straight into out, as the composite returned them: no copy back.
    inner = axes[-2] if op == "rfft" and len(axes) > 1 else axes[-1]
    return _dispatch.fft_axes(op, src, tuple(axes), tuple(out_shape), out_dtype, norm, inner)


def _transform(op: str, x: Array, n: int | None, axis: int, norm: str) -> Array:
    """One 1-D transform ``op`` of ``x`` along ``axis``."""
    if norm not in _NORMS:
        raise ValueError(f"fft.{op}: norm must be one of {_NORMS}; got {norm!r}.")
    if x.ndim == 0:
        raise ValueError(f"fft.{op}: x must have at least one dimension.")
    ax = _layout.normalize_axis(axis, x.ndim, f"fft.{op}")
    if ax != x.ndim - 1 and _over_axes(op, x):  # NOTE: along the last axis the rows path is the same call, 3 us cheaper
        return _transform_axes(op, x, (ax,), (n,), norm)
    m = x.shape[ax]
    real_out = not _KINDS[op][1]
    n = (2 * (m - 1) if real_out else m) if n is None else operator.index(n)
    if n < 1:
        raise ValueError(f"fft.{op}: the transform length n must be >= 1; got {n}.")
    length = n // 2 + 1 if real_out else n
    last = ax == x.ndim - 1  # NOTE: no moveaxis pair then: it was half the cost of a small transform
    src = _resize(x if last else moveaxis(x, ax, -1), length)
    precision = _dtypes.real_of(x.dtype)
    if precision is _dtypes.float16:
        precision = _dtypes.float32
        src = _dispatch.cast(src, _dtypes.complex64 if src.dtype.kind == "complex" else precision)
    out_len = n if real_out or op in ("fft", "ifft") else n // 2 + 1
    out_dtype = precision if real_out else _dtypes.complex_of(precision)
    out = _dispatch.fft(op, src, src.shape[:-1] + (out_len,), out_dtype, norm)
    if src.requires_grad:
        _graph.record("fft", out, (src,), (), (op, norm, n))
    return out if last else moveaxis(out, -1, ax)


# ---------------------------------------------------------------------------
# gradients: each 1-D transform is linear; its VJP is the adjoint transform
# ---------------------------------------------------------------------------
#: The adjoint of a transform with norm ``m`` is the inverse transform with norm ``_DUAL[m]``
#: (also NumPy's ``hfft``/``ihfft`` swap of directions).
_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _hermitian_weights(g: Array, n: int) -> Array:
    """``rfft(g)`` of a real length-``n`` signal weighted 1 at the bins stored once (DC, and
    Nyquist for even ``n``) and 2 at those standing for a conjugate pair too."""
    k = n // 2 + 1
    w = [1.0] + [2.0] * (k - 1)
    if n % 2 == 0:
        w[-1] = 1.0

    return g * _creation.asarray(w, dtype=_dtypes.real_of(g.dtype), device=g.device)


def _fft_vjp(g: Array, node: Any) -> tuple[Array]:
    """Conjugate-Wirtinger convention (as every rule): ``rfft``/``ihfft`` take real inputs
    (their gradient is the real part), ``irfft``/``hfft`` read only the real part of the
    DC (and even-length Nyquist) bin."""
    op, norm, n = node.params
    dual = _DUAL[norm]
    if op in _REAL_OK:
        gx = (ifft if op == "fft" else fft)(g, norm=dual)
        # NOTE: a real signal the backend took uncast (FFT_REAL_INPUT): the cast's rule, the real part
        return (_dispatch.unary("real", gx) if node.inputs[0].dtype.kind == "float" else gx,)
    if op == "rfft":
        return (_dispatch.unary("real", ifft(_resize(g, n), norm=dual)),)
    if op == "ihfft":  # conj(rfft(x, norm=dual)): the conjugate's rule, then rfft's
        return (_dispatch.unary("real", ifft(_resize(_dispatch.unary("conj", g), n), norm=norm)),)
    if op == "irfft":
        return (_hermitian_weights(rfft(g, norm=dual), n),)
    # hfft(x) = irfft(conj(x), norm=dual): irfft's rule, then the conjugate's
    return (_dispatch.unary("conj", _hermitian_weights(rfft(g, norm=norm), n)),)


_graph.RULES["fft"] = _fft_vjp


def _axes_and_sizes(name: str, x: Array, s: Sequence[int] | None, axes: Sequence[int] | None) -> tuple[list[int], list[int | None]]:
    if axes is None:
        axes = list(range(x.ndim)) if s is None else list(range(x.ndim - len(s), x.ndim))
    axes = [_layout.normalize_axis(a, x.ndim, f"fft.{name}") for a in axes]
    if s is None:
        return axes, [None] * len(axes)
    if len(s) != len(axes):
        raise ValueError(f"fft.{name}: s and axes must have the same length; got {len(s)} and {len(axes)}.")
    return axes, [None if operator.index(k) == -1 else operator.index(k) for k in s]


def fft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """One-dimensional discrete Fourier transform along ``axis`` (padded/truncated to ``n``).

    >>> import ndplane as nd
    >>> nd.fft.fft(nd.asarray([1.0, 1.0], dtype=nd.complex64)).tolist()
    [(2+0j), 0j]
    """
    return _transform("fft", _input("fft", x), n, axis, norm)


def ifft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """One-dimensional inverse discrete Fourier transform along ``axis``.

    >>> import ndplane as nd
    >>> nd.fft.ifft(nd.asarray([2.0, 0.0], dtype=nd.complex128)).tolist()
    [(1+0j), (1+0j)]
    """
    return _transform("ifft", _input("ifft", x), n, axis, norm)


def rfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """Transform of real input: the ``n // 2 + 1`` non-negative frequency terms.

    >>> import ndplane as nd
    >>> nd.fft.rfft(nd.asarray([1.0, 2.0, 3.0, 4.0])).tolist()
    [(10+0j), (-2+2j), (-2+0j)]
    """
    return _transform("rfft", _input("rfft", x), n, axis, norm)


def irfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """Inverse of ``rfft``: a real signal of length ``n`` (default ``2 * (m - 1)``).

    >>> import ndplane as nd
    >>> nd.fft.irfft(nd.asarray([10.0, -2 + 2j, -2.0])).tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    return _transform("irfft", _input("irfft", x), n, axis, norm)


def hfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """Transform of a Hermitian-symmetric signal given by its first half: a real spectrum of length ``n``.

    >>> import ndplane as nd
    >>> nd.fft.hfft(nd.asarray([1.0, 0.0, 0.0])).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    return _transform("hfft", _input("hfft", x), n, axis, norm)


def ihfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """Inverse of ``hfft`` for real input: the ``n // 2 + 1`` non-negative frequency terms.

    >>> import ndplane as nd
    >>> nd.fft.ihfft(nd.asarray([1.0, 1.0, 1.0, 1.0])).tolist()
    [(1-0j), -0j, -0j]
    """
    return _transform("ihfft", _input("ihfft", x), n, axis, norm)


def _nd(op: str, x: Array, s: Sequence[int] | None, axes: Sequence[int] | None, norm: str) -> Array:
    axes_, sizes = _axes_and_sizes(op + "n", x, s, axes)
    if axes_ and len(set(axes_)) == len(axes_) and _over_axes(op, x):
        return _transform_axes(op, x, axes_, sizes, norm)
    for a, k in zip(axes_, sizes):
        x = _transform(op, x, k, a, norm)
    return x


def fftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str = "backward") -> Array:  # fmt: skip
    """n-dimensional discrete Fourier transform over ``axes`` (sizes ``s``; -1 keeps a size).

    >>> import ndplane as nd
    >>> nd.fft.fftn(nd.ones((2, 2), dtype=nd.complex128)).tolist()
    [[(4+0j), 0j], [0j, 0j]]
    """
    return _nd("fft", _input("fft", x), s, axes, norm)


def ifftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> Array:  # fmt: skip
    """n-dimensional inverse discrete Fourier transform over ``axes``.

    >>> import ndplane as nd
    >>> nd.fft.ifftn(nd.asarray([[4.0, 0.0], [0.0, 0.0]], dtype=nd.complex128)).tolist()
    [[(1+0j), (1+0j)], [(1+0j), (1+0j)]]
    """
    return _nd("ifft", _input("ifft", x), s, axes, norm)


def rfftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> Array:  # fmt: skip
    """n-dimensional transform of real input: ``rfft`` over the last of ``axes``, ``fft`` over the others.

    >>> import ndplane as nd
    >>> nd.fft.rfftn(nd.ones((2, 2))).tolist()
    [[(4+0j), 0j], [0j, 0j]]
    """
    x = _input("rfft", x)
    axes_, sizes = _axes_and_sizes("rfftn", x, s, axes)
    if not axes_:
        raise ValueError("fft.rfftn: at least one axis is required.")
    if len(set(axes_)) == len(axes_) and _over_axes("rfft", x):
        return _transform_axes("rfft", x, axes_, sizes, norm)
    x = _transform("rfft", x, sizes[-1], axes_[-1], norm)
    for a, k in zip(axes_[:-1], sizes[:-1]):
        x = _transform("fft", x, k, a, norm)
    return x


def irfftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str = "backward") -> Array:  # fmt: skip
    """Inverse of ``rfftn``: ``ifft`` over all but the last of ``axes``, ``irfft`` over the last.

    >>> import ndplane as nd
    >>> nd.fft.irfftn(nd.asarray([[4.0, 0.0], [0.0, 0.0]])).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    x = _input("irfft", x)
    axes_, sizes = _axes_and_sizes("irfftn", x, s, axes)
    if not axes_:
        raise ValueError("fft.irfftn: at least one axis is required.")
    if len(set(axes_)) == len(axes_) and _over_axes("irfft", x):
        return _transform_axes("irfft", x, axes_, sizes, norm)
    for a, k in zip(axes_[:-1], sizes[:-1]):
        x = _transform("ifft", x, k, a, norm)
    return _transform("irfft", x, sizes[-1], axes_[-1], norm)


def _freq_dtype(name: str, dtype: DType | None, dev: Device) -> DType:
    if dtype is None:
        dt = _dtypes.default_of(dev.backend.default_dtypes, "real floating", f"fft.{name}")
    else:
        dt = _dtypes.as_dtype(dtype, f"fft.{name}")
    if dt.kind != "float":
        raise TypeError(f"fft.{name}: dtype must be a real floating-point dtype; got {dt.name}.")
    return dt


def fftfreq(n: int, /, *, d: float = 1.0, dtype: DType | None = None, device: str | Device | None = None) -> Array:
    """Sample frequencies of an ``n``-point transform with sample spacing ``d``.

    >>> import ndplane as nd
    >>> nd.fft.fftfreq(4, d=0.5).tolist()
    [0.0, 0.5, -1.0, -0.5]
    """

    n = operator.index(n)
    if n < 1:
        raise ValueError(f"fft.fftfreq: n must be >= 1; got {n}.")
    dev = as_device(device)
    dt = _freq_dtype("fftfreq", dtype, dev)
    # NOTE: n values computed on the host in float64 (as NumPy does) and rounded once to dt,
    # then one upload: three device kernels (arange, roll, divide) cost 28 us of fixed overhead.
    return _creation.asarray(np.fft.fftfreq(n, d), dtype=dt, device=dev)


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: DType | None = None, device: str | Device | None = None) -> Array:
    """Sample frequencies of ``rfft``'s output: ``n // 2 + 1`` non-negative ones.

    >>> import ndplane as nd
    >>> nd.fft.rfftfreq(4).tolist()
    [0.0, 0.25, 0.5]
    """

    n = operator.index(n)
    if n < 1:
        raise ValueError(f"fft.rfftfreq: n must be >= 1; got {n}.")
    dev = as_device(device)
    dt = _freq_dtype("rfftfreq", dtype, dev)
    return _creation.asarray(np.fft.rfftfreq(n, d), dtype=dt, device=dev)


def _shift(name: str, x: Array, axes: int | Sequence[int] | None, sign: int) -> Array:
    check_array(f"fft.{name}", x)
    axes_ = _layout.normalize_axes(axes, x.ndim, f"fft.{name}")
    if not axes_:
        return _dispatch.copy_of(x)
    return roll(x, tuple(sign * (x.shape[a] // 2) for a in axes_), axis=axes_)


def fftshift(x: Array, /, *, axes: int | Sequence[int] | None = None) -> Array:
    """Move the zero-frequency term to the centre (a ``roll`` by half of each axis).

    >>> import ndplane as nd
    >>> nd.fft.fftshift(nd.fft.fftfreq(4)).tolist()
    [-0.5, -0.25, 0.0, 0.25]
    """
    return _shift("fftshift", x, axes, 1)


def ifftshift(x: Array, /, *, axes: int | Sequence[int] | None = None) -> Array:
    """Inverse of ``fftshift``.

    >>> import ndplane as nd
    >>> nd.fft.ifftshift(nd.asarray([-0.5, -0.25, 0.0, 0.25])).tolist()
    [0.0, 0.25, -0.5, -0.25]
    """
    return _shift("ifftshift", x, axes, -1)
