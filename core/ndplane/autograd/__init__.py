"""Reverse-mode automatic differentiation over every ndplane op, on every backend.

>>> import ndplane as nd
>>> x = nd.asarray([1.0, 2.0, 3.0], requires_grad=True)
>>> y = nd.sum(x * x)
>>> y.backward()
>>> x.grad.tolist()
[2.0, 4.0, 6.0]
>>> (g,) = nd.autograd.grad(nd.sum(nd.exp(x)), [x])
>>> bool(nd.all(nd.abs(g - nd.exp(x)) < 1e-12))
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .. import _creation
from .._array import Array
from .._graph import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from . import rules, rules_extra  # noqa: F401 - fill the rule table
from .engine import run_backward

__all__ = ["backward", "grad", "gradcheck", "no_grad", "enable_grad", "is_grad_enabled", "set_grad_enabled"]


def _default_grads(outputs: Sequence[Array], grads: Sequence[Array | None] | None, name: str) -> list[Array]:
    grads = list(grads) if grads is not None else [None] * len(outputs)
    if len(grads) != len(outputs):
        raise ValueError(f"{name}: got {len(grads)} gradients for {len(outputs)} outputs.")
    out = []
    for o, g in zip(outputs, grads):
        if not o.requires_grad:
            raise RuntimeError(
                f"{name}: an output does not require a gradient (no input with requires_grad=True "
                f"reached it, or it was computed under no_grad())."
            )
        if g is None:
            if o.size != 1:
                raise RuntimeError(
                    f"{name}: the output has shape {o.shape}; a gradient can only be created implicitly "
                    f"for a single-element output. Pass gradient= with the output's shape."
                )
            g = _creation.ones_like(o)
        elif tuple(g.shape) != tuple(o.shape):
            raise ValueError(f"{name}: gradient shape {g.shape} does not match the output shape {o.shape}.")
        out.append(g)
    return out


def backward(
    tensors: Array | Sequence[Array], grad_tensors: Array | Sequence[Array | None] | None = None, *,
    retain_graph: bool | None = None, create_graph: bool = False,
) -> None:  # fmt: skip
    """Accumulate gradients of ``tensors`` into ``.grad`` of the leaves they depend on.

    >>> import ndplane as nd
    >>> x = nd.asarray([1.0, 2.0], requires_grad=True)
    >>> nd.autograd.backward([nd.sum(x * x), nd.sum(3 * x)])
    >>> x.grad.tolist()
    [5.0, 7.0]
    """
    outs = [tensors] if type(tensors) is Array else list(tensors)
    gts = [grad_tensors] if type(grad_tensors) is Array else grad_tensors
    grads = _default_grads(outs, gts, "backward")
    run_backward(outs, grads, retain_graph=create_graph if retain_graph is None else retain_graph,
                 create_graph=create_graph)  # fmt: skip


def grad(
    outputs: Array | Sequence[Array], inputs: Array | Sequence[Array],
    grad_outputs: Array | Sequence[Array | None] | None = None, *, retain_graph: bool | None = None,
    create_graph: bool = False, allow_unused: bool = False,
) -> tuple[Array | None, ...]:  # fmt: skip
    """Gradients of ``outputs`` with respect to ``inputs``, returned (``.grad`` is not touched).

    With ``create_graph=True`` the returned gradients are themselves differentiable.

    >>> import ndplane as nd
    >>> x = nd.asarray(3.0, requires_grad=True)
    >>> (dx,) = nd.autograd.grad(x ** 3, x, create_graph=True)
    >>> (ddx,) = nd.autograd.grad(dx, x)
    >>> float(dx), float(ddx)
    (27.0, 18.0)
    """
    outs = [outputs] if type(outputs) is Array else list(outputs)
    ins = [inputs] if type(inputs) is Array else list(inputs)
    gos = [grad_outputs] if type(grad_outputs) is Array else grad_outputs
    for x in ins:
        if not x.requires_grad:
            raise RuntimeError("grad: every input must have requires_grad=True.")
    grads = _default_grads(outs, gos, "grad")
    result = run_backward(outs, grads, retain_graph=create_graph if retain_graph is None else retain_graph,
                          create_graph=create_graph, inputs=ins)  # fmt: skip
    assert result is not None
    if not allow_unused and any(r is None for r in result):
        raise RuntimeError("grad: an input is not reached from the outputs; pass allow_unused=True to get None.")
    return tuple(result)


def gradcheck(
    fn: Callable[..., Array], inputs: Sequence[Array], *, eps: float = 1e-6, atol: float = 1e-5,
    rtol: float = 1e-3, raise_exception: bool = True,
) -> bool:  # fmt: skip
    """Compare the autograd gradient of ``sum(fn(*inputs) * v)`` with central finite differences.

    Inputs must be float64 (or complex128) arrays with ``requires_grad=True``; ``v`` is a fixed
    random cotangent, so every output element takes part.

    >>> import ndplane as nd
    >>> x = nd.asarray([0.3, -1.2, 2.0], requires_grad=True)
    >>> nd.autograd.gradcheck(lambda t: nd.tanh(t) * t, [x])
    True
    """
    for x in inputs:
        if x.dtype.name not in ("float64", "complex128"):
            raise TypeError(f"gradcheck: inputs must be float64 or complex128; got {x.dtype.name}.")
    out = fn(*inputs)
    rng = np.random.default_rng(0)
    v_host = rng.standard_normal(out.shape)
    v = _creation.asarray(v_host, dtype=out.dtype, device=out.device)
    analytic = grad([out], list(inputs), [v], allow_unused=True)
    for i, x in enumerate(inputs):
        base = x.to_numpy()
        numeric = np.zeros(base.shape, dtype=np.float64)
        flat = numeric.reshape(-1)
        for j in range(base.size):
            vals = []
            for sign in (1.0, -1.0):
                pert = base.copy().reshape(-1)
                pert[j] += sign * eps
                args = list(inputs)
                with no_grad():
                    args[i] = _creation.asarray(pert.reshape(base.shape), dtype=x.dtype, device=x.device)
                    vals.append(float(np.sum(fn(*args).to_numpy() * v_host).real))
            flat[j] = (vals[0] - vals[1]) / (2 * eps)
        ga = analytic[i]
        got = ga.to_numpy().real if ga is not None else np.zeros_like(numeric)
        if not np.allclose(got, numeric, atol=atol, rtol=rtol):
            if raise_exception:
                worst = np.max(np.abs(got - numeric))
                raise AssertionError(
                    f"gradcheck: gradient of input {i} differs from finite differences by up to {worst:.3g}\n"
                    f"analytic:\n{got}\nnumeric:\n{numeric}"
                )
            return False
    return True
