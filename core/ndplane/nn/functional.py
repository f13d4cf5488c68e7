"""Neural-network functions (PyTorch's ``torch.nn.functional`` names), composites of core ops.

>>> import ndplane as nd
>>> import ndplane.nn.functional as F
>>> F.relu(nd.asarray([-1.0, 2.0])).tolist()
[0.0, 2.0]
"""

from __future__ import annotations

import math
import operator

from .. import _dispatch, _elementwise, _graph, _layout, _statistical
from .. import _namespace as nd
from .._array import Array
from .._indexing import take_in_range
from ..autograd.rules import _c, _scatter_into_zeros
from ..autograd.rules import unbroadcast as _unbroadcast
from ..composite import layer_norm as _layer_norm
from ..composite import log_softmax, logsumexp, softmax
from ..composite._conv import conv2d as _conv2d
from ..composite._conv import pad2d as _pad2d
from ..composite._pool import pool2d as _pool2d
from ..composite._pool import unfold2d as _unfold2d

__all__ = [
    "relu", "gelu", "sigmoid", "silu", "tanh", "softmax", "log_softmax", "logsumexp", "dropout", "linear",
    "conv2d", "max_pool2d", "avg_pool2d", "layer_norm", "batch_norm", "embedding", "one_hot",
    "mse_loss", "cross_entropy", "nll_loss", "binary_cross_entropy_with_logits", "pad2d", "unfold2d",
]  # fmt: skip


def relu(x: Array) -> Array:
    """``max(x, 0)``; one graph node whose gradient is ``g`` where the output is positive.

    >>> import ndplane as nd
    >>> nd.nn.functional.relu(nd.asarray([-1.0, 0.0, 2.0])).tolist()
    [0.0, 0.0, 2.0]
    """
    if not x.dtype.is_floating:
        return nd.maximum(x, 0)
    with nd.no_grad():
        out = nd.maximum(x, 0.0)
    return _graph.record("relu", out, (x,), (out,)) if x.requires_grad else out


def gelu(x: Array, approximate: str = "none") -> Array:
    """Gaussian error linear unit: ``x * Phi(x)``, Phi the standard normal CDF
    (``approximate="tanh"`` for the tanh form).

    The exact form is one native kernel where the backend has the ``gelu`` op, else the core's
    ``x / 2 * (1 + erf(x / sqrt 2))``; either way its gradient is ``g * (Phi(x) + x phi(x))``.

    >>> import ndplane as nd
    >>> round(float(gelu(nd.asarray(1.0))), 4)
    0.8413
    """
    if approximate == "tanh":
        return 0.5 * x * (1.0 + nd.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))
    if approximate != "none":
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh'; got {approximate!r}.")
    return _elementwise.gelu(x)


def sigmoid(x: Array) -> Array:
    """``1 / (1 + exp(-x))``, stable for large |x|; integers are computed in the default float.

    One native kernel where the backend has the ``sigmoid`` op, else the core's stable
    decomposition; either way its gradient is ``g * out * (1 - out)``.

    >>> import ndplane as nd
    >>> nd.nn.functional.sigmoid(nd.asarray([0.0, 800.0, -800.0])).tolist()
    [0.5, 1.0, 0.0]
    """
    return _elementwise.sigmoid(x)


def silu(x: Array) -> Array:
    """Sigmoid linear unit (swish): ``x * sigmoid(x)``.

    One native kernel where the backend has the ``silu`` op, else ``x`` times the sigmoid; one
    graph node either way (its gradient ``s + x s (1 - s)``, ``s`` the sigmoid).

    >>> import ndplane as nd
    >>> nd.nn.functional.silu(nd.asarray([0.0, 800.0, -800.0])).tolist()
    [0.0, 800.0, -0.0]
    """
    return _elementwise.silu(x)


def tanh(x: Array) -> Array:
    """Hyperbolic tangent.

    >>> import ndplane as nd
    >>> nd.nn.functional.tanh(nd.asarray([0.0, nd.inf])).tolist()
    [0.0, 1.0]
    """
    return nd.tanh(x)


