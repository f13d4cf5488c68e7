"""Train a small CNN (conv-relu-pool, conv-relu, linear) on scikit-learn's 8x8 digits.

    python -m ndplane.examples.digits_cnn [--device cpu] [--epochs 5]
"""

from __future__ import annotations

from typing import Any

import ndplane as nd
from ndplane import nn

from .digits_mlp import run


class SmallCNN(nn.Module):
    def __init__(self, device: Any, seed: int = 0) -> None:
        super().__init__()
        gen = nd.random.default_rng(seed, device=device)
        kw = {"device": device, "dtype": nd.float32, "generator": gen}
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1, **kw), nn.ReLU(), nn.MaxPool2d(2),  # 8x4x4
            nn.Conv2d(8, 16, 3, padding=1, **kw), nn.ReLU(),  # 16x4x4
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(16 * 4 * 4, 10, **kw))

    def forward(self, x: nd.Array) -> nd.Array:
        return self.head(self.features(nd.reshape(x, (x.shape[0], 1, 8, 8))))


def main(argv: list[str] | None = None) -> dict[str, float]:
    return run("CNN", SmallCNN, __doc__.splitlines()[0], 5, argv)


if __name__ == "__main__":
    main()
