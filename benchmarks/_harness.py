"""Shared timing helpers: best-of-N wall time, ratios printed side by side in one run."""

from __future__ import annotations

import os
import platform
import statistics
import time
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np


def best_time(fn: Callable[[], Any], *, min_time: float = 0.2, repeat: int = 5) -> float:
    """Best per-call seconds over ``repeat`` rounds, each running at least ``min_time``."""
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    number = max(1, int(number * min_time / 0.2))
    return min(timer.repeat(repeat=repeat, number=number)) / number


class SideBySide:
    """Per-call seconds of several libraries, one list per library, round by round."""

    def __init__(self, rounds: dict[str, list[float]]) -> None:
        self.rounds = rounds

    def __contains__(self, lib: str) -> bool:
        return lib in self.rounds

    def best(self, lib: str) -> float:
        """The fastest round of ``lib`` (what timeit reports)."""
        return min(self.rounds[lib])

    def ratio(self, lib: str, other: str) -> float | None:
        """The median over rounds of ``lib``'s time divided by ``other``'s in the same round.

        Each round times every library back to back, so a change of load (a neighbour
        taking memory bandwidth, a descheduled thread) hits both sides of one quotient;
        the median then drops the rounds it hit unevenly. ``None`` without ``other``.
        """
        if other not in self.rounds:
            return None
        pairs = zip(self.rounds[lib], self.rounds[other], strict=True)
        return statistics.median(x / y for x, y in pairs)

    def interval(self, lib: str, other: str, level: float = 0.95,
                 resamples: int = 2000) -> tuple[float, float] | None:  # fmt: skip
        """A bootstrap ``level`` interval of :meth:`ratio` (percentiles of the median of
        rounds drawn with replacement): how far the noise of this run leaves the ratio
        open. An interval that holds 1.0 means the run cannot tell the two apart.
        ``None`` without ``other``.
        """
        if other not in self.rounds:
            return None
        r = np.asarray(self.rounds[lib]) / np.asarray(self.rounds[other])
        draws = np.random.default_rng(0).integers(0, r.size, size=(resamples, r.size))
        medians = np.median(r[draws], axis=1)
        tail = (1 - level) / 2 * 100
        lo, hi = np.percentile(medians, [tail, 100 - tail])
        return float(lo), float(hi)


def calls_for(timer: timeit.Timer, min_time: float) -> int:
    """How many calls take about ``min_time``, judged from calls taking a tenth of it (or
    one call, if that takes longer): cheaper than timeit's autorange, which spends 0.2 s
    and more per library, for scripts that time hundreds of rows."""
    if min_time <= 0:
        return 1
    n, t = 1, timer.timeit(1)
    while t < min_time / 10 and n < 10**7:
        n *= 10
        t = timer.timeit(n)
    return max(1, round(n * min_time / max(t, 1e-9)))


def warm(fn: Callable[[], Any], seconds: float | None) -> None:
    """Call ``fn`` once, then again until ``seconds`` have passed (None: not at all)."""
    if seconds is None:
        return
    end = time.perf_counter() + seconds
    fn()
    while time.perf_counter() < end:
        fn()


def side_by_side(fns: dict[str, Callable[[], Any]], *, min_time: float = 0.2, repeat: int = 7,
                 pause: float = 0.05, autorange: bool = True, warmup: float | None = 0.0) -> SideBySide:  # fmt: skip
    """Time each function in ``repeat`` interleaved rounds of at least ``min_time`` each.

    Before each library's turn the harness sleeps ``pause`` seconds and makes one untimed
    call: the library timed before it may leave threads spinning (PyTorch's OpenMP
    workers spin for about 10 ms after every parallel op, ndplane-cpu's for 0.2 ms), and
    on two cores a spinning thread would take one core from the next library's first
    milliseconds. ``warmup`` seconds of further untimed calls serve the same end on a
    loaded machine, where a pause lets the OpenMP workers of PyTorch (and OpenBLAS's) fall
    asleep: with other processes on both cores, waking them cost up to 8 ms per call of
    a 32 x 32 softmax (3 us when they are awake); ``warmup=None`` makes no untimed call,
    for calls so long that neither matters. ``autorange=False`` sizes the rounds with
    :func:`calls_for` instead of timeit's autorange.
    """
    timers = {lib: timeit.Timer(fn) for lib, fn in fns.items()}
    if autorange:
        number = {lib: max(1, int(t.autorange()[0] * min_time / 0.2)) for lib, t in timers.items()}
    else:
        number = {}
        for lib, t in timers.items():
            if min_time > 0:  # else one call a round, and nothing to measure first
                warm(fns[lib], warmup)
            number[lib] = calls_for(t, min_time)
    rounds: dict[str, list[float]] = {lib: [] for lib in fns}
    for _ in range(repeat):
        for lib, t in timers.items():
            if pause:
                time.sleep(pause)
            warm(fns[lib], warmup)
            rounds[lib].append(t.timeit(number[lib]) / number[lib])
    return SideBySide(rounds)


