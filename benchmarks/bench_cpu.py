"""The cpu backend next to NumPy and PyTorch (CPU), all timed in this run.

    python benchmarks/bench_cpu.py [--quick] [--json PATH]

Prints milliseconds (or microseconds) per call and the ratios ndplane/NumPy and
ndplane/PyTorch; lower is better for ndplane. matmul rows also print GFLOP/s.
PyTorch is optional (`pip install torch==2.13.0`, the CPU wheel).

Times are the best of 11 interleaved rounds; the ratios are medians of the per-round
ratios (see ``_harness.side_by_side``), which a burst of load on a shared machine
moves far less than a quotient of two best times; the ndplane/PyTorch ratio comes with
a bootstrap 95 % interval, so a row says when this run cannot tell the two apart. Each
row also prints the 1-minute load average when it was timed: other processes take
cores and memory bandwidth away.

Every library reads the very same input memory (NumPy and PyTorch get zero-copy views
of ndplane's arrays): where a case is memory-bound, its speed depends on the physical
pages under the buffer (huge pages or not, which DRAM banks), and separate copies
would make that a coin toss per process. Sharing is conservative for ndplane: the
others get the 2 MiB pages its allocator asks for.
"""

from __future__ import annotations

import argparse
import os
import platform

import numpy as np
from _harness import (
    add_json_argument,
    interval,
    load_average,
    print_table,
    ratio,
    ratio_result,
    side_by_side,
    try_import_torch,
    write_json,
)

import ndplane as nd
from ndplane.composite import softmax


