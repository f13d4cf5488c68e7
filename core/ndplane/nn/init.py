"""Parameter initialisation (PyTorch's ``torch.nn.init`` names), in place, from a seeded generator.

>>> import ndplane as nd
>>> w = nd.zeros((4, 3))
>>> _ = nd.nn.init.kaiming_uniform_(w, generator=nd.random.default_rng(0))
>>> bool(nd.all(nd.abs(w) <= (6 / 3) ** 0.5))
True
"""

from __future__ import annotations

import math

from .. import _namespace as nd
from .._array import Array
from .functional import _default_generator

__all__ = ["uniform_", "normal_", "zeros_", "ones_", "kaiming_uniform_", "kaiming_normal_", "xavier_uniform_",
           "xavier_normal_", "calculate_gain"]  # fmt: skip


def _fans(w: Array) -> tuple[int, int]:
    if w.ndim < 2:
        raise ValueError(f"init: fan in and fan out need at least 2 dimensions; got shape {w.shape}.")
    receptive = 1
    for n in w.shape[2:]:
        receptive *= n
    return w.shape[1] * receptive, w.shape[0] * receptive


def _gen(generator: nd.random.Generator | None) -> nd.random.Generator:
    return generator if generator is not None else _default_generator()


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for an activation (as PyTorch).

    >>> import ndplane as nd
    >>> nd.nn.init.calculate_gain("relu"), nd.nn.init.calculate_gain("tanh")
    (1.4142135623730951, 1.6666666666666667)
    """
    if nonlinearity in ("linear", "sigmoid", "conv2d"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    raise ValueError(f"calculate_gain: unknown nonlinearity {nonlinearity!r}.")


def _fill(w: Array, values: Array) -> Array:
    with nd.no_grad():
        w[...] = values
    return w


def uniform_(w: Array, a: float = 0.0, b: float = 1.0, generator: nd.random.Generator | None = None) -> Array:
    """Fill ``w`` with U(a, b).

    >>> import ndplane as nd
    >>> w = nd.zeros((2, 3))
    >>> nd.nn.init.uniform_(w, -1.0, 1.0, generator=nd.random.default_rng(0)) is w, bool(nd.all((w >= -1) & (w < 1)))
    (True, True)
    """
    return _fill(w, _gen(generator).uniform(a, b, w.shape, dtype=w.dtype, device=w.device))


def normal_(w: Array, mean: float = 0.0, std: float = 1.0, generator: nd.random.Generator | None = None) -> Array:
    """Fill ``w`` with N(mean, std**2).

    >>> import ndplane as nd
    >>> w = nd.nn.init.normal_(nd.zeros((100, 100)), 1.0, 0.1, generator=nd.random.default_rng(0))
    >>> abs(float(nd.mean(w)) - 1.0) < 0.01, abs(float(nd.std(w)) - 0.1) < 0.01
    (True, True)
    """
    return _fill(w, _gen(generator).normal(mean, std, w.shape, dtype=w.dtype, device=w.device))


def zeros_(w: Array) -> Array:
    """Fill ``w`` with zeros.

    >>> import ndplane as nd
    >>> nd.nn.init.zeros_(nd.ones(2)).tolist()
    [0.0, 0.0]
    """
    return _fill(w, 0.0)  # type: ignore[arg-type]


def ones_(w: Array) -> Array:
    """Fill ``w`` with ones.

    >>> import ndplane as nd
    >>> nd.nn.init.ones_(nd.zeros(2)).tolist()
    [1.0, 1.0]
    """
    return _fill(w, 1.0)  # type: ignore[arg-type]


def kaiming_uniform_(w: Array, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator: nd.random.Generator | None = None) -> Array:  # fmt: skip
    """He et al. uniform initialisation: U(-bound, bound), bound = gain * sqrt(3 / fan).

    >>> import ndplane as nd
    >>> w = nd.nn.init.kaiming_uniform_(nd.zeros((64, 32)), nonlinearity="relu", generator=nd.random.default_rng(0))
    >>> float(nd.max(nd.abs(w))) <= 2 ** 0.5 * (3 / 32) ** 0.5  # fan_in = 32
    True
    """
    fan_in, fan_out = _fans(w)
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / (fan_in if mode == "fan_in" else fan_out))
    return uniform_(w, -bound, bound, generator)


def kaiming_normal_(w: Array, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator: nd.random.Generator | None = None) -> Array:  # fmt: skip
    """He et al. normal initialisation: N(0, gain**2 / fan).

    >>> import ndplane as nd
    >>> w = nd.nn.init.kaiming_normal_(nd.zeros((256, 128)), nonlinearity="relu", generator=nd.random.default_rng(0))
    >>> abs(float(nd.std(w)) - (2 / 128) ** 0.5) < 0.005  # gain sqrt(2), fan_in 128
    True
    """
    fan_in, fan_out = _fans(w)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan_in if mode == "fan_in" else fan_out)
    return normal_(w, 0.0, std, generator)


def xavier_uniform_(w: Array, gain: float = 1.0, generator: nd.random.Generator | None = None) -> Array:
    """Glorot uniform initialisation: U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)).

    >>> import ndplane as nd
    >>> w = nd.nn.init.xavier_uniform_(nd.zeros((20, 30)), generator=nd.random.default_rng(0))
    >>> float(nd.max(nd.abs(w))) <= (6 / 50) ** 0.5
    True
    """
    fan_in, fan_out = _fans(w)
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(w, -a, a, generator)


def xavier_normal_(w: Array, gain: float = 1.0, generator: nd.random.Generator | None = None) -> Array:
    """Glorot normal initialisation: N(0, gain**2 * 2 / (fan_in + fan_out)).

    >>> import ndplane as nd
    >>> w = nd.nn.init.xavier_normal_(nd.zeros((200, 300)), generator=nd.random.default_rng(0))
    >>> abs(float(nd.std(w)) - (2 / 500) ** 0.5) < 0.003
    True
    """
    fan_in, fan_out = _fans(w)
    return normal_(w, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)
