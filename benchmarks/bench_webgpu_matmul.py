"""WebGPU matmul: the tiled kernel against the generic kernel and NumPy.

    python benchmarks/bench_webgpu_matmul.py [--sizes 512,1024] [--dtypes float32,float16,float64]

Times n x n @ n x n of each floating dtype with the tiled kernel (kernels/matmul_tiled.wgsl),
with the generic kernel every dtype can take (kernels/matmul.wgsl, chosen through
``_kernels.TILED = False``) and with NumPy on the host, in interleaved rounds of one
process (``_harness.side_by_side``); the ratios are medians of per-round quotients.
On a software adapter (lavapipe) the GPU side runs on the same CPU cores as NumPy.
NumPy's float16 matmul has no BLAS (a plain loop: 5.8 s for 1024^3 on a 2-core machine, some
six minutes for 4096^3, in which SIGINT waits for the loop), so the float16 rows time NumPy's
float32 matmul of the same values instead, as a user would run it.
"""

from __future__ import annotations

import argparse

import numpy as np
from _harness import interval, load_average, print_table, ratio, side_by_side

import ndplane as nd


def _row(dev: nd.Device, dtype: str, n: int, repeat: int) -> list[str]:
    from ndplane_webgpu import _kernels

    rng = np.random.default_rng(0)
    xn, yn = rng.standard_normal((2, n, n)).astype(dtype)
    x, y = nd.asarray(xn, device=dev), nd.asarray(yn, device=dev)
    if dtype == "float16":
        xn, yn = xn.astype(np.float32), yn.astype(np.float32)

    def run(tiled: bool) -> None:
        _kernels.TILED = tiled
        try:
            x @ y
            dev.backend.synchronize()
        finally:
            _kernels.TILED = True

    t = side_by_side({"tiled": lambda: run(True), "generic": lambda: run(False), "numpy": lambda: xn @ yn},
                     repeat=repeat)  # fmt: skip
    gflops = [f"{2 * n**3 / t.best(lib) / 1e9:.1f} GFLOP/s" for lib in ("tiled", "generic", "numpy")]
    return [dtype, str(n), *gflops, ratio(t.ratio("generic", "tiled")), interval(t.interval("generic", "tiled")),
            ratio(t.ratio("tiled", "numpy"))]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="webgpu")
    parser.add_argument("--sizes", default="512,1024")
    parser.add_argument("--dtypes", default="float32,float16,float64")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    dev = nd.Device(args.device)
    info = getattr(dev.backend, "info", {})
    print(f"device {dev}: {info.get('device', '?')} ({info.get('adapter_type', '?')}); load {load_average()}")
    rows = [["dtype", "n", "tiled", "generic", "numpy", "generic / tiled", "95% interval", "tiled / numpy"]]
    rows += [_row(dev, d, n, args.repeat) for d in args.dtypes.split(",") for n in map(int, args.sizes.split(","))
             if d in {t.name for t in dev.backend.dtypes}]  # fmt: skip
    print_table(rows)


if __name__ == "__main__":
    main()