def cases(quick: bool) -> list[tuple[str, tuple[int, ...], str, float]]:
    """(name, shape, kind, flops) for the size-dependent rows."""
    n = 512 if quick else 1000
    big = 1024 if quick else 4096
    mm = 256 if quick else 1024
    return [
        ("add", (n, n), "add", 0),
        ("mul", (n, n), "mul", 0),
        ("relu", (n, n), "relu", 0),
        ("broadcast add (row)", (n, n), "badd", 0),
        ("transpose copy", (n, n), "tcopy", 0),
        (f"matmul {n}^2", (n, n), "matmul", 2 * n**3),
        ("sum axis=0", (big, big), "sum0", 0),
        ("sum axis=1", (big, big), "sum1", 0),
        ("softmax axis=-1", (big, big // 4), "softmax", 0),
        (f"matmul {mm}^2 float32", (mm, mm), "matmul", 2 * mm**3),
        (f"matmul {mm}^2 float64", (mm, mm), "matmul64", 2 * mm**3),
        ("rfft axis=-1", (big // 4, big // 4), "rfft", 0),
        ("inv float64", (mm // 2, mm // 2), "inv64", 0),
    ]


def inputs(kind: str, shape: tuple[int, ...], rng) -> tuple[nd.Array, nd.Array, nd.Array]:
    """The case's operands (x, y, row) as ndplane cpu arrays; the others view their memory."""
    dtype = np.float64 if kind in ("matmul64", "inv64") else np.float32
    x = rng.standard_normal(shape).astype(dtype)
    if kind == "inv64":
        x += shape[0] * np.eye(shape[0])
    y = rng.standard_normal(shape).astype(dtype)
    row = rng.standard_normal(shape[-1:]).astype(dtype)
    return tuple(nd.asarray(v, device="cpu") for v in (x, y, row))


def make(kind: str, operands: tuple[nd.Array, nd.Array, nd.Array], lib: str, torch):
    if lib == "ndplane":
        a, b, r = operands
        return {
            "add": lambda: a + b, "mul": lambda: a * b, "relu": lambda: nd.maximum(a, 0.0),
            "badd": lambda: a + r, "tcopy": lambda: nd.asarray(a.T, copy=True),
            "matmul": lambda: a @ b, "matmul64": lambda: a @ b,
            "sum0": lambda: nd.sum(a, axis=0), "sum1": lambda: nd.sum(a, axis=1),
            "softmax": lambda: softmax(a, axis=-1), "rfft": lambda: nd.fft.rfft(a),
            "inv64": lambda: nd.linalg.inv(a),
        }[kind]  # fmt: skip
    x, y, row = (np.asarray(v) for v in operands)  # zero-copy views of the same memory
    if lib == "numpy":

        def np_softmax():
            e = np.exp(x - x.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)

        return {
            "add": lambda: x + y, "mul": lambda: x * y, "relu": lambda: np.maximum(x, 0.0),
            "badd": lambda: x + row, "tcopy": lambda: np.ascontiguousarray(x.T),
            "matmul": lambda: x @ y, "matmul64": lambda: x @ y,
            "sum0": lambda: x.sum(axis=0), "sum1": lambda: x.sum(axis=1), "softmax": np_softmax,
            "rfft": lambda: np.fft.rfft(x), "inv64": lambda: np.linalg.inv(x),
        }[kind]  # fmt: skip
    a, b, r = (torch.from_numpy(v) for v in (x, y, row))
    return {
        "add": lambda: a + b, "mul": lambda: a * b, "relu": lambda: torch.relu(a),
        "badd": lambda: a + r, "tcopy": lambda: a.T.contiguous(),
        "matmul": lambda: a @ b, "matmul64": lambda: a @ b,
        "sum0": lambda: a.sum(dim=0), "sum1": lambda: a.sum(dim=1),
        "softmax": lambda: torch.softmax(a, dim=-1), "rfft": lambda: torch.fft.rfft(a),
        "inv64": lambda: torch.linalg.inv(a),
    }[kind]  # fmt: skip


def latency_rows(torch) -> list[tuple[str, dict]]:
    a = nd.asarray([1.0, 2.0, 3.0, 4.0], dtype=nd.float32, device="cpu")
    b = nd.asarray([5.0, 6.0, 7.0, 8.0], dtype=nd.float32, device="cpu")
    m = nd.zeros((64, 64), dtype=nd.float32, device="cpu")
    na, nb, nm = a.to_numpy(), b.to_numpy(), m.to_numpy()
    rows = [
        ("a + b (4 x float32)", {"ndplane": lambda: a + b, "numpy": lambda: na + nb}),
        ("a[1:3] (slice)", {"ndplane": lambda: a[1:3], "numpy": lambda: na[1:3]}),
        ("m.T", {"ndplane": lambda: m.T, "numpy": lambda: nm.T}),
        ("reshape", {"ndplane": lambda: nd.reshape(m, (32, 128)), "numpy": lambda: nm.reshape(32, 128)}),
    ]
    if torch is not None:
        ta, tb, tm = (torch.from_numpy(v.copy()) for v in (na, nb, nm))
        for (_, fns), fn in zip(rows, [lambda: ta + tb, lambda: ta[1:3], lambda: tm.T,
                                       lambda: tm.reshape(32, 128)], strict=True):  # fmt: skip
            fns["torch"] = fn
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    add_json_argument(parser)
    args = parser.parse_args()
    torch = try_import_torch()
    rng = np.random.default_rng(0)
    backend = nd.Device("cpu").backend
    machine = (f"{platform.machine()}, {os.cpu_count()} cpus, python {platform.python_version()}, "
               f"numpy {np.__version__}" + (f", torch {torch.__version__}" if torch else ", torch absent")
               + f"; ndplane-cpu: {backend!r}; load average {load_average()}")  # fmt: skip
    print(f"machine: {machine}")
    results: list[dict] = []
    rows = [["case (float32 unless noted)", "ndplane ms", "numpy ms", "torch ms",
             "nd/numpy", "nd/torch", "95% interval", "nd GFLOP/s", "numpy GFLOP/s", "load"]]  # fmt: skip
    for name, shape, kind, flops in cases(args.quick):
        operands = inputs(kind, shape, rng)
        t = side_by_side({lib: make(kind, operands, lib, torch)
                          for lib in ("ndplane", "numpy") + (("torch",) if torch else ())},
                         repeat=11)  # fmt: skip
        rows.append([f"{name} {shape}", f"{t.best('ndplane') * 1e3:.3f}", f"{t.best('numpy') * 1e3:.3f}",
                     f"{t.best('torch') * 1e3:.3f}" if torch else "-", ratio(t.ratio("ndplane", "numpy")),
                     ratio(t.ratio("ndplane", "torch")), interval(t.interval("ndplane", "torch")),
                     f"{flops / t.best('ndplane') / 1e9:.1f}" if flops else "",
                     f"{flops / t.best('numpy') / 1e9:.1f}" if flops else "", load_average()])  # fmt: skip
        case = f"{name} {shape}"
        results += ratio_result(case, "PyTorch", t.ratio("ndplane", "torch"), t.interval("ndplane", "torch"))
        results += ratio_result(case, "NumPy", t.ratio("ndplane", "numpy"))
    print_table(rows)
    print()
    rows = [["small op", "ndplane us", "numpy us", "torch us", "nd/numpy", "nd/torch", "load"]]
    for name, fns in latency_rows(torch):
        t = side_by_side(fns)
        rows.append([name, f"{t.best('ndplane') * 1e6:.2f}", f"{t.best('numpy') * 1e6:.2f}",
                     f"{t.best('torch') * 1e6:.2f}" if "torch" in t else "-",
                     ratio(t.ratio("ndplane", "numpy")), ratio(t.ratio("ndplane", "torch")), load_average()])  # fmt: skip
        results += ratio_result(name, "PyTorch", t.ratio("ndplane", "torch"))
        results += ratio_result(name, "NumPy", t.ratio("ndplane", "numpy"))
    print_table(rows)
    write_json(args.json, "bench_cpu", "The cpu backend (bench_cpu.py" + (" --quick)" if args.quick else ")"),
               machine, results)  # fmt: skip


if __name__ == "__main__":
    main()
