"""The FFT kernels against NumPy's pocketfft (float64 reference), every op, length and norm,
through each engine (FFTW and ducc0) and through the measured choice between them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from ndplane_cpu import _fft
from ndplane_cpu import backend as cpu

from ndplane.backend import Ref
from ndplane.backend import reference as K
from ndplane.backend.ops import FFT, FFT_OPS

if not _fft.available():
    pytest.skip("the cpu backend's FFT is FFTW's or ducc0's (the plugin's [fft] extra)", allow_module_level=True)

ENGINES = [e for e, ok in (("fftw", bool(_fft._fftw_libraries())), ("ducc0", _fft._ducc_available())) if ok]


@pytest.fixture(params=[*ENGINES, "auto"])
def kernel(request, monkeypatch):
    """A fresh ``Backend.fft`` (its own plan cache) whose layouts all run on one engine, or
    on the one measured faster ("auto")."""
    monkeypatch.setenv(_fft.ENGINE_VARIABLE, request.param)
    native = cpu._native()
    fft, plans = _fft.make_fft(native.num_threads, native)
    fft.plans = plans
    fft.engine = request.param
    return fft

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
#: Every op, and fft/ifft of a real signal (FFT_REAL_INPUT: the r2c transform and the mirror)
CASES = [*sorted(FFT_OPS), "fft:real", "ifft:real"]
PRECISIONS = {"single": (np.float32, np.complex64, 2e-6), "double": (np.float64, np.complex128, 1e-13)}


def case(h, op, n, m, precision):
    real, cplx, _ = PRECISIONS[precision]
    width = n // 2 + 1 if op in ("irfft", "hfft") else n
    x = h.rng.standard_normal((m, width))
    if op in COMPLEX_IN:  # NOTE: "fft:real" is not
        x = x + 1j * h.rng.standard_normal((m, width))
    x = x.astype(cplx if op in COMPLEX_IN else real)
    k = n if op.split(":")[0] in ("fft", "ifft", "irfft", "hfft") else n // 2 + 1
    out_dtype = real if op in ("irfft", "hfft") else cplx
    return x, (m, k), out_dtype


def test_declared(h):
    assert FFT in h.be.capabilities and FFT_OPS <= h.be.ops


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("op", CASES)
def test_matches_numpy(h, kernel, op, precision):
    name = op.split(":")[0]
    for n in LENGTHS:
        for norm in ("backward", "ortho", "forward"):
            x, shape, out_dtype = case(h, op, n, 3, precision)
            out = h.empty(shape, out_dtype)
            kernel(name, h.put(x), out, norm)
            got = h.get(out)
            wide = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
            want = getattr(np.fft, name)(wide, n=n, axis=-1, norm=norm)
            assert got.dtype == out_dtype and got.shape == want.shape
            # relative to the largest coefficient: the accuracy pocketfft reaches
            err = np.max(np.abs(got - want)) / np.max(np.abs(want))
            assert err < PRECISIONS[precision][2] * np.log2(max(n, 2)), (op, n, norm, err)


@pytest.mark.parametrize("op", CASES)
def test_against_the_reference_kernel_many_rows(h, kernel, op):
    # enough rows for the threaded paths and for a measured choice (past _fft.SMALL elements)
    name = op.split(":")[0]
    n = 300
    x, shape, out_dtype = case(h, op, n, 257, "double")
    want = np.empty(shape, out_dtype)
    K.fft(name, x, want, "ortho")
    out = h.empty(shape, out_dtype)
    kernel(name, h.put(x), out, "ortho")
    np.testing.assert_allclose(h.get(out), want, rtol=1e-12, atol=1e-12)
    if kernel.engine != "auto":  # a real signal's way ("mirror:" or "cast:") runs on that engine too
        assert kernel.plans.engine(name, h.put(x), out).split(":")[-1] == kernel.engine


@pytest.mark.parametrize("op", CASES)
@pytest.mark.parametrize("precision", PRECISIONS)
def test_rows_at_every_alignment(h, kernel, op, precision):
    # x and out starting 0, 1, 2, ... elements past a 64-byte boundary: FFTW plans per alignment
    for shift in range(5):
        for m, n in ((4, 16), (130, 128)):  # an estimated plan, and a measured one
            x, shape, out_dtype = case(h, op, n, m, precision)
            base = np.zeros((x.size + shift,), x.dtype)
            base[shift:] = x.ravel()
            src = h.put(base[shift:].reshape(x.shape), base)
            out_base = h.empty((shape[0] * shape[1] + shift,), out_dtype)
            out = Ref(out_base.buffer, out_base.dtype, shape, (shape[1], 1), shift, shape[0] * shape[1], True)
            kernel(op.split(":")[0], src, out, "ortho")
            want = getattr(np.fft, op.split(":")[0])(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64), n=n, norm="ortho")
            got = h.get(out_base)[shift:].reshape(shape)
            tol = PRECISIONS[precision][2] * 10
            assert np.max(np.abs(got - want)) / np.max(np.abs(want)) < tol, (op, shift, m, n)


@pytest.mark.parametrize("way", ["mirror", "cast", "large"])
@pytest.mark.parametrize("engine", ENGINES)
def test_fft_of_real_input_each_way(h, monkeypatch, engine, way):
    """FFT_REAL_INPUT's two ways (Plans._choose_real), each forced on each engine: the r2c op and
    the conjugate mirror, or the cast and the c2c op in place; "large" is the mirror unmeasured
    (above LARGE bytes). Short rows and long, one row and many (threaded chunks), single and double."""
    monkeypatch.setenv(_fft.ENGINE_VARIABLE, engine)
    if way == "large":
        monkeypatch.setattr(_fft, "LARGE", 0)
    else:
        monkeypatch.setattr(_fft, "_fastest", lambda candidates, x, out: next(k for k in candidates if k.startswith(way)))
    native = cpu._native()
    fft, plans = _fft.make_fft(native.num_threads, native)
    for op in ("fft", "ifft"):
        for precision in PRECISIONS:
            for m, n in ((1, 1), (1, 2), (3, 5), (2, 16), (130, 128), (40, 1000), (1, 4099)):
                x, shape, out_dtype = case(h, op + ":real", n, m, precision)
                for norm in ("backward", "ortho", "forward"):
                    out = h.empty(shape, out_dtype)
                    fft(op, h.put(x), out, norm)
                    want = getattr(np.fft, op)(x.astype(np.float64), norm=norm)
                    err = np.max(np.abs(h.get(out) - want)) / max(np.max(np.abs(want)), 1e-300)
                    assert err < PRECISIONS[precision][2] * np.log2(max(n, 2)), (op, precision, m, n, norm, err)
                chosen = plans.engine(op, h.put(x), out)
                assert chosen == f"{'mirror' if way == 'large' else way}:{engine}", chosen


def test_real_input_gives_exactly_real_dc_and_nyquist(h, kernel):
    for n in (6, 7, 100, 101):
        x = h.rng.standard_normal((2, n))
        out = h.empty((2, n // 2 + 1), np.complex128)
        kernel("rfft", h.put(x), out, "backward")
        got = h.get(out)
        assert (got[:, 0].imag == 0).all() and (n % 2 or (got[:, -1].imag == 0).all())


@pytest.mark.parametrize("m", [1, 200])
def test_irfft_ignores_imaginary_dc_and_nyquist_like_numpy(h, kernel, m):
    for n in (4, 5, 128):
        x = h.rng.standard_normal((m, n // 2 + 1)) + 1j * h.rng.standard_normal((m, n // 2 + 1))
        for op in ("irfft", "hfft"):
            out = h.empty((m, n), np.float64)
            kernel(op, h.put(x), out, "backward")
            np.testing.assert_allclose(h.get(out), getattr(np.fft, op)(x, n=n), rtol=1e-12, atol=1e-12)


def test_the_input_is_never_overwritten(h, kernel):
    for op in sorted(FFT_OPS):
        for m, n in ((3, 16), (200, 256)):
            x, shape, out_dtype = case(h, op, n, m, "single")
            src = h.put(x)
            kernel(op, src, h.empty(shape, out_dtype), "backward")
            np.testing.assert_array_equal(h.get(src), x)


def test_auto_measures_once_per_layout_and_keeps_the_choice(h, monkeypatch):
    if len(ENGINES) < 2:
        pytest.skip("needs both engines")
    monkeypatch.setenv(_fft.ENGINE_VARIABLE, "auto")
    native = cpu._native()
    fft, plans = _fft.make_fft(native.num_threads, native)
    calls = []
    real = plans._choose
    monkeypatch.setattr(plans, "_choose", lambda *a: calls.append(a[0]) or real(*a))
    x = h.put(h.rng.standard_normal((256, 256)))
    out = h.empty((256, 129), np.complex128)
    for _ in range(3):
        fft("rfft", x, out, "backward")
    fft("rfft", x, out, "ortho")  # another norm: its own runner
    assert calls == ["rfft", "rfft"]
    assert plans.engine("rfft", x, out) in ENGINES


def test_the_plan_cache_is_bounded(h, monkeypatch):
    monkeypatch.setattr(_fft, "PLANS", 4)
    native = cpu._native()
    fft, plans = _fft.make_fft(native.num_threads, native)
    x0 = h.put(h.rng.standard_normal((2, 8)))
    out0 = h.empty((2, 5), np.complex128)
    held = plans.get("rfft", 0, x0, out0, native.num_threads())  # as a kernel call holds it
    for n in range(9, 20):
        x = h.put(h.rng.standard_normal((2, n)))
        fft("rfft", x, h.empty((2, n // 2 + 1), np.complex128), "backward")
    assert len(plans.runners) == 4
    # dropped from the cache while held: its plan lives until the runner does
    held(x0, out0)
    np.testing.assert_allclose(h.get(out0), np.fft.rfft(h.get(x0)), rtol=1e-12, atol=1e-12)


def test_engine_variable_errors(h, monkeypatch):
    native = cpu._native()
    x = h.put(np.ones((2, 8), np.complex128))
    monkeypatch.setenv(_fft.ENGINE_VARIABLE, "mkl")
    fft, _ = _fft.make_fft(native.num_threads, native)
    with pytest.raises(ValueError, match="NDPLANE_CPU_FFT must be auto, fftw or ducc0; got 'mkl'"):
        fft("fft", x, h.empty((2, 8), np.complex128), "backward")
    monkeypatch.setattr(_fft, "_ducc_available", lambda: False)
    monkeypatch.setenv(_fft.ENGINE_VARIABLE, "ducc0")
    with pytest.raises(ValueError, match=r"NDPLANE_CPU_FFT=ducc0, but ducc0 is not installed.*ndplane-cpu\[fft\]"):
        fft("fft", x, h.empty((2, 8), np.complex128), "backward")


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
    with pytest.raises(TypeError, match=r"x must be complex64 or complex128 \(or float32 or float64\); got int32"):
        h.be.fft("fft", h.put(np.ones((2, 8), np.int32)), h.empty((2, 8), np.complex128), "backward")
    with pytest.raises(TypeError, match="x must be complex64 or complex128; got float64"):
        h.be.fft("irfft", h.put(np.ones((2, 5), np.float64)), h.empty((2, 8), np.float64), "backward")
    real = h.put(np.ones((2, 8), np.float32))  # fft of a real x (FFT_REAL_INPUT): out as long, complex64
    with pytest.raises(TypeError, match="out must be complex64 for x of float32"):
        h.be.fft("ifft", real, h.empty((2, 8), np.complex128), "backward")
    with pytest.raises(ValueError, match=r"fft\.fft: x \(2, 8\) and out \(2, 5\)"):
        h.be.fft("fft", real, h.empty((2, 5), np.complex64), "backward")
    with pytest.raises(ValueError, match="unknown op 'fft2'"):
        h.be.fft("fft2", x, h.empty((2, 8), np.complex128), "backward")
    with pytest.raises(ValueError, match="unknown norm 'both'"):
        h.be.fft("fft", x, h.empty((2, 8), np.complex128), "both")
    with pytest.raises(ValueError, match="C-contiguous"):
        base = np.ones((2, 16), np.complex128)
        h.be.fft("fft", h.put(base[:, ::2], base), h.empty((2, 8), np.complex128), "backward")


# ---------------------------------------------------------------------------
# through ndplane.fft on the cpu device: the engines behind the core's padding, axes and layouts
# ---------------------------------------------------------------------------
nd = pytest.importorskip("ndplane")
PRIMES = [2, 3, 5, 7, 11, 13, 97, 101, 331, 1009, 4093]
ODD_LENGTHS = [6, 9, 10, 15, 30, 100, 243, 250, 1000, 1001, 2 * 3 * 5 * 7 * 11, 17 * 19 * 23]
ONE_D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")


def _call(mod, op, x, **kw):
    return getattr(mod.fft, op)(x, **kw)


def _input(rng, op, shape, dtype=np.float64):
    x = rng.standard_normal(shape)
    if op in COMPLEX_IN:
        x = x + 1j * rng.standard_normal(shape)
        return x.astype(np.complex64 if dtype == np.float32 else np.complex128)
    return x.astype(dtype)


def _check(got, want, tol=1e-12):
    got = got.to_numpy()
    assert got.shape == want.shape
    scale = max(np.max(np.abs(want)), 1e-300)
    assert np.max(np.abs(got - want)) / scale < tol


@pytest.mark.parametrize("op", ONE_D)
@pytest.mark.parametrize("n", PRIMES + ODD_LENGTHS)
def test_api_non_power_of_two_and_prime_lengths_against_numpy(op, n):
    rng = np.random.default_rng(n)
    x = _input(rng, op, (3, n))
    for norm in ("backward", "ortho", "forward"):
        got = _call(nd, op, nd.asarray(x, device="cpu"), norm=norm)
        _check(got, _call(np, op, x, norm=norm), 1e-12 * np.log2(n + 1))


@pytest.mark.parametrize("op", ONE_D)
def test_api_n_pads_and_truncates(op):
    rng = np.random.default_rng(1)
    x = _input(rng, op, (4, 37))
    for n in (1, 2, 17, 36, 37, 38, 101):
        got = _call(nd, op, nd.asarray(x, device="cpu"), n=n)
        _check(got, _call(np, op, x, n=n), 1e-12)


@pytest.mark.parametrize("op", ONE_D)
def test_api_strided_and_negatively_strided_inputs(op):
    rng = np.random.default_rng(2)
    base = _input(rng, op, (9, 14, 33))
    a = nd.asarray(base, device="cpu")
    views = [
        (lambda t: t[::2, 1:, ::-1], {}),  # steps and a negative step on the transform axis
        (lambda t: t[::-1, ::3, 2:], {"axis": 0}),  # a reversed transform axis that is not last
        (lambda t: t[1:, :, 5], {"axis": 1}),  # a strided transform axis
    ]
    for view, kw in views:
        _check((_call(nd, op, view(a), **kw)), _call(np, op, view(base), **kw), 1e-12)
    # a transposed (F-ordered) operand
    _check((_call(nd, op, nd.permute_dims(a, (2, 1, 0)))), _call(np, op, base.transpose(2, 1, 0)), 1e-12)


@pytest.mark.parametrize("op", ONE_D)
def test_api_large_batches_use_the_threads(op):
    rng = np.random.default_rng(3)
    x = _input(rng, op, (6000, 97))
    _check((_call(nd, op, nd.asarray(x, device="cpu"))), _call(np, op, x), 1e-12)


@pytest.mark.parametrize("op", ("fftn", "ifftn", "rfftn", "irfftn"))
def test_api_n_dimensional_against_numpy(op):
    rng = np.random.default_rng(4)
    x = _input(rng, op[:-1], (6, 7, 10))
    for kw in ({}, {"axes": (0, 2)}, {"s": (5, 12), "axes": (2, 0)}, {"axes": (1,), "norm": "ortho"}):
        _check((_call(nd, op, nd.asarray(x, device="cpu"), **kw)), _call(np, op, x, **kw), 1e-12)


@pytest.mark.parametrize("op", ONE_D)
def test_api_single_precision_stays_single(op):
    rng = np.random.default_rng(5)
    x = _input(rng, op, (5, 250), np.float32)
    got = _call(nd, op, nd.asarray(x, device="cpu"))
    want = _call(np, op, x.astype(np.complex128 if x.dtype.kind == "c" else np.float64))
    assert got.dtype == (nd.float32 if op in ("irfft", "hfft") else nd.complex64)
    _check(got, want, 1e-5)


def test_api_zero_length_transform_raises():
    with pytest.raises(ValueError, match="n must be >= 1"):
        nd.fft.fft(nd.zeros((3, 0), dtype=nd.complex128, device="cpu"))
    with pytest.raises(ValueError, match="n must be >= 1"):
        nd.fft.rfft(nd.ones((3, 4), device="cpu"), n=0)
    assert nd.fft.fft(nd.zeros((0, 4), dtype=nd.complex128, device="cpu")).shape == (0, 4)


@pytest.mark.parametrize("engine", ENGINES)
def test_threads_follow_the_backend(monkeypatch, engine):
    monkeypatch.setenv(_fft.ENGINE_VARIABLE, engine)
    native = cpu._native()
    fft, plans = _fft.make_fft(native.num_threads, native)
    seen = []
    if engine == "ducc0":
        import ducc0

        real_c2c = ducc0.fft.c2c
        monkeypatch.setattr(ducc0.fft, "c2c", lambda *a, **kw: seen.append(kw["nthreads"]) or real_c2c(*a, **kw))
    before = native.num_threads()
    x = nd.asarray(np.ones((67, 301), np.complex128), device="cpu")  # past _fft.SMALL elements
    out = nd.empty((67, 301), dtype=nd.complex128, device="cpu")
    try:
        for threads in (1, 2, 3):
            native.set_num_threads(threads)
            fft("fft", x._ref, out._ref, "backward")
            np.testing.assert_allclose(out.to_numpy()[:, 0], 301)
    finally:
        native.set_num_threads(before)
    if engine == "ducc0":
        assert seen == [1, 2, 3]
    else:
        # FFTW: one plan per thread count; the rows cut into one chunk per thread, every chunk
        # but the last a whole number of 64-byte steps (a row of 301 complex128 is 4816 bytes: 4 rows)
        runners = [run for _, run in plans.runners.values()]
        assert [r.chunks for r in runners] == [1, 2, 3]
        assert [r.x_step // 4816 for r in runners] == [67, 36, 24]
        assert all(r.x_step % 64 == 0 and r.out_step % 64 == 0 for r in runners[1:])


@pytest.mark.parametrize("op", ONE_D)
def test_api_rows_at_critical_strides(op):
    # out rows a multiple of 4 KiB apart in single precision: the padded scratch path of _fft.py
    rng = np.random.default_rng(6)
    n = 1024 if op in ("irfft", "hfft") else 512
    x = _input(rng, op, (40, n // 2 + 1 if op in ("irfft", "hfft") else n), np.float32)
    got = _call(nd, op, nd.asarray(x, device="cpu"), n=n)
    _check(got, _call(np, op, x.astype(np.complex128 if x.dtype.kind == "c" else np.float64), n=n), 1e-5)


def test_without_fftw_and_ducc0_the_fft_is_not_claimed(monkeypatch):
    monkeypatch.setattr(_fft, "available", lambda: False)
    cls = cpu._make_backend_class()
    assert FFT not in cls.capabilities and not (FFT_OPS & cls.ops)
    assert not cls(0).supports("rfft", nd.float64)
    assert cls.host_ops == FFT_OPS  # the host fallback on purpose: no warning, no FallbackError
    assert "ndplane-cpu[fft]" in cls.notes[0]  # `ndplane info cpu` says how to get it


# ---------------------------------------------------------------------------
# fft-axes: layouts that are not rows, through each way (ducc0 as they lie, or by rows)
# ---------------------------------------------------------------------------
AXES_CASES = [
    ("fft", (1,)), ("fft", (0, 2)), ("ifft", (2, 0, 1)), ("rfft", (0,)), ("rfft", (2, 0)), ("irfft", (1, 2)),
    ("irfft", (0,)), ("hfft", (1,)), ("ihfft", (0,)), ("fft:real", (0, 1)), ("ifft:real", (2,)),
]  # fmt: skip
AXES_VIEWS = {
    "transposed": lambda m, a: m.permute_dims(a, (2, 0, 1)) if m is nd else a.transpose(2, 0, 1),
    "reversed": lambda m, a: a[::-1, :, ::-2],
    "sliced": lambda m, a: a[1:6, ::3],
    "broadcast": lambda m, a: m.broadcast_to(a[:1], (7, 10, 12)),
    "contiguous, an inner axis": lambda m, a: a,
}


def _operand(rng: np.random.Generator, shape: tuple[int, ...], complex_in: bool, real: Any, cplx: Any) -> np.ndarray:
    base = rng.standard_normal(shape)
    return (base + 1j * rng.standard_normal(shape)).astype(cplx) if complex_in else base.astype(real)


def _numpy_over_axes(op: str, ref: np.ndarray, axes: tuple[int, ...], norm: str) -> np.ndarray:
    """NumPy's ``op`` over ``axes`` in double precision: the reference."""
    wide = ref.astype(np.complex128 if ref.dtype.kind == "c" else np.float64)
    if len(axes) == 1:
        return getattr(np.fft, op)(wide, axis=axes[0], norm=norm)
    return getattr(np.fft, op + "n")(wide, axes=axes, norm=norm)


