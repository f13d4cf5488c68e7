"""WebGPU float32 matmul: the tiled float32 kernel against the generic kernel and NumPy.

    python benchmarks/bench_webgpu_matmul.py [--sizes 512,1024] [--device webgpu]

Times n x n @ n x n float32 with the float32 kernel (kernels/matmul_f32.wgsl), with the
generic kernel every dtype can take (kernels/matmul.wgsl, chosen through
``_kernels.FAST_F32 = False``) and with NumPy on the host, in interleaved rounds of one
process (``_harness.side_by_side``); the ratios are medians of per-round quotients.
On a software adapter (lavapipe) the GPU side runs on the same CPU cores as NumPy.
"""

from __future__ import annotations

import argparse

import numpy as np
from _harness import interval, load_average, print_table, ratio, side_by_side

import ndplane as nd


def _row(dev: nd.Device, n: int, repeat: int) -> list[str]:
    from ndplane_webgpu import _kernels

    rng = np.random.default_rng(0)
    xn, yn = rng.standard_normal((2, n, n), dtype=np.float32)
    x, y = nd.asarray(xn, device=dev), nd.asarray(yn, device=dev)

    def run(fast: bool) -> None:
        _kernels.FAST_F32 = fast
        try:
            x @ y
            dev.backend.synchronize()
        finally:
            _kernels.FAST_F32 = True

    t = side_by_side({"f32": lambda: run(True), "generic": lambda: run(False), "numpy": lambda: xn @ yn},
                     repeat=repeat)  # fmt: skip
    gflops = [f"{2 * n**3 / t.best(lib) / 1e9:.1f} GFLOP/s" for lib in ("f32", "generic", "numpy")]
    return [str(n), *gflops, ratio(t.ratio("generic", "f32")), interval(t.interval("generic", "f32")),
            ratio(t.ratio("f32", "numpy"))]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="webgpu")
    parser.add_argument("--sizes", default="512,1024")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    dev = nd.Device(args.device)
    info = getattr(dev.backend, "info", {})
    print(f"device {dev}: {info.get('device', '?')} ({info.get('adapter_type', '?')}); load {load_average()}")
    rows = [["n", "f32 kernel", "generic", "numpy", "generic / f32", "95% interval", "f32 / numpy"]]
    rows += [_row(dev, n, args.repeat) for n in map(int, args.sizes.split(","))]
    print_table(rows)


if __name__ == "__main__":
    main()
