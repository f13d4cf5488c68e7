"""The webgpu backend against PyTorch CUDA on the same GPU (when torch sees one), in one run.

    python benchmarks/bench_webgpu.py [--device webgpu] [--quick | --full] [--count 1000] [--json PATH]

Two tables:
- ``_gpu_bench``'s cases (shared with bench_cuda.py: the same ops and sizes, the same
  timers), with the goals of issue 20 beside them: chain <= 20 us/op and matmul 4096^3
  float32 >= 20 TFLOP/s on the H100; elementwise and copy >= 85% of PyTorch's bandwidth
  (time ratio <= 1/0.85); row/column sums, softmax, cumsum and argmax within 1.5x
  PyTorch's time; sort within 3x. A goal is judged only where this run can: ratio goals
  with PyTorch CUDA, absolute ones at the full sizes.
- the per-op cost of small ops (4 float32): a dependent chain ``c = c + b`` and independent
  ``a + b`` whose results are dropped, ``--count`` ops then one ``synchronize()``, each at the
  Runtime's default batching (one submit per ``rt.batch`` dispatches, NDPLANE_WEBGPU_BATCH
  at start-up, 64 by default) and with ``rt.batch = 1`` (a submit per op), interleaved
  round by round (``_harness.side_by_side``: best round per op, median per-round ratio).
  The chain goal is judged here; the first table's chain row syncs every 100 ops.

On a software adapter (lavapipe, llvmpipe) the sizes shrink unless ``--full``, and the
numbers say nothing about GPUs.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from typing import Any

import _gpu_bench as G
from _harness import add_json_argument, interval, load_average, print_table, ratio, side_by_side, write_json

import ndplane as nd

SOFTWARE = G.Sizes(1 << 20, 1024, 512)  # a software adapter on a few CPU cores: a minute or two in all
# "add f64": issue 23's goal (float64 elementwise at >= 85 % of PyTorch's float64 bandwidth)
BANDWIDTH = ("copy", "add", "mul", "add f64", "relu", "broadcast add", "transpose copy")
WITHIN_1_5 = ("row sum", "column sum", "softmax", "cumsum", "argmax")
CHAIN_GOAL = 20e-6  # seconds per op of the dependent chain (H100)
MATMUL_GOAL = 20.0  # TFLOP/s, matmul 4096^3 float32 (H100)


def _software(dev: nd.Device) -> bool:
    rt = getattr(dev.backend, "rt", None)
    if rt is not None:
        from ndplane_webgpu._runtime import is_software

        return is_software(rt.adapter)
    return getattr(dev.backend, "info", {}).get("adapter_type") == "CPU"


def _goal(row: dict[str, Any], full: bool) -> tuple[str, bool | None]:
    """The issue's goal for a case and whether this run met it (None: it cannot tell)."""
    key, r = row["key"], row["ratio_to_torch"]
    if key in BANDWIDTH:
        return ">= 85% of PyTorch's GB/s", None if r is None else r <= 1 / 0.85
    if key in WITHIN_1_5 or key == "sort":
        bound = 3.0 if key == "sort" else 1.5
        return f"<= {bound}x PyTorch's time", None if r is None else r <= bound
    if key == "matmul float32":
        met = row["rate"] >= MATMUL_GOAL if full and row["rate"] is not None else None
        return f">= {MATMUL_GOAL:.0f} TFLOP/s (H100)", met
    if key == "chain":  # NOTE: judged in the small-op table: 1000 ops per sync, not 100
        return f"<= {CHAIN_GOAL * 1e6:.0f} us/op: small ops", None
    return "", None


def _small_ops(dev: nd.Device, count: int) -> dict[str, Callable[[], Any]]:
    a, b = nd.ones(4, dtype=nd.float32, device=dev), nd.ones(4, dtype=nd.float32, device=dev)

    def chain() -> None:
        c = a
        for _ in range(count):
            c = c + b

    def independent() -> None:
        for _ in range(count):
            a + b  # the result is dropped on purpose

    return {"dependent chain c = c + b": chain, "independent a + b, dropped": independent}


def _at_batch(dev: nd.Device, fn: Callable[[], Any], batch: int | None) -> Callable[[], None]:
    rt = getattr(dev.backend, "rt", None)

    def run() -> None:
        default = rt.batch if batch is not None else None
        if batch is not None:
            rt.batch = batch
        try:
            fn()
            dev.backend.synchronize()
        finally:
            if batch is not None:
                rt.batch = default

    return run


def _torch_small_ops(torch: Any, count: int) -> dict[str, Callable[[], Any]]:
    a, b = torch.ones(4, device="cuda"), torch.ones(4, device="cuda")

    def chain() -> None:
        c = a
        for _ in range(count):
            c = c + b

    def independent() -> None:
        for _ in range(count):
            a + b  # the result is dropped on purpose

    return {"dependent chain c = c + b": chain, "independent a + b, dropped": independent}


