"""Thread scaling: the cpu backend next to PyTorch (CPU) and NumPy at 1, 2, 4, ... threads.

    python benchmarks/bench_scaling.py [--quick] [--sizes 256,1000] [--threads 1,4,16]
                                       [--max-threads N] [--json FILE] [--plot FILE.png]
    python benchmarks/bench_scaling.py --load FILE.json [FILE.json ...] [--plot FILE.png]

Twelve cases on n x n float32: add, mul, relu, broadcast add (``a + row``), exp, log, tanh,
sigmoid, row sums (``sum(axis=-1)``), column sums (``sum(axis=0)``), softmax along rows (the
fused composite) and matmul, for n = 256, 1000, 2000 and 4000 (``--quick``: 256 and 1000, with
fewer and shorter rounds), at 1, 2, 4, 8, ... threads and at every core this process may run on
(``os.sched_getaffinity``; ``--max-threads`` caps the counts, ``--threads`` names them). Each
thread count runs in a process of its own (this script with ``--worker``), started with
NDPLANE_CPU_THREADS, OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and MKL_NUM_THREADS set to the count
(thread pools size themselves when they load) and PyTorch's ``set_num_threads`` called.

The table has a row per case and size. ``nd/torch Nt`` is ndplane's time over PyTorch's, both
on N threads (lower is better for ndplane), with its bootstrap 95 % interval in brackets; ``!``
marks a ratio above issue 21's goal for that row (1.1x for add, mul, relu and broadcast add at
256^2 to 2000^2, 1.2x for exp, log, tanh and sigmoid at 1000^2). ``nd ms`` and ``nd/numpy`` are
ndplane's time and its ratio to NumPy's on the fewest threads of the run. Inside a process the
libraries are timed in interleaved rounds, and a ratio is the median of the per-round ratios
(``_harness.side_by_side``); every round's time goes to ``--json``. NumPy's elementwise
functions and reductions run on one thread whatever the settings, so NumPy is timed on every
thread count only for matmul (OpenBLAS), and for the other cases once, on the fewest threads.
All libraries read the same input memory (NumPy and PyTorch take ndplane's arrays through
DLPack). A line per process gives the thread counts in effect there (threadpoolctl, where
installed, names every BLAS and OpenMP runtime) and the load average before and after: a
process whose threads share cores with other work stalls whenever one of them is descheduled,
so the ratios of a loaded run say little.

``--plot FILE.png`` (matplotlib, in the ``docs`` extra) draws for each case the milliseconds
per call (best round) against threads, log-log, where perfect scaling halves the time per
doubling: ndplane solid, PyTorch dashed, a pair of lines per size, NumPy as dots. A full run
takes minutes per thread count; split it over commands (``--sizes``, ``--threads``) each with
``--json``, then ``--load`` the files, merged, to print the table and draw the plot (also where
matplotlib is missing on the machine that timed it). ``--quick`` takes about 90 s per thread
count whatever the count (the rounds are sized by time): on a 16-core GPU machine, 2026-11-28,
one process per count cut at 90 s timed nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import ndplane_cpu._native as native
import numpy as np
from _harness import (
    cpu_model,
    interval,
    load_average,
    print_table,
    ratio,
    side_by_side,
    torch_cpu_capability,
    try_import_torch,
)

import ndplane as nd
from ndplane.composite import softmax
from ndplane.nn import functional as F

SIZES, QUICK_SIZES = (256, 1000, 2000, 4000), (256, 1000)
CASES = ("add", "mul", "relu", "broadcast add", "exp", "log", "tanh", "sigmoid",
         "row sum", "column sum", "softmax", "matmul")  # fmt: skip
RANGES = {"exp": (-80, 80), "log": (1e-3, 1e3), "tanh": (-5, 5), "sigmoid": (-10, 10)}  # as bench_math.py
THREAD_VARS = ("NDPLANE_CPU_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
COLORS = {"ndplane": "#222222", "torch": "#ee4c2c", "numpy": "#4d77cf"}  # tools/plot_benchmarks.py's


def goal(case: str, n: int) -> float | None:
    """Issue 21's ceiling on ndplane's time / PyTorch's for this row, where it sets one."""
    if case in ("add", "mul", "relu", "broadcast add") and 256 <= n <= 2000:
        return 1.1
    return 1.2 if case in RANGES and n == 1000 else None


