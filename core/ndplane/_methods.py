"""Array methods that forward to namespace functions, bound once at import.

The Array API asks only for ``to_device`` (plus operators and attributes);
the reductions and ``reshape``/``astype`` are conveniences users of NumPy and
PyTorch expect, each a one-line forward to the namespace function.
"""

from __future__ import annotations

from typing import Any

from . import _data_types, _dispatch, _manipulation, _searching, _statistical, _utility
from ._array import Array
from ._devices import as_device


def to_device(self: Array, device: Any, /, *, stream: Any = None) -> Array:
    """This array on ``device`` (itself if it is already there).

    >>> import ndplane as nd
    >>> nd.arange(3).to_device("numpy:1").device
    Device('numpy:1')
    """
    if stream is not None:
        raise ValueError("to_device: streams are not supported; pass stream=None.")
    return _dispatch.to_device(self, as_device(device))


def reshape(self: Array, *shape: Any, copy: bool | None = None) -> Array:
    """``reshape(self, shape)``; accepts ``x.reshape(2, 3)`` and ``x.reshape((2, 3))``."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return _manipulation.reshape(self, shape, copy=copy)


def _forward(fn: Any) -> Any:
    def method(self: Array, *args: Any, **kwargs: Any) -> Any:
        return fn(self, *args, **kwargs)

    method.__name__ = fn.__name__
    method.__doc__ = f"Same as ``ndplane.{fn.__name__}(self, ...)``."
    return method


def backward(self: Array, gradient: Array | None = None, retain_graph: bool | None = None,
             create_graph: bool = False) -> None:  # fmt: skip
    """Accumulate the gradient of this array into ``.grad`` of the leaves it depends on.

    >>> import ndplane as nd
    >>> w = nd.asarray([1.0, -2.0], requires_grad=True)
    >>> nd.sum(w * w).backward()
    >>> w.grad.tolist()
    [2.0, -4.0]
    """
    from . import autograd

    autograd.backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph)


def detach(self: Array) -> Array:
    """The same data outside the graph (shares storage, no gradient)."""
    from .autograd.graph import _detached

    return _detached(self)


def requires_grad_(self: Array, requires_grad: bool = True) -> Array:
    """Mark this array (a leaf) as needing a gradient; returns it."""
    if self._node is not None and not requires_grad:
        raise RuntimeError("requires_grad_: cannot turn off the gradient of a non-leaf array; use detach().")
    if requires_grad and not self.dtype.is_floating:
        raise TypeError(f"requires_grad_: only floating-point arrays can require a gradient; got {self.dtype.name}.")
    self.requires_grad = requires_grad
    return self


def is_leaf(self: Array) -> bool:
    """Whether this array was not computed by a recorded op."""
    return self._node is None


def bind_methods() -> None:
    Array.backward = backward  # type: ignore[attr-defined]
    Array.detach = detach  # type: ignore[attr-defined]
    Array.requires_grad_ = requires_grad_  # type: ignore[attr-defined]
    Array.is_leaf = property(is_leaf)  # type: ignore[attr-defined]
    Array.to_device = to_device  # type: ignore[attr-defined]
    Array.reshape = reshape  # type: ignore[attr-defined]
    for fn in (
        _data_types.astype, _statistical.sum, _statistical.prod, _statistical.mean, _statistical.max,
        _statistical.min, _statistical.std, _statistical.var, _searching.argmax, _searching.argmin,
        _utility.all, _utility.any, _manipulation.flip,
    ):  # fmt: skip
        setattr(Array, fn.__name__, _forward(fn))
