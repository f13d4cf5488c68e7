"""The thread pool: back-to-back jobs, concurrent callers, fork, and the split reductions it runs."""

from __future__ import annotations

import itertools
import multiprocessing
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from cpu_helpers import native_threads
from ndplane_cpu.backend import _native

import ndplane


@pytest.fixture
def two_threads():
    with native_threads(2):  # NOTE: the pool is exercised even on a 1-core runner
        yield _native()


def test_back_to_back_jobs_of_changing_sizes(h, two_threads):
    # A worker that wakes late for one job must never run a chunk of the next.
    xs = [h.rng.standard_normal(n).astype(np.float32) for n in (70_000, 300_000, 65_537, 1_000_000)]
    refs = [h.put(x) for x in xs]
    outs = [h.empty(x.shape, ndplane.float32) for x in xs]
    for i in range(400):
        k = i % len(xs)
        h.be.binary("add", refs[k], float(i), outs[k])
        np.testing.assert_array_equal(h.get(outs[k]), xs[k] + np.float32(i))


def test_concurrent_callers_release_the_gil(h, two_threads):
    x = h.rng.standard_normal((600, 700))
    ref = h.put(x)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            out = h.empty((600,), ndplane.float64)
            inv = h.empty((1, 64, 64), ndplane.float64)
            a = h.put(np.eye(64)[None] * 2.0)
            for _ in range(20):
                h.be.reduce("sum", ref, out)
                np.testing.assert_allclose(h.get(out), x.sum(axis=1), rtol=1e-12)
                h.be.linalg("inv", (a,), (inv,))
                np.testing.assert_array_equal(h.get(inv), np.eye(64)[None] * 0.5)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_vertical_sum_split_over_rows_is_pairwise_accurate(h, two_threads):
    rows = np.ascontiguousarray(np.full((8192, 300), 0.1, np.float32))
    out = h.empty((300,), ndplane.float32)
    h.be.reduce("sum", h.put(rows.T, rows), out)  # sums over 8192 rows, split across the pool
    np.testing.assert_allclose(h.get(out), 819.2, rtol=1e-5)
    data = h.rng.standard_normal((5000, 333))
    out = h.empty((333,), ndplane.float64)
    h.be.reduce("sum", h.put(data.T, data), out)
    np.testing.assert_allclose(h.get(out), data.sum(axis=0), rtol=1e-12, atol=1e-12)


def _child(conn) -> None:
    import ndplane as nd

    x = nd.ones((2000, 1000), dtype=nd.float32, device="cpu")
    conn.send(float(nd.sum(x + x)))
    conn.close()


def test_pool_works_after_fork(two_threads):
    import ndplane as nd

    float(nd.sum(nd.ones((2000, 1000), device="cpu") * 2))  # the parent's pool is running
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    p = ctx.Process(target=_child, args=(child,))
    p.start()
    assert parent.poll(60), "the forked child hung"
    assert parent.recv() == 4_000_000.0
    p.join(10)


@pytest.mark.parametrize(("env", "want"), [
    ({"NDPLANE_CPU_THREADS": "3", "OMP_NUM_THREADS": "1"}, 3),
    ({"OMP_NUM_THREADS": "1"}, 1),  # what dask's worker processes start with
    ({"OMP_NUM_THREADS": "5"}, 5),
])  # fmt: skip
def test_default_thread_count_follows_the_environment(env, want):
    clean = {k: v for k, v in os.environ.items() if k not in ("NDPLANE_CPU_THREADS", "OMP_NUM_THREADS")}
    code = "from ndplane_cpu.backend import _native; print(_native().num_threads())"
    run = subprocess.run([sys.executable, "-c", code], env={**clean, **env}, check=True, capture_output=True, text=True)
    assert int(run.stdout) == want


def _span(bounds: list[int], threads: int) -> int:
    """The last finishing time when equal threads claim the chunks in order (the ticket's order)."""
    ends = [0] * threads
    for lo, hi in itertools.pairwise(bounds):
        i = ends.index(min(ends))
        ends[i] += hi - lo
    return max(ends)


@pytest.mark.parametrize("n", [65_536, 100_000, 1 << 20, 1_000_000, 4_000_000, 16_000_000, 123_456_789])
@pytest.mark.parametrize("threads", [2, 3, 4, 8, 12, 16, 32, 64, 200])
@pytest.mark.parametrize("grain", [1, 16, 1024, 32_768])
def test_chunk_plan_keeps_every_thread_near_an_even_share(n, threads, grain):
    # The plan once cut the tail into chunks of a grain each: on 16 threads a 10^6-element add
    # had threads running 1.8x the even share (invisible on 2 cores, where it is exact).
    native = _native()
    bounds = native.chunk_bounds(n, grain, threads)
    used = min(threads, n // grain, 128)  # the threads follow the work, one per grain
    if used < 2:
        assert bounds == [0, n]
        return
    assert bounds[0] == 0 and bounds[-1] == n
    assert all(lo < hi for lo, hi in itertools.pairwise(bounds))
    assert len(bounds) - 1 <= 3 * used
    if grain >= 64:
        assert all(b % 64 == 0 for b in bounds[1:-1]), "chunks start on cache lines"
    first = bounds[1] - bounds[0]
    assert first >= min(grain, n // used) * 7 // 8, "the first chunk of a thread is long"
    even = n / used
    assert _span(bounds, used) <= even * 1.02 + 64 * 3, (_span(bounds, used) / even)


@pytest.mark.parametrize("n", [2, 3, 5, 9, 15, 17, 63, 100, 1000, 4097])
@pytest.mark.parametrize("threads", [2, 3, 4, 8, 16])
def test_chunk_plan_of_a_few_blocks_is_even(n, threads):
    # parallel_range(P, 1, ...) over a few blocks (a column sum's row blocks, a long row's
    # parts): the remainder once went whole to the last chunk, so 15 blocks on 8 threads were
    # cut 1+1+1+1+1+1+1+1+7 and the region lasted 7 blocks instead of 2.
    bounds = _native().chunk_bounds(n, 1, threads)
    used = min(threads, n)
    assert bounds[0] == 0 and bounds[-1] == n
    assert all(lo < hi for lo, hi in itertools.pairwise(bounds))
    even = -(-n // used)
    if n // used < 4:  # one chunk per thread
        assert _span(bounds, used) == even, bounds
    else:  # a long chunk per thread and short ones that balance the tail
        assert _span(bounds, used) <= even * 1.1 + 1, bounds


def test_many_threads_wake_from_sleep_and_spin(h):
    # More threads than this machine's cores: the slots, the sleep and the wake-up paths.
    with native_threads(16):
        for n in (70_000, 1_000_003, 65_536 * 16 + 5):
            x = h.rng.standard_normal(n).astype(np.float32)
            ref = h.put(x)
            out = h.empty(x.shape, ndplane.float32)
            for i in range(6):
                if i % 3 == 2:
                    time.sleep(0.002)  # past NDPLANE_CPU_SPIN_US: the workers sleep
                h.be.unary("exp", ref, out)
                np.testing.assert_allclose(h.get(out), np.exp(x), rtol=1e-6)
                h.be.binary("add", ref, float(i), out)
                np.testing.assert_array_equal(h.get(out), x + np.float32(i))
