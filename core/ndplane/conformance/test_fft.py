"""The ``fft`` extension, differential against NumPy, on every backend.

The 1-D transforms run the backend's ``fft`` kernels where it declares them and the
host fallback elsewhere; padding, truncation, the n-dimensional transforms, the
frequencies and the shifts are core composites. Inputs are drawn with every
layout the suite knows, on every floating dtype the device supports.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ndplane as nd
from ndplane.backend import FFT_AXES, FFT_REAL_INPUT
from ndplane.conformance import _helpers as h

NORMS = st.sampled_from(["backward", "ortho", "forward"])
VALUES = h.Values(-4, 4, special=False)


@pytest.fixture(autouse=True)
def _no_fallback_noise():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", nd.FallbackWarning)
        yield


def _dtypes(device: nd.Device, kinds: tuple[str, ...]) -> list[nd.DType]:
    return [d for d in h.supported(device, kinds) if d is not nd.float16]


def _tol(dtype: nd.DType, n: int) -> tuple[float, float]:
    single = dtype in (nd.float32, nd.complex64)
    scale = max(n, 1)
    return (1e-4 * scale, 1e-4 * scale) if single else (1e-10 * scale, 1e-10 * scale)


def _np(fn, ref: np.ndarray, **kw):
    wide = ref.astype(np.complex128 if ref.dtype.kind == "c" else np.float64)
    return fn(wide, **kw)


def _result(dtype: nd.DType, complex_out: bool) -> nd.DType:
    real = h.REAL_OF.get(dtype, dtype)
    if not complex_out:
        return real
    return nd.complex64 if real is nd.float32 else nd.complex128


@h.hyp()
@given(data=st.data(), norm=NORMS)
def test_one_dimensional(device: nd.Device, data: st.DataObject, norm: str) -> None:
    shape = data.draw(h.shapes(min_dims=1, max_dims=3, min_side=1), label="shape")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    n = data.draw(st.none() | st.integers(1, 6), label="n")
    # NOTE: fft/ifft of a real signal too: cast by the core, or uncast where FFT_REAL_INPUT is declared
    cases = [("fft", ("complex", "float"), True), ("ifft", ("complex", "float"), True),
             ("rfft", ("float",), True), ("ihfft", ("float",), True), ("irfft", ("complex",), False),
             ("hfft", ("complex",), False)]  # fmt: skip
    for op, kinds, complex_out in cases:
        for dtype in _dtypes(device, kinds):
            a = data.draw(h.arrays(device, dtype, shape, VALUES), label=f"{op} {dtype.name}")
            if op in ("irfft", "hfft") and n is None and a.ref.shape[axis] < 2:
                continue  # the default length 2 * (m - 1) would be 0
            if _result(dtype, complex_out) not in device.backend.dtypes:
                with pytest.raises(nd.UnsupportedDTypeError):
                    getattr(nd.fft, op)(a.x, n=n, axis=axis, norm=norm)
                continue
            got = getattr(nd.fft, op)(a.x, n=n, axis=axis, norm=norm)
            expected = _np(getattr(np.fft, op), a.ref, n=n, axis=axis, norm=norm)
            h.assert_same(got, expected, _result(dtype, complex_out), tol=_tol(dtype, a.ref.shape[axis]))


@h.hyp()
@given(data=st.data(), norm=NORMS)
def test_n_dimensional(device: nd.Device, data: st.DataObject, norm: str) -> None:
    shape = data.draw(h.shapes(min_dims=1, max_dims=3, min_side=1), label="shape")
    k = data.draw(st.integers(1, len(shape)), label="k")
    axes = data.draw(st.permutations(range(len(shape))), label="axes")[:k]
    s = data.draw(st.none() | st.lists(st.integers(1, 5), min_size=k, max_size=k), label="s")
    size = int(np.prod(shape))
    for dtype in _dtypes(device, ("complex",)):
        a = data.draw(h.arrays(device, dtype, shape, VALUES), label=f"x {dtype.name}")
        for op in ("fftn", "ifftn"):
            got = getattr(nd.fft, op)(a.x, s=s, axes=axes, norm=norm)
            h.assert_same(got, _np(getattr(np.fft, op), a.ref, s=s, axes=axes, norm=norm), dtype, tol=_tol(dtype, size))
        if s is not None or a.ref.shape[axes[-1]] >= 2:
            got = nd.fft.irfftn(a.x, s=s, axes=axes, norm=norm)
            expected = _np(np.fft.irfftn, a.ref, s=s, axes=axes, norm=norm)
            h.assert_same(got, expected, _result(dtype, False), tol=_tol(dtype, size))
    for dtype in _dtypes(device, ("float",)):
        if _result(dtype, True) not in device.backend.dtypes:
            continue
        a = data.draw(h.arrays(device, dtype, shape, VALUES), label=f"r {dtype.name}")
        for op in ("rfftn", "fftn", "ifftn"):  # fftn/ifftn of a real signal: cast, or FFT_REAL_INPUT
            got = getattr(nd.fft, op)(a.x, s=s, axes=axes, norm=norm)
            expected = _np(getattr(np.fft, op), a.ref, s=s, axes=axes, norm=norm)
            h.assert_same(got, expected, _result(dtype, True), tol=_tol(dtype, size), msg=f"{op}: ")


@pytest.mark.parametrize("op", ["fftn", "ifftn", "rfftn", "irfftn", "fft", "hfft", "ihfft"])
def test_fft_axes(device: nd.Device, op: str) -> None:
    """``FFT_AXES``: a transform along an inner axis, and an n-dimensional one, is one ``fft``
    call on the operand as it lies (no copy, no cast of a real signal under ``FFT_REAL_INPUT``),
    and right on transposed, reversed, sliced and broadcast operands, each norm."""
    if FFT_AXES not in device.backend.capabilities:
        pytest.skip(f"backend {device.backend.name!r} does not declare {FFT_AXES!r}")
    rng = np.random.default_rng(5)
    nd_op = getattr(nd.fft, op)
    complex_in = op in ("fftn", "ifftn", "irfftn", "hfft")  # "fft": of a real signal
    real_ok = FFT_REAL_INPUT in device.backend.capabilities
    for dtype in _dtypes(device, ("complex",) if complex_in else ("float",)):
        if _result(dtype, True) not in device.backend.dtypes:
            continue
        t = h.np_dtype(dtype)
        whole = rng.standard_normal((6, 10, 9)).astype(t)
        if complex_in:
            whole = (whole + 1j * rng.standard_normal((6, 10, 9))).astype(t)
        views = {
            "contiguous": lambda a: a, "transposed": lambda a: a.mT, "reversed": lambda a: a[::-1, :, ::-2],
            "sliced": lambda a: a[1:5, 2:9:3], "broadcast": lambda a: a[:1, :1],
        }  # fmt: skip
        x_whole = nd.asarray(whole, device=device)
        for name, view in views.items():
            ref, x = view(whole), view(x_whole)
            if name == "broadcast":
                ref, x = np.broadcast_to(ref, (3, 4, 9)), nd.broadcast_to(x, (3, 4, 9))
            one_axis = op in ("fft", "hfft", "ihfft")
            for axes, s, norm in (((1,), None, "backward"), ((0, 2), None, "ortho"), ((2, 0, 1), (4, 3, 6), "forward")):
                if one_axis and len(axes) > 1:
                    continue
                kw = {"axis": axes[0], "n": s[0] if s else None} if one_axis else {"axes": axes, "s": s}
                with h.KernelSpy(device) as spy:
                    got = nd_op(x, norm=norm, **kw)
                expected = _np(getattr(np.fft, op), ref, norm=norm, **kw)
                real_out = op in ("irfftn", "hfft")
                h.assert_same(got, expected, _result(dtype, not real_out), tol=_tol(dtype, 90),
                              msg=f"{op} of {name} {ref.shape}, {kw}, {norm}: ")  # fmt: skip
                if spy.available and s is None:
                    calls = [c for c in spy.calls if c != "alloc"]
                    want = ["fft"] if complex_in or op != "fft" or real_ok else ["cast", "fft"]
                    assert calls == want, f"{op} of {name} over {axes}: kernels {calls}, expected {want}"


@h.hyp()
@given(n=st.integers(1, 9), d=st.sampled_from([1.0, 0.5, 3.0]), data=st.data())
def test_frequencies_and_shifts(device: nd.Device, n: int, d: float, data: st.DataObject) -> None:
    for dtype in _dtypes(device, ("float",)):
        h.assert_same(nd.fft.fftfreq(n, d=d, dtype=dtype, device=device), np.fft.fftfreq(n, d), dtype,
                      tol=_tol(dtype, 1))  # fmt: skip
        h.assert_same(nd.fft.rfftfreq(n, d=d, dtype=dtype, device=device), np.fft.rfftfreq(n, d), dtype,
                      tol=_tol(dtype, 1))  # fmt: skip
    default = nd.fft.fftfreq(n, device=device)
    assert default.dtype is h.default(device, "real floating") and default.device == device
    shape = data.draw(h.shapes(min_dims=1, max_dims=3), label="shape")
    axes = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1), label="axes")
    for dtype in h.supported(device):
        a = data.draw(h.arrays(device, dtype, shape), label=f"x {dtype.name}")
        h.assert_same(nd.fft.fftshift(a.x, axes=axes), np.fft.fftshift(a.ref, axes=axes), dtype, exact=True)
        h.assert_same(nd.fft.ifftshift(a.x, axes=axes), np.fft.ifftshift(a.ref, axes=axes), dtype, exact=True)


@pytest.mark.parametrize("op", ["fft", "ifft"])
def test_fft_of_real_input(device: nd.Device, op: str) -> None:
    """``FFT_REAL_INPUT``: the kernel itself on a real (M, N) signal, every length from 1 to 20 and
    a few long ones (powers of two and not), one row and many, each norm; then ``nd.fft`` on a
    real signal hands it to the kernel uncast."""
    if FFT_REAL_INPUT not in device.backend.capabilities:
        pytest.skip(f"backend {device.backend.name!r} does not declare {FFT_REAL_INPUT!r}")
    backend = device.backend
    rng = np.random.default_rng(7)
    for real in _dtypes(device, ("float",)):
        cplx = _result(real, True)
        if cplx not in backend.dtypes:
            continue
        for n in [*range(1, 21), 32, 63, 64, 100, 128, 255, 256, 1000, 1024]:
            for m, norm in ((1, "backward"), (3, "ortho"), (17, "forward")):
                ref = rng.standard_normal((m, n)).astype(h.np_dtype(real))
                x = nd.asarray(ref, device=device)
                out = nd.empty((m, n), dtype=cplx, device=device)
                backend.fft(op, x._ref, out._ref, norm)
                expected = getattr(np.fft, op)(ref.astype(np.float64), norm=norm)
                h.assert_same(out, expected, cplx, tol=_tol(real, n))
    x = nd.asarray(rng.standard_normal((4, 12)), dtype=_dtypes(device, ("float",))[-1], device=device)
    with h.KernelSpy(device) as spy:
        getattr(nd.fft, op)(x)
    assert "cast" not in spy.calls, f"fft.{op}: the core cast a real signal for a backend declaring {FFT_REAL_INPUT!r}"


def test_errors(device: nd.Device) -> None:
    real = _dtypes(device, ("float",))[0]
    x = nd.ones((4,), dtype=real, device=device)
    with pytest.raises(ValueError, match="norm"):
        nd.fft.rfft(x, norm="both")
    with pytest.raises(ValueError, match="n must be >= 1"):
        nd.fft.rfft(x, n=0)
    with pytest.raises(TypeError, match="floating"):
        nd.fft.fft(nd.ones((4,), dtype=h.default(device, "integral"), device=device))
    cdt = _dtypes(device, ("complex",))
    if cdt:
        with pytest.raises(TypeError, match="real"):
            nd.fft.rfft(nd.ones((4,), dtype=cdt[0], device=device))