def small_op_rows(dev: nd.Device, torch: Any, count: int, rounds: int, full: bool) -> list[dict[str, Any]]:
    """Per-op seconds of each small-op pattern at the default batching and submit-per-op."""
    rt = getattr(dev.backend, "rt", None)
    batch = getattr(rt, "batch", None)
    theirs = _torch_small_ops(torch, count) if torch is not None else {}
    rows = []
    for name, fn in _small_ops(dev, count).items():
        fns = {"batched": _at_batch(dev, fn, None)}
        if batch is not None:
            fns["submit per op"] = _at_batch(dev, fn, 1)
        t = side_by_side(fns, repeat=rounds)
        row = {"case": name, "count": count, "batch": batch, "batched_s": t.best("batched") / count,
               "submit_per_op_s": t.best("submit per op") / count if "submit per op" in t else None,
               "submit_per_op_over_batched": t.ratio("submit per op", "batched"),
               "interval": t.interval("submit per op", "batched"), "torch_s": None, "load": load_average()}  # fmt: skip
        if name in theirs:
            row["torch_s"] = G.time_events(torch, theirs[name], 1, rounds) / count
        goal = name.startswith("dependent")
        row["goal"] = f"<= {CHAIN_GOAL * 1e6:.0f} us/op (H100)" if goal else ""
        row["met"] = row["batched_s"] <= CHAIN_GOAL if goal and full else None
        rows.append(row)
    return rows


def _print_small(rows: list[dict[str, Any]]) -> None:
    us = lambda t: f"{t * 1e6:.2f}" if t is not None else "-"  # noqa: E731
    table = [["small op (4 float32)", f"batched us/op (batch {rows[0]['batch']})", "submit-per-op us/op",
              "submit-per-op / batched", "95% interval", "PyTorch us/op", "goal", "met", "load"]]  # fmt: skip
    for r in rows:
        table.append([r["case"], us(r["batched_s"]), us(r["submit_per_op_s"]), ratio(r["submit_per_op_over_batched"]),
                      interval(r["interval"]), us(r["torch_s"]), r["goal"],
                      {True: "yes", False: "NO", None: "-"}[r["met"]], r["load"]])  # fmt: skip
    print()
    print_table(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="webgpu")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="tiny sizes: check the script on any device")
    size.add_argument("--full", action="store_true", help="the issue's sizes even on a software adapter")
    parser.add_argument("--rounds", type=int, help="timed rounds per case (default 20; 5 on software)")
    parser.add_argument("--repeat", type=int, help="calls per round at least (default 5; 2 on software); more, up to 64, until a round lasts 20 ms")
    parser.add_argument("--count", type=int, help="small ops per timed call (default 1000; 100 with --quick)")
    add_json_argument(parser)
    args = parser.parse_args()
    dev = nd.Device(args.device)
    info = getattr(dev.backend, "info", {})
    gpu = info.get("device") or repr(dev.backend)
    software = _software(dev)
    sz = G.QUICK if args.quick else SOFTWARE if software and not args.full else G.FULL
    slow = software and not args.full and not args.quick
    rounds, repeat = args.rounds or (5 if slow else 20), args.repeat or (2 if slow else 5)
    count = args.count or (100 if args.quick else 1000)
    batch = getattr(getattr(dev.backend, "rt", None), "batch", None)
    print(f"ndplane on {dev}: {gpu} ({info.get('adapter_type', '?')}, {info.get('backend_type', '?')}), "
          f"batch {batch}; sizes {dataclasses.asdict(sz)}; load average {load_average()}")  # fmt: skip
    if software:
        print("NOTE: a software adapter (CPU emulation): these numbers say nothing about GPUs"
              + ("." if args.full or args.quick else "; sizes scaled down (--full for the issue's)."))  # fmt: skip
    torch = G.cuda_torch()
    full = sz == G.FULL
    rows = G.measure(dev, sz, torch, repeat=repeat, rounds=rounds)
    for row in rows:
        row["goal"], row["met"] = _goal(row, full)
    G.print_rows(rows, goals=True)
    small = small_op_rows(dev, torch, count, max(3, min(rounds, 7)), full)
    _print_small(small)
    if not full:
        print("Absolute goals (us/op, TFLOP/s) are judged at full sizes only; ratio goals need PyTorch CUDA.")
    torch_gpu = torch.cuda.get_device_name() if torch is not None else None
    machine = (f"ndplane {dev}: {gpu}" + (f", PyTorch {torch.__version__} on {torch_gpu}" if torch else
               ", no PyTorch CUDA") + f"; load average {load_average()}")  # fmt: skip
    title = f"The webgpu backend vs PyTorch CUDA (bench_webgpu.py{' --quick' if args.quick else ''}, {gpu})"
    extra = {"device": gpu, "adapter": info, "software_adapter": software, "torch_device": torch_gpu,
             "sizes": dataclasses.asdict(sz), "rounds": rounds, "repeat": repeat, "rows": rows,
             "small_ops": small}  # fmt: skip
    write_json(args.json, "bench_webgpu", title, machine, G.ratio_results(rows), extra)


if __name__ == "__main__":
    main()
