"""Creation functions (Array API chapter)."""

from __future__ import annotations

import math
import operator
import pickle
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from . import _dispatch, _dtypes, _layout, _manipulation
from ._array import Array, check_array
from ._devices import Device, as_device
from ._dtypes import DType, as_dtype

__all__ = [
    "asarray", "empty", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full",
    "full_like", "arange", "linspace", "eye", "meshgrid", "tril", "triu",
]  # fmt: skip

ShapeLike = int | Sequence[int]


def _shape(shape: ShapeLike, name: str) -> tuple[int, ...]:
    try:
        dims = (operator.index(cast(int, shape)),) if not isinstance(shape, (tuple, list)) else tuple(
            operator.index(n) for n in shape
        )
    except TypeError:
        raise TypeError(f"{name}: shape must be an int or a tuple of ints; got {shape!r}.") from None
    if any(n < 0 for n in dims):
        raise ValueError(f"{name}: negative dimensions are not allowed; got shape {dims}.")
    return dims


def _dtype(dtype: Any, device: Device, kind: str, name: str) -> DType:
    if dtype is None:
        return _dtypes.default_of(device.backend.default_dtypes, kind, f"{name} on device '{device}'")
    return as_dtype(dtype, name)


def _host_dtype(host: np.ndarray, device: Device, name: str) -> DType:
    """The dtype Python data gets: the device's default of its kind (no value-based casting)."""
    kind = host.dtype.kind
    if kind == "b":
        return _dtypes.bool
    category = {"i": "integral", "u": "integral", "f": "real floating", "c": "complex floating"}.get(kind)
    if category is None:
        raise TypeError(f"{name}: cannot make an array from data of NumPy dtype {host.dtype}.")
    return _dtype(None, device, category, name)


def asarray(
    obj: Any, /, *, dtype: DType | None = None, device: str | Device | None = None, copy: bool | None = None,
    requires_grad: bool = False,
) -> Array:
    """Convert ``obj`` (an Array, a NumPy array, nested sequences or a scalar) to an Array.

    Python data gets the device's default dtypes; NumPy arrays keep their dtype.
    ``copy=True`` and ``copy=None`` copy a NumPy array; ``copy=False`` never copies: it shares
    the NumPy array's memory where the device is host-resident (``numpy``, ``cpu``) and the
    array is C-contiguous, aligned, writeable and of the requested dtype (a write through
    either then shows in the other), and raises ValueError where it cannot.

    >>> import ndplane as nd, numpy as np
    >>> nd.asarray([[1, 2], [3, 4]]).dtype, nd.asarray(np.ones(2, np.float32)).dtype
    (ndplane.int64, ndplane.float32)
    >>> nd.asarray(1.5, device="numpy:1")
    Array(1.5, dtype=float64, device='numpy:1')
    >>> h = np.zeros(2)
    >>> shared, copied = nd.asarray(h, device="numpy", copy=False), nd.asarray(h, device="numpy")
    >>> h[0] = 5.0
    >>> shared.tolist(), copied.tolist()
    ([5.0, 0.0], [0.0, 0.0])
    """
    out = _asarray(obj, dtype, device, copy)
    return out.requires_grad_() if requires_grad else out


