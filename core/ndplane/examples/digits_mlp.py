"""Train a 64-128-10 MLP on scikit-learn's digits with Adam, and report test accuracy.

    python -m ndplane.examples.digits_mlp [--device cpu] [--epochs 20]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import ndplane as nd
from ndplane import nn
from ndplane.nn import functional as F

from ._data import load_digits_split, progress


def make_model(device: Any, seed: int = 0, activation: type[nn.Module] = nn.ReLU) -> nn.Module:
    """The 64-128-10 MLP; ``activation`` between the two layers (``nn.Tanh`` in the benchmarks too)."""
    gen = nd.random.default_rng(seed, device=device)
    return nn.Sequential(
        nn.Linear(64, 128, device=device, dtype=nd.float32, generator=gen),
        activation(),
        nn.Linear(128, 10, device=device, dtype=nd.float32, generator=gen),
    )


def accuracy(model: nn.Module, x: nd.Array, y: nd.Array) -> float:
    with nd.no_grad():
        model.eval()
        pred = nd.argmax(model(x), axis=1)
        model.train()
    return float(nd.mean(nd.astype(pred == y, nd.float32)))


def train(model: nn.Module, data: tuple[nd.Array, ...], epochs: int = 20, batch_size: int = 64, lr: float = 1e-3,
          seed: int = 0, show_progress: bool = True) -> dict[str, float]:  # fmt: skip
    """Minibatch training with a reshuffle each epoch; returns test accuracy and seconds per epoch."""
    x_train, y_train, x_test, y_test = data
    opt = nd.optim.Adam(model.parameters(), lr=lr)
    rng = nd.random.default_rng(seed, device=x_train.device)
    n = x_train.shape[0]
    times = []
    bar = progress(range(epochs), show_progress, desc=f"digits MLP on {x_train.device}", unit="epoch")
    for _ in bar:
        start = time.perf_counter()
        perm = rng.permutation(n)
        xs, ys = nd.take(x_train, perm, axis=0), nd.take(y_train, perm, axis=0)
        for i in range(0, n, batch_size):
            loss = F.cross_entropy(model(xs[i : i + batch_size]), ys[i : i + batch_size])
            opt.zero_grad()
            loss.backward()
            opt.step()
        x_train.device.backend.synchronize()
        times.append(time.perf_counter() - start)
        if show_progress and hasattr(bar, "set_postfix"):
            bar.set_postfix(loss=f"{float(loss):.3f}")
    return {"test_accuracy": accuracy(model, x_test, y_test), "seconds_per_epoch": sum(times) / len(times)}


def run(name: str, make: Callable[[Any], nn.Module], description: str, epochs: int,
        argv: list[str] | None) -> dict[str, float]:  # fmt: skip
    """The command line of the digits examples: parse, load, train ``make(device)``, report."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--device", default=None)
    parser.add_argument("--epochs", type=int, default=epochs)
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    data = load_digits_split(args.device)
    device = data[0].device
    result = train(make(device), data, epochs=args.epochs, show_progress=not args.no_progress)
    print(f"digits {name} on {device}: test accuracy {result['test_accuracy']:.1%} after {args.epochs} epochs, "
          f"{result['seconds_per_epoch'] * 1e3:.0f} ms per epoch")  # fmt: skip
    return result


def main(argv: list[str] | None = None) -> dict[str, float]:
    return run("MLP", make_model, __doc__.splitlines()[0], 20, argv)


if __name__ == "__main__":
    main()