@pytest.mark.parametrize(("case", "axes"), AXES_CASES)
def test_over_axes_each_way(kernel, case, axes):
    """``fft-axes`` on a layout that is not rows: ducc0 as it lies (NDPLANE_CPU_FFT=ducc0), one
    axis at a time as rows on FFTW's plans (=fftw), or the faster measured (auto), each norm."""
    op, real_in = case.split(":")[0], case.endswith(":real")
    rng = np.random.default_rng(len(case) + sum(axes))
    for real, cplx, tol in PRECISIONS.values():
        base = _operand(rng, (7, 10, 12), op in COMPLEX_IN and not real_in, real, cplx)
        whole = nd.asarray(base, device="cpu")
        for view in AXES_VIEWS.values():
            ref, x = view(np, base), view(nd, whole)
            for norm in ("backward", "ortho", "forward"):
                want = _numpy_over_axes(op, ref, axes, norm)
                out = nd.empty(want.shape, dtype=real if want.dtype.kind == "f" else cplx, device="cpu")
                kernel(op, x._ref, out._ref, norm, axes)
                _check(out, want, tol * 10)
        ways = {way for key, (way, _) in kernel.plans.runners.items() if key[0] == "axes"}
        if kernel.engine == "auto":
            assert ways <= {"ducc0", "rows", "strides", "blocks"}, ways
        elif kernel.engine == "ducc0":
            assert ways == {"ducc0"}, ways
        else:  # in place where the other axes merge into one (a contiguous x), else by rows
            assert ways and ways <= {"rows", "strides"}, ways


