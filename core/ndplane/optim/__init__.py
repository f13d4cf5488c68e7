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
from collections.abc import Iterable
from typing import Any, cast

from .. import _namespace as nd
from .._array import Array
from ..backend.base import Ref

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]


class Optimizer:
    """Base class: parameters, per-parameter state, and a ``step`` that runs under ``no_grad``.

    ``step`` works on all parameters of one device and dtype at once: their gradients are
    gathered into one flat array, the update rule runs once on it (a handful of kernels,
    whatever the number of parameters), and each parameter takes its slice. The state
    (momentum, Adam's moments) lives in flat arrays; each parameter's share is a view.
    Where the backend declares a fused kernel for the rule (``"fused:adam"``), each parameter
    is instead updated in place by one kernel call, reading its gradient and state once.

    A rule is a subclass with a ``_delta``: the amount to subtract from the flat parameters.

    >>> import ndplane as nd
    >>> class SignDescent(nd.optim.Optimizer):
    ...     def __init__(self, params, lr=0.1):
    ...         super().__init__(params, {"lr": lr})
    ...     def _delta(self, g, p, state, t):
    ...         return self.defaults["lr"] * nd.sign(g)
    >>> w = nd.asarray([1.0, -2.0], requires_grad=True)
    >>> opt = SignDescent([w])
    >>> nd.sum(w * w).backward()
    >>> opt.step()
    >>> w.tolist()
    [0.9, -1.9]
    """

    def __init__(self, params: Iterable[Array], defaults: dict[str, Any]) -> None:
        self.params = list(params)
        if not self.params:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list.")
        for p in self.params:
            if type(p) is not Array or not p.requires_grad:
                raise TypeError(f"{type(self).__name__}: every parameter must be an array with requires_grad=True.")
        if len({id(p) for p in self.params}) != len(self.params):
            raise ValueError(f"{type(self).__name__}: a parameter appears more than once (it would be updated "
                             f"twice per step); pass each array once.")  # fmt: skip
        self.defaults = defaults
        groups: dict[tuple[Any, Any], list[Array]] = {}
        for p in self.params:
            groups.setdefault((p.device, p.dtype), []).append(p)
        self._groups = list(groups.values())
        self._flat: dict[int, dict[str, Array]] = {}  # group index -> flat state arrays
        self._state_refs: dict[int, list[tuple[Ref, ...]]] = {}  # group index -> per-parameter state Refs
        self.state: dict[int, dict[str, Any]] = {id(p): {"step": 0} for p in self.params}

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the gradients of the parameters (to None, or zeros with ``set_to_none=False``).

        >>> import ndplane as nd
        >>> w = nd.asarray([1.0, -2.0], requires_grad=True)
        >>> opt = nd.optim.SGD([w], lr=0.1)
        >>> nd.sum(w * w).backward()
        >>> opt.zero_grad(set_to_none=False)
        >>> w.grad.tolist() == [0.0, 0.0]
        True
        >>> opt.zero_grad()
        >>> w.grad is None
        True
        """
        for p in self.params:
            p.grad = None if set_to_none or p.grad is None else p.grad * 0

    def step(self) -> None:
        """Update every parameter that has a gradient, in place, under ``no_grad``.

        >>> import ndplane as nd
        >>> w = nd.asarray([1.0, -2.0], requires_grad=True)
        >>> opt = nd.optim.SGD([w], lr=0.1)
        >>> nd.sum(w * w).backward()  # gradient 2w
        >>> opt.step()
        >>> w.tolist()
        [0.8, -1.6]
        """
        with nd.no_grad():
            for gi, group in enumerate(self._groups):
                live = [p for p in group if p.grad is not None]
                if not live:
                    continue
                flat = self._flat.get(gi)
                if flat is None:
                    flat = self._flat[gi] = {name: nd.zeros(sum(p.size for p in group), dtype=group[0].dtype,
                                                              device=group[0].device)
                                             for name in self._state_names}  # fmt: skip
                if self._fused_op is not None and self._fused_step(gi, group, flat):
                    continue
                in_step = len({self.state[id(p)]["step"] for p in group}) == 1
                if len(live) == len(group) and in_step:  # the common case: one update for all
                    # NOTE: the flat copy of the parameters is needed only by weight decay
                    pflat = _flatten(group) if self.weight_decay else None
                    views = [(_flatten(cast("list[Array]", [p.grad for p in group])), pflat, flat)]
                    params = [group]
                else:
                    views, params, off = [], [], 0
                    for p in group:
                        if p.grad is not None:
                            share = {k: v[off : off + p.size] for k, v in flat.items()}
                            views.append((nd.reshape(p.grad, (-1,)), nd.reshape(p, (-1,)), share))
                            params.append([p])
                        off += p.size
                for (g, pflat, state), ps in zip(views, params):
                    for p in ps:
                        self.state[id(p)]["step"] += 1
                    delta = self._delta(g, pflat, state, self.state[id(ps[0])]["step"])
                    off = 0
                    for p in ps:
                        p -= nd.reshape(delta[off : off + p.size], p.shape)
                        off += p.size

    _state_names: tuple[str, ...] = ()
    weight_decay: float = 0.0
    #: The backend's fused kernel for this rule ("fused:<op>"), when it declares one.
    _fused_op: str | None = None

    def _fused_params(self) -> dict[str, Any]:
        raise NotImplementedError

    def _fused_step(self, gi: int, group: list[Array], flat: dict[str, Array]) -> bool:
        """The update as one fused kernel per parameter, in place (see ``Backend.fused``), when
        the backend declares ``"fused:<op>"`` and every parameter and gradient is a C-contiguous
        real float array of its parameter's dtype and shape; False (nothing done) otherwise."""
        p0 = group[0]
        backend = p0._storage.backend
        if f"fused:{self._fused_op}" not in backend.capabilities or p0.dtype.kind != "float":
            return False
        for p in group:
            g = p.grad
            if not p._ref.contiguous or (g is not None and (
                    g._ref.dtype is not p._ref.dtype or g._ref.shape != p._ref.shape or not g._ref.contiguous)):  # fmt: skip
                return False
        refs = self._state_refs.get(gi)
        if refs is None:  # each parameter's share of the flat state, as Refs of its shape
            refs, off = [], 0
            for p in group:
                r = p._ref
                refs.append(tuple(Ref(s._ref.buffer, r.dtype, r.shape, r.strides, off, r.size, True)
                                  for s in flat.values()))  # fmt: skip
                off += r.size
            self._state_refs[gi] = refs
        params = self._fused_params()
        op = cast(str, self._fused_op)  # step() calls this only when the rule has a fused op
        for p, state in zip(group, refs):
            g = p.grad
            if g is None or not p._ref.size:
                continue
            st = self.state[id(p)]
            st["step"] += 1
            params["step"] = st["step"]
            backend.fused(op, (g._ref, *state), p._ref, params)
            p._storage.version += 1
        for s in flat.values():
            s._storage.version += 1
        return True

    def _delta(self, g: Array, p: Array | None, state: dict[str, Array], t: int) -> Array:
        """The amount to subtract from the (flat) parameters ``p`` given gradients ``g``
        (``p`` is None when the rule has no weight decay, which alone reads it)."""
        raise NotImplementedError


