"""The Array's operators and methods: one table, bound onto the class once at import.

``_array`` defines storage, layout, the attributes and the conversions to Python and
NumPy; everything that runs an op is bound here, at the top layer, so that no lower
module imports a higher one. ``_array.pyi`` declares the complete surface (what this
table binds included) for readers and type checkers; ``tests/test_layers.py`` checks
that the stub and the class agree name for name.

The Array API asks for the operators, ``T``/``mT``, ``to_device``, ``__getitem__`` /
``__setitem__``, ``__dlpack__`` and ``__array_namespace__``; the reductions and
``reshape``/``astype`` are conveniences users of NumPy and PyTorch expect, each a
one-line forward to the namespace function.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

from . import (
    _creation,
    _data_type_functions,
    _dispatch,
    _dlpack,
    _elementwise,
    _linear_algebra_functions,
    _manipulation,
    _numpy_protocol,
    _searching,
    _statistical,
    _subscript,
    _utility,
    autograd,
)
from ._array import Array, detached
from ._devices import as_device

__all__ = ["METHODS", "bind_methods"]


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
    """``reshape(self, shape)``; accepts ``x.reshape(2, 3)`` and ``x.reshape((2, 3))``.

    >>> import ndplane as nd
    >>> x = nd.arange(6)
    >>> x.reshape(2, 3).tolist(), x.reshape((3, -1)).shape
    ([[0, 1, 2], [3, 4, 5]], (3, 2))
    """
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return _manipulation.reshape(self, shape, copy=copy)


def _forward(fn: Any, call: str, result: str) -> Any:
    def method(self: Array, *args: Any, **kwargs: Any) -> Any:
        return fn(self, *args, **kwargs)

    # NOTE: named as Array's own method (help(), the API reference): the function is built here.
    method.__name__, method.__qualname__, method.__module__ = fn.__name__, f"Array.{fn.__name__}", Array.__module__
    sig = inspect.signature(fn)  # the namespace function's, its array argument named self
    first, *rest = sig.parameters.values()
    method.__signature__ = sig.replace(parameters=[first.replace(name="self"), *rest])  # type: ignore[attr-defined]
    method.__doc__ = (
        f"Same as ``ndplane.{fn.__name__}(self, ...)``.\n\n"
        f">>> import ndplane as nd\n>>> x = nd.asarray([[1.0, 2.0], [3.0, 4.0]])\n>>> {call}\n{result}"
    )
    return method


# The methods that forward to a namespace function, each with its example (x is [[1., 2.], [3., 4.]]).
_FORWARDED: list[tuple[Any, str, str]] = [
    (_data_type_functions.astype, "x.astype(nd.int32).tolist()", "[[1, 2], [3, 4]]"),
    (_statistical.sum, "x.sum(axis=0).tolist()", "[4.0, 6.0]"),
    (_statistical.prod, "x.prod().item()", "24.0"),
    (_statistical.mean, "x.mean(axis=1).tolist()", "[1.5, 3.5]"),
    (_statistical.max, "x.max().item()", "4.0"),
    (_statistical.min, "x.min(axis=1).tolist()", "[1.0, 3.0]"),
    (_statistical.std, "x.std().item()", "1.118033988749895"),
    (_statistical.var, "x.var().item()", "1.25"),
    (_searching.argmax, "x.argmax().item()", "3"),
    (_searching.argmin, "x.argmin(axis=1).tolist()", "[0, 0]"),
    (_utility.all, "(x > 0).all().item()", "True"),
    (_utility.any, "(x > 3).any(axis=0).tolist()", "[False, True]"),
    (_manipulation.flip, "x.flip(axis=1).tolist()", "[[2.0, 1.0], [4.0, 3.0]]"),
]


def backward(self: Array, gradient: Array | None = None, retain_graph: bool | None = None,
             create_graph: bool = False) -> None:  # fmt: skip
    """Accumulate the gradient of this array into ``.grad`` of the leaves it depends on.

    >>> import ndplane as nd
    >>> w = nd.asarray([1.0, -2.0], requires_grad=True)
    >>> nd.sum(w * w).backward()
    >>> w.grad.tolist()
    [2.0, -4.0]
    """
    autograd.backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph)


def detach(self: Array) -> Array:
    """The same data outside the graph (shares storage, no gradient).

    >>> import ndplane as nd
    >>> y = nd.asarray([1.0], requires_grad=True) * 2
    >>> y.requires_grad, y.detach().requires_grad, y.detach().tolist()
    (True, False, [2.0])
    """
    return detached(self)


def requires_grad_(self: Array, requires_grad: bool = True) -> Array:
    """Mark this array (a leaf) as needing a gradient; returns it.

    >>> import ndplane as nd
    >>> w = nd.zeros(2).requires_grad_()
    >>> w.requires_grad
    True
    """
    if self._node is not None and not requires_grad:
        raise RuntimeError("requires_grad_: cannot turn off the gradient of a non-leaf array; use detach().")
    if requires_grad and not self.dtype.is_floating:
        raise TypeError(f"requires_grad_: only floating-point arrays can require a gradient; got {self.dtype.name}.")
    self.requires_grad = requires_grad
    return self


def is_leaf(self: Array) -> bool:
    """Whether this array was not computed by a recorded op.

    >>> import ndplane as nd
    >>> w = nd.asarray([1.0], requires_grad=True)
    >>> w.is_leaf, (w * 2).is_leaf
    (True, False)
    """
    return self._node is None


_API_VERSIONS = (None, "2021.12", "2022.12", "2023.12", "2024.12")


def __array_namespace__(self: Array, *, api_version: str | None = None) -> Any:
    """The ``ndplane`` module (the Array API namespace of this array).

    >>> import ndplane as nd
    >>> nd.zeros(2).__array_namespace__() is nd
    True
    """
    if api_version not in _API_VERSIONS:
        raise ValueError(f"__array_namespace__: unsupported api_version {api_version!r}; ndplane implements 2024.12.")
    # NOTE: the package, not ``_namespace``: users compare it with ``ndplane``. It is fully
    # imported whenever an Array exists, so this is a lookup, not an import.
    return sys.modules[__package__]


#: name -> what is bound on Array (functions become methods; properties stay properties).
METHODS: dict[str, Any] = {
    **_elementwise.operators(),
    "__hash__": object.__hash__,  # __eq__ is elementwise; keep identity hashing
    "__matmul__": _linear_algebra_functions.__matmul__,
    "__rmatmul__": _linear_algebra_functions.__rmatmul__,
    "__imatmul__": _linear_algebra_functions.__imatmul__,
    "__getitem__": _subscript.getitem,
    "__setitem__": _subscript.setitem,
    "__dlpack__": _dlpack.__dlpack__,
    "__dlpack_device__": _dlpack.__dlpack_device__,
    "__cuda_array_interface__": property(_dlpack.cuda_array_interface, doc=_dlpack.cuda_array_interface.__doc__),
    "__array_namespace__": __array_namespace__,
    "__reduce_ex__": _creation.reduce_ex,
    # NumPy's protocols (NEP 18, NEP 13) and the NumPy-style methods Dask calls on chunks
    "__array_function__": _numpy_protocol.array_function,
    "__array_ufunc__": _numpy_protocol.array_ufunc,
    "__array_priority__": 1.0,  # above NumPy's 0: Dask picks the chunk type of a mixed operation by it
    "copy": _numpy_protocol.copy,
    "ravel": _numpy_protocol.ravel,
    "squeeze": _numpy_protocol.squeeze,
    "T": property(_manipulation.transpose_2d, doc=(
        "The transpose of a 2-D array (a view).\n\n>>> import ndplane as nd\n"
        ">>> nd.asarray([[1, 2], [3, 4]]).T.tolist()\n[[1, 3], [2, 4]]")),
    "mT": property(_manipulation.matrix_transpose_view, doc=(
        "The transpose of the last two axes (a view).\n\n>>> import ndplane as nd\n"
        ">>> nd.zeros((5, 2, 3)).mT.shape\n(5, 3, 2)")),
    "to_device": to_device,
    "reshape": reshape,
    "backward": backward,
    "detach": detach,
    "requires_grad_": requires_grad_,
    "is_leaf": property(is_leaf, doc=is_leaf.__doc__),
    **{fn.__name__: _forward(fn, call, result) for fn, call, result in _FORWARDED},
}


def bind_methods() -> None:
    for name, value in METHODS.items():
        setattr(Array, name, value)