def back_to_back(fns: dict[str, Callable[[], Any]], *, calls: int = 41, blocks: int = 4,
                 warmup: float = 0.02, budget: float = 1.0) -> SideBySide:  # fmt: skip
    """Time each function alone: blocks of ``calls`` back-to-back calls, each call timed on its
    own, the libraries' blocks in turn and then in reverse (A B C, C B A, ...) so that a drift
    of the machine hits every library alike; a round of the result is one block's median call.

    What interleaved rounds (:func:`side_by_side`) cannot show: a library's time when no other
    library's threads ran just before it. On two cores PyTorch's OpenMP workers spin for about
    10 ms after each parallel op and NumPy's OpenBLAS workers longer, and whoever is timed next
    runs on one core: a row far above its neighbours in an interleaved run is checked this way
    before it counts. Each block starts with ``warmup`` seconds of untimed calls, and a slow
    call gets fewer calls a block (``budget`` seconds a block, three calls at least).
    """
    first = {lib: timeit.Timer(fn).timeit(1) for lib, fn in fns.items()}
    n = {lib: max(3, min(calls, int(budget / max(t, 1e-9)))) for lib, t in first.items()}
    rounds: dict[str, list[float]] = {lib: [] for lib in fns}
    order = list(fns)
    for b in range(blocks):
        for lib in order if b % 2 == 0 else order[::-1]:
            fn = fns[lib]
            warm(fn, warmup)
            times = []
            for _ in range(n[lib]):
                start = time.perf_counter()
                fn()
                times.append(time.perf_counter() - start)
            rounds[lib].append(statistics.median(times))
    return SideBySide(rounds)


def load_average() -> str:
    """The 1-minute load average, for a table row: other processes take cores and bandwidth."""
    return f"{os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else "-"


def cpu_model() -> str:
    """The processor's name (``/proc/cpuinfo``), for a machine line: libm vector code and
    PyTorch's kernels differ in speed between processors of one instruction set."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def torch_cpu_capability(torch: Any) -> str:
    """The vector code PyTorch's CPU kernels picked (``AVX512``, ``AVX2``, ...), or ``-``."""
    try:
        return str(torch.backends.cpu.get_cpu_capability())
    except AttributeError:
        return "-"


def ratio(r: float | None) -> str:
    return f"{r:.2f}x" if r else "-"


def interval(iv: tuple[float, float] | None) -> str:
    return f"{iv[0]:.2f}-{iv[1]:.2f}" if iv else "-"


def print_table(rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print(
            "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
        )


def try_import_torch() -> Any:
    try:
        import torch

        torch.set_num_threads(max(1, torch.get_num_threads()))
        return torch
    except ImportError:
        return None


def parse_args() -> Any:
    """``--device NAME`` as an ndplane Device (the default device without it) and ``--json PATH``."""
    import argparse

    import ndplane as nd

    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default=None)
    add_json_argument(parser)
    args = parser.parse_args()
    args.device = nd.Device(args.device) if args.device else nd.get_default_device()
    return args


def add_json_argument(parser: Any) -> None:
    parser.add_argument("--json", default=None, metavar="PATH",
                        help="also write the ratios as JSON, for tools/plot_benchmarks.py")  # fmt: skip


def ratio_result(case: str, baseline: str, ratio: float | None,
                 interval: tuple[float, float] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """One entry of the JSON's ``results`` (none when the baseline did not run)."""
    if ratio is None or ratio != ratio:  # absent, or NaN (the baseline is not installed)
        return []
    return [{"case": case, "baseline": baseline, "ratio": round(ratio, 4),
             "interval": [round(v, 4) for v in interval] if interval else None}]  # fmt: skip


def write_json(path: str | None, benchmark: str, title: str, machine: str, results: list[dict[str, Any]],
               extra: dict[str, Any] | None = None) -> None:  # fmt: skip
    """Write this run's ratios (ndplane's time / the baseline's) in the format of
    tools/plot_benchmarks.py, which draws them, plus the script's own ``extra`` keys (which
    the plot ignores); nothing without a path."""
    if not path:
        return
    import json

    doc = {"benchmark": benchmark, "title": title, "machine": machine, "results": results, **(extra or {})}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {path}")