def _asarray(obj: Any, dtype: Any, device: Any, copy: bool | None) -> Array:
    if type(obj) is Array:
        dev = obj.device if device is None else as_device(device)
        want = obj.dtype if dtype is None else as_dtype(dtype, "asarray")
        needs_copy = dev is not obj.device or want is not obj.dtype
        if copy is False and needs_copy:
            raise ValueError("asarray: copy=False, but changing the device or dtype requires a copy.")
        out = obj if dev is obj.device else _dispatch.to_device(obj, dev)
        if want is not out.dtype:
            return _dispatch.cast(out, want)
        if copy and out is obj:
            return _dispatch.copy_of(obj)
        return out
    dev = as_device(device)
    if isinstance(obj, np.ndarray) or isinstance(obj, np.generic):
        host = np.asarray(obj)
        if dtype is None and host.dtype not in _dtypes.FROM_NUMPY:
            raise TypeError(f"asarray: NumPy dtype {host.dtype} has no ndplane equivalent.")
        target = _dtypes.FROM_NUMPY[host.dtype] if dtype is None else as_dtype(dtype, "asarray")
        # NOTE: copy=False shares the NumPy array's own memory where the device can use it in
        # place (host-resident devices: numpy, cpu): 4 MB in 2 us, not 90 us. copy=None copies,
        # as it always has here: an ndplane array never aliases memory the caller did not
        # hand over on purpose (NumPy's and PyTorch's asarray share it then).
        if copy is False and isinstance(obj, np.ndarray) and host.dtype == target.dtype:
            shared = _dispatch.share_host(host, dev)
            if shared is not None:
                return shared
        if copy is False:
            raise ValueError(
                f"asarray: copy=False, but this NumPy array must be copied to device '{dev}' (only a "
                "host-resident device can share it, and only a C-contiguous, aligned, writeable, "
                "non-empty array of the requested dtype)."
            )
    elif copy is False:
        raise ValueError(f"asarray: copy=False, but a {type(obj).__name__} must be copied into device memory.")
    else:
        host = _from_python(obj)
        target = _host_dtype(host, dev, "asarray") if dtype is None else as_dtype(dtype, "asarray")
        if target.kind in ("int", "uint") and host.dtype.kind == "f":
            # NOTE: NumPy makes float64 of a list whose ints do not all fit int64 ([2**63 + 1, 0]):
            # converted from the Python values instead, exact (or an OverflowError), not rounded.
            try:
                host = np.asarray(obj, dtype=target.dtype)
            except OverflowError:
                raise OverflowError(f"asarray: values out of range for {target.name}.") from None
    _dispatch.check_dtype(dev, target, "asarray")
    if host.dtype != target.dtype:
        if target.kind in ("int", "uint") and host.dtype.kind in "iu" and host.size:
            info = np.iinfo(target.dtype)
            if host.min() < info.min or host.max() > info.max:
                raise OverflowError(f"asarray: values out of range for {target.name} [{info.min}, {info.max}].")
        with np.errstate(all="ignore"):
            host = host.astype(target.dtype)
    return _dispatch.from_host(host, dev)


def _from_python(obj: Any) -> np.ndarray:
    if isinstance(obj, (list, tuple)) and any(type(o) is Array for o in _flatten(obj)):
        obj = _nested_to_numpy(obj)
    try:
        host = np.asarray(obj)
    except (ValueError, TypeError) as exc:
        raise TypeError(f"asarray: cannot convert {type(obj).__name__} to an array: {exc}") from None
    if host.dtype == object:
        items = _flatten(obj) if isinstance(obj, (list, tuple)) else [obj]
        if all(type(o) in (int, float, bool) for o in items):  # numbers: an int too wide for any dtype
            raise OverflowError("asarray: a Python int does not fit any integer dtype (int64 or uint64).")
        raise TypeError(
            f"asarray: cannot convert {type(obj).__name__} to an array: ragged or non-numeric data."
        )
    if host.dtype.kind == "i" and host.dtype != np.int64:
        host = host.astype(np.int64)
    return host


def _flatten(obj: Any) -> Any:
    for o in obj:
        if isinstance(o, (list, tuple)):
            yield from _flatten(o)
        else:
            yield o


def _nested_to_numpy(obj: Any) -> Any:
    if isinstance(obj, (list, tuple)):
        return [_nested_to_numpy(o) for o in obj]
    return obj.to_numpy() if type(obj) is Array else obj


def empty(shape: ShapeLike, *, dtype: DType | None = None, device: str | Device | None = None) -> Array:
    """An uninitialised array.

    >>> import ndplane as nd
    >>> nd.empty((2, 3)).shape
    (2, 3)
    """
    dev = as_device(device)
    return _dispatch.empty(_shape(shape, "empty"), _dtype(dtype, dev, "real floating", "empty"), dev)


def full(
    shape: ShapeLike, fill_value: bool | int | float | complex, *, dtype: DType | None = None,
    device: str | Device | None = None, requires_grad: bool = False,
) -> Array:  # fmt: skip
    """An array filled with ``fill_value``; the dtype follows the value's kind by default.

    >>> import ndplane as nd
    >>> nd.full(3, 7)
    Array([7, 7, 7], dtype=int64, device='numpy:0')
    """
    dev = as_device(device)
    if dtype is None:
        kind = _dtypes.scalar_kind(fill_value)
        dt = _dtypes.bool if kind == "bool" else _dtype(
            None, dev, {"int": "integral", "float": "real floating", "complex": "complex floating"}[kind], "full"
        )
    else:
        dt = as_dtype(dtype, "full")
    out = _dispatch.empty(_shape(shape, "full"), dt, dev, "full")
    _dispatch.assign(out, fill_value, "full")
    return out.requires_grad_() if requires_grad else out