def _flatten(arrays: list[Array]) -> Array:
    return nd.reshape(arrays[0], (-1,)) if len(arrays) == 1 else nd.concat([nd.reshape(a, (-1,)) for a in arrays])


def _check(name: str, value: float, low: float = 0.0) -> float:
    if not value >= low:
        raise ValueError(f"invalid {name}: {value} (must be >= {low}).")
    return float(value)


class SGD(Optimizer):
    """Stochastic gradient descent with momentum, dampening, Nesterov and weight decay (PyTorch's rule).

    >>> import ndplane as nd
    >>> w = nd.asarray([1.0, -2.0], requires_grad=True)
    >>> opt = nd.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     nd.sum(w * w).backward()
    ...     opt.step()
    >>> [round(v, 6) for v in w.tolist()]  # 1 - 0.2 = 0.8, then 0.8 - 0.1 * (1.6 + 0.9 * 2)
    [0.46, -0.92]
    """

    def __init__(self, params: Iterable[Array], lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False) -> None:  # fmt: skip
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: Nesterov momentum needs momentum > 0 and dampening = 0.")
        super().__init__(params, {})
        self.lr, self.momentum = _check("lr", lr), _check("momentum", momentum)
        self.dampening, self.weight_decay, self.nesterov = dampening, _check("weight_decay", weight_decay), nesterov

    @property
    def _state_names(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("momentum",) if self.momentum else ()

    def _delta(self, g: Array, p: Array | None, state: dict[str, Array], t: int) -> Array:
        if self.weight_decay:
            assert p is not None  # step() passes the parameters whenever there is weight decay
            g = g + self.weight_decay * p
        if self.momentum:
            buf = state["momentum"]
            if t == 1:
                buf[...] = g
            else:
                buf *= self.momentum
                buf += (1 - self.dampening) * g
            g = g + self.momentum * buf if self.nesterov else buf
        return self.lr * g


class Adam(Optimizer):
    """Adam (Kingma & Ba) with bias correction; ``weight_decay`` is L2 added to the gradient.

    >>> import ndplane as nd
    >>> w = nd.asarray([1.0, -2.0], requires_grad=True)
    >>> opt = nd.optim.Adam([w], lr=0.1)
    >>> nd.sum(w * w).backward()
    >>> opt.step()  # the first step moves each weight by lr against its gradient's sign
    >>> [round(v, 6) for v in w.tolist()]
    [0.9, -1.9]
    """

    decoupled = False

    def __init__(self, params: Iterable[Array], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0) -> None:  # fmt: skip
        super().__init__(params, {})
        self.lr, self.eps, self.weight_decay = _check("lr", lr), _check("eps", eps), _check("weight_decay", weight_decay)
        if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
            raise ValueError(f"invalid betas: {betas} (each must be in [0, 1)).")
        self.betas = betas

    _state_names = ("m", "v")
    _fused_op = "adam"

    def _fused_params(self) -> dict[str, Any]:
        b1, b2 = self.betas
        return {"lr": self.lr, "beta1": b1, "beta2": b2, "eps": self.eps, "weight_decay": self.weight_decay,
                "decoupled": self.decoupled}  # fmt: skip

    def _delta(self, g: Array, p: Array | None, state: dict[str, Array], t: int) -> Array:
        # NOTE: float16 computed in float32 and rounded once per step, as the fused kernels do:
        # in float16, (1 - b2) * g * g underflows and eps is 0, so m / denom would be inf or NaN.
        if g.dtype == nd.float16:
            wide = {k: nd.astype(s, nd.float32) for k, s in state.items()}
            delta = self._delta(nd.astype(g, nd.float32), None if p is None else nd.astype(p, nd.float32), wide, t)
            for k, s in state.items():
                s[...] = wide[k]
            return nd.astype(delta, nd.float16)
        b1, b2 = self.betas
        if self.weight_decay and not self.decoupled:
            assert p is not None  # step() passes the parameters whenever there is weight decay
            g = g + self.weight_decay * p
        m, v = state["m"], state["v"]
        m *= b1
        m += (1 - b1) * g
        v *= b2
        v += (1 - b2) * (g * g)
        denom = nd.sqrt(v) * (1 / math.sqrt(1 - b2**t)) + self.eps
        delta = (self.lr / (1 - b1**t)) * (m / denom)
        if self.weight_decay and self.decoupled:
            assert p is not None
            delta += (self.lr * self.weight_decay) * p
        return delta


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter); default ``weight_decay=0.01``.

    >>> import ndplane as nd
    >>> w = nd.asarray([1.0, -2.0], requires_grad=True)
    >>> opt = nd.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> nd.sum(w * w).backward()
    >>> opt.step()  # Adam's step, then lr * weight_decay * w
    >>> [round(v, 6) for v in w.tolist()]
    [0.85, -1.8]
    """

    decoupled = True

    def __init__(self, params: Iterable[Array], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2) -> None:  # fmt: skip
        super().__init__(params, lr, betas, eps, weight_decay)
