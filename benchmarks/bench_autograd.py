"""Autograd and training timings beside PyTorch CPU, measured in one run.

    python benchmarks/bench_autograd.py [--device cpu]

Rows: matmul 100x100 forward + backward; Linear 1024->1024 (batch 1024) forward + MSE +
backward; one epoch of the digits MLP (64-128-10, Adam lr 1e-3, batch 64).
"""

from __future__ import annotations

import platform
import time

import numpy as np
from _harness import best_time, device_from_args, print_table, try_import_torch

import ndplane as nd
from ndplane.examples import digits_mlp
from ndplane.examples._data import load_digits_split


def nd_cases(dev: nd.Device) -> dict[str, float]:
    rng = nd.random.default_rng(0, device=dev)
    a = rng.normal(0.0, 1.0, (100, 100), dtype=nd.float32).requires_grad_()
    b = rng.normal(0.0, 1.0, (100, 100), dtype=nd.float32).requires_grad_()

    def mm() -> None:
        nd.sum(a @ b).backward()
        dev.backend.synchronize()

    lin = nd.nn.Linear(1024, 1024, device=dev, dtype=nd.float32, generator=rng)
    x = rng.normal(0.0, 1.0, (1024, 1024), dtype=nd.float32)
    y = rng.normal(0.0, 1.0, (1024, 1024), dtype=nd.float32)

    def linear() -> None:
        nd.nn.functional.mse_loss(lin(x), y).backward()
        dev.backend.synchronize()

    data = load_digits_split(dev)
    model = digits_mlp.make_model(dev)
    digits_mlp.train(model, data, epochs=1, show_progress=False)
    epoch = min(digits_mlp.train(model, data, epochs=1, show_progress=False)["seconds_per_epoch"] for _ in range(3))
    return {"mm": best_time(mm), "linear": best_time(linear, min_time=1.0, repeat=3), "epoch": epoch}


def torch_cases(torch) -> dict[str, float]:  # type: ignore[no-untyped-def]
    g = torch.Generator().manual_seed(0)
    a = torch.randn(100, 100, generator=g, requires_grad=True)
    b = torch.randn(100, 100, generator=g, requires_grad=True)
    lin = torch.nn.Linear(1024, 1024)
    x, y = torch.randn(1024, 1024, generator=g), torch.randn(1024, 1024, generator=g)
    from sklearn.datasets import load_digits

    d = load_digits()
    order = np.random.default_rng(0).permutation(len(d.target))
    xs = torch.from_numpy((d.data[order] / 16.0).astype(np.float32))
    ys = torch.from_numpy(d.target[order].astype(np.int64))
    n_test = int(len(ys) * 0.2)
    xtr, ytr = xs[n_test:], ys[n_test:]
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def epoch() -> float:
        start = time.perf_counter()
        perm = torch.randperm(len(ytr), generator=g)
        xp, yp = xtr[perm], ytr[perm]
        for i in range(0, len(ytr), 64):
            loss = torch.nn.functional.cross_entropy(model(xp[i : i + 64]), yp[i : i + 64])
            opt.zero_grad()
            loss.backward()
            opt.step()
        return time.perf_counter() - start

    epoch()
    return {
        "mm": best_time(lambda: (a @ b).sum().backward()),
        "linear": best_time(lambda: torch.nn.functional.mse_loss(lin(x), y).backward(), min_time=1.0, repeat=3),
        "epoch": min(epoch() for _ in range(3)),
    }


def main() -> None:
    dev = device_from_args()
    torch = try_import_torch()
    got = nd_cases(dev)
    ref = torch_cases(torch) if torch is not None else {}
    names = {"mm": "matmul 100x100 fwd+bwd", "linear": "Linear 1024x1024 b1024 fwd+MSE+bwd",
             "epoch": "digits MLP epoch (28 steps)"}  # fmt: skip
    rows = [["case", f"ndplane[{dev}] ms", "torch ms", "ndplane / torch"]]
    for key, label in names.items():
        t = ref.get(key, float("nan"))
        rows.append([label, f"{got[key] * 1e3:.2f}", f"{t * 1e3:.2f}", f"{got[key] / t:.2f}x"])
    print(f"machine: {platform.machine()}, {__import__('os').cpu_count()} cores, numpy {np.__version__}"
          + (f", torch {torch.__version__} ({torch.get_num_threads()} threads)" if torch else ""))  # fmt: skip
    print_table(rows)


if __name__ == "__main__":
    main()
