"""Optimizers in PyTorch's shape: ``SGD``, ``Adam``, ``AdamW`` with ``zero_grad`` and ``step``.

>>> import ndplane as nd
>>> w = nd.asarray([3.0], requires_grad=True)
>>> opt = nd.optim.SGD([w], lr=0.1)
>>> for _ in range(50):
...     opt.zero_grad()
...     nd.sum((w - 1.0) ** 2).backward()
...     opt.step()
>>> round(float(w[0]), 4)
1.0
"""

from __future__ import annotations

import math
from typing import Any, Iterable

import ndplane as nd

from .._array import Array

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]


class Optimizer:
    """Base class: holds the parameters and per-parameter state; ``step`` runs under ``no_grad``."""

    def __init__(self, params: Iterable[Array], defaults: dict[str, Any]) -> None:
        self.params = list(params)
        if not self.params:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list.")
        for p in self.params:
            if type(p) is not Array or not p.requires_grad:
                raise TypeError(f"{type(self).__name__}: every parameter must be an array with requires_grad=True.")
        self.defaults = defaults
        self.state: dict[int, dict[str, Any]] = {}

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None if set_to_none or p.grad is None else p.grad * 0

    def step(self) -> None:
        with nd.no_grad():
            for p in self.params:
                if p.grad is not None:
                    self._update(p, p.grad, self.state.setdefault(id(p), {}))

    def _update(self, p: Array, g: Array, state: dict[str, Any]) -> None:
        raise NotImplementedError


def _check(name: str, value: float, low: float = 0.0) -> float:
    if not value >= low:
        raise ValueError(f"invalid {name}: {value} (must be >= {low}).")
    return float(value)


class SGD(Optimizer):
    """Stochastic gradient descent with momentum, dampening, Nesterov and weight decay (PyTorch's rule)."""

    def __init__(self, params: Iterable[Array], lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False) -> None:  # fmt: skip
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: Nesterov momentum needs momentum > 0 and dampening = 0.")
        super().__init__(params, {})
        self.lr, self.momentum = _check("lr", lr), _check("momentum", momentum)
        self.dampening, self.weight_decay, self.nesterov = dampening, _check("weight_decay", weight_decay), nesterov

    def _update(self, p: Array, g: Array, state: dict[str, Any]) -> None:
        if self.weight_decay:
            g = g + self.weight_decay * p
        if self.momentum:
            buf = state.get("momentum")
            if buf is None:
                buf = state["momentum"] = nd.astype(g, g.dtype, copy=True)
            else:
                buf *= self.momentum
                buf += (1 - self.dampening) * g
            g = g + self.momentum * buf if self.nesterov else buf
        p -= self.lr * g


class Adam(Optimizer):
    """Adam (Kingma & Ba) with bias correction; ``weight_decay`` is L2 added to the gradient."""

    decoupled = False

    def __init__(self, params: Iterable[Array], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0) -> None:  # fmt: skip
        super().__init__(params, {})
        self.lr, self.eps, self.weight_decay = _check("lr", lr), _check("eps", eps), _check("weight_decay", weight_decay)
        if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
            raise ValueError(f"invalid betas: {betas} (each must be in [0, 1)).")
        self.betas = betas

    def _update(self, p: Array, g: Array, state: dict[str, Any]) -> None:
        b1, b2 = self.betas
        if self.weight_decay:
            if self.decoupled:
                p *= 1 - self.lr * self.weight_decay
            else:
                g = g + self.weight_decay * p
        if not state:
            state["step"] = 0
            state["m"] = nd.zeros_like(p)
            state["v"] = nd.zeros_like(p)
        state["step"] += 1
        t = state["step"]
        m, v = state["m"], state["v"]
        m *= b1
        m += (1 - b1) * g
        v *= b2
        v += (1 - b2) * (g * g)
        step = self.lr / (1 - b1**t)
        denom = nd.sqrt(v) * (1 / math.sqrt(1 - b2**t)) + self.eps
        p -= step * (m / denom)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter); default ``weight_decay=0.01``."""

    decoupled = True

    def __init__(self, params: Iterable[Array], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2) -> None:  # fmt: skip
        super().__init__(params, lr, betas, eps, weight_decay)
