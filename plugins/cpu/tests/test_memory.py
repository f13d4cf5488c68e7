"""Buffers: allocation, statistics, host transfers, copies, fills and bad Refs."""

from __future__ import annotations

import gc
import os
import subprocess
import sys

import numpy as np
import pytest
from cpu_helpers import DTYPES, assert_close

import ndplane
from ndplane.backend import Ref


def test_description(h):
    be = h.be
    assert be.name == "cpu"
    assert {"strided", "host"} <= be.capabilities
    assert be.dtypes == frozenset(ndplane.ALL_DTYPES)
    assert be.protocol_version == ndplane.backend.PROTOCOL_VERSION


def test_stats_return_to_baseline(h):
    before = h.be.memory_stats()
    bufs = [h.be.alloc(n) for n in (0, 1, 7, 64, 1000, 1 << 20)]
    stats = h.be.memory_stats()
    assert stats["buffers"] == before["buffers"] + 6
    assert stats["bytes"] == before["bytes"] + sum((0, 1, 7, 64, 1000, 1 << 20))
    for b in bufs:
        h.be.free(b)
    assert h.be.memory_stats() == before


def test_alloc_failure_raises_out_of_memory(h):
    before = h.be.memory_stats()
    with pytest.raises(ndplane.OutOfMemoryError, match=r"cpu:0.*\d+ bytes"):
        h.be.alloc(1 << 62)
    with pytest.raises(MemoryError):  # OutOfMemoryError is a MemoryError
        h.be.alloc(1 << 55)
    assert h.be.memory_stats() == before


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_round_trip(h, dtype):
    x = h.data((3, 4), dtype)
    ref = h.put(x)
    got = h.be.to_host(ref)
    np.testing.assert_array_equal(got, x)
    assert got.dtype == x.dtype
    empty = h.put(np.zeros((0, 3), dtype.dtype))
    assert h.be.to_host(empty).shape == (0, 3)


def test_to_host_views_any_layout_and_keeps_memory_alive(h):
    base = np.arange(24, dtype=np.int32)
    buf = h.be.from_host(base)
    ref = Ref(buf, ndplane.int32, (3, 4), (-4, 2), 16, 12, False)
    want = base[[16, 12, 8]][:, None] + np.arange(0, 8, 2)[None, :]
    got = h.be.to_host(ref)
    np.testing.assert_array_equal(got, want)
    h.be.free(buf)
    del buf, ref
    gc.collect()
    np.testing.assert_array_equal(got, want)  # the view still owns the memory


def test_adopt_host_uses_the_memory_in_place_and_keeps_it_alive(h):
    before = h.be.memory_stats()
    host = np.arange(12, dtype=np.float64)
    buf = h.be.adopt_host(host)
    assert "adopted" in repr(buf) and buf.address == host.ctypes.data and buf.nbytes == 96
    assert h.be.memory_stats() == {"buffers": before["buffers"] + 1, "bytes": before["bytes"] + 96}
    ref = Ref(buf, ndplane.float64, (3, 4), (4, 1), 0, 12, True)
    h.be.fill(Ref(buf, ndplane.float64, (4,), (3,), 0, 4, False), -1.0)  # a kernel writes through
    assert host[::3].tolist() == [-1.0] * 4
    view = h.be.to_host(ref)
    h.be.free(buf)
    assert h.be.memory_stats() == before
    del host, buf, ref
    gc.collect()
    assert view[2].tolist() == [8.0, -1.0, 10.0, 11.0]  # the adopted memory outlives its array
    assert h.be.adopt_host(np.zeros(0)) is None  # nothing to adopt: the core copies
    with pytest.raises((BufferError, ValueError)):  # NumPy's read-only error is a ValueError
        h.be.adopt_host(np.frombuffer(b"12345678", np.float64))  # read-only memory is never adopted


def test_copy_strided_to_strided(h):
    for dtype in DTYPES:
        for name, view, base in h.layouts((33, 17), dtype):
            dst_base = h.data((40, 70), dtype)
            dst_view = dst_base[3:36, 60:43:-1]
            want = dst_base.copy()
            want[3:36, 60:43:-1] = view
            dst = h.put(dst_view, dst_base)
            h.be.copy(h.put(view, base), dst)
            whole = h.ref_of(dst_base, dst_base, dst.buffer)
            np.testing.assert_array_equal(h.get(whole), want, err_msg=f"{dtype.name} {name}")


def test_transpose_copy_large(h):
    x = h.data((700, 900), ndplane.float32)
    out = h.empty((900, 700), ndplane.float32)
    h.be.copy(h.put(x.T, x), out)
    np.testing.assert_array_equal(h.get(out), x.T)
    x = h.data((300, 5, 40), ndplane.complex128)
    p = x.transpose(2, 0, 1)
    out = h.empty(p.shape, ndplane.complex128)
    h.be.copy(h.put(p, x), out)
    np.testing.assert_array_equal(h.get(out), p)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_fill_view(h, dtype):
    base = h.data((6, 8), dtype)
    value = {"bool": True, "int": -3, "uint": 7, "float": -2.5, "complex": 1 - 2j}[dtype.kind]
    want = base.copy()
    want[1:5, ::-3] = value
    ref = h.put(base)
    view = base[1:5, ::-3]
    h.be.fill(h.ref_of(view, base, ref.buffer), value)
    np.testing.assert_array_equal(h.get(ref), want)


