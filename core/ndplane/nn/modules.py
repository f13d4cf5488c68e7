"""Module, Parameter and the layers, in PyTorch's shape.

>>> import ndplane as nd
>>> from ndplane import nn
>>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
>>> model(nd.ones((3, 4))).shape, sum(p.size for p in model.parameters())
((3, 2), 58)
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from .. import _checkpoints
from .. import _namespace as nd
from .._array import Array, check_array
from . import functional as F
from . import init

__all__ = [
    "Parameter", "Module", "Sequential", "Linear", "Conv2d", "MaxPool2d", "AvgPool2d", "ReLU", "GELU",
    "Sigmoid", "SiLU", "Tanh", "Softmax", "Dropout", "LayerNorm", "BatchNorm1d", "Embedding", "Flatten",
]  # fmt: skip


def Parameter(data: Array, requires_grad: bool = True) -> Array:
    """A leaf array that a :class:`Module` registers as a parameter when assigned to it.

    >>> import ndplane as nd
    >>> p = nd.nn.Parameter(nd.zeros(3))
    >>> p.requires_grad, p.is_leaf
    (True, True)
    """
    check_array("Parameter", data)
    p = data.detach()
    p.requires_grad = requires_grad
    return p


class Module:
    """Base class of layers and models: parameters, buffers, submodules, train/eval, state_dict.

    Assigning a :func:`Parameter` or a Module to an attribute registers it:

    >>> import ndplane as nd
    >>> class Scale(nd.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.scale = nd.nn.Parameter(nd.full(2, 3.0))
    ...     def forward(self, x):
    ...         return x * self.scale
    >>> m = Scale()
    >>> m(nd.asarray([1.0, 2.0])).tolist(), [name for name, _ in m.named_parameters()]
    ([3.0, 6.0], ['scale'])
    """

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        if params is None:
            raise AttributeError("Module.__init__() must run before attributes are assigned (call super().__init__()).")
        for table in (self._parameters, self._buffers, self._modules):
            table.pop(name, None)
        if isinstance(value, Module):
            self._modules[name] = value
        elif type(value) is Array and value.requires_grad and value.is_leaf:
            params[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        for table in ("_parameters", "_buffers", "_modules"):
            d = self.__dict__.get(table)
            if d is not None and name in d:
                return d[name]
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}.")

    def __delattr__(self, name: str) -> None:
        for table in (self._parameters, self._buffers, self._modules):
            if name in table:
                del table[name]
                return
        object.__delattr__(self, name)

    def register_buffer(self, name: str, value: Array | None) -> None:
        """Register state that is saved in ``state_dict`` but is not a parameter (running stats).

        >>> import ndplane as nd
        >>> m = nd.nn.Module()
        >>> m.register_buffer("steps", nd.zeros(()))
        >>> list(m.state_dict()), list(m.parameters())
        (['steps'], [])
        """
        self._buffers[name] = value

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """What the module computes; ``module(x)`` calls it. Every layer defines its own.

        >>> import ndplane as nd
        >>> nd.nn.ReLU().forward(nd.asarray([-1.0, 1.0])).tolist()
        [0.0, 1.0]
        """
        raise NotImplementedError(f"{type(self).__name__}.forward is not defined.")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # -- traversal -------------------------------------------------------------

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """(dotted name, module) for this module ("") and every submodule, depth first.

        >>> import ndplane as nd
        >>> m = nd.nn.Sequential(nd.nn.Linear(2, 3), nd.nn.ReLU(), nd.nn.Linear(3, 1))
        >>> [name for name, _ in m.named_modules()]
        ['', '0', '1', '2']
        """
        yield prefix, self
        for name, m in self._modules.items():
            yield from m.named_modules(f"{prefix}.{name}" if prefix else name)

    def modules(self) -> Iterator[Module]:
        """This module and every submodule, depth first.

        >>> import ndplane as nd
        >>> m = nd.nn.Sequential(nd.nn.Linear(2, 3), nd.nn.ReLU(), nd.nn.Linear(3, 1))
        >>> [type(x).__name__ for x in m.modules()]
        ['Sequential', 'Linear', 'ReLU', 'Linear']
        """
        return (m for _, m in self.named_modules())

    def children(self) -> Iterator[Module]:
        """The direct submodules.

        >>> import ndplane as nd
        >>> m = nd.nn.Sequential(nd.nn.Linear(2, 3), nd.nn.ReLU(), nd.nn.Linear(3, 1))
        >>> [type(x).__name__ for x in m.children()]
        ['Linear', 'ReLU', 'Linear']
        """
        return iter(self._modules.values())

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Array]]:
        """(name, parameter) pairs, each parameter once.

        >>> import ndplane as nd
        >>> m = nd.nn.Sequential(nd.nn.Linear(2, 3), nd.nn.ReLU(), nd.nn.Linear(3, 1))
        >>> [(name, p.shape) for name, p in m.named_parameters()]
        [('0.weight', (3, 2)), ('0.bias', (3,)), ('2.weight', (1, 3)), ('2.bias', (1,))]
        """
        seen: set[int] = set()
        mods = self.named_modules(prefix) if recurse else iter([(prefix, self)])
        for mod_prefix, m in mods:
            for name, p in m._parameters.items():
                if id(p) not in seen:
                    seen.add(id(p))
                    yield (f"{mod_prefix}.{name}" if mod_prefix else name), p

    def parameters(self, recurse: bool = True) -> Iterator[Array]:
        """The parameters (what an optimizer takes), each once.

        >>> import ndplane as nd
        >>> m = nd.nn.Sequential(nd.nn.Linear(2, 3), nd.nn.ReLU(), nd.nn.Linear(3, 1))
        >>> sum(p.size for p in m.parameters())
        13
        """
        return (p for _, p in self.named_parameters(recurse=recurse))

    def named_buffers(self, prefix: str = "") -> Iterator[tuple[str, Array]]:
        """(name, buffer) pairs of the registered buffers that are not None.

        >>> import ndplane as nd
        >>> [name for name, _ in nd.nn.BatchNorm1d(2).named_buffers()]
        ['running_mean', 'running_var']
        """
        for mod_prefix, m in self.named_modules(prefix):
            for name, b in m._buffers.items():
                if b is not None:
                    yield (f"{mod_prefix}.{name}" if mod_prefix else name), b

    # -- modes and devices -----------------------------------------------------

    def train(self, mode: bool = True) -> Module:
        """Set training mode (dropout active, batch statistics) on every submodule; returns self.

        >>> import ndplane as nd
        >>> m = nd.nn.Sequential(nd.nn.Linear(2, 3), nd.nn.ReLU(), nd.nn.Linear(3, 1))
        >>> m.train(False) is m, m.training, m[0].training
        (True, False, False)
        """
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> Module:
        """``train(False)``: dropout off, running statistics used; returns self.

        >>> import ndplane as nd
        >>> drop = nd.nn.Dropout(0.5).eval()
        >>> drop.training, drop(nd.ones(3)).tolist()
        (False, [1.0, 1.0, 1.0])
        """
        return self.train(False)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the parameters' gradients (to None, or to zeros with ``set_to_none=False``).

        >>> import ndplane as nd
        >>> lin = nd.nn.Linear(2, 1)
        >>> nd.sum(lin(nd.ones((1, 2)))).backward()
        >>> lin.weight.grad is None
        False
        >>> lin.zero_grad()
        >>> lin.weight.grad is None
        True
        """
        for p in self.parameters():
            p.grad = None if set_to_none else (p.grad * 0 if p.grad is not None else None)

    def to_device(self, device: Any) -> Module:
        """Move every parameter and buffer to ``device`` (in place on the module; returns it).

        >>> import ndplane as nd
        >>> nd.nn.Linear(2, 1, device="numpy").to_device("numpy:1").weight.device
        Device('numpy:1')
        """
        for m in self.modules():
            for name, p in list(m._parameters.items()):
                m._parameters[name] = Parameter(p.to_device(device), p.requires_grad)
            for name, b in list(m._buffers.items()):
                if b is not None:
                    m._buffers[name] = b.to_device(device)
        return self

    # -- state -----------------------------------------------------------------

    def state_dict(self) -> OrderedDict[str, Array]:
        """Parameters and buffers by dotted name (detached; they share memory with the module).

        >>> import ndplane as nd
        >>> {name: a.shape for name, a in nd.nn.Linear(2, 1).state_dict().items()}
        {'weight': (1, 2), 'bias': (1,)}
        """
        out: OrderedDict[str, Array] = OrderedDict()
        for name, p in self.named_parameters():
            out[name] = p.detach()
        for name, b in self.named_buffers():
            out[name] = b.detach()
        return out

    def load_state_dict(self, state: dict[str, Array], strict: bool = True) -> None:
        """Copy values from ``state`` into the module's parameters and buffers, in place.

        >>> import ndplane as nd
        >>> a, b = nd.nn.Linear(2, 1), nd.nn.Linear(2, 1)
        >>> b.load_state_dict(a.state_dict())
        >>> bool(nd.all(a.weight == b.weight))
        True
        """
        own = dict(self.named_parameters())
        own.update(self.named_buffers())
        missing = [k for k in own if k not in state]
        unexpected = [k for k in state if k not in own]
        if strict and (missing or unexpected):
            raise KeyError(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}.")
        with nd.no_grad():
            for name, target in own.items():
                if name not in state:
                    continue
                value = nd.asarray(state[name], device=target.device)
                if value.shape != target.shape:
                    raise ValueError(
                        f"load_state_dict: {name} has shape {value.shape}, the module expects {target.shape}."
                    )
                target[...] = nd.astype(value, target.dtype)

    def save(self, path: _checkpoints.PathLike, metadata: dict[str, str] | None = None) -> None:
        """Write ``state_dict()`` to a safetensors file (see :func:`ndplane.save`).

        PyTorch reads it with ``safetensors.torch.load_file`` into the same architecture.

        >>> import ndplane as nd, os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, "model.safetensors")
        >>> nd.nn.Linear(3, 2).save(path)
        >>> sorted(nd.load(path))
        ['bias', 'weight']
        >>> tmp.cleanup()
        """
        _checkpoints.save(path, self.state_dict(), metadata)

    def load(self, path: _checkpoints.PathLike, strict: bool = True) -> Module:
        """Load a safetensors checkpoint into this module's parameters and buffers, in place.

        The counterpart of :meth:`save`, and of PyTorch's
        ``safetensors.torch.save_file(model.state_dict(), path)`` for the same architecture.
        Values are copied into the existing arrays (keeping their devices and dtypes), as
        :meth:`load_state_dict` does; ``strict`` likewise. Returns the module.

        >>> import ndplane as nd, os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, "model.safetensors")
        >>> a, b = nd.nn.Linear(3, 2), nd.nn.Linear(3, 2)
        >>> a.save(path)
        >>> bool(nd.all(b.load(path).weight == a.weight))
        True
        >>> tmp.cleanup()
        """
        devices = {a.device for a in self.state_dict().values()}
        # NOTE: read straight onto the module's device when it has one, to copy only once.
        state = _checkpoints.load(path, devices.pop() if len(devices) == 1 else None)
        try:
            self.load_state_dict(state, strict)
        except (KeyError, ValueError) as exc:
            raise type(exc)(f"Module.load: {path}: {exc.args[0]}") from None
        return self

    def extra_repr(self) -> str:
        """The text inside the parentheses of ``repr(module)``; layers override it.

        >>> import ndplane as nd
        >>> nd.nn.Linear(2, 1).extra_repr()
        'in_features=2, out_features=1, bias=True'
        """
        return ""

    def __repr__(self) -> str:
        lines = [f"  ({name}): " + repr(m).replace("\n", "\n  ") for name, m in self._modules.items()]
        head = f"{type(self).__name__}({self.extra_repr()}"
        return head + ("\n" + "\n".join(lines) + "\n)" if lines else ")")


class Sequential(Module):
    """Modules applied in order.

    >>> import ndplane as nd
    >>> m = nd.nn.Sequential(nd.nn.Linear(2, 3), nd.nn.ReLU())
    >>> m(nd.ones((4, 2))).shape, len(m), type(m[1]).__name__
    ((4, 3), 2, 'ReLU')
    """

    def __init__(self, *modules: Module) -> None:
        super().__init__()
        for i, m in enumerate(modules):
            setattr(self, str(i), m)

    def __getitem__(self, i: int) -> Module:
        return list(self._modules.values())[i]

    def __len__(self) -> int:
        return len(self._modules)

    def forward(self, x: Any) -> Any:
        for m in self._modules.values():
            x = m(x)
        return x


def _empty(shape: tuple[int, ...], device: Any, dtype: Any) -> Array:
    return Parameter(nd.zeros(shape, device=device, dtype=dtype))


class Linear(Module):
    """``y = x @ weight.T + bias``, initialised like PyTorch (Kaiming uniform).

    >>> import ndplane as nd
    >>> lin = nd.nn.Linear(3, 2, generator=nd.random.default_rng(0))
    >>> lin(nd.ones((5, 3))).shape, lin.weight.shape, lin.bias.shape
    ((5, 2), (2, 3), (2,))
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None, generator: nd.random.Generator | None = None) -> None:  # fmt: skip
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = _empty((out_features, in_features), device, dtype)
        init.kaiming_uniform_(self.weight, a=math.sqrt(5), generator=generator)
        if bias:
            self.bias: Array | None = _empty((out_features,), device, dtype)
            bound = 1 / math.sqrt(in_features) if in_features else 0.0
            init.uniform_(self.bias, -bound, bound, generator)
        else:
            self.bias = None

    def forward(self, x: Array) -> Array:
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Conv2d(Module):
    """2-D convolution over (N, C, H, W) inputs (unfold + matmul).

    >>> import ndplane as nd
    >>> conv = nd.nn.Conv2d(1, 4, 3, padding=1)
    >>> conv(nd.ones((2, 1, 5, 5))).shape, conv.weight.shape
    ((2, 4, 5, 5), (4, 1, 3, 3))
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, int],
                 stride: int | tuple[int, int] = 1, padding: int | tuple[int, int] = 0, bias: bool = True,
                 device: Any = None, dtype: Any = None, generator: nd.random.Generator | None = None,
                 dilation: int | tuple[int, int] = 1, groups: int = 1) -> None:  # fmt: skip
        super().__init__()
        kh, kw = F._pair(kernel_size)
        if groups < 1 or in_channels % groups or out_channels % groups:
            raise ValueError(f"Conv2d: groups must divide in_channels and out_channels; got {groups}.")
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        in_channels //= groups
        self.weight = _empty((out_channels, in_channels, kh, kw), device, dtype)
        init.kaiming_uniform_(self.weight, a=math.sqrt(5), generator=generator)
        if bias:
            self.bias: Array | None = _empty((out_channels,), device, dtype)
            bound = 1 / math.sqrt(in_channels * kh * kw)
            init.uniform_(self.bias, -bound, bound, generator)
        else:
            self.bias = None

    def forward(self, x: Array) -> Array:
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self) -> str:
        o, c, kh, kw = self.weight.shape
        extra = (f", dilation={self.dilation}" if self.dilation != 1 else "") + (
            f", groups={self.groups}" if self.groups != 1 else "")
        return f"{c * self.groups}, {o}, kernel_size=({kh}, {kw}), stride={self.stride}, padding={self.padding}{extra}"


