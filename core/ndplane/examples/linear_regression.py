"""Fit y = 2x + 1 + noise with a one-feature Linear layer and SGD.

    python -m ndplane.examples.linear_regression [--device cpu]
"""

from __future__ import annotations

import argparse
from typing import Any

import ndplane as nd
from ndplane import nn


def fit(device: Any = None, steps: int = 200, seed: int = 0) -> tuple[float, float]:
    """Returns the learned (weight, bias); they approach (2, 1)."""
    rng = nd.random.default_rng(seed, device=device)
    x = rng.uniform(-1.0, 1.0, (256, 1), dtype=nd.float32)
    y = 2.0 * x + 1.0 + rng.normal(0.0, 0.1, (256, 1), dtype=nd.float32)
    model = nn.Linear(1, 1, device=x.device, dtype=nd.float32, generator=rng)
    opt = nd.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(steps):
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert model.bias is not None  # Linear(bias=True)
    return float(model.weight[0, 0]), float(model.bias[0])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    args = parser.parse_args(argv)
    w, b = fit(args.device)
    print(f"learned y = {w:.3f} x + {b:.3f}   (true: y = 2 x + 1)")


if __name__ == "__main__":
    main()
