"""Per-op overhead of the control plane: tiny ops through ndplane next to NumPy and PyTorch.

    python benchmarks/bench_overhead.py [--device numpy] [--json PATH]

Prints microseconds per call and the ratio to NumPy, all measured in this run.
"""

from __future__ import annotations

import platform

import numpy as np
from _harness import best_time, parse_args, print_table, ratio_result, try_import_torch, write_json

import ndplane as nd


def main() -> None:
    args = parse_args()
    dev = args.device
    torch = try_import_torch()

    a = nd.asarray([1.0, 2.0, 3.0, 4.0], dtype=nd.float32, device=dev)
    b = nd.asarray([5.0, 6.0, 7.0, 8.0], dtype=nd.float32, device=dev)
    m = nd.zeros((64, 64), dtype=nd.float32, device=dev)
    na, nb, nm = a.to_numpy(), b.to_numpy(), m.to_numpy()
    cases = [
        ("a + b (4 x float32)", lambda: a + b, lambda: na + nb, "add"),
        ("a[1:3] (slice view)", lambda: a[1:3], lambda: na[1:3], "slice"),
        ("m.T (transpose view)", lambda: m.T, lambda: nm.T, "T"),
        ("reshape (view)", lambda: nd.reshape(m, (32, 128)), lambda: nm.reshape(32, 128), "reshape"),
        ("sum(a)", lambda: nd.sum(a), lambda: na.sum(), "sum"),
    ]
    if torch is not None:
        ta, tb, tm = torch.from_numpy(na.copy()), torch.from_numpy(nb.copy()), torch.from_numpy(nm.copy())
        tcases = {"add": lambda: ta + tb, "slice": lambda: ta[1:3], "T": lambda: tm.T,
                  "reshape": lambda: tm.reshape(32, 128), "sum": lambda: ta.sum()}  # fmt: skip
    rows = [["op", f"ndplane[{dev}] us", "numpy us", "torch us", "ndplane / numpy", "ndplane / torch"]]
    results: list[dict] = []
    for name, f_nd, f_np, key in cases:
        t_nd, t_np = best_time(f_nd), best_time(f_np)
        t_t = best_time(tcases[key]) if torch is not None else float("nan")
        rows.append([name, f"{t_nd * 1e6:.2f}", f"{t_np * 1e6:.2f}", f"{t_t * 1e6:.2f}",
                     f"{t_nd / t_np:.1f}x", f"{t_nd / t_t:.2f}x"])  # fmt: skip
        results += ratio_result(name, "PyTorch", t_nd / t_t) + ratio_result(name, "NumPy", t_nd / t_np)
    machine = (f"{platform.machine()} {platform.processor() or ''}, python {platform.python_version()}, "
               f"numpy {np.__version__}" + (f", torch {torch.__version__}" if torch else ""))  # fmt: skip
    print(f"machine: {machine}")
    print_table(rows)
    write_json(args.json, "bench_overhead", f"Control-plane overhead (bench_overhead.py, device {dev})", machine, results)


if __name__ == "__main__":
    main()
