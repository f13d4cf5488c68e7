"""sort, argsort and unique_values on the cpu backend next to NumPy and PyTorch, all timed in this run.

    python benchmarks/bench_sort.py [--before OLD_NATIVE_SO] [--json PATH]

Prints milliseconds per call, ndplane's time over the faster of NumPy and PyTorch (the
median of per-round ratios, see ``_harness.side_by_side``) and the 1-minute load average.
``unstable`` rows time ``stable=False`` against NumPy's default kind (introsort, or its
SIMD sort) and ``torch.sort(stable=False)``; ``stable`` rows against ``kind="stable"`` and
``stable=True``. PyTorch runs on as many threads as ndplane-cpu.

``--before`` names another build of ``ndplane_cpu._native`` (a copy of the .so kept from
before a change): a child process times ndplane with it, and NumPy beside it, first; the
table then shows before and after side by side, each with its own ratio to NumPy.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import numpy as np
from _harness import (
    add_json_argument,
    load_average,
    print_table,
    ratio,
    ratio_result,
    side_by_side,
    write_json,
)


def use_native(path: str) -> None:
    """Import ndplane_cpu._native from ``path`` instead of the installed build."""
    import importlib.util

    class Finder:
        @staticmethod
        def find_spec(name: str, *_: object) -> object:
            return importlib.util.spec_from_file_location(name, path) if name == "ndplane_cpu._native" else None

    sys.meta_path.insert(0, Finder)  # type: ignore[arg-type]


def cases(rng: np.random.Generator) -> list[tuple[str, np.ndarray]]:
    return [
        ("512x512 float32", rng.standard_normal((512, 512)).astype(np.float32)),
        ("1e6 float32", rng.standard_normal(10**6).astype(np.float32)),
        ("1e6 int64", rng.integers(-(2**62), 2**62, 10**6)),
    ]


def calls(nd, torch, op: str, stable: bool, a: np.ndarray) -> dict:
    """{library: call} for one op on the array ``a`` (PyTorch's a zero-copy view of it)."""
    x = nd.asarray(a, device="cpu")
    fns = {"ndplane": lambda: getattr(nd, op)(x, stable=stable),
           "numpy": lambda: getattr(np, op)(a, axis=-1, kind="stable" if stable else None)}  # fmt: skip
    if torch is not None:
        t = torch.from_numpy(a)
        fns["torch"] = lambda: getattr(torch, op)(t, stable=stable)
    return fns


def rows(nd, torch) -> list[tuple[str, dict]]:
    """(case, {library: call}) for every row of the table."""
    out = []
    for name, a in cases(np.random.default_rng(0)):
        for op in ("sort", "argsort"):
            for stable in (False, True):
                out.append((f"{op} {name} {'stable' if stable else 'unstable'}", calls(nd, torch, op, stable, a)))
    a = np.random.default_rng(1).standard_normal(10**6).astype(np.float32)
    x = nd.asarray(a, device="cpu")
    fns = {"ndplane": lambda: nd.unique_values(x), "numpy": lambda: np.unique(a)}
    if torch is not None:
        t = torch.from_numpy(a)
        fns["torch"] = lambda: torch.unique(t)
    out.append(("unique_values 1e6 float32", fns))
    return out


def child(native: str) -> None:
    """The ``--before`` build: ndplane's best time and its ratio to NumPy per row, as JSON."""
    use_native(native)
    import ndplane as nd

    res = {}
    for name, fns in rows(nd, None):
        t = side_by_side(fns, min_time=0.1, repeat=5)
        res[name] = [t.best("ndplane"), t.ratio("ndplane", "numpy")]
    print(json.dumps(res))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", default=None, metavar="SO", help="an older _native .so to time first")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    add_json_argument(parser)
    args = parser.parse_args()
    if args.child:
        return child(args.child)
    before = {}
    if args.before:
        load = load_average()
        proc = subprocess.run([sys.executable, __file__, "--child", args.before],
                              check=True, capture_output=True, text=True)  # fmt: skip
        before = json.loads(proc.stdout.splitlines()[-1])
        print(f"before: timed with {args.before} (load average {load} -> {load_average()})")
    import ndplane as nd

    try:
        import torch
    except ImportError:
        torch = None
    from ndplane_cpu.backend import _native

    if torch is not None:
        torch.set_num_threads(_native().num_threads())
    machine = (f"{os.cpu_count()} cpus, numpy {np.__version__}, torch {torch.__version__ if torch else 'absent'}"
               f" on {torch.get_num_threads() if torch else '-'} threads; ndplane-cpu: {nd.Device('cpu').backend!r}")  # fmt: skip
    print(f"machine: {machine}")
    table = [["case", "before ms", "before/numpy", "ndplane ms", "numpy ms", "torch ms", "nd/numpy", "nd/torch",
              "nd/faster", "load"]]  # fmt: skip
    results: list[dict] = []
    for name, fns in rows(nd, torch):
        t = side_by_side(fns, min_time=0.1, repeat=7)
        peers = [p for p in ("numpy", "torch") if p in t]
        faster = min(peers, key=t.best)
        b = before.get(name)
        table.append([name, f"{b[0] * 1e3:.2f}" if b else "-", ratio(b[1]) if b else "-",
                      f"{t.best('ndplane') * 1e3:.2f}", f"{t.best('numpy') * 1e3:.2f}",
                      f"{t.best('torch') * 1e3:.2f}" if "torch" in t else "-",
                      ratio(t.ratio("ndplane", "numpy")), ratio(t.ratio("ndplane", "torch")),
                      f"{ratio(t.ratio('ndplane', faster))} ({faster})", load_average()])  # fmt: skip
        for p in peers:
            results += ratio_result(name, {"numpy": "NumPy", "torch": "PyTorch"}[p], t.ratio("ndplane", p))
    print_table(table)
    write_json(args.json, "bench_sort", "sort, argsort and unique_values on the cpu backend (bench_sort.py)",
               machine, results)  # fmt: skip


if __name__ == "__main__":
    main()