def _filled(shape: ShapeLike, value: Any, dt: DType, dev: Device, name: str) -> Array:
    """A new array of ``shape`` (checked) filled with ``value`` (a scalar valid for ``dt``)."""
    out = _dispatch.empty(_shape(shape, name), dt, dev, name)
    if out._ref.size:
        out._storage.backend.fill(out._ref, _dtypes.python_scalar(value, dt, name))
    return out


def zeros(
    shape: ShapeLike, *, dtype: DType | None = None, device: str | Device | None = None, requires_grad: bool = False
) -> Array:
    """An array of zeros (default floating dtype).

    >>> import ndplane as nd
    >>> nd.zeros((2,))
    Array([0., 0.], dtype=float64, device='numpy:0')
    """
    dev = as_device(device)
    out = _filled(shape, 0, _dtype(dtype, dev, "real floating", "zeros"), dev, "zeros")
    return out.requires_grad_() if requires_grad else out


def ones(
    shape: ShapeLike, *, dtype: DType | None = None, device: str | Device | None = None, requires_grad: bool = False
) -> Array:
    """An array of ones (default floating dtype).

    >>> import ndplane as nd
    >>> nd.ones(2, dtype=nd.int8)
    Array([1, 1], dtype=int8, device='numpy:0')
    """
    dev = as_device(device)
    out = _filled(shape, 1, _dtype(dtype, dev, "real floating", "ones"), dev, "ones")
    return out.requires_grad_() if requires_grad else out


def _like(x: Array, dtype: Any, device: Any, name: str) -> tuple[DType, Device]:
    check_array(name, x)
    return (x.dtype if dtype is None else as_dtype(dtype, name)), (x.device if device is None else as_device(device))


def empty_like(x: Array, /, *, dtype: DType | None = None, device: str | Device | None = None) -> Array:
    """An uninitialised array with ``x``'s shape (and dtype and device unless given).

    >>> import ndplane as nd
    >>> y = nd.empty_like(nd.zeros((2, 3), dtype=nd.int32))
    >>> y.shape, y.dtype
    ((2, 3), ndplane.int32)
    """
    dt, dev = _like(x, dtype, device, "empty_like")
    return _dispatch.empty(x.shape, dt, dev, "empty_like")


def full_like(
    x: Array, /, fill_value: bool | int | float | complex, *, dtype: DType | None = None,
    device: str | Device | None = None,
) -> Array:  # fmt: skip
    """An array with ``x``'s shape filled with ``fill_value``.

    >>> import ndplane as nd
    >>> nd.full_like(nd.arange(3), 5)
    Array([5, 5, 5], dtype=int64, device='numpy:0')
    """
    dt, dev = _like(x, dtype, device, "full_like")
    return full(x.shape, fill_value, dtype=dt, device=dev)


def zeros_like(x: Array, /, *, dtype: DType | None = None, device: str | Device | None = None) -> Array:
    """Zeros with ``x``'s shape, dtype and device (unless given).

    >>> import ndplane as nd
    >>> nd.zeros_like(nd.asarray([[1.5, 2.5]])).tolist()
    [[0.0, 0.0]]
    """
    dt, dev = _like(x, dtype, device, "zeros_like")
    return _filled(x.shape, 0, dt, dev, "zeros_like")


def ones_like(x: Array, /, *, dtype: DType | None = None, device: str | Device | None = None) -> Array:
    """Ones with ``x``'s shape, dtype and device (unless given).

    >>> import ndplane as nd
    >>> nd.ones_like(nd.asarray([1, 2]), dtype=nd.float32).tolist()
    [1.0, 1.0]
    """
    dt, dev = _like(x, dtype, device, "ones_like")
    return _filled(x.shape, 1, dt, dev, "ones_like")


