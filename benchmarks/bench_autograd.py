"""Autograd and training timings beside PyTorch CPU, measured in one run.

    python benchmarks/bench_autograd.py [--device cpu] [--json PATH]

Rows: matmul 100x100 forward + backward; Linear 1024->1024 (batch 1024) forward + MSE +
backward; training batch_norm of 8x16x64x64 float32 (weight, bias) forward + backward; one epoch of the digits MLP (64-128-10, Adam lr 1e-3, batch 64) with ReLU and with tanh;
one epoch of the digits CNN (``ndplane.examples.digits_cnn``: conv-relu-pool, conv-relu, linear).
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable

import numpy as np
from _harness import best_time, parse_args, print_table, ratio_result, try_import_torch, write_json

import ndplane as nd
from ndplane.examples import digits_cnn, digits_mlp
from ndplane.examples._data import load_digits_split


def nd_cases(dev: nd.Device) -> dict[str, Callable[[], float]]:
    """name -> a function that runs the case once and returns its seconds."""
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

    xb = rng.normal(0.0, 1.0, (8, 16, 64, 64), dtype=nd.float32).requires_grad_()
    gb = rng.normal(0.0, 1.0, (8, 16, 64, 64), dtype=nd.float32)
    wb = nd.ones((16,), dtype=nd.float32, device=dev).requires_grad_()
    bb = nd.zeros((16,), dtype=nd.float32, device=dev).requires_grad_()

    def batch_norm() -> None:
        nd.nn.functional.batch_norm(xb, None, None, wb, bb, training=True).backward(gb)
        dev.backend.synchronize()

    data = load_digits_split(dev)
    model = digits_mlp.make_model(dev)
    digits_mlp.train(model, data, epochs=1, show_progress=False)
    model_tanh = digits_mlp.make_model(dev, activation=nd.nn.Tanh)
    digits_mlp.train(model_tanh, data, epochs=1, show_progress=False)
    cnn = digits_cnn.SmallCNN(dev)
    digits_mlp.train(cnn, data, epochs=1, show_progress=False)
    return {
        "mm": lambda: best_time(mm),
        "linear": lambda: best_time(linear, min_time=0.5, repeat=2),
        "batch_norm": lambda: best_time(batch_norm),
        "epoch": lambda: digits_mlp.train(model, data, epochs=1, show_progress=False)["seconds_per_epoch"],
        "epoch_tanh": lambda: digits_mlp.train(model_tanh, data, epochs=1, show_progress=False)["seconds_per_epoch"],
        "epoch_cnn": lambda: digits_mlp.train(cnn, data, epochs=1, show_progress=False)["seconds_per_epoch"],
    }


def torch_cases(torch) -> dict[str, Callable[[], float]]:  # type: ignore[no-untyped-def]
    g = torch.Generator().manual_seed(0)
    a = torch.randn(100, 100, generator=g, requires_grad=True)
    b = torch.randn(100, 100, generator=g, requires_grad=True)
    lin = torch.nn.Linear(1024, 1024)
    x, y = torch.randn(1024, 1024, generator=g), torch.randn(1024, 1024, generator=g)
    xb = torch.randn(8, 16, 64, 64, generator=g, requires_grad=True)
    gb = torch.randn(8, 16, 64, 64, generator=g)
    wb, bb = torch.ones(16, requires_grad=True), torch.zeros(16, requires_grad=True)
    from sklearn.datasets import load_digits

    d = load_digits()
    order = np.random.default_rng(0).permutation(len(d.target))
    xs = torch.from_numpy((d.data[order] / 16.0).astype(np.float32))
    ys = torch.from_numpy(d.target[order].astype(np.int64))
    n_test = int(len(ys) * 0.2)
    xtr, ytr = xs[n_test:], ys[n_test:]
    def make_epoch(model):  # type: ignore[no-untyped-def]
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
        return epoch

    def mlp(activation):  # type: ignore[no-untyped-def]
        return torch.nn.Sequential(torch.nn.Linear(64, 128), activation(), torch.nn.Linear(128, 10))

    # The twin of digits_cnn.SmallCNN: the same layers, the flat rows reshaped to 1 x 8 x 8 images.
    cnn = torch.nn.Sequential(
        torch.nn.Unflatten(1, (1, 8, 8)),
        torch.nn.Conv2d(1, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(16 * 4 * 4, 10),
    )  # fmt: skip
    epoch, epoch_tanh, epoch_cnn = make_epoch(mlp(torch.nn.ReLU)), make_epoch(mlp(torch.nn.Tanh)), make_epoch(cnn)
    return {
        "mm": lambda: best_time(lambda: (a @ b).sum().backward()),
        "linear": lambda: best_time(lambda: torch.nn.functional.mse_loss(lin(x), y).backward(), min_time=0.5, repeat=2),
        "batch_norm": lambda: best_time(
            lambda: torch.nn.functional.batch_norm(xb, None, None, wb, bb, training=True).backward(gb)),
        "epoch": epoch,
        "epoch_tanh": epoch_tanh,
        "epoch_cnn": epoch_cnn,
    }


def main() -> None:
    args = parse_args()
    dev = args.device
    torch = try_import_torch()
    cases = {"nd": nd_cases(dev)}
    if torch is not None:
        cases["torch"] = torch_cases(torch)
    # NOTE: interleaved rounds, best of each: a burst of background load then hits both
    # libraries alike instead of skewing one side of the ratio. The pause before each
    # measurement lets the other library's BLAS/OpenMP threads stop spinning first.
    best: dict[tuple[str, str], float] = {}
    for _ in range(ROUNDS):
        for key in NAMES:
            for lib, fns in cases.items():
                time.sleep(PAUSE)
                t = fns[key]()
                best[lib, key] = min(t, best.get((lib, key), t))
    rows = [["case", f"ndplane[{dev}] ms", "torch ms", "ndplane / torch"]]
    results: list[dict] = []
    for key, label in NAMES.items():
        got, t = best["nd", key], best.get(("torch", key), float("nan"))
        rows.append([label, f"{got * 1e3:.2f}", f"{t * 1e3:.2f}", f"{got / t:.2f}x"])
        results += ratio_result(label, "PyTorch", got / t)
    machine = (f"{platform.machine()}, {os.cpu_count()} cores, numpy {np.__version__}"
               + (f", torch {torch.__version__} ({torch.get_num_threads()} threads)" if torch else "")
               + f"; best of {ROUNDS} interleaved rounds; load average {os.getloadavg()[0]:.2f}")  # fmt: skip
    print(f"machine: {machine}")
    print_table(rows)
    write_json(args.json, "bench_autograd", f"Autograd and training (bench_autograd.py, device {dev})", machine, results)


ROUNDS = 5
PAUSE = 0.3  # seconds
NAMES = {"mm": "matmul 100x100 fwd+bwd", "linear": "Linear 1024x1024 b1024 fwd+MSE+bwd",
         "batch_norm": "batch_norm (train) 8x16x64x64 fwd+bwd",
         "epoch": "digits MLP epoch (23 steps)", "epoch_tanh": "digits MLP epoch, tanh (23 steps)",
         "epoch_cnn": "digits CNN epoch (23 steps)"}  # fmt: skip


if __name__ == "__main__":
    main()
