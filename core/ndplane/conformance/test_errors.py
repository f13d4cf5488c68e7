"""Bad input raises a clear Python exception before any kernel runs; device mixing raises;
memory returns to its baseline after a workload."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ndplane as nd
from ndplane.backend import CHECKED_INDICES, Ref
from ndplane.conformance import _helpers as h


def _raises_before_kernels(device: nd.Device, exc: Any, match: str, fn: Callable[[], Any],
                           allowed: tuple[str, ...] = ()) -> None:  # fmt: skip
    """``fn()`` raises ``exc`` and no compute kernel (except ``allowed`` ones) ran first."""
    with h.KernelSpy(device) as spy, pytest.raises(exc, match=match):
        fn()
    ran = [c for c in spy.calls if c not in ("alloc", *allowed)]
    assert not ran, f"kernels ran before the error: {spy.calls}"


def _raises_before_reading(device: nd.Device, exc: Any, match: str, fn: Callable[[], Any],
                           x: nd.Array, gather: bool = False) -> None:  # fmt: skip
    """``fn()`` raises ``exc`` and no kernel received ``x``'s memory first; kernels on other
    arrays may run (natively, or as the host fallback's to_host, from_host and copy). A
    ``gather`` on a device with ``CHECKED_INDICES`` may hand ``x`` to ``take``,
    ``fused:take_axis`` or ``fused:take_along``, whose contract is then to refuse the indices
    before reading."""
    with h.KernelSpy(device) as spy, pytest.raises(exc, match=match):
        fn()
    if gather and CHECKED_INDICES in device.backend.capabilities:
        readers = spy.touched_by(x)
        assert readers <= {"take", "fused"}, f"kernels other than the gather read the indexed array: {readers}"
        return
    assert not spy.touched(x), f"kernels read the indexed array before the error: {spy.calls}"


def test_shape_mismatch(device: nd.Device) -> None:
    a, b = nd.zeros((2, 3), device=device), nd.zeros((4,), device=device)
    _raises_before_kernels(device, ValueError, "add", lambda: a + b)
    cond = a > 0
    _raises_before_kernels(device, ValueError, "where", lambda: nd.where(cond, a, b))
    _raises_before_kernels(device, ValueError, "matmul", lambda: a @ b)
    _raises_before_kernels(device, ValueError, "concat", lambda: nd.concat([a, b]))
    _raises_before_kernels(device, ValueError, "broadcast", lambda: nd.broadcast_to(a, (2, 4)))


_PAST_RANGE = r"would span \d+ bytes, past the index range of 2\*\*63 - 1 bytes"


def test_sizes_past_the_index_range(device: nd.Device) -> None:
    """Shapes whose contiguous bytes do not fit a signed 64-bit index raise one ValueError from
    the core, before any backend call (alloc included), on every device alike: creation, views
    (broadcast, reshape of an empty array) and results that broadcast."""
    dt = h.default(device, "real floating")
    one, empty = nd.ones((1, 1), dtype=dt, device=device), nd.zeros((0,), dtype=dt, device=device)
    big = 2**31 if dt.itemsize >= 2 else 2**32
    cases: list[tuple[str, Callable[[], Any]]] = [
        ("zeros", lambda: nd.zeros((2**40, 2**40), dtype=dt, device=device)),
        ("empty", lambda: nd.empty((2**63 // dt.itemsize + 1,), dtype=dt, device=device)),
        ("zeros", lambda: nd.zeros((0, 2**70), dtype=dt, device=device)),
        ("full", lambda: nd.full((2**33, 2**33), 1.0, dtype=dt, device=device)),
        ("broadcast_to", lambda: nd.broadcast_to(one, (big, big))),
        ("broadcast_to", lambda: nd.broadcast_arrays(nd.reshape(one, (1, 1, 1)), nd.broadcast_to(one, (big, 1)),
                                                     nd.broadcast_to(one, (1, big)))),
        ("reshape", lambda: nd.reshape(empty, (0, 2**62))),
        ("add", lambda: nd.broadcast_to(one, (big, 1)) + nd.broadcast_to(one, (1, big))),
    ]
    for name, fn in cases:
        with h.KernelSpy(device) as spy, pytest.raises(ValueError, match=f"^{name}: .*{_PAST_RANGE}"):
            fn()
        assert not spy.calls, f"{name}: the backend was called before the size error: {spy.calls}"


def test_huge_steps_are_valid_slices(device: nd.Device) -> None:
    """A step far past the array is a valid one-element slice (its stride never reaches a
    backend as bytes past the index range)."""
    dt = h.default(device, "real floating")
    v = np.arange(6, dtype=h.np_dtype(dt))
    x = nd.asarray(v[:5], device=device)
    for key in (slice(None, None, 2**62), slice(None, None, -(2**62)), slice(1, None, 2**63 + 5)):
        h.assert_same(x[key], v[:5][key], dt, exact=True)
        h.assert_same(x[key] + 1, v[:5][key] + 1, dt, exact=True)
    m = nd.reshape(nd.asarray(v, device=device), (2, 3))
    h.assert_same(m[::2**62, ::2**40], v.reshape(2, 3)[::2**62, ::2**40], dt, exact=True)


def test_past_the_device_memory(device: nd.Device) -> None:
    """Within the index range but past the device's memory: OutOfMemoryError (a MemoryError)
    naming the device and the bytes."""
    dt = h.default(device, "real floating")
    n = 2**42 // dt.itemsize  # 4 TiB
    with pytest.raises(nd.OutOfMemoryError, match=rf"{device}.*{n * dt.itemsize} bytes"):
        nd.empty((n,), dtype=dt, device=device)


def test_bad_axis(device: nd.Device) -> None:
    a = nd.zeros((2, 3), device=device)
    zero = nd.asarray([0], device=device)
    for name, fn in [
        ("sum", lambda: nd.sum(a, axis=2)), ("max", lambda: nd.max(a, axis=-3)),
        ("argmax", lambda: nd.argmax(a, axis=5)), ("cumulative_sum", lambda: nd.cumulative_sum(a, axis=2)),
        ("sort", lambda: nd.sort(a, axis=2)), ("take", lambda: nd.take(a, zero, axis=2)),
        ("flip", lambda: nd.flip(a, axis=3)), ("squeeze", lambda: nd.squeeze(a, axis=4)),
        ("concat", lambda: nd.concat([a, a], axis=2)), ("stack", lambda: nd.stack([a, a], axis=4)),
    ]:  # fmt: skip
        _raises_before_kernels(device, (IndexError, ValueError), name, fn)


def test_index_out_of_range(device: nd.Device) -> None:
    a = nd.zeros((2, 3), device=device)
    for key in (2, -3, (0, 3), (1, -4), (0, 0, 0)):
        _raises_before_kernels(device, IndexError, "__getitem__|index", lambda: a[key])  # noqa: B023
    with pytest.raises(IndexError):
        a[0, 3] = 1.0
    idx = nd.asarray([0, 3], device=device)
    # NOTE: bounds are checked with min/max reductions over the indices (kernels on the
    # indices only); no kernel may read the indexed array.
    _raises_before_reading(device, IndexError, "take", lambda: nd.take(a, idx, axis=1), a, gather=True)
    neg = -idx - 1
    _raises_before_reading(device, IndexError, "take", lambda: nd.take(a, neg, axis=0), a, gather=True)
    _raises_before_reading(device, IndexError, "bounds", lambda: a[idx], a, gather=True)
    idx2 = nd.reshape(idx, (1, 2))
    _raises_before_reading(device, IndexError, "take_along_axis",
                           lambda: nd.take_along_axis(a, idx2, axis=1), a, gather=True)  # fmt: skip
    mask = nd.asarray([True, False, True], device=device)
    _raises_before_kernels(device, IndexError, "boolean", lambda: a[mask])


def test_checked_indices_kernels_refuse_bad_indices(device: nd.Device) -> None:
    """A backend that declares ``CHECKED_INDICES`` keeps its contract: ``take`` and, where
    declared, ``fused:take_axis`` raise IndexError for an index past either end (-1 included),
    from every integer dtype the device has; in-range indices still gather."""
    backend = device.backend
    if CHECKED_INDICES not in backend.capabilities:
        pytest.skip(f"{device} does not declare {CHECKED_INDICES}")
    dt = h.default(device, "real floating")
    x = nd.reshape(nd.arange(6, dtype=dt, device=device), (2, 3))
    out = nd.empty((2, 2), dtype=dt, device=device)
    for index_dtype in h.supported(device, ("int", "uint")):
        for bad in ([0, 3], [-1, 0], [1, 100]):
            if bad[0] < 0 and index_dtype.kind == "uint":
                continue
            idx = nd.asarray(bad, dtype=index_dtype, device=device)
            with pytest.raises(IndexError):
                backend.take(x._ref, idx._ref, out._ref)
            if "fused:take_axis" in backend.capabilities:
                r = x._ref  # x as (A, N, B) = (1, 2, 3), out (1, 2, 3): rows of x at idx
                x3 = Ref(r.buffer, r.dtype, (1, 2, 3), (6, 3, 1), r.offset, r.size, True)
                rows = nd.empty((1, 2, 3), dtype=dt, device=device)
                with pytest.raises(IndexError):
                    backend.fused("take_axis", (x3, idx._ref), rows._ref, {})
        idx = nd.asarray([2, 0], dtype=index_dtype, device=device)
        backend.take(x._ref, idx._ref, out._ref)
        assert out.tolist() == [[2, 0], [5, 3]]


def test_impossible_reshape(device: nd.Device) -> None:
    a = nd.zeros((2, 3), device=device)
    _raises_before_kernels(device, ValueError, "reshape", lambda: nd.reshape(a, (5,)))
    _raises_before_kernels(device, ValueError, "reshape", lambda: nd.reshape(a, (-1, 4)))
    _raises_before_kernels(device, ValueError, "reshape", lambda: nd.reshape(a.T, (6,), copy=False))


def test_device_mixing(device: nd.Device) -> None:
    """Every op taking two arrays refuses operands on two devices, naming both."""
    other = h.other_device(device)
    dtype = h.default(device, "real floating")
    if dtype not in other.backend.dtypes:
        dtype = nd.float32
    a = nd.ones((2, 2), dtype=dtype, device=device)
    b = nd.ones((2, 2), dtype=dtype, device=other)
    idx = nd.asarray([0, 1], device=other)
    cases = {
        "add": lambda: a + b, "radd": lambda: b + a, "multiply": lambda: nd.multiply(a, b),
        "equal": lambda: a == b, "matmul": lambda: a @ b, "where": lambda: nd.where(a > 0, a, b),
        "where cond": lambda: nd.where(b > 0, a, a), "concat": lambda: nd.concat([a, b]),
        "stack": lambda: nd.stack([a, b]), "take": lambda: nd.take(a, idx, axis=0),
        "getitem": lambda: a[idx], "setitem": lambda: a.__setitem__(slice(None), b),
        "iadd": lambda: a.__iadd__(b), "vecdot": lambda: nd.vecdot(a, b),
        "take_along_axis": lambda: nd.take_along_axis(a, nd.reshape(idx, (2, 1)), axis=1),
        "maximum": lambda: nd.maximum(a, b), "clip": lambda: nd.clip(a, b),
    }  # fmt: skip
    for name, fn in cases.items():
        with pytest.raises(nd.DeviceMismatchError) as info:
            fn()
        msg = str(info.value)
        assert str(device) in msg and str(other) in msg, f"{name}: the error must name both devices: {msg}"
    np.testing.assert_array_equal(a.to_numpy(), np.ones((2, 2)))  # nothing was written


def test_type_errors(device: nd.Device) -> None:
    a = nd.zeros((2,), device=device)
    with pytest.raises(TypeError):
        nd.add([1, 2], [3, 4])  # type: ignore[arg-type]  # no ndplane array: the error under test
    with pytest.raises(TypeError):
        a + "x"  # type: ignore[operator]  # the error under test
    with pytest.raises(TypeError):
        bool(nd.zeros((2,), device=device))
    with pytest.raises(TypeError):
        nd.Array()  # arrays come from creation functions only


def test_memory_returns_to_baseline(device: nd.Device) -> None:
    """A workload over every primitive, errors included, frees every buffer it allocated."""
    backend = device.backend
    gc.collect()
    before = _live(backend.memory_stats())
    _workload(device)
    gc.collect()
    assert _live(backend.memory_stats()) == before, (before, backend.memory_stats())


def _live(stats: dict[str, int]) -> dict[str, int]:
    """The protocol's live counters; a backend's other keys (a cache's reserve, a high-water
    mark such as cuda's ``peak_bytes``) may move with any workload."""
    return {k: stats[k] for k in ("buffers", "bytes")}


def _workload(device: nd.Device) -> None:
    fdt = h.default(device, "real floating")
    x = nd.asarray(np.arange(24.0).reshape(2, 3, 4).astype(h.np_dtype(fdt)), device=device)
    y = nd.exp(x.mT) + 1
    z = nd.sum(y, axis=(0, 2)) * nd.max(x)
    w = nd.where(x > 3, x, -x)[..., ::-1]
    s = nd.sort(nd.flip(w, axis=1), axis=1)
    i = nd.argsort(s, axis=0)
    t = nd.take(x, nd.asarray([2, -1], device=device), axis=2)
    m = x[x > 10]
    c = nd.cumulative_sum(x, axis=1, include_initial=True)
    p = x @ nd.moveaxis(x, 1, 2)
    nz = nd.nonzero(x > 20)
    x[0, 1:] = t[0, 1:, :1]
    x[x > 20] = 0.0
    x += 1
    u = nd.astype(x, h.default(device, "integral"))
    cc = nd.concat([x, x], axis=1)
    if nd.uint32 in device.backend.dtypes:
        nd.random.default_rng(1, device=device).normal(0.0, 1.0, (10,))
    for bad in (lambda: x + nd.zeros((5,), device=device), lambda: x[5], lambda: nd.reshape(x, (7,)),
                lambda: nd.take(x, nd.asarray([9], device=device), axis=0)):  # fmt: skip
        with pytest.raises((ValueError, IndexError)):
            bad()
    del y, z, w, s, i, t, m, c, p, nz, u, cc
