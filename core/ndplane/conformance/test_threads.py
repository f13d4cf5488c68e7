"""Python threads share a device: several threads run op chains on one device at once.

The protocol asks every backend to be safe when several Python threads call it at the same
time (dask's threaded scheduler, a server's worker threads, a data loader beside a training
loop): each call's result must be what it is alone, and an array freed by one thread while
another computes must not disturb it. A backend that records work into shared state (an open
command encoder, a parameter ring, a pool of freed buffers) has to serialise that itself.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import ndplane as nd

THREADS = 4
ROUNDS = 12


def _chain(device: nd.Device, dtype: nd.DType, seed: int, start: threading.Barrier) -> list[nd.Array]:
    """ROUNDS rounds of elementwise, reduction, matmul, scan, sort and take work, each result
    checked against NumPy in this thread; returns the last round's arrays (freed by the caller)."""
    rng = np.random.default_rng(seed)
    npdt = dtype.dtype
    tol = 1e-5 if npdt.itemsize == 4 else 1e-12
    index_dtype = device.backend.default_dtypes["indexing"]
    start.wait()
    kept: list[nd.Array] = []
    for r in range(ROUNDS):
        # NOTE: every fourth round is large: a native backend may release the GIL for large
        # work (the cpu backend from 2**15 elements), so its kernels then truly run at once.
        shape = (260 + r, 130) if r % 4 == 3 else (9 + r, 7)
        a = rng.standard_normal(shape).astype(npdt)
        b = rng.standard_normal(shape).astype(npdt)
        idx = rng.integers(0, a.shape[0], 5)
        x, y = nd.asarray(a, device=device), nd.asarray(b, device=device)
        # NOTE: a transposed operand and a broadcast row: the strided roads, not only the flat one.
        z = nd.multiply(x, 0.5) + nd.matrix_transpose(nd.matrix_transpose(y)) - y[:1]
        got = {
            "z": z,
            "sum": nd.sum(z, axis=0),
            "matmul": x[:32] @ nd.matrix_transpose(y[:32]),
            "cumsum": nd.cumulative_sum(x, axis=1),
            "sort": nd.sort(x, axis=-1),
            "take": nd.take(x, nd.asarray(idx, dtype=index_dtype, device=device), axis=0),
            "max": nd.max(x, axis=1),
        }
        zn = a * npdt.type(0.5) + b - b[:1]
        want = {
            "z": zn, "sum": zn.sum(axis=0), "matmul": a[:32] @ b[:32].T, "cumsum": np.cumsum(a, axis=1),
            "sort": np.sort(a, axis=-1), "take": a[idx], "max": a.max(axis=1),
        }  # fmt: skip
        for name, arr in got.items():
            np.testing.assert_allclose(arr.to_numpy(), want[name], rtol=tol, atol=tol,
                                       err_msg=f"thread {seed}, round {r}: {name}")  # fmt: skip
        kept = list(got.values())
    return kept


def test_threads_share_a_device(device: nd.Device) -> None:
    """THREADS threads at once, each with its own op chains on the same device, every result
    checked against NumPy; each thread's last arrays are freed by the main thread."""
    dtype = device.backend.default_dtypes["real floating"]
    if dtype not in device.backend.dtypes:
        pytest.skip(f"{device} has no real floating dtype")
    start = threading.Barrier(THREADS)
    with ThreadPoolExecutor(THREADS) as pool:
        futures = [pool.submit(_chain, device, dtype, seed, start) for seed in range(THREADS)]
        results = [f.result(timeout=600) for f in futures]
    # freed here, in another thread than the one that made them, after the others computed
    assert sum(len(r) for r in results) == 7 * THREADS
    del results, futures
    device.backend.synchronize()
