"""A small typed user program: ``mypy --strict`` must accept it (run by .ci/run).

The Array's operators and methods are bound at import from one table; ``_array.pyi``
declares them, so a type checker sees ``x + y``, ``x @ y`` and ``x.sum()`` as Arrays.
"""

from __future__ import annotations

import ndplane as nd


def affine(x: nd.Array, w: nd.Array, b: nd.Array) -> nd.Array:
    return x @ w.T + b


def loss(pred: nd.Array, target: nd.Array) -> nd.Array:
    d = pred - target
    return (d * d).mean()


x: nd.Array = nd.ones((4, 3), dtype=nd.float64)
w: nd.Array = nd.ones((2, 3), dtype=nd.float64)
w.requires_grad_()
b: nd.Array = nd.zeros(2, dtype=nd.float64)
value: nd.Array = loss(affine(x, w, b), nd.zeros((4, 2)))
value.backward()
total: nd.Array = nd.exp(x).sum(axis=0) + nd.clip(x, 0.0, 1.0).sum(axis=0) + 2.0 * x.max() - (x @ x.T).mT[0, 1]
flag: nd.Array = (x > 0) & (x < 2)
scalar: float = float(total[0])
