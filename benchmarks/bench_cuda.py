"""The cuda backend against PyTorch on the same GPU, in one run.

    python benchmarks/bench_cuda.py [--device cuda] [--rounds 20] [--json results.json]

The cases, timers and table are ``_gpu_bench``'s (shared with bench_webgpu.py): every case
runs on each library's own stream, back-to-back calls between two synchronisations (at least
``--repeat``, more until a round lasts 20 ms), timed ``--rounds`` times (median reported);
PyTorch is timed with CUDA events, ndplane by wall clock between ``synchronize()`` calls. Bandwidth cases also print
GB/s and the fraction of the measured copy bandwidth; the goals of issue 14 are ratios to
PyTorch measured here, never absolute times. ``--quick`` runs tiny sizes on any device.
"""

from __future__ import annotations

import argparse

import _gpu_bench as G
from _harness import add_json_argument, load_average, write_json

import ndplane as nd


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5, help="calls per round at least (more until a round lasts 20 ms)")
    add_json_argument(parser)
    parser.add_argument("--quick", action="store_true", help="tiny sizes: check the script on any device")
    args = parser.parse_args()
    sz = G.QUICK if args.quick else G.FULL
    dev = nd.Device(args.device)
    print(f"ndplane on {dev}: {dev.backend!r}")
    torch = G.cuda_torch()
    rows = G.measure(dev, sz, torch, repeat=args.repeat, rounds=args.rounds)
    G.print_rows(rows)
    machine = (f"ndplane {dev.backend!r}" + (f", PyTorch {torch.__version__} on {torch.cuda.get_device_name()}"
               if torch is not None else ", no PyTorch CUDA") + f"; load average {load_average()}")  # fmt: skip
    title = "The cuda backend vs PyTorch (bench_cuda.py" + (" --quick)" if args.quick else ")")
    write_json(args.json, "bench_cuda", title, machine, G.ratio_results(rows),
               extra={"device": repr(dev.backend), "rows": rows})  # fmt: skip


if __name__ == "__main__":
    main()
