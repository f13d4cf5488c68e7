"""Transcendental functions on the cpu backend next to NumPy and PyTorch (CPU), one run.

    python benchmarks/bench_math.py [--quick] [--json FILE]

Every transcendental unary function the cpu backend declares, the binary ones (atan2,
hypot, pow, logaddexp) and sigmoid, on 1000 x 1000 float32 and float64 (256 x 256 with
``--quick``), at the thread count ndplane-cpu runs with (PyTorch is set to the same).
Prints milliseconds per call and the ratios ndplane/NumPy and ndplane/PyTorch with a
bootstrap 95 % interval (``_harness.side_by_side``); rows above the issue-21 goal (1.2x
PyTorch's time) are flagged with ``!``. Inputs lie where each function is defined and
not saturated, so no library can take a special-value shortcut.
"""

from __future__ import annotations

import argparse
import json
import os
import platform

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
from ndplane._elementwise import OPS

GOAL = 1.2  # ndplane's time / PyTorch's, issue 21

# name -> (low, high) of the uniform inputs; binary functions take two such arrays.
UNARY = {
    "exp": (-80, 80), "expm1": (-5, 5), "log": (1e-3, 1e3), "log1p": (-0.9, 10), "log2": (1e-3, 1e3),
    "log10": (1e-3, 1e3), "sin": (-10, 10), "cos": (-10, 10), "tan": (-1.5, 1.5), "sinh": (-20, 20),
    "cosh": (-20, 20), "tanh": (-5, 5), "asin": (-1, 1), "acos": (-1, 1), "atan": (-10, 10),
    "asinh": (-100, 100), "acosh": (1, 100), "atanh": (-0.99, 0.99), "sigmoid": (-10, 10),
}  # fmt: skip
BINARY = {"atan2": (-10, 10), "hypot": (-10, 10), "pow": (0.1, 4), "logaddexp": (-10, 10)}


def _fns(name: str, operands: list[nd.Array], torch) -> dict:
    npy = [np.from_dlpack(a) for a in operands]
    if name == "sigmoid":
        fns = {"ndplane": lambda: nd.nn.functional.sigmoid(operands[0]),
               "numpy": lambda: 1 / (1 + np.exp(-npy[0]))}  # fmt: skip
    else:
        f, g = getattr(nd, name), OPS[name].reference  # the NumPy ufunc of the op
        fns = {"ndplane": lambda: f(*operands), "numpy": lambda: g(*npy)}
    if torch is not None:
        tt = [torch.from_dlpack(a) for a in npy]
        tf = getattr(torch, name)
        fns["torch"] = lambda: tf(*tt)
    return fns


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="256 x 256 and fewer rounds, for a smoke run")
    parser.add_argument("--json", metavar="FILE", help="also write the rows to FILE")
    args = parser.parse_args()
    torch = try_import_torch()
    backend = nd.Device("cpu").backend
    threads = native.num_threads()
    if torch is not None:
        torch.set_num_threads(threads)
    print(f"machine: {platform.machine()} {cpu_model()}, {os.cpu_count()} cpus; numpy {np.__version__}"
          + (f", torch {torch.__version__} ({torch.get_num_threads()} threads, {torch_cpu_capability(torch)})"
             if torch else ", torch absent")
          + f"; ndplane-cpu: {backend!r}; load average {load_average()}")  # fmt: skip
    n = 256 if args.quick else 1000
    rng = np.random.default_rng(0)
    rows = [["function", "dtype", "ndplane ms", "numpy ms", "torch ms", "nd/numpy", "nd/torch", "95% interval", ""]]
    records = []
    for name, (lo, hi) in [*UNARY.items(), *BINARY.items()]:
        for dtype in ("float32", "float64"):
            arity = 2 if name in BINARY else 1
            operands = [nd.asarray(rng.uniform(lo, hi, (n, n)).astype(dtype), device="cpu") for _ in range(arity)]
            t = side_by_side(_fns(name, operands, torch), repeat=3 if args.quick else 7,
                             min_time=0.05 if args.quick else 0.2)  # fmt: skip
            vs_torch = t.ratio("ndplane", "torch")
            flag = "!" if vs_torch is not None and vs_torch > GOAL else ""
            rows.append([name, dtype, f"{t.best('ndplane') * 1e3:.3f}", f"{t.best('numpy') * 1e3:.3f}",
                         f"{t.best('torch') * 1e3:.3f}" if "torch" in t else "-",
                         ratio(t.ratio("ndplane", "numpy")), ratio(vs_torch),
                         interval(t.interval("ndplane", "torch")), flag])  # fmt: skip
            records.append({"function": name, "dtype": dtype, "shape": [n, n], "threads": threads,
                            "seconds": {lib: t.best(lib) for lib in t.rounds},
                            "ratio_numpy": t.ratio("ndplane", "numpy"), "ratio_torch": vs_torch})  # fmt: skip
    print_table(rows)
    print(f"! = above the goal of {GOAL}x PyTorch's time")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"backend": repr(backend), "rows": records}, f, indent=1)


if __name__ == "__main__":
    main()