def test_bad_refs_raise_instead_of_reading_out_of_bounds(h):
    buf = h.upload(np.zeros(16, np.float32))
    out = h.empty((4,), ndplane.float32)
    bad = [
        Ref(buf, ndplane.float32, (4,), (1,), 13, 4, True),      # past the end
        Ref(buf, ndplane.float32, (4,), (-1,), 2, 4, False),     # before the start
        Ref(buf, ndplane.float32, (4,), (6,), 0, 4, False),      # stride past the end
        Ref(buf, ndplane.float64, (4,), (1,), 6, 4, True),       # dtype wider than the buffer
        Ref(buf, ndplane.float32, (2**40, 2**40), (1, 1), 0, 0, False),  # size overflow
    ]  # fmt: skip
    for ref in bad:
        with pytest.raises((ValueError, TypeError)):
            h.be.unary("negative", ref, out)
    with pytest.raises(TypeError, match="cpu backend"):
        h.be.unary("negative", Ref(np.zeros(4, np.float32), ndplane.float32, (4,), (1,), 0, 4, True), out)
    with pytest.raises(ValueError, match="shapes differ"):
        h.be.unary("negative", Ref(buf, ndplane.float32, (3,), (1,), 0, 3, True), out)
    with pytest.raises(TypeError, match="dtype"):
        h.be.unary("isnan", Ref(buf, ndplane.float32, (4,), (1,), 0, 4, True), out)
    with pytest.raises(ValueError, match="unknown op"):
        h.be.unary("frobnicate", Ref(buf, ndplane.float32, (4,), (1,), 0, 4, True), out)


def test_empty_and_zero_d(h):
    x = h.put(np.float32(3.5).reshape(()))
    out = h.empty((), ndplane.float32)
    h.be.unary("sqrt", x, out)
    assert_close(h.get(out), np.sqrt(np.float32(3.5)).reshape(()))
    e = h.put(np.zeros((0, 5), np.float32))
    out = h.empty((0, 5), ndplane.float32)
    h.be.binary("add", e, e, out)
    assert h.get(out).shape == (0, 5)


def test_declares_the_ops_of_its_own_tables(monkeypatch):
    """The backend lists the ops its native tables have, not the core's lists: a newer core
    that knows an op this build lacks gets a backend that does not claim it (the op then runs
    as a decomposition or a host fallback) instead of an error on first use."""
    from ndplane_cpu import backend as cpu

    from ndplane.backend import ops as core_ops

    table = cpu._native().op_dtypes()
    named = {
        *table["unary"],
        *table["binary"],
        *table["reduce"],
        *table["scan"],
        *table["linalg"],
        *cpu._fft.OPS,
    }
    cls = cpu.backend_class()
    assert cls.ops == named | cpu._KERNEL_OPS
    assert {f"fused:{op}" for op in table["fused"]} <= cls.capabilities
    # A core release with one more unary op and one more linalg op.
    monkeypatch.setattr(core_ops, "UNARY_OPS", core_ops.UNARY_OPS | {"cbrt_from_the_future"})
    monkeypatch.setattr(core_ops, "LINALG_OPS", core_ops.LINALG_OPS | {"lstsq_from_the_future"})
    newer = cpu._make_backend_class()
    assert newer.ops == cls.ops
    assert not newer(0).supports("cbrt_from_the_future", ndplane.float64)


_RSS_AFTER_FREE = """
import os, ndplane as nd
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
nd.ones(16, device="cpu")  # the backend and its thread pool started
base = rss()
for n in (3 << 20, 3 << 20, 200_000):  # 24 MiB twice (the second from glibc's heap, were it malloc'd)
    x = nd.ones(n, dtype=nd.float64, device="cpu")
    del x
print((rss() - base) >> 20)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads resident memory from /proc")
def test_freed_large_blocks_leave_resident_memory_without_the_cache():
    # With the cache off (as cubed's task processes run), a freed block of 1 MiB or more must
    # leave the process: glibc's malloc keeps such blocks in its heap once one was freed.
    env = {**os.environ, "NDPLANE_CPU_CACHE_MB": "0"}
    env.pop("GLIBC_TUNABLES", None)
    run = subprocess.run([sys.executable, "-c", _RSS_AFTER_FREE], env=env, check=True, capture_output=True, text=True)
    assert int(run.stdout.split()[-1]) < 4, f"{run.stdout.split()[-1]} MiB still resident after the arrays were freed"


@pytest.mark.parametrize("nbytes", [1, 7, 4096, (1 << 18) * 6 - 3, (1 << 21) + 5])
def test_from_host_copies_every_byte_in_chunks_over_the_pool(h, nbytes):
    """from_host copies large arrays in chunks on every pool thread: every byte lands once, at
    odd lengths around the chunk size too."""
    src = np.random.default_rng(nbytes).integers(0, 256, nbytes, dtype=np.uint8)
    buf = h.be.from_host(src)
    got = h.be.to_host(Ref(buf, ndplane.uint8, (nbytes,), (1,), 0, nbytes, True))
    np.testing.assert_array_equal(got, src)
    h.be.free(buf)