def _threads(n: int) -> str:
    return f"{n} thread" + ("s" if n > 1 else "")


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def thread_counts(cap: int | None) -> list[int]:
    """1, 2, 4, ... up to every core this process may use (or ``cap``), and that number itself."""
    top = min(cores(), cap) if cap else cores()
    counts = [1 << k for k in range(top.bit_length()) if 1 << k <= top]
    return counts if counts[-1] == top else [*counts, top]


# -- the worker: one thread count, one process ------------------------------------------------


def inputs(n: int) -> dict[str, nd.Array]:
    """Every case's operands at size n as ndplane cpu arrays (the same values in every process)."""
    rng = np.random.default_rng(0)
    host = {"x": rng.standard_normal((n, n), dtype=np.float32), "y": rng.standard_normal((n, n), dtype=np.float32),
            "row": rng.standard_normal(n, dtype=np.float32)}  # fmt: skip
    host.update({case: rng.uniform(lo, hi, (n, n)).astype(np.float32) for case, (lo, hi) in RANGES.items()})
    return {k: nd.asarray(v, device="cpu") for k, v in host.items()}


def _numpy_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def calls(
    case: str, arrays: dict[str, nd.Array], torch: Any, with_numpy: bool
) -> dict[str, Callable[[], Any]]:
    """The case's call per library, all on the same memory (NumPy and PyTorch view it through DLPack)."""
    a, b, r = arrays.get(case, arrays["x"]), arrays["y"], arrays["row"]
    out = {"ndplane": {
        "add": lambda: a + b, "mul": lambda: a * b, "relu": lambda: F.relu(a), "broadcast add": lambda: a + r,
        "exp": lambda: nd.exp(a), "log": lambda: nd.log(a), "tanh": lambda: nd.tanh(a),
        "sigmoid": lambda: F.sigmoid(a), "row sum": lambda: nd.sum(a, axis=-1),
        "column sum": lambda: nd.sum(a, axis=0), "softmax": lambda: softmax(a, axis=-1), "matmul": lambda: a @ b,
    }[case]}  # fmt: skip
    if torch is not None:
        ta, tb, tr = (torch.from_dlpack(v) for v in (a, b, r))
        out["torch"] = {
            "add": lambda: ta + tb, "mul": lambda: ta * tb, "relu": lambda: torch.relu(ta),
            "broadcast add": lambda: ta + tr, "exp": lambda: torch.exp(ta), "log": lambda: torch.log(ta),
            "tanh": lambda: torch.tanh(ta), "sigmoid": lambda: torch.sigmoid(ta),
            "row sum": lambda: ta.sum(dim=-1), "column sum": lambda: ta.sum(dim=0),
            "softmax": lambda: torch.softmax(ta, dim=-1), "matmul": lambda: ta @ tb,
        }[case]  # fmt: skip
    if with_numpy or case == "matmul":  # NOTE: NumPy uses threads only in matmul (BLAS)
        x, y, row = (np.from_dlpack(v) for v in (a, b, r))
        out["numpy"] = {
            "add": lambda: x + y, "mul": lambda: x * y, "relu": lambda: np.maximum(x, 0.0),
            "broadcast add": lambda: x + row, "exp": lambda: np.exp(x), "log": lambda: np.log(x),
            "tanh": lambda: np.tanh(x), "sigmoid": lambda: 1 / (1 + np.exp(-x)),
            "row sum": lambda: x.sum(axis=-1), "column sum": lambda: x.sum(axis=0),
            "softmax": lambda: _numpy_softmax(x), "matmul": lambda: x @ y,
        }[case]  # fmt: skip
    return out