def arange(
    start: int | float, /, stop: int | float | None = None, step: int | float = 1, *,
    dtype: DType | None = None, device: str | Device | None = None,
) -> Array:  # fmt: skip
    """Evenly spaced values in ``[start, stop)``.

    >>> import ndplane as nd
    >>> nd.arange(5), nd.arange(0.0, 1.0, 0.25).tolist()
    (Array([0, 1, 2, 3, 4], dtype=int64, device='numpy:0'), [0.0, 0.25, 0.5, 0.75])
    """
    if stop is None:
        start, stop = 0, start
    for v in (start, stop, step):
        if isinstance(v, (complex, Array)) or not isinstance(v, (int, float, np.number)):
            raise TypeError(f"arange: start, stop and step must be real Python numbers; got {v!r}.")
    if step == 0:
        raise ValueError("arange: step must not be zero.")
    dev = as_device(device)
    is_int = all(isinstance(v, (int, np.integer)) for v in (start, stop, step))
    dt = _dtype(dtype, dev, "integral" if is_int else "real floating", "arange")
    n = max(0, math.ceil((stop - start) / step))
    if "fused:arange" in dev.backend.capabilities:
        # the host's values exactly: integer arguments small enough for float64 to be exact
        bound = max(abs(v) for v in (start, stop, step)) if is_int else 0
        if dt.kind == "float" and bound < 2**51:
            return _dispatch.fused_arange(n, dt, dev, float(start), float(step))
        if dt.kind in ("int", "uint") and is_int and bound < 2**62:
            return _dispatch.fused_arange(n, dt, dev, int(start), int(step))
    ramp: np.ndarray = np.arange(n, dtype=np.int64 if is_int else np.float64)
    host = start + step * ramp
    return asarray(host.astype(dt.dtype), device=dev)