COLUMN_SHAPES = [(256, 256), (250, 250), (64, 3), (3, 64), (512, 40), (17, 1024), (2, 2)]


@pytest.mark.parametrize("precision", list(PRECISIONS))
@pytest.mark.parametrize(("m", "n"), COLUMN_SHAPES)
def test_column_runner_blocks_and_tails(precision, m, n):
    """``_ColumnRunner``: c2c down the n columns of an (m, n) array a block of columns at a time
    (blocks over the threads, a narrower last block, power-of-two rows and their padded
    scratch), into an out of another row stride and in place, each norm, both signs."""
    if "fftw" not in ENGINES:
        pytest.skip("the column runner runs FFTW's plans")
    _, cplx, tol = PRECISIONS[precision]
    native = cpu._native()
    plans = _fft.Plans(native)
    rng = np.random.default_rng(m * n)
    base = (rng.standard_normal((m, n)) + 1j * rng.standard_normal((m, n))).astype(cplx)
    for op in ("fft", "ifft"):
        for norm in ("backward", "ortho", "forward"):
            inorm = _fft._INORM[norm][_fft._OPS[op][2]]
            want = getattr(np.fft, op)(base.astype(np.complex128), axis=0, norm=norm)
            x = nd.asarray(base, device="cpu")
            wide = nd.full((m, n + 5), nd.nan, dtype=cplx, device="cpu")
            out = wide[:, :n]
            a, o = x._ref.permuted((1, 0)), out._ref.permuted((1, 0))
            assert _fft._columns(op, a, o) == (m > 1 and n > 1)
            if not _fft._columns(op, a, o):
                continue
            plans.columns(op, inorm, a, o)(a, o)
            _check(out, want, tol * 10)
            assert np.isnan(wide.to_numpy()[:, n:]).all(), "wrote past the columns"
            plans.columns(op, inorm, a, a)(a, a)  # in place
            _check(x, want, tol * 10)
    with pytest.raises(ValueError, match="_call_columns: expected"):
        native._call_columns(0, 1, 1, 1, 8, 1, 8, 4, 4, 4, 4, 8, 1.0)
    with pytest.raises(ValueError, match="itemsize of 8 or 16"):
        native._call_columns(1, 1, 1, 1, 8, 1, 8, 4, 4, 4, 4, 4, 1.0)