def blas_threads() -> dict[str, int] | None:
    """Threads of every BLAS and OpenMP runtime loaded, by library file (threadpoolctl, if installed)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    return {os.path.basename(i["filepath"]): i["num_threads"] for i in threadpool_info()}


def worker(threads: int, sizes: list[int], quick: bool, with_numpy: bool) -> dict[str, Any]:
    torch = try_import_torch()
    native.set_num_threads(threads)  # as NDPLANE_CPU_THREADS says; also sets ndplane's OpenBLAS
    if torch is not None:
        torch.set_num_threads(threads)
    load, start, rows = load_average(), time.perf_counter(), []
    for n in sizes:
        print(f"  {_threads(threads)}: {n}^2 ...", file=sys.stderr, flush=True)
        arrays = inputs(n)
        for case in CASES:
            t = side_by_side(calls(case, arrays, torch, with_numpy), repeat=5 if quick else 7,
                             min_time=0.05 if quick else 0.1)  # fmt: skip
            rows.append({"case": case, "n": n, "threads": threads, "seconds": {lib: t.best(lib) for lib in t.rounds},
                         "rounds": t.rounds, "ratio_torch": t.ratio("ndplane", "torch"),
                         "interval_torch": t.interval("ndplane", "torch"), "ratio_numpy": t.ratio("ndplane", "numpy"),
                         "interval_numpy": t.interval("ndplane", "numpy"), "load": load_average()})  # fmt: skip
        del arrays
    return {"threads": threads, "ndplane_threads": native.num_threads(),
            "torch_threads": torch.get_num_threads() if torch is not None else None,
            "torch": torch.__version__ if torch is not None else None, "blas_threads": blas_threads(),
            "backend": repr(nd.Device("cpu").backend), "load": [load, load_average()],
            "seconds": round(time.perf_counter() - start, 1), "rows": rows}  # fmt: skip


# -- the driver: a process per thread count, then the table and the plot ------------------------


def machine_line() -> str:
    mod = try_import_torch()
    torch = f"torch {mod.__version__} ({torch_cpu_capability(mod)})" if mod is not None else "torch absent"
    return (f"{platform.machine()} {cpu_model()}, {cores()} cpus available ({os.cpu_count()} online), python "
            f"{platform.python_version()}, numpy {np.__version__}, {torch}; ndplane-cpu: "
            f"{nd.Device('cpu').backend!r}; load average {load_average()}")  # fmt: skip


def run_workers(counts: list[int], sizes: list[int], quick: bool) -> Iterator[dict[str, Any]]:
    for threads in counts:
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--threads", str(threads),
               "--sizes", ",".join(map(str, sizes)), *(["--quick"] if quick else []),
               *(["--with-numpy"] if threads == counts[0] else [])]  # fmt: skip
        env = dict(os.environ, **dict.fromkeys(THREAD_VARS, str(threads)))
        done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, check=True)
        yield json.loads(done.stdout)


def worker_line(w: dict[str, Any]) -> str:
    blas = ", ".join(f"{k} {v}" for k, v in (w["blas_threads"] or {}).items()) or "threadpoolctl absent"
    return (
        f"{_threads(w['threads'])}: ndplane {w['ndplane_threads']}, torch {w['torch_threads']}; "
        f"BLAS/OpenMP: {blas}; load average {w['load'][0]} -> {w['load'][1]}; {w['seconds']} s"
    )


def merge(workers: list[dict[str, Any]]) -> dict[tuple[str, int, int], dict[str, Any]]:
    """The rows by (case, n, threads); a later run of the same key replaces an earlier one."""
    return {(r["case"], r["n"], r["threads"]): r for w in workers for r in w["rows"]}


def table(rows: dict[tuple[str, int, int], dict[str, Any]]) -> list[list[str]]:
    counts = sorted({t for _, _, t in rows})
    has_torch = any("torch" in r["seconds"] for r in rows.values())
    head = [f"nd/torch {t}t" if has_torch else f"nd ms {t}t" for t in counts]
    out = [["case (float32)", f"nd ms {counts[0]}t", f"nd/numpy {counts[0]}t", *head]]
    for case, n in sorted({(c, n) for c, n, _ in rows}, key=lambda k: (CASES.index(k[0]), k[1])):
        first = rows.get((case, n, counts[0]), {})
        cells = []
        for t in counts:
            r = rows.get((case, n, t))
            if r is None or not has_torch:
                cells.append(f"{r['seconds']['ndplane'] * 1e3:.3f}" if r else "")
                continue
            over = r["ratio_torch"] is not None and r["ratio_torch"] > (goal(case, n) or math.inf)
            iv = r["interval_torch"]
            cells.append(
                ratio(r["ratio_torch"]) + ("!" if over else "") + (f" [{interval(iv)}]" if iv else "")
            )
        out.append([f"{case} {n}^2", f"{first['seconds']['ndplane'] * 1e3:.3f}" if first else "",
                    ratio(first.get("ratio_numpy")), *cells])  # fmt: skip
    return out


def plot(rows: dict[tuple[str, int, int], dict[str, Any]], title: str, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    counts, sizes = sorted({t for _, _, t in rows}), sorted({n for _, n, _ in rows})
    cases = [c for c in CASES if any(k[0] == c for k in rows)]
    nrows = math.ceil(len(cases) / 4)
    fig, axes = plt.subplots(nrows, 4, figsize=(11, 2.5 * nrows + 0.8), squeeze=False)
    styles = {"ndplane": {"ls": "-", "marker": "o"}, "torch": {"ls": "--", "marker": "s"},
              "numpy": {"ls": "none", "marker": "D"}}  # fmt: skip
    for ax, case in zip(axes.flat, cases):
        for n in sizes:
            for lib, style in styles.items():
                pts = [(t, rows[case, n, t]["seconds"][lib] * 1e3) for t in counts
                       if lib in rows.get((case, n, t), {}).get("seconds", {})]  # fmt: skip
                if pts:
                    ax.plot(*zip(*pts), color=COLORS[lib], lw=1, ms=3, **style)
                if pts and lib == "ndplane":
                    ax.annotate(f"{n}\u00b2", pts[-1], xytext=(4, 0), textcoords="offset points", fontsize=6,
                                va="center")  # fmt: skip
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))  # labelled: 0.1, 0.2, 0.5, 1 ms ...
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlim(counts[0] / 1.3, counts[-1] * 1.8)  # room for the size labels
        ax.set_xticks(counts, [str(t) for t in counts])
        ax.set_title(case, fontsize=9, loc="left")
        ax.tick_params(which="both", labelsize=7)
        ax.grid(which="major", alpha=0.3)
    for ax in axes.flat[len(cases) :]:
        ax.set_visible(False)
    libs = [lib for lib in styles if any(lib in r["seconds"] for r in rows.values())]
    legend = [Line2D([], [], color=COLORS[lib], lw=1, ms=3, **styles[lib]) for lib in libs]
    names = {"ndplane": "ndplane", "torch": "PyTorch", "numpy": "NumPy"}
    fig.legend(legend, [names[lib] for lib in libs], loc="upper right", ncol=3, fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=9, x=0.01, ha="left")
    fig.supxlabel("threads", fontsize=8)
    fig.supylabel("ms per call (log scale)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    print(f"wrote {path}")


def write_doc(path: str | None, doc: dict[str, Any]) -> bool:
    if path:
        Path(path).write_text(json.dumps(doc, indent=1) + "\n")
    return bool(path)


def ints(text: str) -> list[int]:
    return [int(v) for v in text.split(",")]


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="256^2 and 1000^2, fewer and shorter rounds")
    p.add_argument(
        "--sizes", type=ints, help="comma-separated n of the n x n inputs (default 256,1000,2000,4000)"
    )
    p.add_argument(
        "--threads", type=ints, help="comma-separated thread counts (default 1, 2, 4, ... all cores)"
    )
    p.add_argument("--max-threads", type=int, help="leave out thread counts above this")
    p.add_argument("--json", metavar="FILE", help="also write every time to FILE")
    p.add_argument("--plot", metavar="FILE.png", help="draw time against threads per case (needs matplotlib)")
    p.add_argument("--load", nargs="+", metavar="FILE.json", help="table and plot from earlier runs' --json")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--with-numpy", action="store_true", help=argparse.SUPPRESS)
    return p.parse_args()


def main() -> None:
    args = parse_args()
    sizes = args.sizes or list(QUICK_SIZES if args.quick else SIZES)
    if args.worker:
        json.dump(worker(args.threads[0], sizes, args.quick, args.with_numpy), sys.stdout)
        return
    if args.load:
        docs = [json.loads(Path(path).read_text()) for path in args.load]
        for doc in docs:
            print(f"machine: {doc['machine']}\n" + "\n".join(worker_line(w) for w in doc["workers"]))
        doc = {"benchmark": "bench_scaling", "title": " + ".join(d["title"] for d in docs),
               "machine": " + ".join(d["machine"] for d in docs), "workers": [w for d in docs for w in d["workers"]]}  # fmt: skip
    else:
        counts = [t for t in args.threads or thread_counts(args.max_threads) if t <= (args.max_threads or t)]
        doc = {"benchmark": "bench_scaling", "title": f"bench_scaling.py{' --quick' if args.quick else ''}, "
               f"{cores()} cpus, load average {load_average()}", "machine": machine_line()}  # fmt: skip
        print(f"machine: {doc['machine']}")
        doc["workers"] = []
        for w in run_workers(counts, sizes, args.quick):
            doc["workers"].append(w)
            print(worker_line(w), flush=True)
            write_doc(args.json, doc)  # after every process: a run cut short keeps what it timed
    rows = merge(doc["workers"])
    if not rows:
        raise SystemExit("no rows timed")
    print("nd/torch Nt: ndplane's time / PyTorch's, both on N threads; ! = above issue 21's goal for the row")
    print_table(table(rows))
    if write_doc(args.json, doc):
        print(f"wrote {args.json}")
    if args.plot:
        plot(rows, f"{doc['title']}: ms per call against threads", args.plot)


if __name__ == "__main__":
    main()