def linspace(
    start: int | float | complex, stop: int | float | complex, /, num: int, *,
    dtype: DType | None = None, device: str | Device | None = None, endpoint: bool = True,
) -> Array:  # fmt: skip
    """``num`` evenly spaced values from ``start`` to ``stop``.

    >>> import ndplane as nd
    >>> nd.linspace(0, 1, 5).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace: num must be >= 0; got {num}.")
    dev = as_device(device)
    is_complex = isinstance(start, complex) or isinstance(stop, complex)
    dt = _dtype(dtype, dev, "complex floating" if is_complex else "real floating", "linspace")
    if not is_complex and num > 1 and "fused:arange" in dev.backend.capabilities and dt.kind == "float":
        # NumPy's formula: i * step + start in float64, the last value stop itself
        lo, hi = float(cast(float, start)), float(cast(float, stop))
        step = (hi - lo) / (num - 1 if endpoint else num)
        if step != 0 and math.isfinite(step):
            out = _dispatch.fused_arange(num, dt, dev, lo, step)
            if endpoint:
                out[num - 1] = hi
            return out
    host = np.linspace(start, stop, num, endpoint=endpoint, dtype=np.complex128 if is_complex else np.float64)
    return asarray(host.astype(dt.dtype), device=dev)


def eye(
    n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: DType | None = None,
    device: str | Device | None = None,
) -> Array:  # fmt: skip
    """A 2-D array with ones on the ``k``-th diagonal.

    >>> import ndplane as nd
    >>> nd.eye(2, 3, k=1, dtype=nd.int32).tolist()
    [[0, 1, 0], [0, 0, 1]]
    """
    n_cols = n_rows if n_cols is None else n_cols
    out = zeros((n_rows, n_cols), dtype=dtype, device=device)
    r = out._ref
    shape, strides, offset = _layout.diagonal(r.shape, r.strides, r.offset, k, 0, 1)
    if shape[-1]:
        _dispatch.assign(_dispatch.view_as(out, shape, strides, offset), 1, "eye")
    return out


def meshgrid(*arrays: Array, indexing: str = "xy") -> list[Array]:
    """Coordinate matrices from 1-D coordinate vectors (broadcast views; ``"xy"`` swaps the first two axes).

    >>> import ndplane as nd
    >>> gx, gy = nd.meshgrid(nd.asarray([1, 2, 3]), nd.asarray([4, 5]))
    >>> gx.shape, gx.tolist()[1], gy.tolist()[1]
    ((2, 3), [1, 2, 3], [5, 5, 5])
    """

    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij'; got {indexing!r}.")
    for a in arrays:
        if type(a) is not Array or a.ndim != 1:
            raise ValueError("meshgrid: every input must be a 1-D ndplane array.")
    if arrays:
        _dispatch.same_device("meshgrid", *arrays)
        dt = arrays[0].dtype
        for a in arrays[1:]:
            if a.dtype is not dt:
                raise TypeError(f"meshgrid: all inputs must have the same dtype; got {dt.name} and {a.dtype.name}.")
    n = len(arrays)
    sizes = [a.shape[0] for a in arrays]
    if indexing == "xy" and n > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, a in enumerate(arrays):
        axis = (1 - i if i < 2 else i) if indexing == "xy" and n > 1 else i
        shape = [1] * n
        shape[axis] = a.shape[0]
        out.append(_manipulation.broadcast_to(_manipulation.reshape(a, tuple(shape)), tuple(sizes)))
    return out


def _triangle(name: str, x: Array, k: int, lower: bool) -> Array:
    check_array(name, x)
    if x.ndim < 2:
        raise ValueError(f"{name}: x must have at least two dimensions; got shape {x.shape}.")
    m, n = x.shape[-2:]
    index = x.device.backend.default_dtypes["indexing"]
    k = operator.index(k)
    # keep j - i <= k (lower) or >= k: column j against i + k, one (m, n) pass
    rows = _manipulation.reshape(arange(k, m + k, dtype=index, device=x.device), (m, 1))
    cols = arange(n, dtype=index, device=x.device)
    keep = _dispatch.binary("less_equal" if lower else "greater_equal", cols, rows)
    return _dispatch.where(keep, x, zeros((), dtype=x.dtype, device=x.device))


def tril(x: Array, /, *, k: int = 0) -> Array:
    """The lower triangle of each matrix (elements above the ``k``-th diagonal zeroed).

    >>> import ndplane as nd
    >>> nd.tril(nd.ones((2, 2), dtype=nd.int32)).tolist()
    [[1, 0], [1, 1]]
    """
    return _triangle("tril", x, k, True)


def triu(x: Array, /, *, k: int = 0) -> Array:
    """The upper triangle of each matrix (elements below the ``k``-th diagonal zeroed).

    >>> import ndplane as nd
    >>> nd.triu(nd.ones((2, 3), dtype=nd.int32), k=1).tolist()
    [[0, 1, 1], [0, 0, 1]]
    """
    return _triangle("triu", x, k, False)


# -- pickling (bound as Array.__reduce_ex__): protocol-5 out-of-band buffers, unpickled on
# -- the same device


def reduce_ex(x: Array, protocol: int) -> tuple[Any, ...]:
    """``Array.__reduce_ex__``: the data as host bytes, rebuilt by :func:`_unpickle` on the same
    device, index included (pickle, ``copy.deepcopy``, multiprocessing, Dask workers).

    With protocol 5 the bytes travel out of band, and an array unpickled from them on a
    host-resident device uses them in place, as NumPy does (:pep:`574`): loading the same
    out-of-band buffers twice gives two arrays over one memory.

    >>> import ndplane as nd, pickle
    >>> pickle.loads(pickle.dumps(nd.asarray([1.5, 2.5], device="numpy")))
    Array([1.5, 2.5], dtype=float64, device='numpy:0')
    """
    if protocol < 5:
        return (_unpickle, (host_values(x), x.dtype.name, x.shape, str(x.device)))
    # NOTE: the out-of-band buffer is flat bytes, as NumPy's own Dask serializer sends: distributed
    # cuts frames into 64 MiB shards along a memoryview's first axis, which for an (8000, 8000)
    # buffer was one 512 MB shard and seven empty ones. NumPy's stubs declare ndarray a Buffer
    # only for Python >= 3.12 (ndarray.__buffer__).
    data = pickle.PickleBuffer(host_bytes(x))  # type: ignore[arg-type]
    return (_unpickle, (data, x.dtype.name, x.shape, str(x.device)))


def host_values(x: Array) -> np.ndarray:
    """``x``'s values in a C-contiguous NumPy array: on a host-resident backend, a contiguous
    ``x``'s own memory (to_host's view keeps the buffer alive, as for numpy.asarray), so pickle
    protocol 5 and Dask's serializer (``ndplane._dask_serialize``) send it without a copy."""
    backend = x._storage.backend
    return np.ascontiguousarray(backend.to_host(x._ref)) if "host" in backend.capabilities else x.to_numpy()


def host_bytes(x: Array) -> np.ndarray:
    """:func:`host_values` as flat bytes (uint8): one buffer a transport may cut anywhere."""
    return host_values(x).reshape(-1).view(np.uint8)


def _unpickle(data: Any, dtype_name: str, shape: tuple[int, ...], device: str) -> Array:
    host = np.frombuffer(data, dtype=_dtypes.BY_NAME[dtype_name].dtype).reshape(shape)
    if isinstance(data, np.ndarray):
        # NOTE: protocol < 5 or copy.copy, whose ndarray may be the source array's own memory.
        return asarray(host, device=device, copy=True)
    # NOTE: bytes that came through pickle -- a bytearray in band, the receiver's buffer out of
    # band (a Dask worker's frame) -- belong to this array alone: a host-resident backend adopts
    # them where they are writable and aligned, as NumPy's unpickling uses them in place.
    return _dispatch.from_host(host, as_device(device), "unpickle", adopt=True)
