"""The FFT kernels against NumPy's pocketfft (float64 reference), every op, length and norm."""

from __future__ import annotations

import numpy as np
import pytest

from ndplane.backend import reference as K
from ndplane.backend.ops import FFT, FFT_OPS

LENGTHS = [
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    8,
    12,
    16,
    17,
    30,
    64,
    97,
    100,
    128,
    1000,
    1024,
    4096,
    4099,
    3 * 5 * 7 * 11 * 13,
]
COMPLEX_IN = {"fft", "ifft", "irfft", "hfft"}
PRECISIONS = {"single": (np.float32, np.complex64, 2e-6), "double": (np.float64, np.complex128, 1e-13)}


def case(h, op, n, m, precision):
    real, cplx, _ = PRECISIONS[precision]
    width = n // 2 + 1 if op in ("irfft", "hfft") else n
    x = h.rng.standard_normal((m, width))
    if op in COMPLEX_IN:
        x = x + 1j * h.rng.standard_normal((m, width))
    x = x.astype(cplx if op in COMPLEX_IN else real)
    k = n if op in ("fft", "ifft", "irfft", "hfft") else n // 2 + 1
    out_dtype = real if op in ("irfft", "hfft") else cplx
    return x, (m, k), out_dtype


def test_declared(h):
    assert FFT in h.be.capabilities and FFT_OPS <= h.be.ops


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("op", sorted(FFT_OPS))
def test_matches_numpy(h, op, precision):
    for n in LENGTHS:
        for norm in ("backward", "ortho", "forward"):
            x, shape, out_dtype = case(h, op, n, 3, precision)
            out = h.empty(shape, out_dtype)
            h.be.fft(op, h.put(x), out, norm)
            got = h.get(out)
            wide = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
            want = getattr(np.fft, op)(wide, n=n, axis=-1, norm=norm)
            assert got.dtype == out_dtype and got.shape == want.shape
            # relative to the largest coefficient: the accuracy pocketfft reaches
            err = np.max(np.abs(got - want)) / np.max(np.abs(want))
            assert err < PRECISIONS[precision][2] * np.log2(max(n, 2)), (op, n, norm, err)


def test_against_the_reference_kernel_many_rows(h):
    x = h.rng.standard_normal((257, 300))  # enough rows for the threaded path
    want = np.empty((257, 151), np.complex128)
    K.fft("rfft", x, want, "ortho")
    out = h.empty((257, 151), np.complex128)
    h.be.fft("rfft", h.put(x), out, "ortho")
    np.testing.assert_allclose(h.get(out), want, rtol=1e-12, atol=1e-12)


def test_real_input_gives_exactly_real_dc_and_nyquist(h):
    for n in (6, 7, 100, 101):
        x = h.rng.standard_normal((2, n))
        out = h.empty((2, n // 2 + 1), np.complex128)
        h.be.fft("rfft", h.put(x), out, "backward")
        got = h.get(out)
        assert (got[:, 0].imag == 0).all() and (n % 2 or (got[:, -1].imag == 0).all())


def test_irfft_ignores_imaginary_dc_and_nyquist_like_numpy(h):
    x = np.array([[1 + 5j, 2 - 1j, 3 + 7j]])  # n = 4: x[0] and x[2] are DC and Nyquist
    out = h.empty((1, 4), np.float64)
    h.be.fft("irfft", h.put(x), out, "backward")
    np.testing.assert_allclose(h.get(out), np.fft.irfft(x, n=4), rtol=1e-15, atol=1e-15)


def test_empty_and_bad_arguments(h):
    h.be.fft("fft", h.put(np.zeros((0, 4), np.complex128)), h.empty((0, 4), np.complex128), "backward")
    x = h.put(np.ones((2, 8), np.complex128))
    with pytest.raises(ValueError, match=r"fft\.fft: x \(2, 8\) and out \(2, 5\)"):
        h.be.fft("fft", x, h.empty((2, 5), np.complex128), "backward")
    with pytest.raises(ValueError, match=r"fft\.irfft"):
        h.be.fft("irfft", x, h.empty((2, 8), np.float64), "backward")  # needs N = 8 // 2 + 1
    with pytest.raises(TypeError, match="out must be complex128"):
        h.be.fft("fft", x, h.empty((2, 8), np.complex64), "backward")
    with pytest.raises(TypeError, match="x must be float32 or float64"):
        h.be.fft("rfft", x, h.empty((2, 5), np.complex128), "backward")
    with pytest.raises(TypeError, match="x must be complex64 or complex128"):
        h.be.fft("fft", h.put(np.ones((2, 8), np.float64)), h.empty((2, 8), np.complex128), "backward")
    with pytest.raises(ValueError, match="unknown op 'fft2'"):
        h.be.fft("fft2", x, h.empty((2, 8), np.complex128), "backward")
    with pytest.raises(ValueError, match="unknown op 'both'"):
        h.be.fft("fft", x, h.empty((2, 8), np.complex128), "both")
    with pytest.raises(ValueError, match="C-contiguous"):
        base = np.ones((2, 16), np.complex128)
        h.be.fft("fft", h.put(base[:, ::2], base), h.empty((2, 8), np.complex128), "backward")