@pytest.mark.parametrize("shape", [(6, 10), (16, 8), (1, 9), (9, 1), (4, 6, 10)])
@pytest.mark.parametrize(("op", "axes"), [("fft", (0, 1)), ("ifft", (0, 1)), ("fft", (0,)), ("rfft", (0, 1)),
                                          ("irfft", (0, 1)), ("hfft", (0,)), ("ihfft", (0,)), ("fft", (1, 0)),
                                          ("rfft", (1, 0)), ("irfft", (-1, 0))])  # fmt: skip
def test_by_strides_transforms_each_axis_where_it_lies(kernel, shape, op, axes):
    """The strided way (``_by_strides``): each 1-D transform reads and writes its operands as
    they lie (the columns of a C-contiguous array are rows of stride N), on each engine, every
    norm, into a C-contiguous out and into a transposed one; and with ``blocks``, the c2c steps
    down columns through ``_ColumnRunner``'s scratch."""
    axes = tuple(a % len(shape) for a in axes)
    if len(shape) == 3 and axes in ((0, 1), (1, 0)):
        axes = (0, 2) if axes == (0, 1) else (2, 0)
    if op in ("irfft", "hfft") and shape[axes[-1]] == 1:
        pytest.skip("a c2r transform of one element has no output")
    rng = np.random.default_rng(sum(shape))
    plans = kernel.plans
    for real, cplx, tol in PRECISIONS.values():
        base = _operand(rng, shape, op in COMPLEX_IN, real, cplx)
        x = nd.asarray(base, device="cpu")
        for norm in ("backward", "ortho", "forward"):
            want = _numpy_over_axes(op, base, axes, norm)
            dtype = real if want.dtype.kind == "f" else cplx
            for out in (nd.empty(want.shape, dtype=dtype, device="cpu"),
                        nd.permute_dims(nd.empty(want.shape[::-1], dtype=dtype, device="cpu"),
                                        tuple(range(len(shape)))[::-1])):  # fmt: skip
                steps = _fft._strided_steps(op, x._ref, out._ref, axes)
                if steps is None:  # out's other axes do not merge, or a real signal's fft into strided rows
                    assert not out._ref.contiguous and (len(shape) == 3 or base.dtype.kind == "f")
                    continue
                for blocks in (False, True):
                    out[...] = nd.nan
                    _fft._by_strides(plans, op, norm, steps, 2, blocks)(x._ref, out._ref)
                    _check(out, want, tol * 10)
    assert _fft._strided_steps("fft", nd.ones((3, 4, 5), dtype=nd.complex64)._ref,
                               nd.ones((3, 4, 5), dtype=nd.complex64)._ref, (1,)) is None, "the middle axis"  # fmt: skip