def dropout(x: Array, p: float = 0.5, training: bool = True, generator: nd.random.Generator | None = None) -> Array:
    """Zero elements with probability ``p`` and scale the rest by ``1 / (1 - p)`` (training only).

    The mask comes from ``generator`` (a seeded :class:`ndplane.random.Generator`), so runs repeat.

    >>> import ndplane as nd
    >>> y = nd.nn.functional.dropout(nd.ones(1000), p=0.5, generator=nd.random.default_rng(0))
    >>> sorted(set(y.tolist())), 400 < int(nd.count_nonzero(y)) < 600
    ([0.0, 2.0], True)
    >>> nd.nn.functional.dropout(nd.ones(3), p=0.5, training=False).tolist()
    [1.0, 1.0, 1.0]
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: p must be in [0, 1]; got {p}.")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    gen = generator if generator is not None else _default_generator()
    keep = gen.random(x.shape, dtype=x.dtype, device=x.device) >= p
    return nd.where(keep, x * (1.0 / (1.0 - p)), 0.0)


_GENERATOR: list[nd.random.Generator] = []


def _default_generator() -> nd.random.Generator:
    if not _GENERATOR:
        _GENERATOR.append(nd.random.default_rng(0))
    return _GENERATOR[0]


def linear(x: Array, weight: Array, bias: Array | None = None) -> Array:
    """``x @ weight.T + bias`` with ``weight`` of shape (out, in).

    One graph node (not a transpose, a product and a sum): its rule is two products and a
    sum over the batch axes.

    >>> import ndplane as nd
    >>> linear(nd.asarray([[1.0, 2.0]]), nd.asarray([[1.0, 1.0], [0.0, 2.0]]), nd.asarray([0.5, 0.0])).tolist()
    [[3.5, 4.0]]
    """
    if weight.ndim != 2:
        raise ValueError(f"linear: weight must be 2-D (out_features, in_features); got shape {weight.shape}.")
    track = x.requires_grad or weight.requires_grad or (bias is not None and bias.requires_grad)
    with nd.no_grad():
        y = nd.matmul(x, weight.mT)
        # NOTE: y is fresh and private: the bias goes into it in place where the backend can
        if bias is not None and not _dispatch.binary_inplace("add", y, bias):
            y = y + bias
    if track and _graph.is_grad_enabled():
        return _graph.record("linear", y, (x, weight, bias), (x, weight))
    return y


def pad2d(x: Array, padding: int) -> Array:
    """Zero-pad the last two axes by ``padding`` on each side.

    >>> import ndplane as nd
    >>> nd.nn.functional.pad2d(nd.ones((1, 1, 1, 1)), 1)[0, 0].tolist()
    [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
    """
    return _pad2d(x, padding, padding)


def unfold2d(x: Array, kernel: tuple[int, int], stride: tuple[int, int]) -> Array:
    """Patches of (N, C, H, W) as (N, C, KH * KW, OH, OW): one strided view per kernel offset.

    >>> import ndplane as nd
    >>> img = nd.reshape(nd.arange(16.0), (1, 1, 4, 4))
    >>> p = nd.nn.functional.unfold2d(img, (2, 2), (2, 2))
    >>> p.shape, p[0, 0, :, 0, 0].tolist()
    ((1, 1, 4, 2, 2), [0.0, 1.0, 4.0, 5.0])
    """
    return _unfold2d(x, kernel, stride)


def _pair(v: int | tuple[int, int]) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else (int(v[0]), int(v[1]))


def conv2d(x: Array, weight: Array, bias: Array | None = None, stride: int | tuple[int, int] = 1,
           padding: int | tuple[int, int] = 0, dilation: int | tuple[int, int] = 1, groups: int = 1) -> Array:  # fmt: skip
    """2-D convolution (cross-correlation) of (N, C, H, W) with (O, C / groups, KH, KW).

    Unfold + matmul, or the backend's fused kernels where it declares ``fused:conv2d``.

    >>> import ndplane as nd
    >>> conv2d(nd.ones((1, 1, 3, 3)), nd.ones((2, 1, 2, 2))).shape
    (1, 2, 2, 2)
    """
    return _conv2d(x, weight, bias, stride, padding, dilation, groups)


def max_pool2d(x: Array, kernel_size: int | tuple[int, int], stride: int | tuple[int, int] | None = None) -> Array:
    """Maximum over (KH, KW) windows of (N, C, H, W) (one kernel where the backend declares
    ``fused:max_pool2d``).

    >>> import ndplane as nd
    >>> img = nd.reshape(nd.arange(16.0), (1, 1, 4, 4))
    >>> nd.nn.functional.max_pool2d(img, 2)[0, 0].tolist()
    [[5.0, 7.0], [13.0, 15.0]]
    """
    k = _pair(kernel_size)
    return _pool2d("max_pool2d", x, k, _pair(stride) if stride is not None else k)


def avg_pool2d(x: Array, kernel_size: int | tuple[int, int], stride: int | tuple[int, int] | None = None) -> Array:
    """Mean over (KH, KW) windows of (N, C, H, W) (one kernel where the backend declares
    ``fused:avg_pool2d``).

    >>> import ndplane as nd
    >>> img = nd.reshape(nd.arange(16.0), (1, 1, 4, 4))
    >>> nd.nn.functional.avg_pool2d(img, 2)[0, 0].tolist()
    [[2.5, 4.5], [10.5, 12.5]]
    """
    k = _pair(kernel_size)
    return _pool2d("avg_pool2d", x, k, _pair(stride) if stride is not None else k)


def layer_norm(x: Array, normalized_shape: tuple[int, ...] | int, weight: Array | None = None,
               bias: Array | None = None, eps: float = 1e-5) -> Array:  # fmt: skip
    """Layer normalisation over the trailing ``normalized_shape`` axes.

    >>> import ndplane as nd
    >>> y = nd.nn.functional.layer_norm(nd.asarray([[1.0, 3.0], [0.0, 10.0]]), 2)
    >>> [[round(v, 4) for v in row] for row in y.tolist()]
    [[-1.0, 1.0], [-1.0, 1.0]]
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(x.shape[-len(shape) :]) != shape:
        raise ValueError(f"layer_norm: input shape {x.shape} does not end with {shape}.")
    k = _layout.prod(shape)
    flat = nd.reshape(x, x.shape[: x.ndim - len(shape)] + (k,))
    w = nd.reshape(weight, (k,)) if weight is not None else None
    b = nd.reshape(bias, (k,)) if bias is not None else None
    return nd.reshape(_layer_norm(flat, w, b, eps), x.shape)


def batch_norm(x: Array, running_mean: Array | None, running_var: Array | None, weight: Array | None = None,
               bias: Array | None = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> Array:  # fmt: skip
    """Batch normalisation of (N, C, *spatial) over every axis but the channels (axis 1).

    >>> import ndplane as nd
    >>> y = nd.nn.functional.batch_norm(nd.asarray([[1.0, 5.0], [3.0, 5.0]]), None, None, training=True)
    >>> [[round(v, 4) for v in row] for row in y.tolist()]
    [[-1.0, 0.0], [1.0, 0.0]]
    """
    if x.ndim < 2:
        raise ValueError(f"batch_norm: x must be (N, C) or (N, C, *spatial); got shape {x.shape}.")
    axes = (0, *range(2, x.ndim))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if training:
        # NOTE: one graph node with its own rule (below) instead of the pieces' (a mean, a
        # variance and four broadcast ops, each with a reduction in its gradient). The variance
        # reuses the mean (one pass of squared deviations); the output is the inference rule with
        # the batch's statistics, one pass through a backend's fused:batch_norm (folded into x *
        # scale + shift, as PyTorch's CPU kernel folds it), else (x - mean) * scale + bias.
        with _graph.no_grad():
            n = x.size // x.shape[1]
            xf = x if x.dtype.is_floating else nd.astype(x, x.device.backend.default_dtypes["real floating"])
            mean, var = _statistical.moments(xf, axes, 0, False, "batch_norm")
            mean = nd.reshape(mean, (x.shape[1],))
            y = _dispatch.fused_batch_norm(xf, mean, var, weight, bias, eps)
            rstd = 1.0 / nd.sqrt(var + eps)
            if y is None:
                scale = rstd if weight is None else rstd * weight
                y = (xf - nd.reshape(mean, shape)) * nd.reshape(scale, shape)
                if bias is not None and bias.dtype == y.dtype:
                    y += nd.reshape(bias, shape)
                elif bias is not None:
                    y = y + nd.reshape(bias, shape)
            if running_mean is not None and running_var is not None:
                running_mean *= 1.0 - momentum
                running_mean += momentum * mean
                running_var *= 1.0 - momentum
                running_var += momentum * var * (n / max(n - 1, 1))
        if any(a is not None and a.requires_grad for a in (x, weight, bias)):
            saved = (x, mean, rstd) if weight is None else (x, mean, rstd, weight)
            _graph.record("batch_norm", y, (x, weight, bias), saved, (axes, float(eps)))
        return y
    if running_mean is None or running_var is None:
        raise ValueError("batch_norm: running statistics are required outside training.")
    fused = _dispatch.fused_batch_norm(x, running_mean, running_var, weight, bias, eps)
    if fused is not None:
        return fused
    # NOTE: the statistics are constants here, so fold them (and the affine part) into one
    # scale and one shift per channel, as PyTorch's inference kernel does: two passes over x
    # (the add in place when no gradient is recorded) instead of four.
    scale = 1.0 / nd.sqrt(running_var + eps)
    if weight is not None:
        scale = scale * weight
    shift = -running_mean * scale if bias is None else bias - running_mean * scale
    y = x * nd.reshape(scale, shape)
    if y.requires_grad:
        return y + nd.reshape(shift, shape)
    y += nd.reshape(shift, shape)
    return y


def _batch_norm_vjp(g: Array, node: _graph.Node) -> tuple[Array | None, ...]:
    """Training-mode ``batch_norm``: with ``d = x - mean`` over the batch and spatial axes,
    ``gbias = sum(g)``, ``gweight = sum(g * d) * rstd`` and ``gx = ((g - gbias / n) - d * (rstd *
    gweight / n)) * weight * rstd`` per channel (the batch statistics depend on ``x``). The two
    sums and ``gx`` are one pass each through a backend's ``fused:batch_norm_grad`` (as
    PyTorch's CPU kernel), else these broadcast ops; the same rule under create_graph."""
    saved = node.saved_values()
    x, mean, rstd = saved[:3]
    weight = saved[3] if len(saved) > 3 else None
    axes, eps = node.params
    ix, iw, ib = node.inputs
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if _graph.is_grad_enabled():  # create_graph: the statistics' dependence on x differentiated too
        mean, var = _statistical.moments(x, axes, 0, False, "batch_norm")
        mean = nd.reshape(mean, (x.shape[1],))
        rstd = 1.0 / nd.sqrt(var + eps)
    n = x.size // x.shape[1] if x.shape[1] else 0
    # NOTE: a broadcast cotangent (sum's gradient) copied once here, not by each fused pass (a
    # cotangent in the graph, under create_graph, stays as it is: compact records nothing)
    if not g.requires_grad:
        g = _dispatch.compact(g)
    sums = _dispatch.fused_batch_norm_grad(x, g, mean)
    d = None
    if sums is None:
        d = x - nd.reshape(mean, shape)
        gb, dot = nd.sum(g, axis=axes), nd.sum(g * d, axis=axes)
    else:
        gb, dot = sums[0], sums[1]
    gw = dot * rstd if n else dot  # an empty batch: sums of none, 0 (its statistics are NaN)
    gx = None
    if ix is not None:
        c0, c1, c2 = gb / n, rstd * gw / n, rstd if weight is None else rstd * weight
        gx = _dispatch.fused_batch_norm_grad(x, g, mean, nd.stack((c0, c1, c2)))
        if gx is None:
            d = x - nd.reshape(mean, shape) if d is None else d
            gx = ((g - nd.reshape(c0, shape)) - d * nd.reshape(c1, shape)) * nd.reshape(c2, shape)
    return gx, (gw if iw is not None else None), (gb if ib is not None else None)


_graph.RULES["batch_norm"] = _batch_norm_vjp


def embedding(indices: Array, weight: Array) -> Array:
    """Rows of ``weight`` (num, dim) picked by integer ``indices`` of any shape.

    >>> import ndplane as nd
    >>> weight = nd.asarray([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    >>> nd.nn.functional.embedding(nd.asarray([2, 0]), weight).tolist()
    [[4.0, 5.0], [0.0, 1.0]]
    """
    flat = nd.take(weight, nd.reshape(indices, (-1,)), axis=0)
    return nd.reshape(flat, indices.shape + (weight.shape[1],))


def one_hot(labels: Array, num_classes: int, dtype: nd.DType | None = None) -> Array:
    """Integer ``labels`` of any shape as 0/1 rows of ``num_classes``: shape ``labels.shape +
    (num_classes,)``, in ``dtype`` (the device's default float if None). Labels outside
    ``[0, num_classes)`` raise IndexError, as PyTorch's do.

    One write of the zeros and one scatter of a 1 per label where the device scatters the dtype
    natively (not a comparison with every class and a cast: 2.2x the time for 1000 x 1000).

    >>> import ndplane as nd
    >>> one_hot(nd.asarray([2, 0]), 3).tolist()
    [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    """
    if not isinstance(labels, Array) or labels.dtype.kind not in ("int", "uint"):
        got = labels.dtype.name if isinstance(labels, Array) else type(labels).__name__
        raise TypeError(f"one_hot: labels must be an integer ndplane array; got {got}.")
    c = operator.index(num_classes)
    if c < 0:
        raise ValueError(f"one_hot: num_classes must be >= 0; got {c}.")
    dev = labels.device
    dt = dtype or dev.backend.default_dtypes["real floating"]
    n = labels.size
    if dt is nd.bool or _dispatch._kernel_path(dev, "scatter_add", dt) != _dispatch.NATIVE:
        _check_classes("one_hot", "label", labels, c)
        classes = nd.arange(c, dtype=labels.dtype, device=dev)
        return nd.astype(nd.expand_dims(labels, axis=-1) == classes, dt)
    out = nd.zeros((1, n * c), dtype=dt, device=dev)
    if n:
        flat = _flat_targets(nd.reshape(labels, (n,)), (n, c), "one_hot", "label")
        _dispatch.scatter_add_last(out, flat, nd.ones((1, n), dtype=dt, device=dev))
    return nd.reshape(out, (*labels.shape, c))


def _reduce(loss: Array, reduction: str, name: str) -> Array:
    if reduction == "mean":
        return nd.mean(loss)
    if reduction == "sum":
        return nd.sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{name}: reduction must be 'mean', 'sum' or 'none'; got {reduction!r}.")


def mse_loss(input: Array, target: Array | float, reduction: str = "mean") -> Array:
    """Mean squared error.

    One graph node for the mean and the sum: its gradient is ``2 * (input - target) * g``
    (divided by N for the mean), one kernel instead of the chain through the square.

    >>> import ndplane as nd
    >>> float(mse_loss(nd.asarray([1.0, 3.0]), nd.asarray([0.0, 0.0])))
    5.0
    """
    track = (type(input) is Array and input.requires_grad) or (type(target) is Array and target.requires_grad)
    if reduction == "none" or not track or not _graph.is_grad_enabled():
        return _squared_error(input - target, reduction)
    with nd.no_grad():
        d = input - target
        loss = _squared_error(d, reduction)
    # NOTE: the operands are saved too (and version-checked, as PyTorch does): only a recorded
    # backward (create_graph) reads them, to differentiate through d = input - target.
    operands = (input, target)
    saved = (d, *(x for x in operands if type(x) is Array))
    scalars = tuple(None if type(x) is Array else x for x in operands)
    return _graph.record("mse_loss", loss, operands, saved, (reduction, scalars))


def _squared_error(d: Array, reduction: str) -> Array:
    # NOTE: the sum of squares of real floating differences in one pass (the backend's
    # fused:sumsq, else square and sum) instead of writing d * d and reading it again.
    if reduction not in ("mean", "sum") or d.dtype.kind != "float":
        return _reduce(d * d, reduction, "mse_loss")
    total = _statistical.sum_squares(d, None, False, "mse_loss")
    if reduction == "sum":
        return total
    return total / d.size if d.size else nd.mean(d)  # an empty batch: nan, as the mean of none


def _mse_vjp(g: Array, node: _graph.Node) -> tuple[Array | None, Array | None]:
    d, *arrays = node.saved_values()
    reduction, scalars = node.params
    if _graph.is_grad_enabled():  # a recorded backward: d's own dependence on the operands counts
        a, b = (s if s is not None else arrays.pop(0) for s in scalars)
        d = a - b
    ia, ib = node.inputs
    scale = g * (2.0 / d.size) if reduction == "mean" and d.size else g * 2.0
    gd = _c(d) * scale
    return (_unbroadcast(gd, ia.shape) if ia is not None else None,
            _unbroadcast(-gd, ib.shape) if ib is not None else None)  # fmt: skip


def nll_loss(log_probs: Array, target: Array, reduction: str = "mean") -> Array:
    """Negative log-likelihood of integer ``target`` (N,) under ``log_probs`` (N, C).

    Targets outside [0, C) raise IndexError. One graph node: its gradient is ``-g`` (``-g / N``
    for the mean) at each row's target and zero elsewhere.

    >>> import ndplane as nd
    >>> float(nll_loss(nd.log(nd.asarray([[0.5, 0.5], [0.25, 0.75]])), nd.asarray([0, 1])))
    0.490...
    """
    _check_nll(log_probs, target, reduction)
    if not (log_probs.requires_grad and _graph.is_grad_enabled()):
        return _nll(log_probs, target, reduction)
    with _graph.no_grad():
        loss = _nll(log_probs, target, reduction)
    return _graph.record("nll_loss", loss, (log_probs,), (target,), (log_probs.shape, reduction))


def _check_nll(log_probs: Array, target: Array, reduction: str) -> None:
    if log_probs.ndim != 2 or target.shape != log_probs.shape[:1]:
        raise ValueError(f"nll_loss: expected (N, C) log-probabilities and (N,) targets; got "
                         f"{log_probs.shape} and {target.shape}.")  # fmt: skip
    if target.dtype.kind not in ("int", "uint"):
        raise TypeError(f"nll_loss: targets must be integer class indices; got {target.dtype.name}.")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"nll_loss: reduction must be 'mean', 'sum' or 'none'; got {reduction!r}.")


def _check_classes(name: str, what: str, target: Array, c: int) -> None:
    """IndexError naming the first bound of integer ``target`` outside [0, c): one fused minmax."""
    if target.size:
        lo, hi = _dispatch.bounds(target)
        if lo < 0 or hi >= c:
            raise IndexError(f"{name}: {what} {lo if lo < 0 else hi} is out of bounds for {c} classes.")


def _flat_targets(target: Array, shape: tuple[int, ...], name: str = "nll_loss", what: str = "target") -> Array:
    """:func:`_positions` of ``target`` after checking that each lies in [0, C)."""
    _check_classes(name, what, target, shape[1])
    return _positions(target, shape)


def _positions(target: Array, shape: tuple[int, ...]) -> Array:
    # NOTE: row i's class as a position in the flattened (N*C,) log-probabilities, so that the
    # loss is one gather of N values (and its gradient one scatter), never an (N, C) one-hot.
    n, c = shape
    index = target.device.backend.default_dtypes["indexing"]
    idx = target if target.dtype is index else nd.astype(target, index)
    return idx + nd.arange(0, n * c, c, dtype=index, device=target.device)


def _nll(log_probs: Array, target: Array, reduction: str) -> Array:
    """The loss of ``target`` (shapes checked; bounds checked here), recording no graph: the
    backend's ``fused:nll`` (one call; its IndexError becomes the message below), else the gather
    of N values and their sum."""
    n = log_probs.shape[0]
    backend = log_probs.device.backend
    if "fused:nll" in backend.capabilities and log_probs.dtype.kind == "float" and (n or reduction == "none"):
        try:
            return _dispatch.fused_nll(log_probs, target, reduction)
        except IndexError as e:
            error = e
        _check_classes("nll_loss", "target", target, log_probs.shape[1])
        raise error
    picked = take_in_range(nd.reshape(log_probs, (-1,)), _flat_targets(target, log_probs.shape), 0)
    if reduction == "none":
        return -picked
    total = nd.sum(picked)
    if reduction == "sum":
        return -total
    # NOTE: one scaled total rather than a negation and a mean of N values
    return total * (-1.0 / n) if n else nd.mean(picked)  # an empty batch: nan


def _nll_vjp(g: Array, node: _graph.Node) -> tuple[Array]:
    (target,) = node.saved_values()
    shape, reduction = node.params
    n, c = shape
    scale = g / n if reduction == "mean" and n else g
    picked = nd.broadcast_to(-scale, (n,))
    return (nd.reshape(_scatter_into_zeros(picked, _positions(target, shape), (n * c,), 0), shape),)


def cross_entropy(logits: Array, target: Array, reduction: str = "mean") -> Array:
    """Cross entropy of integer ``target`` (N,) given unnormalised ``logits`` (N, C).

    One graph node: its gradient is ``softmax(logits) * g`` less ``g`` at each row's target
    (divided by N for the mean), instead of the chain of log_softmax, the gather and the sums.

    >>> import ndplane as nd
    >>> round(float(cross_entropy(nd.asarray([[2.0, 0.0]]), nd.asarray([0]))), 4)
    0.1269
    """
    if reduction == "none" or not logits.requires_grad or logits.ndim != 2 or not _graph.is_grad_enabled():
        return nll_loss(log_softmax(logits, axis=1), target, reduction)
    _check_nll(logits, target, reduction)
    with nd.no_grad():
        logp = log_softmax(logits, axis=1)
        loss = _nll(logp, target, reduction)
    return _graph.record("cross_entropy", loss, (logits,), (logp, target, logits), reduction)


def _relu_vjp(g: Array, node: _graph.Node) -> tuple[Array]:
    (out,) = node.saved_values()
    return (nd.where(out > 0, g, 0.0),)


def _linear_vjp(g: Array, node: _graph.Node) -> tuple[Array | None, Array | None, Array | None]:
    x, w = node.saved_values()
    ix, iw, ib = node.inputs
    g2 = g if g.ndim == 2 else nd.reshape(g, (-1, w.shape[0]))
    gx = nd.matmul(g, _c(w)) if ix is not None else None
    gw = nd.matmul(g2.mT, _c(x if x.ndim == 2 else nd.reshape(x, (-1, w.shape[1])))) if iw is not None else None
    gb = _unbroadcast(g, ib.shape) if ib is not None else None
    return gx, gw, gb


def _cross_entropy_vjp(g: Array, node: _graph.Node) -> tuple[Array]:
    logp, target, logits = node.saved_values()
    if _graph.is_grad_enabled():  # a recorded backward: logp's own dependence on the logits counts
        logp = log_softmax(logits, axis=1)
    flat = _positions(target, logp.shape)
    scale = g / logp.shape[0] if node.params == "mean" else g
    grad, picked = nd.exp(logp) * scale, nd.broadcast_to(-scale, flat.shape)
    if _graph.is_grad_enabled():
        return (grad + nd.reshape(_scatter_into_zeros(picked, flat, (grad.size,), 0), grad.shape),)
    _dispatch.scatter_add_last(nd.reshape(grad, (1, -1)), flat, nd.reshape(picked, (1, -1)))
    return (grad,)


_graph.RULES.update({"relu": _relu_vjp, "cross_entropy": _cross_entropy_vjp, "linear": _linear_vjp,
                     "mse_loss": _mse_vjp, "nll_loss": _nll_vjp})  # fmt: skip


def binary_cross_entropy_with_logits(logits: Array, target: Array | float, reduction: str = "mean") -> Array:
    """Binary cross entropy of ``target`` in [0, 1] given ``logits``, computed stably.

    Elementwise ``max(x, 0) - x t + log1p(exp(-|x|))``, one kernel where the backend has the
    ``bce_with_logits`` op (else its decomposition), then the reduction. Its gradient is
    ``sigmoid(x) - t`` for the logits and ``-x`` for the targets.

    >>> import ndplane as nd
    >>> loss = nd.nn.functional.binary_cross_entropy_with_logits(nd.asarray([0.0, 800.0]), nd.asarray([1.0, 1.0]))
    >>> round(float(loss), 6)  # (log 2 + 0) / 2
    0.346574
    """
    return _reduce(_elementwise.bce_with_logits(logits, target), reduction, "binary_cross_entropy_with_logits")


