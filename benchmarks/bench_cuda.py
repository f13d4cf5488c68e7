"""The cuda backend against PyTorch (and CuPy when installed) on the same GPU, in one run.

    python benchmarks/bench_cuda.py [--device cuda] [--rounds 20] [--json results.json]

Every case runs on each library's own stream: ``--repeat`` back-to-back calls between two
synchronisations, timed ``--rounds`` times (median reported). PyTorch and CuPy are timed
with CUDA events on their streams; ndplane exposes no events, so its rounds are wall clock
between ``synchronize()`` calls (which only adds the launch of the first call). Inputs are
larger than the H100's 50 MB L2 except where the case is about latency or small data.
Bandwidth cases also print GB/s and the fraction of the measured copy bandwidth; the goals
of issue 14 are ratios to PyTorch measured here, never absolute times.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import ndplane as nd
from ndplane.composite import softmax

N = 1 << 26  # elements of the bandwidth cases (256 MiB of float32)
S = 8192  # side of the 2-D cases
M = 4096  # matmul size


def _nd_cases(dev: nd.Device) -> dict[str, tuple[Callable[[], Any], float]]:
    """name -> (call, bytes or flops it moves, for the rate column)."""
    rng = nd.random.default_rng(0, device=dev)
    a, b = rng.random((N,), dtype=nd.float32), rng.random((N,), dtype=nd.float32)
    x = rng.random((S, S), dtype=nd.float32)
    row = rng.random((S,), dtype=nd.float32)
    small_a, small_b = nd.ones(4, device=dev), nd.ones(4, device=dev)
    idx = nd.asarray(np.random.default_rng(1).integers(0, S, min(1 << 20, 16 * S)), device=dev)
    mats = {dt: (rng.random((M, M), dtype=nd.float32).astype(dt), rng.random((M, M), dtype=nd.float32).astype(dt))
            for dt in (nd.float16, nd.float32, nd.float64)}  # fmt: skip
    keys = rng.random((N // 4,), dtype=nd.float32)

    def chain() -> Any:
        c = small_a
        for _ in range(100):
            c = c + small_b
        return c

    return {
        "copy 2^26 f32": (lambda: nd.astype(a, nd.float32, copy=True), 8.0 * N),
        "add 2^26 f32": (lambda: a + b, 12.0 * N),
        "mul 2^26 f32": (lambda: a * b, 12.0 * N),
        "relu 2^26 f32": (lambda: nd.maximum(a, 0.0), 8.0 * N),
        "broadcast add 8192^2": (lambda: x + row, 8.0 * S * S),
        "transpose copy 8192^2": (lambda: nd.astype(x.T, nd.float32, copy=True), 8.0 * S * S),
        "row sum 8192^2": (lambda: nd.sum(x, axis=1), 4.0 * S * S),
        "column sum 8192^2": (lambda: nd.sum(x, axis=0), 4.0 * S * S),
        "softmax rows 8192^2": (lambda: softmax(x, axis=1), 8.0 * S * S),
        "cumsum rows 8192^2": (lambda: nd.cumulative_sum(x, axis=1), 8.0 * S * S),
        "argmax rows 8192^2": (lambda: nd.argmax(x, axis=1), 4.0 * S * S),
        **{f"matmul {M}^3 {dt.name}": ((lambda p=p: p[0] @ p[1]), 2.0 * M**3) for dt, p in mats.items()},
        "sort 2^24 f32": (lambda: nd.sort(keys), 2.0 * N),
        "take 2^20 rows of 8192^2": (lambda: nd.take(x, idx, axis=0), 8.0 * idx.shape[0] * S),
        "a + b on 4 elements x100 (latency)": (chain, 0.0),
    }


def _torch_cases(torch: Any) -> dict[str, Callable[[], Any]]:
    g = torch.Generator(device="cuda").manual_seed(0)
    a, b = torch.rand(N, device="cuda", generator=g), torch.rand(N, device="cuda", generator=g)
    x, row = torch.rand(S, S, device="cuda", generator=g), torch.rand(S, device="cuda", generator=g)
    small_a, small_b = torch.ones(4, device="cuda"), torch.ones(4, device="cuda")
    idx = torch.randint(0, S, (min(1 << 20, 16 * S),), device="cuda", generator=g)
    dts = {"float16": torch.float16, "float32": torch.float32, "float64": torch.float64}
    mats = {n: (torch.rand(M, M, device="cuda", generator=g).to(t), torch.rand(M, M, device="cuda", generator=g).to(t))
            for n, t in dts.items()}  # fmt: skip
    keys = torch.rand(N // 4, device="cuda", generator=g)

    def chain() -> Any:
        c = small_a
        for _ in range(100):
            c = c + small_b
        return c

    return {
        "copy 2^26 f32": lambda: a.clone(),
        "add 2^26 f32": lambda: a + b,
        "mul 2^26 f32": lambda: a * b,
        "relu 2^26 f32": lambda: torch.relu(a),
        "broadcast add 8192^2": lambda: x + row,
        "transpose copy 8192^2": lambda: x.t().contiguous(),
        "row sum 8192^2": lambda: x.sum(dim=1),
        "column sum 8192^2": lambda: x.sum(dim=0),
        "softmax rows 8192^2": lambda: torch.softmax(x, dim=1),
        "cumsum rows 8192^2": lambda: torch.cumsum(x, dim=1),
        "argmax rows 8192^2": lambda: torch.argmax(x, dim=1),
        **{f"matmul {M}^3 {n}": (lambda p=p: p[0] @ p[1]) for n, p in mats.items()},
        "sort 2^24 f32": lambda: torch.sort(keys, stable=True),
        "take 2^20 rows of 8192^2": lambda: x.index_select(0, idx),
        "a + b on 4 elements x100 (latency)": chain,
    }


def _time_nd(dev: nd.Device, fn: Callable[[], Any], repeat: int, rounds: int) -> float:
    fn()
    dev.backend.synchronize()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn()
        dev.backend.synchronize()
        times.append((time.perf_counter() - t0) / repeat)
    return statistics.median(times)


def _time_events(torch: Any, fn: Callable[[], Any], repeat: int, rounds: int) -> float:
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(repeat):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3 / repeat)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", help="write the results to this file")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: check the script on any device")
    args = parser.parse_args()
    if args.quick:
        global N, S, M
        N, S, M = 1 << 12, 64, 32
    dev = nd.Device(args.device)
    print(f"ndplane on {dev}: {dev.backend!r}")
    try:
        import torch
    except ImportError:
        torch = None
        print("PyTorch is not installed: ndplane's times only.")
    cases = _nd_cases(dev)
    ours = {name: _time_nd(dev, fn, args.repeat, args.rounds) for name, (fn, _) in cases.items()}
    theirs: dict[str, float] = {}
    if torch is not None and torch.cuda.is_available():
        print(f"PyTorch {torch.__version__} on {torch.cuda.get_device_name()}")
        theirs = {name: _time_events(torch, fn, args.repeat, args.rounds) for name, fn in _torch_cases(torch).items()}
    copy_bw = cases["copy 2^26 f32"][1] / ours["copy 2^26 f32"]
    rows = []
    print(f"\n{'case':40s} {'ndplane':>12s} {'PyTorch':>12s} {'ratio':>7s} {'rate':>14s}")
    for name, (_, work) in cases.items():
        t, p = ours[name], theirs.get(name)
        unit = "TFLOP/s" if name.startswith("matmul") else "GB/s"
        rate = work / t / (1e12 if unit == "TFLOP/s" else 1e9) if work else float("nan")
        ratio = t / p if p else float("nan")
        frac = f" ({work / t / copy_bw:.0%} copy)" if unit == "GB/s" and work else ""
        print(f"{name:40s} {t * 1e6:10.1f}us {(p or float('nan')) * 1e6:10.1f}us {ratio:7.2f} "
              f"{rate:8.2f} {unit}{frac}")  # fmt: skip
        rows.append({"case": name, "ndplane_s": t, "torch_s": p, "ratio_to_torch": ratio, "rate": rate, "unit": unit})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": repr(dev.backend), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