class MaxPool2d(Module):
    """Max pooling over (KH, KW) windows.

    >>> import ndplane as nd
    >>> nd.nn.MaxPool2d(2)(nd.reshape(nd.arange(16.0), (1, 1, 4, 4)))[0, 0].tolist()
    [[5.0, 7.0], [13.0, 15.0]]
    """

    def __init__(self, kernel_size: int | tuple[int, int], stride: int | tuple[int, int] | None = None) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride

    def forward(self, x: Array) -> Array:
        return F.max_pool2d(x, self.kernel_size, self.stride)


class AvgPool2d(MaxPool2d):
    """Average pooling over (KH, KW) windows.

    >>> import ndplane as nd
    >>> nd.nn.AvgPool2d(2)(nd.reshape(nd.arange(16.0), (1, 1, 4, 4)))[0, 0].tolist()
    [[2.5, 4.5], [10.5, 12.5]]
    """

    def forward(self, x: Array) -> Array:
        return F.avg_pool2d(x, self.kernel_size, self.stride)


class ReLU(Module):
    """``max(x, 0)``.

    >>> import ndplane as nd
    >>> nd.nn.ReLU()(nd.asarray([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    """

    def forward(self, x: Array) -> Array:
        return F.relu(x)


class GELU(Module):
    """Gaussian error linear unit.

    >>> import ndplane as nd
    >>> nd.nn.GELU()(nd.asarray([0.0, 10.0])).tolist()
    [0.0, 10.0]
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, x: Array) -> Array:
        return F.gelu(x, self.approximate)


class Sigmoid(Module):
    """Logistic sigmoid.

    >>> import ndplane as nd
    >>> nd.nn.Sigmoid()(nd.asarray([0.0])).tolist()
    [0.5]
    """

    def forward(self, x: Array) -> Array:
        return F.sigmoid(x)


class SiLU(Module):
    """Sigmoid linear unit (swish): ``x * sigmoid(x)``.

    >>> import ndplane as nd
    >>> nd.nn.SiLU()(nd.asarray([0.0])).tolist()
    [0.0]
    """

    def forward(self, x: Array) -> Array:
        return F.silu(x)


class Tanh(Module):
    """Hyperbolic tangent.

    >>> import ndplane as nd
    >>> nd.nn.Tanh()(nd.asarray([0.0])).tolist()
    [0.0]
    """

    def forward(self, x: Array) -> Array:
        return F.tanh(x)


class Softmax(Module):
    """Softmax along ``dim``.

    >>> import ndplane as nd
    >>> nd.nn.Softmax(dim=-1)(nd.asarray([[0.0, 0.0], [0.0, 0.0]])).tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Array) -> Array:
        return F.softmax(x, axis=self.dim)


