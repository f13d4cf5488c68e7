"""Creation, host round trips, dtypes (astype, unsupported dtypes) and devices."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import numpy as np
import pytest
from hypothesis import given

import ndplane as nd
from ndplane.backend import Backend, ops
from ndplane.conformance import _helpers as h

ALL_NAMES = [d.name for d in nd.ALL_DTYPES]


def test_backend_description(device: nd.Device) -> None:
    """The description attributes the protocol asks for, and consistent default dtypes."""
    b = device.backend
    assert b.name == device.kind
    assert b.protocol_version == ops.PROTOCOL_VERSION
    assert b.dtypes and set(b.dtypes) <= set(nd.ALL_DTYPES)
    assert nd.bool in b.dtypes
    for kind in ("real floating", "integral", "indexing"):
        assert b.default_dtypes[kind] in b.dtypes, f"default {kind} dtype is not supported"
    assert b.default_dtypes["real floating"].kind == "float"
    assert b.default_dtypes["integral"].kind == "int"
    assert b.default_dtypes["indexing"].kind == "int"
    if b.default_dtypes.get("complex floating") is not None and h.supported(device, ("complex",)):
        assert b.default_dtypes["complex floating"] in b.dtypes
    assert set(b.capabilities) <= set(ops.CAPABILITIES) | {
        c for c in b.capabilities if ":" in c or c in ("fft", "linalg")
    }
    known = set().union(*(v for v in vars(ops).values() if isinstance(v, frozenset)))
    assert set(b.ops) <= known | {o for o in b.ops if ":" in o}, set(b.ops) - known
    stats = b.memory_stats()
    assert set(stats) >= {"buffers", "bytes"} and all(isinstance(v, int) for v in stats.values())
    assert device in nd.devices()


@pytest.mark.parametrize("dtype_name", ALL_NAMES)
@h.hyp()
@given(layout=h.layouts())
def test_round_trip(device: nd.Device, dtype_name: str, layout: h.Layout) -> None:
    """NumPy -> device -> NumPy keeps every value bit for bit, from any layout (to_numpy copies)."""
    dtype = h.skip_unless(device, dtype_name)
    a = layout.build(device, dtype)
    h.assert_same(a.x, a.ref, dtype, exact=True, signed_zeros=True)
    got = a.x.to_numpy()
    assert got.flags.c_contiguous and got.flags.writeable, "to_numpy() must return a C-contiguous copy"


def test_asarray_python_data_gets_default_dtypes(device: nd.Device) -> None:
    defaults = device.backend.default_dtypes
    assert nd.asarray([1, 2], device=device).dtype is defaults["integral"]
    assert nd.asarray([1.5], device=device).dtype is defaults["real floating"]
    assert nd.asarray(True, device=device).dtype is nd.bool
    x = nd.asarray([[1, 2], [3, 4]], device=device)
    assert x.device == device and x.shape == (2, 2) and x.tolist() == [[1, 2], [3, 4]]
    y = nd.asarray(x, copy=True)
    assert y._storage is not x._storage
    assert nd.asarray(x) is x


def test_asarray_python_ints_exact_at_every_width(device: nd.Device) -> None:
    """Python ints are converted exactly to the integer dtype asked for, even where NumPy's own
    guess for the list is float64 (a value above int64's range beside small ones); ints that no
    dtype holds raise OverflowError, never a rounded value."""
    for dt in h.supported(device, ("int", "uint")):
        info = np.iinfo(h.np_dtype(dt))
        values = [int(info.max), 0, int(info.min), 1]
        assert nd.asarray(values, dtype=dt, device=device).tolist() == values
        assert nd.asarray([values[:2], values[2:]], dtype=dt, device=device).tolist() == [values[:2], values[2:]]
        for bad in ([int(info.max) + 1, 0], [0.5, int(info.min) - 1]):
            with pytest.raises(OverflowError, match="asarray"):
                nd.asarray(bad, dtype=dt, device=device)
    wide: list[Any] = [[2**64, 0], 2**64, [[1], [-(2**63) - 1]]]
    for too_wide in wide:
        with pytest.raises(OverflowError, match="asarray"):
            nd.asarray(too_wide, device=device)


def test_asarray_copy_of_numpy_arrays(device: nd.Device) -> None:
    """copy=None and copy=True copy a NumPy array; copy=False shares its memory where the device
    is host-resident and the array C-contiguous, aligned, writeable and of the asked dtype, and
    raises ValueError everywhere else (never a silent copy)."""
    backend = device.backend
    # NOTE: sharing is optional: a host-resident backend that keeps Backend.adopt_host's default
    # (pylist) declines, and copy=False then raises like on any other device
    host_resident = "host" in backend.capabilities and type(backend).adopt_host is not Backend.adopt_host
    for dtype in h.supported(device):
        src = np.arange(6).reshape(2, 3).astype(h.np_dtype(dtype))
        before = src.copy()
        copied, copied_too = nd.asarray(src, device=device), nd.asarray(src, device=device, copy=True)
        if host_resident:
            shared = nd.asarray(src, device=device, copy=False)
            assert shared.dtype is dtype and shared.shape == (2, 3) and shared.device == device
            src[1] = src[0]
            h.assert_same(shared, src, dtype, exact=True, msg=f"{dtype.name} shared: ")
            shared[0, 0] = src[1, 2]  # a write through the Array shows in the NumPy array
            assert src[0, 0] == src[1, 2], f"{dtype.name}: the write did not reach NumPy's memory"
        else:
            with pytest.raises(ValueError, match="copy=False"):
                nd.asarray(src, device=device, copy=False)
        for c in (copied, copied_too):
            h.assert_same(c, before, dtype, exact=True, msg=f"{dtype.name} copied: ")
    x = np.arange(6.0).reshape(2, 3)
    fdt = h.default(device, "real floating")
    readonly = x.astype(h.np_dtype(fdt))
    readonly.flags.writeable = False
    other = nd.float32 if fdt is not nd.float32 else nd.float64
    for bad in (readonly, x.astype(h.np_dtype(fdt)).T, np.zeros((0, 2), h.np_dtype(fdt))):
        with pytest.raises(ValueError, match="copy=False"):
            nd.asarray(bad, device=device, copy=False)
    if other in device.backend.dtypes:
        with pytest.raises(ValueError, match="copy=False"):
            nd.asarray(x.astype(h.np_dtype(fdt)), dtype=other, device=device, copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        nd.asarray([1.0, 2.0], device=device, copy=False)


def test_creation_functions(device: nd.Device) -> None:
    fdt = h.default(device, "real floating")
    idt = h.default(device, "integral")
    checks = [
        (nd.zeros((2, 0, 3), device=device), np.zeros((2, 0, 3)), fdt),
        (nd.ones((3,), device=device), np.ones(3), fdt),
        (nd.full((2, 2), 7, device=device), np.full((2, 2), 7), idt),
        (nd.full((), -0.0, device=device), np.full((), -0.0), fdt),
        (nd.arange(5, device=device), np.arange(5), idt),
        (nd.arange(1, -5, -2, device=device), np.arange(1, -5, -2), idt),
        (nd.arange(0.0, 1.0, 0.25, device=device), np.arange(0.0, 1.0, 0.25), fdt),
        (nd.linspace(0, 1, 5, device=device), np.linspace(0, 1, 5), fdt),
        (nd.eye(3, 4, k=1, device=device), np.eye(3, 4, k=1), fdt),
        (nd.eye(2, k=-1, device=device), np.eye(2, k=-1), fdt),
    ]
    for got, expected, dtype in checks:
        assert got.device == device
        h.assert_same(got, expected.astype(h.np_dtype(dtype)), dtype, exact=True, signed_zeros=True)
    x = nd.asarray(np.arange(6.0).reshape(2, 3).astype(h.np_dtype(fdt)), device=device)
    for fn, ref in ((nd.zeros_like, np.zeros_like), (nd.ones_like, np.ones_like)):
        h.assert_same(fn(x.T), ref(x.to_numpy().T), fdt)
    h.assert_same(nd.full_like(x, 2), np.full((2, 3), 2.0), fdt)
    assert nd.empty_like(x).shape == (2, 3) and nd.empty((0,), device=device).size == 0
    for dtype in h.supported(device):
        z = nd.zeros((2,), dtype=dtype, device=device)
        h.assert_same(z, np.zeros(2, h.np_dtype(dtype)), dtype)
        h.assert_same(nd.ones((2,), dtype=dtype, device=device), np.ones(2, h.np_dtype(dtype)), dtype)


def test_arange_and_linspace_values(device: nd.Device) -> None:
    """``arange`` and ``linspace`` give the host formula's values to the bit (``i * step +
    start`` in float64, rounded once; exact integers), short and long enough for threads,
    every supported integer and real floating dtype, steps of both signs and empty ranges."""
    for dtype in h.supported(device, ("int", "uint", "float")):
        np_dt = h.np_dtype(dtype)
        info = np.iinfo(np_dt) if dtype.kind != "float" else None
        hi = min(int(info.max), 300_001) if info else (300_001 if np_dt.itemsize > 2 else 60_001)
        for args in ((hi,), (3, hi, 7), (hi - 1, -1 if dtype.kind == "int" else 0, -3), (5, 5), (9, 2)):
            want = (args[0] if len(args) > 1 else 0) + (args[2] if len(args) > 2 else 1) * np.arange(
                len(range(*args)), dtype=np.int64)  # fmt: skip
            h.assert_same(nd.arange(*args, dtype=dtype, device=device), want.astype(np_dt), dtype, exact=True,
                          msg=f"arange{args} {dtype.name} ")  # fmt: skip
        if dtype.kind != "float":
            continue
        for start, stop, step in ((0.0, 1.0, 1e-5), (2.5, -7.25, -3e-4), (0.1, 0.3, 0.1)):
            n = int(np.ceil((stop - start) / step))
            want = (step * np.arange(n, dtype=np.float64) + start).astype(np_dt)
            h.assert_same(nd.arange(start, stop, step, dtype=dtype, device=device), want, dtype, exact=True,
                          msg=f"arange({start}, {stop}, {step}) {dtype.name} ")  # fmt: skip
        for start, stop, num, endpoint in ((0, 1, 100_003, True), (-2.5, 7.1, 77, False), (3, -3, 2, True)):
            want = np.linspace(start, stop, num, endpoint=endpoint).astype(np_dt)
            h.assert_same(nd.linspace(start, stop, num, endpoint=endpoint, dtype=dtype, device=device), want, dtype,
                          exact=True, msg=f"linspace({start}, {stop}, {num}) {dtype.name} ")  # fmt: skip


@pytest.mark.parametrize("dtype_name", ALL_NAMES)
def test_unsupported_dtype_raises_before_any_work(device: nd.Device, dtype_name: str) -> None:
    """Every way to ask for a dtype the backend lacks raises UnsupportedDTypeError naming it,
    before any kernel or allocation runs."""
    dtype = h.BY_NAME[dtype_name]
    if dtype in device.backend.dtypes:
        pytest.skip(f"{device} supports {dtype_name}")
    host = np.zeros(3, h.np_dtype(dtype))
    x = nd.zeros((3,), dtype=h.default(device, "integral"), device=device)
    attempts = [
        lambda: nd.asarray(host, device=device), lambda: nd.asarray([1, 2], dtype=dtype, device=device),
        lambda: nd.zeros((2,), dtype=dtype, device=device), lambda: nd.ones(2, dtype=dtype, device=device),
        lambda: nd.empty((2,), dtype=dtype, device=device), lambda: nd.full((2,), 1, dtype=dtype, device=device),
        lambda: nd.astype(x, dtype), lambda: nd.zeros_like(x, dtype=dtype),
    ]  # fmt: skip
    if dtype.kind in ("int", "uint"):
        attempts.append(lambda: nd.arange(3, dtype=dtype, device=device))
        attempts.append(lambda: nd.random.default_rng(0).integers(0, 5, (2,), dtype=dtype, device=device))
    if dtype.kind == "float":
        attempts.append(lambda: nd.random.default_rng(0).random((2,), dtype=dtype, device=device))
        attempts.append(lambda: nd.linspace(0, 1, 3, dtype=dtype, device=device))
    if dtype.kind in ("int", "uint", "float"):
        attempts.append(lambda: nd.sum(x, dtype=dtype))
    for attempt in attempts:
        with h.KernelSpy(device) as spy, pytest.raises(nd.UnsupportedDTypeError, match=dtype_name):
            attempt()
        computed = [c for c in spy.calls if c not in ("alloc", "from_host")]
        assert not computed and not spy.calls, f"kernels ran before the error: {spy.calls}"


# ---------------------------------------------------------------------------
# astype
# ---------------------------------------------------------------------------


def _cast_mask(src: np.ndarray, target: np.dtype) -> np.ndarray | None:
    """Elements whose conversion is defined: float -> int only for finite, in-range values."""
    if src.dtype.kind not in "fc" or target.kind not in "iu":
        return None
    real = src.real if src.dtype.kind == "c" else src
    info = np.iinfo(target)
    with np.errstate(all="ignore"):
        t = np.trunc(real.astype(np.float64))
        return np.isfinite(t) & (t >= info.min) & (t <= info.max)


@pytest.mark.parametrize("src_name", ALL_NAMES)
@h.hyp()
@given(layout=h.layouts(h.shapes(max_dims=3)))
def test_astype(device: nd.Device, src_name: str, layout: h.Layout) -> None:
    """To every supported dtype, NumPy's astype semantics (integer narrowing wraps; float -> int
    compared only where it is defined; complex -> real raises)."""
    src = h.skip_unless(device, src_name)
    values = h.Values(-300, 70000) if src.kind in ("int", "uint", "float") else h.Values(-300, 300)
    a = layout.build(device, src, values)
    for dst in h.supported(device):
        if src.kind == "complex" and dst.kind != "complex":
            with pytest.raises(TypeError, match="astype"):
                nd.astype(a.x, dst)
            continue
        t = h.np_dtype(dst)
        with np.errstate(all="ignore"):
            expected = a.ref.astype(t)
        got = nd.astype(a.x, dst)
        assert got._storage is not a.x._storage
        h.assert_same(got, expected, dst, exact=True, signed_zeros=dst.kind == "float",
                      mask=_cast_mask(a.ref, t), msg=f"astype {src.name} -> {dst.name}: ")  # fmt: skip
    same = nd.astype(a.x, src, copy=False)
    assert same is a.x


# ---------------------------------------------------------------------------
# devices
# ---------------------------------------------------------------------------


def test_to_device_round_trip(device: nd.Device) -> None:
    other = h.other_device(device)
    for dtype in h.supported(device):
        if dtype not in other.backend.dtypes:
            continue
        host = np.arange(12).reshape(3, 4).astype(h.np_dtype(dtype))
        x = nd.asarray(host, device=device)
        y = x.T.to_device(other)
        assert y.device == other and x.device == device
        h.assert_same(y, host.T, dtype, exact=True)
        z = nd.asarray(y, device=device)
        assert z.device == device
        h.assert_same(z, host.T, dtype, exact=True)
        assert x.to_device(device) is x
        w = nd.astype(x, dtype, device=other)
        assert w.device == other


@pytest.mark.parametrize("dtype_name", ALL_NAMES)
@h.hyp()
@given(layout=h.layouts(h.shapes(max_dims=3)))
def test_pickle_and_copy(device: nd.Device, dtype_name: str, layout: h.Layout) -> None:
    """pickle (protocol 4; 5 in band and out of band), ``copy.copy`` and ``copy.deepcopy`` rebuild
    the array on its device bit for bit from any layout, each with memory of its own: a host
    backend may adopt a received out-of-band buffer (``Backend.adopt_host``, as a Dask worker's
    frame), never the source array's memory."""
    dtype = h.skip_unless(device, dtype_name)
    a = layout.build(device, dtype)
    frames: list[pickle.PickleBuffer] = []
    data = pickle.dumps(a.x, protocol=5, buffer_callback=frames.append)
    copies: dict[str, Any] = {
        "protocol 4": pickle.loads(pickle.dumps(a.x, protocol=4)),
        "protocol 5 in band": pickle.loads(pickle.dumps(a.x, protocol=5)),
        # what a receiver holds: writable memory of its own (distributed), or read-only bytes
        "protocol 5, writable frames": pickle.loads(data, buffers=[bytearray(f.raw()) for f in frames]),
        "protocol 5, read-only frames": pickle.loads(data, buffers=[bytes(f.raw()) for f in frames]),
        "copy.copy": copy.copy(a.x),
        "copy.deepcopy": copy.deepcopy(a.x),
    }
    for how, y in copies.items():
        assert y.device == device and y.dtype is dtype and y.shape == a.x.shape, how
        h.assert_same(y, a.ref, dtype, exact=True, signed_zeros=True, msg=f"{how}: ")
    for how, y in copies.items():
        y[...] = nd.zeros_like(y)
        h.assert_same(y, np.zeros(a.ref.shape, a.ref.dtype), dtype, exact=True, msg=f"{how}, written: ")
    h.assert_same(a.x, a.ref, dtype, exact=True, signed_zeros=True, msg="the source after writes to its copies: ")


def test_default_device_context(device: nd.Device) -> None:
    with nd.default_device(device):
        assert nd.zeros((2,)).device == device
        assert nd.asarray([1, 2]).device == device
        assert nd.arange(3).device == device
