"""WebGPU backend on a real GPU: bandwidth, matmul throughput, per-op overhead.

    python benchmarks/bench_webgpu.py [--device webgpu] [--peak-tflops 67]

Reports (all from one run):
- elementwise add of 2**26 float32 as a fraction of the device's measured copy bandwidth
  (the copy kernel moving the same bytes per element: 2 reads + 1 write vs 1 read + 1 write);
- matmul 4096x4096 float32 in GFLOP/s and as a fraction of ``--peak-tflops`` (the GPU's
  non-tensor float32 peak: 67 for an H100 SXM or H200, 51 for an H100 PCIe);
- the per-op overhead of a small op: wall time of many dependent 4-element adds / count.
On a software adapter (lavapipe) the numbers say nothing about GPUs; the script says so.
"""

from __future__ import annotations

import argparse
import time

from _harness import print_table

import ndplane as nd


def timed(dev: nd.Device, fn, repeat: int = 5) -> float:  # type: ignore[no-untyped-def]
    fn()
    dev.backend.synchronize()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        dev.backend.synchronize()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="webgpu")
    parser.add_argument("--peak-tflops", type=float, default=67.0)
    parser.add_argument("--log2-size", type=int, default=26)
    parser.add_argument("--matmul", type=int, default=4096)
    args = parser.parse_args()
    dev = nd.Device(args.device)
    info = getattr(dev.backend, "info", {})
    print(f"device {dev}: {info.get('device', '?')} ({info.get('adapter_type', '?')}, {info.get('backend_type', '?')})")
    if "cpu" in str(info.get("adapter_type", "")).lower():
        print("NOTE: a software adapter: these timings say nothing about GPU performance.")

    n = 1 << args.log2_size
    rng = nd.random.default_rng(0, device=dev)
    a = rng.random((n,), dtype=nd.float32)
    b = rng.random((n,), dtype=nd.float32)
    t_copy = timed(dev, lambda: nd.astype(a, nd.float32, copy=True))
    t_add = timed(dev, lambda: a + b)
    copy_bw = 2 * 4 * n / t_copy
    add_bw = 3 * 4 * n / t_add

    m = args.matmul
    x = rng.random((m, m), dtype=nd.float32)
    y = rng.random((m, m), dtype=nd.float32)
    t_mm = timed(dev, lambda: x @ y, repeat=3)
    gflops = 2 * m**3 / t_mm / 1e9

    s = nd.ones(4, dtype=nd.float32, device=dev)
    count = 2000

    def chain() -> None:
        v = s
        for _ in range(count):
            v = v + s

    t_chain = timed(dev, chain, repeat=3)
    rows = [["measure", "value", "goal"],
            [f"copy bandwidth (2^{args.log2_size} f32)", f"{copy_bw / 1e9:.1f} GB/s", ""],
            ["add bandwidth / copy bandwidth", f"{add_bw / copy_bw:.0%}", ">= 70%"],
            [f"matmul {m}^2 f32", f"{gflops:.0f} GFLOP/s = {gflops / (args.peak_tflops * 1e3):.0%} of peak", ">= 30%"],
            ["per-op overhead (4-element add)", f"{t_chain / count * 1e6:.1f} us", "<= 50 us"]]  # fmt: skip
    print_table(rows)


if __name__ == "__main__":
    main()