class Dropout(Module):
    """Zero elements with probability ``p`` in training mode (seeded generator).

    >>> import ndplane as nd
    >>> drop = nd.nn.Dropout(0.5, generator=nd.random.default_rng(0))
    >>> sorted(set(drop(nd.ones(100)).tolist())), drop.eval()(nd.ones(2)).tolist()
    ([0.0, 2.0], [1.0, 1.0])
    """

    def __init__(self, p: float = 0.5, generator: nd.random.Generator | None = None) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: p must be in [0, 1]; got {p}.")
        self.p, self.generator = p, generator

    def forward(self, x: Array) -> Array:
        return F.dropout(x, self.p, self.training, self.generator)


class LayerNorm(Module):
    """Layer normalisation over the trailing ``normalized_shape`` axes, with affine parameters.

    >>> import ndplane as nd
    >>> y = nd.nn.LayerNorm(2)(nd.asarray([[1.0, 3.0]]))
    >>> [round(v, 4) for v in y[0].tolist()]
    [-1.0, 1.0]
    """

    def __init__(self, normalized_shape: int | tuple[int, ...], eps: float = 1e-5, elementwise_affine: bool = True,
                 device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        if elementwise_affine:
            self.weight: Array | None = Parameter(nd.ones(self.normalized_shape, device=device, dtype=dtype))
            self.bias: Array | None = Parameter(nd.zeros(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.weight = self.bias = None

    def forward(self, x: Array) -> Array:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)


class BatchNorm1d(Module):
    """Batch normalisation of (N, C) or (N, C, L) with running statistics.

    >>> import ndplane as nd
    >>> bn = nd.nn.BatchNorm1d(1)
    >>> y = bn(nd.asarray([[1.0], [3.0]]))
    >>> [round(v, 4) for v in y[:, 0].tolist()], bn.running_mean.tolist()
    ([-1.0, 1.0], [0.2])
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = True,
                 device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = Parameter(nd.ones(num_features, device=device, dtype=dtype)) if affine else None
        self.bias = Parameter(nd.zeros(num_features, device=device, dtype=dtype)) if affine else None
        self.register_buffer("running_mean", nd.zeros(num_features, device=device, dtype=dtype))
        self.register_buffer("running_var", nd.ones(num_features, device=device, dtype=dtype))

    def forward(self, x: Array) -> Array:
        if x.ndim not in (2, 3):
            raise ValueError(f"BatchNorm1d: expected a 2-D or 3-D input; got shape {x.shape}.")
        return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, self.training,
                            self.momentum, self.eps)  # fmt: skip


class Embedding(Module):
    """A lookup table of ``num_embeddings`` vectors of size ``embedding_dim``.

    >>> import ndplane as nd
    >>> emb = nd.nn.Embedding(10, 3)
    >>> emb(nd.asarray([[1, 2], [1, 9]])).shape, bool(nd.all(emb(nd.asarray(1)) == emb.weight[1]))
    ((2, 2, 3), True)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, device: Any = None, dtype: Any = None,
                 generator: nd.random.Generator | None = None) -> None:  # fmt: skip
        super().__init__()
        self.weight = _empty((num_embeddings, embedding_dim), device, dtype)
        init.normal_(self.weight, 0.0, 1.0, generator)

    def forward(self, indices: Array) -> Array:
        return F.embedding(indices, self.weight)


class Flatten(Module):
    """Flatten axes ``start_dim`` to ``end_dim`` into one.

    >>> import ndplane as nd
    >>> nd.nn.Flatten()(nd.zeros((2, 3, 4))).shape
    (2, 12)
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Array) -> Array:
        s = self.start_dim % x.ndim
        e = self.end_dim % x.ndim
        return nd.reshape(x, x.shape[:s] + (-1,) + x.shape[e + 1 :])
