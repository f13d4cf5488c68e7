"""dask.array with ndplane-cpu chunks and cubed on ndplane-cpu, next to dask.array with NumPy
chunks, on the threaded scheduler and on a LocalCluster of 2 worker processes, in one run.

    python benchmarks/bench_distributed.py [--size 8000] [--chunk 1000] [--rounds 3] [--quick]
                                           [--bounded] [--json PATH]

The computation is ``y = (x - x.mean(0)) / x.std(0)`` then ``y.T @ y`` on a float64 square
array in square chunks (8000 x 8000 in 1000 x 1000 by default; ``--quick``: 2000 in 500).
The input is generated chunk by chunk from NumPy's generator and persisted (dask: in memory,
as NumPy or as ndplane-cpu chunks of the same values; cubed: in Zarr on local disk) before the
clock starts; each timing computes the result into the client's memory. Times are the best
of ``--rounds`` interleaved rounds, the ratios the median of the per-round ratios to dask
with NumPy chunks on the same scheduler (``_harness.SideBySide``). Peak memory is the highest
resident memory above its level before the run, sampled every 10 ms over the processes that
compute: this one (threaded) or the two workers (cluster).

``--bounded`` runs the larger-than-memory case instead: cubed normalises an array 4 times
larger than the ``allowed_mem`` it is given (``reserved_mem`` as ``cubed.measure_reserved_mem``
finds it, plus 200 MB for data), with 2 worker processes, through Zarr on local disk, and
reports the peak resident memory of the task processes as cubed measures it (``ru_maxrss``),
on ndplane-cpu (with ``NDPLANE_CPU_CACHE_MB=0``: cubed's memory model assumes freed memory
returns to the system) and on cubed's default NumPy backend, each in a process of its own,
with glibc's malloc as it comes and with its mmap threshold fixed at 1 MiB
(``GLIBC_TUNABLES=glibc.malloc.mmap_threshold=1048576``, so that the NumPy and Zarr buffers
of a task return to the system when freed, as the cpu backend's own large blocks do).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from _harness import SideBySide, interval, load_average, print_table, ratio, ratio_result, write_json

import ndplane as nd
import ndplane.cubed

#: cubed's backend in this process: ndplane on cpu, or cubed's default ("numpy", for --bounded's reference)
CUBED_BACKEND = os.environ.get("BENCH_CUBED_BACKEND", "ndplane-cpu")
if CUBED_BACKEND == "ndplane-cpu":
    ndplane.cubed.use("cpu")  # NOTE: before cubed is imported (it reads the variable once)

import cubed  # noqa: E402
import cubed.array_api as xp  # noqa: E402
import cubed.runtime.executors.dask as cubed_dask  # noqa: E402
import dask  # noqa: E402
import dask.array as da  # noqa: E402
import distributed  # noqa: E402
import psutil  # noqa: E402
from cubed.runtime.create import create_executor  # noqa: E402
from cubed.runtime.types import Callback  # noqa: E402

import ndplane.dask  # noqa: E402


class PeakRSS:
    """The highest total resident memory of ``pids`` above its level at the start, sampled."""

    def __init__(self, pids: list[int], every: float = 0.01) -> None:
        self.procs = [psutil.Process(p) for p in pids]
        self.every, self.peak, self._stop = every, 0, threading.Event()

    def _rss(self) -> int:
        return sum(p.memory_info().rss for p in self.procs)

    def _sample(self) -> None:
        while not self._stop.wait(self.every):
            self.peak = max(self.peak, self._rss() - self.base)

    def __enter__(self) -> PeakRSS:
        self.base = self._rss()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._rss() - self.base)


def computation(x: Any, lib: Any) -> Any:
    y = (x - lib.mean(x, axis=0)) / lib.std(x, axis=0)
    return lib.matmul(lib.matrix_transpose(y), y) if lib is xp else y.T @ y


def dask_inputs(n: int, c: int, persist: Callable[[Any], Any]) -> dict[str, Any]:
    """The same values as NumPy chunks and as ndplane-cpu chunks, persisted where they compute."""
    x = da.random.default_rng(0).standard_normal((n, n), chunks=c)
    on_cpu = x.map_blocks(lambda b: nd.asarray(b, device="cpu"), meta=nd.empty((0, 0), device="cpu"))
    return {"dask+numpy": persist(x), "dask+ndplane-cpu": persist(on_cpu)}


@contextlib.contextmanager
def cluster() -> Iterator[Any]:
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  memory_limit="8GiB", preload=["ndplane.dask"], silence_logs=40) as c:  # fmt: skip
        with distributed.Client(c) as client:
            # NOTE: cubed 0.27's DaskExecutor reads the workers from its asynchronous client's
            # scheduler_info(), which distributed 2026.x leaves empty; run its check on this client.
            check = cubed_dask.check_runtime_memory
            cubed_dask.check_runtime_memory = lambda spec, _: check(spec, client)
            try:
                yield client
            finally:
                cubed_dask.check_runtime_memory = check


def run_rounds(configs: dict[str, tuple[Callable[[], Any], list[int]]], rounds: int) -> tuple[SideBySide, dict[str, int]]:
    times: dict[str, list[float]] = {k: [] for k in configs}
    peaks = dict.fromkeys(configs, 0)
    for _ in range(rounds):
        for name, (run, pids) in configs.items():
            time.sleep(0.2)
            with PeakRSS(pids) as mem:
                t0 = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - t0)
            peaks[name] = max(peaks[name], mem.peak)
    return SideBySide(times), peaks


def scheduler_runs(name: str, n: int, c: int, work: str, rounds: int, client: Any) -> tuple[SideBySide, dict[str, int]]:
    if client is None:
        persist: Callable[[Any], Any] = lambda a: a.persist(scheduler="threads")  # noqa: E731
        compute: Callable[[Any], Any] = lambda a: a.compute(scheduler="threads")  # noqa: E731
        pids = [os.getpid()]
        executor = create_executor("threads")
    else:
        persist, compute = client.persist, lambda a: client.compute(a, sync=True)
        pids = list(client.run(os.getpid).values())
        executor = create_executor("dask", {"compute_kwargs": {"address": client.scheduler.address}})
    inputs = dask_inputs(n, c, persist)
    if client is not None:
        distributed.wait(list(inputs.values()))
    spec = cubed.Spec(work, allowed_mem="2GB")
    path = os.path.join(work, f"x-{name}.zarr")
    inputs["dask+numpy"].to_zarr(path, overwrite=True, compute=True)
    x_cubed = cubed.from_zarr(path, spec=spec)
    results: dict[str, Any] = {}

    def run_dask(key: str) -> Callable[[], Any]:
        return lambda: results.__setitem__(key, compute(computation(inputs[key], da)))

    configs = {key: (run_dask(key), pids) for key in inputs}
    configs["cubed+ndplane-cpu"] = (lambda: results.__setitem__(
        "cubed+ndplane-cpu", computation(x_cubed, xp).compute(executor=executor)), pids)  # fmt: skip
    t, peaks = run_rounds(configs, rounds)
    want = np.asarray(results["dask+numpy"])
    for key in ("dask+ndplane-cpu", "cubed+ndplane-cpu"):
        got = results[key]
        assert type(got) is nd.Array and got.device == "cpu", f"{key} gave {type(got)}"
        np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-8, atol=1e-6 * n, err_msg=key)
    return t, peaks


#: glibc's malloc with a fixed mmap threshold: blocks of 1 MiB and more are mapped and unmapped,
#: never kept in its heap (by default the threshold rises to the largest block freed, up to 32 MiB).
MMAP_1MIB = "glibc.malloc.mmap_threshold=1048576"


def bounded(work: str) -> list[Any]:
    """cubed over an array 4x its allowed_mem, 2 worker processes, Zarr on local disk: backend,
    array, allowed_mem, reserved_mem, peak task RSS (bytes) and seconds."""
    executor = create_executor("processes", {"max_workers": 2})
    reserved = cubed.measure_reserved_mem(executor, work_dir=work)
    reserved = (int(reserved * 1.1) // 10_000_000 + 1) * 10_000_000
    allowed = reserved + 200_000_000
    n = int((4 * allowed / 8) ** 0.5) + 1
    spec = cubed.Spec(work, allowed_mem=allowed, reserved_mem=reserved)

    class Peak(Callback):
        peak = 0

        def on_task_end(self, event: Any) -> None:
            self.peak = max(self.peak, event.peak_measured_mem_end or 0)

    peak = Peak()
    x_path, out_path = os.path.join(work, "big-x.zarr"), os.path.join(work, "big-out.zarr")
    x = cubed.random.random((n, n), chunks=(n // 80 + 1, n), spec=spec)  # chunks of allowed_mem / 20
    t0 = time.perf_counter()
    cubed.to_zarr(x, x_path, executor=executor, callbacks=[peak])
    x = cubed.from_zarr(x_path, spec=spec)
    y = (x - xp.mean(x, axis=0)) / xp.std(x, axis=0)
    cubed.to_zarr(xp.sum(y * y, axis=1), out_path, executor=executor, callbacks=[peak])
    seconds = time.perf_counter() - t0
    check = np.asarray(__import__("zarr").open_array(out_path))
    assert abs(check.mean() - n) < 1e-6 * n  # every column has unit variance: rows sum to n on average
    return [CUBED_BACKEND, f"{n} x {n} float64 = {n * n * 8 / 1e9:.2f} GB", allowed, reserved, peak.peak, seconds]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=8000)
    parser.add_argument("--chunk", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="2000 x 2000 in 500 x 500 chunks, 2 rounds")
    parser.add_argument("--bounded", action="store_true", help="run the larger-than-allowed_mem cubed case instead")
    parser.add_argument("--bounded-row", action="store_true", help=argparse.SUPPRESS)  # one --bounded configuration
    parser.add_argument("--json", default=None, metavar="PATH", help="also write the ratios as JSON")
    args = parser.parse_args()
    if args.bounded_row:
        os.environ.setdefault("NDPLANE_CPU_CACHE_MB", "0")  # read by the task processes, started later
        work = tempfile.mkdtemp(prefix="bench-distributed-")
        try:
            print(json.dumps(bounded(work)))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return
    n, c, rounds = (2000, 500, 2) if args.quick else (args.size, args.chunk, args.rounds)
    machine = (f"{platform.machine()}, {os.cpu_count()} cpus, python {platform.python_version()}, "
               f"numpy {np.__version__}, dask {dask.__version__}, cubed {cubed.__version__}; "
               f"ndplane-cpu: {nd.Device('cpu').backend!r}; load average {load_average()}")  # fmt: skip
    print(f"machine: {machine}")
    if not args.bounded:
        print(f"(x - x.mean(0)) / x.std(0), then y.T @ y: {n} x {n} float64 in {c} x {c} chunks, best of {rounds}")
    if args.bounded:
        rows = [["cubed backend", "glibc malloc", "array", "allowed_mem", "reserved_mem", "peak task RSS",
                 "of allowed", "seconds"]]  # fmt: skip
        for backend in ("ndplane-cpu", "numpy"):
            for malloc, tunables in (("as it comes", None), ("mmap_threshold 1 MiB", MMAP_1MIB)):
                env = {**os.environ, "BENCH_CUBED_BACKEND": backend}
                if tunables:
                    env["GLIBC_TUNABLES"] = tunables
                run = subprocess.run([sys.executable, __file__, "--bounded-row"], check=True, env=env,
                                     stdout=subprocess.PIPE, text=True)  # fmt: skip
                backend_, array, allowed, reserved, peak, seconds = json.loads(run.stdout.strip().splitlines()[-1])
                rows.append([backend_, malloc, array, *(f"{v / 1e6:.0f} MB" for v in (allowed, reserved, peak)),
                             f"{peak / allowed:.0%}", f"{seconds:.1f}"])  # fmt: skip
        print_table(rows)
        return
    work = tempfile.mkdtemp(prefix="bench-distributed-")
    rows = [["scheduler", "configuration", "best s", "vs dask+numpy", "95% interval", "peak MB", "load"]]
    results: list[dict[str, Any]] = []
    try:
        for sched in ("threaded", "LocalCluster(2 processes)"):
            with contextlib.ExitStack() as stack:
                client = stack.enter_context(cluster()) if sched != "threaded" else None
                t, peaks = scheduler_runs(sched.split("(")[0], n, c, work, rounds, client)
            for key in ("dask+numpy", "dask+ndplane-cpu", "cubed+ndplane-cpu"):
                rows.append([sched, key, f"{t.best(key):.2f}", ratio(t.ratio(key, "dask+numpy")),
                             interval(t.interval(key, "dask+numpy")) if key != "dask+numpy" else "-",
                             f"{peaks[key] / 1e6:.0f}", load_average()])  # fmt: skip
                if key != "dask+numpy":
                    results += ratio_result(f"{key}, {sched}, {n}^2", "dask+NumPy", t.ratio(key, "dask+numpy"),
                                            t.interval(key, "dask+numpy"))  # fmt: skip
        print_table(rows)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_json(args.json, "bench_distributed", f"dask and cubed with ndplane-cpu chunks ({n}^2)", machine, results)


if __name__ == "__main__":
    main()
