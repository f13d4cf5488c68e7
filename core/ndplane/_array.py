"""The Array: storage (a backend buffer on a device) plus a layout (a Ref).

An Array never holds data itself.  Its layout lives in an immutable
:class:`~ndplane.backend.Ref` built once, so passing it to a kernel is free;
every view is a new Array over the same Storage with another Ref.

This module is the third layer of the core (see ``docs/architecture.md``): it knows
storage, layout and conversion to host data, and nothing of autograd or of any op.
Operators and the methods that run ops are bound onto the class from one table in
``_methods`` (the top layer); ``_array.pyi`` declares the whole surface for readers
and type checkers, and a test keeps the two in step.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _layout
from ._devices import Device
from .backend.base import Ref

if TYPE_CHECKING:
    from ._dtypes import DType
    from .backend.base import Backend

__all__ = ["Array", "Storage"]


class Storage:
    """One backend buffer: freed through its backend when the last Array over it dies."""

    __slots__ = ("buffer", "device", "backend", "nbytes", "version", "__weakref__")

    def __init__(self, buffer: Any, device: Device, backend: Backend, nbytes: int) -> None:
        self.buffer = buffer
        self.device = device
        self.backend = backend
        self.nbytes = nbytes
        self.version = 0  # bumped by every in-place write (autograd checks it)

    def __del__(self) -> None:
        try:
            self.backend.free(self.buffer)
        except Exception:  # noqa: BLE001 - interpreter shutdown or a dead device
            pass


class Array:
    """An n-dimensional array on a device.

    Create arrays with :func:`ndplane.asarray`, :func:`ndplane.zeros` and the
    other creation functions, never with ``Array(...)``.

    >>> import ndplane as nd
    >>> x = nd.asarray([[1.0, 2.0], [3.0, 4.0]])
    >>> x.shape, x.dtype, x.T[0, 1]
    ((2, 2), ndplane.float64, Array(3., dtype=float64, device='numpy:0'))
    """

    # NOTE: a dict, so the two public slots carry docstrings (help(), the API reference).
    __slots__ = {
        "_storage": None, "_ref": None, "_node": None, "__weakref__": None,
        "requires_grad": """Whether gradients flow back to this array (set it on leaves with ``requires_grad_()``).

        >>> import ndplane as nd
        >>> w = nd.asarray([1.0], requires_grad=True)
        >>> w.requires_grad, (w * 2).requires_grad, (w * 2).detach().requires_grad
        (True, True, False)
        """,
        "grad": """The gradient ``backward()`` accumulated into this leaf (None before the first).

        >>> import ndplane as nd
        >>> w = nd.asarray([3.0], requires_grad=True)
        >>> w.grad is None
        True
        >>> nd.sum(w * w).backward()
        >>> w.grad.tolist()
        [6.0]
        """,
    }  # fmt: skip

    _storage: Storage
    _ref: Ref
    _node: Any
    requires_grad: bool
    grad: Array | None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Raises: arrays come from ``asarray`` and the other creation functions.

        >>> import ndplane as nd
        >>> nd.Array([1, 2])
        Traceback (most recent call last):
        TypeError: Array cannot be constructed directly; use ndplane.asarray(), ndplane.zeros() or another creation function.
        """
        raise TypeError(
            "Array cannot be constructed directly; use ndplane.asarray(), ndplane.zeros() "
            "or another creation function."
        )

    # -- attributes ------------------------------------------------------------

    @property
    def dtype(self) -> DType:
        """The data type.

        >>> import ndplane as nd
        >>> nd.asarray([1.0, 2.0], dtype=nd.float32).dtype
        ndplane.float32
        """
        return self._ref.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape, a tuple of ints.

        >>> import ndplane as nd
        >>> nd.zeros((2, 3)).shape
        (2, 3)
        """
        return self._ref.shape

    @property
    def ndim(self) -> int:
        """The number of dimensions.

        >>> import ndplane as nd
        >>> nd.zeros((2, 3)).ndim, nd.asarray(5).ndim
        (2, 0)
        """
        return len(self._ref.shape)

    @property
    def size(self) -> int:
        """The number of elements.

        >>> import ndplane as nd
        >>> nd.zeros((2, 3)).size
        6
        """
        return self._ref.size

    @property
    def device(self) -> Device:
        """The device holding the data.

        >>> import ndplane as nd
        >>> nd.zeros(2, device="numpy").device
        Device('numpy:0')
        """
        return self._storage.device

    @property
    def strides(self) -> tuple[int, ...]:
        """Strides in elements (not bytes); may be 0 (broadcast) or negative (flipped).

        >>> import ndplane as nd
        >>> x = nd.zeros((2, 3))
        >>> x.strides, x.T.strides, nd.flip(x, axis=1).strides, nd.broadcast_to(x[0], (4, 3)).strides
        ((3, 1), (1, 3), (3, -1), (0, 1))
        """
        return self._ref.strides

    def __len__(self) -> int:
        """The length of the first axis (a 0-d array has none: TypeError).

        >>> import ndplane as nd
        >>> len(nd.zeros((4, 2)))
        4
        """
        if not self._ref.shape:
            raise TypeError("len() of a 0-d array")
        return self._ref.shape[0]

    def __iter__(self) -> Any:
        """The sub-arrays along the first axis, one by one (views).

        >>> import ndplane as nd
        >>> [row.tolist() for row in nd.asarray([[1, 2], [3, 4]])]
        [[1, 2], [3, 4]]
        """
        if not self._ref.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self._ref.shape[0]))

    # -- conversion ------------------------------------------------------------

    def to_numpy(self) -> np.ndarray:
        """A NumPy copy of the data, from any device (waits for pending work).

        >>> import ndplane as nd
        >>> nd.arange(3).to_numpy()
        array([0, 1, 2])
        """
        host = self._storage.backend.to_host(self._ref)
        return np.array(host, copy=True, order="C")

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """``numpy.asarray(x)``: without a copy on host-resident devices; elsewhere TypeError
        (use ``to_numpy()``, which copies from any device).

        >>> import ndplane as nd, numpy as np
        >>> np.asarray(nd.asarray([1, 2], device="numpy"))
        array([1, 2])
        """
        st = self._storage
        if "host" not in st.backend.capabilities:
            raise TypeError(
                f"cannot convert an array on device '{st.device}' to NumPy implicitly; "
                f"move it first with x.to_device('cpu') or copy it with x.to_numpy()."
            )
        host = st.backend.to_host(self._ref)
        if copy:
            host = host.copy()
        return host if dtype is None else host.astype(dtype, copy=False)

    def _scalar(self, kind: type, name: str) -> Any:
        if self._ref.shape != () and self._ref.size != 1:
            raise TypeError(
                f"{name}: only arrays with one element can be converted to a Python scalar; "
                f"got shape {self._ref.shape}."
            )
        value = self._storage.backend.to_host(self._ref).reshape(()).item()
        return kind(value)

    def __bool__(self) -> bool:
        """``bool(x)`` of a one-element array (more elements: TypeError, never a silent ``any``).

        >>> import ndplane as nd
        >>> bool(nd.asarray([0.5]) > 0)
        True
        """
        return self._scalar(bool, "__bool__")

    def __int__(self) -> int:
        """``int(x)`` of a one-element real array.

        >>> import ndplane as nd
        >>> int(nd.sum(nd.arange(4)))
        6
        """
        if self._ref.dtype.kind == "complex":
            raise TypeError("__int__: cannot convert a complex array to int; use real() first.")
        return self._scalar(int, "__int__")

    def __float__(self) -> float:
        """``float(x)`` of a one-element real array.

        >>> import ndplane as nd
        >>> float(nd.mean(nd.asarray([1.0, 2.0])))
        1.5
        """
        if self._ref.dtype.kind == "complex":
            raise TypeError("__float__: cannot convert a complex array to float; use real() first.")
        return self._scalar(float, "__float__")

    def __complex__(self) -> complex:
        """``complex(x)`` of a one-element array.

        >>> import ndplane as nd
        >>> complex(nd.asarray(1 + 2j))
        (1+2j)
        """
        return self._scalar(complex, "__complex__")

    def __index__(self) -> int:
        """A one-element integer array as an index (``range(n)``, list subscripts, ``hex``).

        >>> import ndplane as nd
        >>> ["a", "b", "c"][nd.asarray(2)]
        'c'
        """
        if self._ref.dtype.kind not in ("int", "uint"):
            raise TypeError(f"__index__: only integer arrays can be used as an index; got {self.dtype.name}.")
        return self._scalar(int, "__index__")

    def item(self) -> bool | int | float | complex:
        """The single element as a Python scalar.

        >>> import ndplane as nd
        >>> nd.asarray([2.5]).item()
        2.5
        """
        return self._scalar(lambda v: v, "item")

    def tolist(self) -> Any:
        """The data as nested Python lists (a scalar for 0-d arrays).

        >>> import ndplane as nd
        >>> nd.arange(4).reshape((2, 2)).tolist()
        [[0, 1], [2, 3]]
        """
        return self.to_numpy().tolist()

    def __repr__(self) -> str:
        """The values, dtype and device, as ``repr`` and ``str`` show them.

        >>> import ndplane as nd
        >>> nd.asarray([1, 2], dtype=nd.int32, device="numpy")
        Array([1, 2], dtype=int32, device='numpy:0')
        """
        body = np.array2string(
            self.to_numpy(), separator=", ", prefix="Array(", threshold=1000, edgeitems=3
        )
        return f"Array({body}, dtype={self.dtype.name}, device='{self.device}')"

    __str__ = __repr__


def check_array(name: str, x: object) -> Array:
    """``x`` if it is an ndplane Array; else the TypeError every function gives, naming ``name``."""
    if type(x) is not Array:
        raise TypeError(f"{name}: expected an ndplane array; got {type(x).__name__}.")
    return x


def _new(storage: Storage, dtype: DType, shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> Array:
    """The one constructor of Arrays."""
    a = object.__new__(Array)
    a._storage = storage
    size = _layout.prod(shape)
    # NOTE: an empty view's offset may point past the end of its buffer (x[1:] of a (1, 0)
    # array); no element is ever read through it, so hand backends an in-bounds 0.
    a._ref = Ref(
        storage.buffer, dtype, shape, strides, offset if size else 0, size,
        _layout.is_contiguous(shape, strides),
    )  # fmt: skip
    a._node = None
    a.requires_grad = False
    a.grad = None
    return a


def _new_views(storage: Storage, dtype: DType, shape: tuple[int, ...], strides: tuple[int, ...],
               offsets: Iterable[int]) -> tuple[Array, ...]:  # fmt: skip
    """Views of one layout at each of ``offsets`` (``unstack``): ``_new`` with the size and the
    contiguity worked out once, not per view."""
    size = _layout.prod(shape)
    contiguous = _layout.is_contiguous(shape, strides)
    buffer, new, ref = storage.buffer, object.__new__, Ref
    views = []
    for offset in offsets:
        a = new(Array)
        a._storage = storage
        a._ref = ref(buffer, dtype, shape, strides, offset if size else 0, size, contiguous)
        a._node = None
        a.requires_grad = False
        a.grad = None
        views.append(a)
    return tuple(views)


def _new_contiguous(storage: Storage, dtype: DType, shape: tuple[int, ...], size: int) -> Array:
    """Fast constructor for a fresh C-contiguous array (the output of every kernel)."""
    a = object.__new__(Array)
    a._storage = storage
    a._ref = Ref(storage.buffer, dtype, shape, _layout.contiguous_strides(shape), 0, size, True)
    a._node = None
    a.requires_grad = False
    a.grad = None
    return a


def detached(x: Array) -> Array:
    """The same data as a new Array outside the graph (shares storage and layout, no node)."""
    r = x._ref
    return _new(x._storage, r.dtype, r.shape, r.strides, r.offset)


def _view(base: Array, shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> Array:
    """A view of ``base`` with another layout over the same storage (O(1), no kernel)."""
    return _new(base._storage, base._ref.dtype, shape, strides, offset)
