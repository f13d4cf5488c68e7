"""Discovery, memory accounting, limits, large dispatches and asynchronous submission."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from ndplane_webgpu.backend import _BASE_DTYPES, FEATURE_DTYPES, _dtypes_of

import ndplane
from ndplane.backend import Ref


def test_import_creates_no_device():
    code = ("import sys, ndplane_webgpu\n"
            "from ndplane_webgpu.backend import ndplane_register_backends\n"
            "specs = ndplane_register_backends()\n"
            "assert [s.name for s in specs] == ['webgpu'] and specs[0].protocol_version == 1\n"
            "assert 'ndplane_webgpu._runtime' not in sys.modules and 'wgpu' not in sys.modules\n")  # fmt: skip
    subprocess.run([sys.executable, "-c", code], check=True)


def test_spec_metadata_and_priority(be):
    from ndplane_webgpu import _runtime
    from ndplane_webgpu.backend import _available, _count, _priority

    assert _available() == (True, "")
    assert _count() == len(_runtime.adapters()) >= 1
    software = _runtime.is_software(_runtime.adapters()[0])
    # NOTE: webgpu never wins the default device over cpu (20): no float64, int64 or complex,
    # and a software adapter (lavapipe) never over numpy (10) either.
    assert _priority() == (5 if software else 15)


def test_one_device_per_process(be):
    from ndplane_webgpu import _runtime
    from ndplane_webgpu.backend import WebGPUBackend

    assert WebGPUBackend(0).rt is be.rt is _runtime.runtime(0)


def test_declared_dtypes(be):
    names = {d.name for d in be.dtypes}
    feats = be.rt.features
    assert {"bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float32", "complex64"} <= names
    assert ("complex128" in names) == ("float64" in names)
    assert ("float16" in names) == ("shader-f16" in feats)
    assert ("int64" in names) == ("uint64" in names) == ("shader-int64" in feats)
    assert ("float64" in names) == ({"shader-int64", "shader-f64"} <= feats)
    wide = "int64" in names
    assert be.default_dtypes["real floating"] is (ndplane.float64 if "float64" in names else ndplane.float32)
    assert be.default_dtypes["complex floating"] is (ndplane.complex128 if "float64" in names else ndplane.complex64)
    assert be.default_dtypes["integral"] is be.default_dtypes["indexing"] is (ndplane.int64 if wide else ndplane.int32)
    flush = ["subnormals flush to zero" in n for n in be.notes]
    assert flush == [False] * (1 + len(FEATURE_DTYPES)) + [True] * be.flushes_f32_subnormals
    assert "complex64" in be.notes[0] and "no feature" in be.notes[0]
    assert all("shader-" in n for n in be.notes[1 : 1 + len(FEATURE_DTYPES)])


def test_subnormal_flush_probe(be):
    """The probe runs a shader on 2^-127 from a buffer (its result not foldable), once per device;
    a flushing adapter gets a note in ``ndplane info``, and lavapipe keeps its subnormals."""
    from ndplane_webgpu import _runtime
    from ndplane_webgpu.backend import WebGPUBackend

    assert isinstance(be.flushes_f32_subnormals, bool) and be.rt._flushes is be.flushes_f32_subnormals
    if _runtime.is_software(be.rt.adapter) and "llvmpipe" in str(be.info).lower():
        assert not be.flushes_f32_subnormals  # lavapipe: IEEE subnormals, the tests' strict bounds
    saved = be.rt._flushes
    try:
        be.rt._flushes = not saved
        other = WebGPUBackend(0)
        assert other.flushes_f32_subnormals is not saved
        assert any("subnormals flush to zero" in n for n in other.notes) is not saved
    finally:
        be.rt._flushes = saved


@pytest.mark.parametrize("features, added", [
    ((), set()), (("shader-f64",), set()), (("shader-int64",), {"int64", "uint64"}),
    (("shader-int64", "shader-f64", "shader-f16"), {"int64", "uint64", "float64", "complex128", "float16"}),
])  # fmt: skip
def test_dtypes_follow_the_adapter_features(features, added):
    """An adapter without the features keeps the 32-bit set, and the notes say why."""
    names, notes = _dtypes_of(frozenset(features))
    assert set(names) == set(_BASE_DTYPES) | added
    assert any(n.startswith("float64, complex128: not declared") for n in notes) == ("float64" not in added)


def test_memory_stats_and_pool(be):
    before = be.memory_stats()
    bufs = [be.alloc(n) for n in (0, 1, 3, 1000, 4096)]
    assert be.memory_stats() == {"buffers": before["buffers"] + 5, "bytes": before["bytes"] + 5100}
    for b in bufs:
        be.free(b)
    assert be.memory_stats() == before
    b = be.alloc(1000)
    gpu = b.gpu
    be.free(b)
    again = be.alloc(900)  # the same size bucket: the pooled wgpu buffer comes back
    assert again.gpu is gpu and again.cap == b.cap >= 1000
    be.free(again)
    assert be.memory_stats() == before


def test_refuses_arrays_past_the_binding_limit(be):
    before = be.memory_stats()
    with pytest.raises(ndplane.OutOfMemoryError, match="max_storage_buffer_binding_size"):
        be.alloc(be.rt.max_binding + 4)
    assert be.memory_stats() == before


def _ref(buf, dtype, n):
    return Ref(buf, dtype, (n,), (1,), 0, n, True)


def test_two_d_dispatch_past_65535_workgroups(be, host):
    n = 65535 * 256 + 1000  # one more workgroup row than a 1-D grid can hold
    x = np.arange(n, dtype=np.int32)
    xr = host.put(x)
    out = host.empty((n,), np.int32)
    be.binary("add", xr, 7, out)
    got = host.get(out)
    assert got[0] == 7 and got[-1] == n - 1 + 7
    np.testing.assert_array_equal(got[-300000:], x[-300000:] + 7)


def test_ops_are_recorded_and_submitted_in_batches(be, host):
    x = host.put(np.ones(100000, np.float32))
    a, b = host.empty((100000,), np.float32), host.empty((100000,), np.float32)
    be.rt.flush()
    be.binary("add", x, x, a)  # nothing waits or submits between these ops
    for _ in range(20):
        be.binary("add", a, x, b)
        be.binary("add", b, x, a)
    assert be.rt._encoder is not None and be.rt._recorded == 41  # one open batch
    np.testing.assert_array_equal(host.get(a), np.full(100000, 42, np.float32))
    assert be.rt._encoder is None  # the read submitted it
    old, be.rt.batch = be.rt.batch, 8
    try:
        for _ in range(20):
            be.binary("add", a, x, a)
        assert be.rt._recorded == 20 % 8  # submitted every 8 dispatches
    finally:
        be.rt.batch = old
    np.testing.assert_array_equal(host.get(a), np.full(100000, 62, np.float32))
    be.synchronize()
    assert be.rt._encoder is None


def test_synchronize_waits_by_the_device_poll_or_a_mapped_read(be, host, monkeypatch):
    """synchronize submits what is recorded, then waits in this thread through wgpu-native's
    blocking device poll; where wgpu-py lacks it, through a mapped read queued behind the work."""
    x = be.from_host(np.ones(4, np.float32))
    ref = Ref(x, ndplane.float32, (4,), (1,), 0, 4, True)
    out = host.empty((4,), np.float32)
    calls: list[str] = []
    device_cls = type(be.rt.device)
    real = device_cls._poll_wait
    monkeypatch.setattr(device_cls, "_poll_wait", lambda self: (calls.append("poll"), real(self))[1])
    be.binary("add", ref, ref, out)
    be.synchronize()
    assert calls == ["poll"] and be.rt._encoder is None
    monkeypatch.delattr(device_cls, "_poll_wait")
    be.binary("add", ref, ref, out)
    be.synchronize()  # the fallback
    assert be.rt._encoder is None and calls == ["poll"]
    np.testing.assert_array_equal(host.get(out), np.full(4, 2, np.float32))
    be.free(x)


def test_buffer_freed_under_a_recorded_dispatch_is_not_reused_before_submit(be, host):
    """from_host writes through the queue, which runs writes before the next submit: a buffer
    still read by a recorded dispatch must not come back from alloc until that submit."""
    n = 1000
    be.rt.flush()
    src = be.from_host(np.arange(n, dtype=np.float32))
    out = host.empty((n,), np.float32)
    be.unary("negative", Ref(src, ndplane.float32, (n,), (1,), 0, n, True), out)  # recorded only
    gpu = src.gpu
    be.free(src)
    assert be.rt.pool_stats()["pending_frees"] == 1
    again = be.from_host(np.full(n, 7.0, np.float32))  # same size bucket
    try:
        assert again.gpu is not gpu
        np.testing.assert_array_equal(host.get(out), -np.arange(n, dtype=np.float32))
        assert be.rt.pool_stats()["pending_frees"] == 0
        assert any(g is gpu for g in be.rt._pool[again.cap])  # pooled at the submit
    finally:
        be.free(again)


def test_freed_input_of_a_pending_op_through_the_public_api(be):  # be: skipped without an adapter
    import gc

    dev = "webgpu"
    for _ in range(3):
        a = ndplane.asarray(np.arange(4096, dtype=np.float32), device=dev)
        b = -a
        del a
        gc.collect()
        c = ndplane.asarray(np.full(4096, 7.0, np.float32), device=dev)  # may take a's bucket
        np.testing.assert_array_equal(np.asarray(b.to_device("numpy")), -np.arange(4096, dtype=np.float32))
        np.testing.assert_array_equal(np.asarray(c.to_device("numpy")), 7.0)


def test_bind_groups_are_cached_by_buffer_identity(be, host):
    x = host.put(np.ones(10, np.float32))
    out = host.empty((10,), np.float32)
    be.unary("exp", x, out)
    n = be.rt.pool_stats()["bind_groups"]
    for _ in range(5):
        be.unary("exp", x, out)
    assert be.rt.pool_stats()["bind_groups"] == n
    np.testing.assert_allclose(host.get(out), np.e, rtol=1e-6)


def test_long_parameter_lists_get_a_wider_window(be):
    """A 12-d strided operand needs more than the 256-byte parameter window."""
    base = np.arange(2**12, dtype=np.float32).reshape((2,) * 12)
    view = base.transpose(tuple(range(11, -1, -1)))[::-1]
    host = __import__("webgpu_helpers").Host(be)
    try:
        x = host.view(base, view)
        out = host.empty(view.shape, np.float32)
        be.unary("negative", x, out)
        np.testing.assert_array_equal(host.get(out), -view)
    finally:
        host.free()


def test_pipelines_are_cached(be, host):
    x = host.put(np.ones(10, np.float32))
    out = host.empty((10,), np.float32)
    be.unary("exp", x, out)
    n = be.rt.pool_stats()["pipelines"]
    be.unary("exp", x, out)
    assert be.rt.pool_stats()["pipelines"] == n


def test_buffer_freed_by_the_cyclic_gc_stays_usable(be):
    """An array in a reference cycle frees its buffer from __del__ during gc.collect(); the pooled
    wgpu buffer must not be released in the same pass (it is handed out again next)."""
    import gc

    class Owner:  # stands for the core's Storage, freeing in __del__
        def __init__(self, buf):
            self.buf, self.cycle = buf, self

        def __del__(self):
            be.free(self.buf)

    before = be.memory_stats()
    Owner(be.alloc(100))
    gc.collect()
    assert be.memory_stats() == before
    buf = be.from_host(np.arange(25, dtype=np.int32))  # same bucket: the pooled buffer
    try:
        got = be.to_host(Ref(buf, ndplane.int32, (25,), (1,), 0, 25, True))
        np.testing.assert_array_equal(got, np.arange(25))
    finally:
        be.free(buf)


class _Without64:
    """An adapter that hides shader-int64 and shader-f64: its device is created without them."""

    def __init__(self, adapter):
        self._adapter = adapter
        self.features = frozenset(adapter.features) - {"shader-int64", "shader-f64"}

    def __getattr__(self, name):
        return getattr(self._adapter, name)


def test_complex64_needs_no_64_bit_feature(be, monkeypatch):
    """complex64 (pairs of f32 moved as u32 words) runs on a device created without
    shader-int64 and shader-f64, where naga refuses any shader naming a 64-bit type."""
    from ndplane_webgpu import _runtime
    from ndplane_webgpu.backend import WebGPUBackend
    from webgpu_helpers import Host

    index = 1000  # a runtime of its own, never the shared one
    monkeypatch.setitem(_runtime._runtimes, index, _runtime.Runtime(_Without64(be.rt.adapter), index))
    small = WebGPUBackend(index)
    assert ndplane.complex64 in small.dtypes and ndplane.complex128 not in small.dtypes
    assert small.default_dtypes["complex floating"] is ndplane.complex64
    host = Host(small)
    z = (np.arange(12) - 5.5 + 1j * np.linspace(-2, 3, 12)).astype(np.complex64).reshape(3, 4)
    x = host.put(z)
    out = host.empty((3, 4), np.complex64)
    for op, want in (("exp", np.exp(z)), ("sqrt", np.sqrt(z)), ("log", np.log(z)), ("atanh", np.arctanh(z))):
        small.unary(op, x, out)
        np.testing.assert_allclose(host.get(out), want, rtol=1e-5, err_msg=op)
    small.binary("multiply", x, 2 - 1j, out)
    np.testing.assert_allclose(host.get(out), z * (2 - 1j), rtol=1e-6)
    sums = host.empty((3,), np.complex64)
    small.reduce("prod", x, sums)
    np.testing.assert_allclose(host.get(sums), z.prod(axis=1), rtol=1e-5)
    small.matmul(host.put(z[None]), host.put(z.T[None].copy()), host.empty((1, 3, 3), np.complex64))
    small.scatter_add(out, host.put(np.array([0, 0, 1, 3], np.int32)), x)
    small.cast(x, host.empty((3, 4), np.float16))
    small.synchronize()
    host.free()


def test_free_never_waits_for_the_lock_another_thread_holds(be) -> None:  # be: skipped without an adapter
    """The garbage collector frees from finalizers on any thread (wgpu's callback threads
    too): a free that waited for the lock while its holder waited for that thread deadlocked.
    Now it is queued, and the next call that takes the lock performs it."""
    import threading

    backend = ndplane.Device("webgpu").backend
    buf = backend.alloc(64)
    before = backend.memory_stats()["buffers"]
    freed = threading.Event()
    with backend.rt.lock:
        t = threading.Thread(target=lambda: (backend.free(buf), freed.set()))
        t.start()
        assert freed.wait(10), "free waited for the lock"
        t.join()
    assert backend.memory_stats()["buffers"] == before - 1  # performed by this call
    assert not backend.rt.pending_frees
