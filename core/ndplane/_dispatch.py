"""The one place where ops meet backends.

Every op takes the same road: device check -> result dtype (the op's meta
rule) -> output allocation -> compaction only for backends without
``strided`` -> kernel.  The kernel is the backend's native one when it lists
the op, else a core decomposition into other ops, else the host fallback (copy
to NumPy, run the reference kernel, copy back) with a one-time
:class:`~ndplane.FallbackWarning`, or a :class:`~ndplane.FallbackError` when
fallback is disabled (``NDPLANE_FALLBACK=error`` or :func:`fallback_mode`).

The chapter modules fill two tables: ``META[op](dtype, defaults)`` returns
``(compute dtype, result dtype)`` or raises TypeError, and
``DECOMPOSITIONS[op]`` holds core implementations used when a backend lacks
the kernel.  Per device, the answer for ``(op, dtype)`` is cached in one dict,
so the hot path is a single lookup.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from . import _dtypes, _graph, _layout
from ._array import Array, Storage, _new, _new_contiguous, _view
from ._devices import Device
from ._errors import DeviceMismatchError, FallbackError, FallbackWarning, UnsupportedDTypeError
from .backend import reference
from .backend.base import Backend, Ref

NATIVE, DECOMPOSE, HOST = 0, 1, 2
PATH_NAMES = {NATIVE: "native", DECOMPOSE: "decomposition", HOST: "host fallback"}

META: dict[str, Callable[[_dtypes.DType, dict[str, _dtypes.DType]], tuple[_dtypes.DType, _dtypes.DType]]] = {}
DECOMPOSITIONS: dict[str, Callable[..., Array]] = {}
_INDEX_MAX = _layout.INDEX_MAX  # NOTE: a global, not an attribute lookup, on every result's path

_ARRAY = Array
_SCALARS = (bool, int, float, complex)

# ---------------------------------------------------------------------------
# fallback policy
# ---------------------------------------------------------------------------
_MODES = ("warn", "error", "allow")
_mode: contextvars.ContextVar[str | None] = contextvars.ContextVar("ndplane_fallback", default=None)
_warned: set[tuple[str, ...]] = set()


def _env_mode() -> str:
    mode = os.environ.get("NDPLANE_FALLBACK", "warn").strip().lower() or "warn"
    if mode not in _MODES:
        raise ValueError(f"NDPLANE_FALLBACK must be one of {_MODES}; got {mode!r}.")
    return mode


@contextlib.contextmanager
def fallback_mode(mode: str) -> Iterator[None]:
    """Set what happens when an op has to run through the host fallback.

    ``"warn"`` (default): run it and warn once per op, dtype and backend;
    ``"error"``: raise :class:`ndplane.FallbackError`; ``"allow"``: run it silently.

    >>> import ndplane as nd
    >>> with nd.fallback_mode("error"):
    ...     int(nd.sum(nd.arange(4)))
    6
    """
    if mode not in _MODES:
        raise ValueError(f"fallback_mode: mode must be one of {_MODES}; got {mode!r}.")
    token = _mode.set(mode)
    try:
        yield
    finally:
        _mode.reset(token)


def check_fallback(key: tuple[str, ...], refusal: str, warning: str, stacklevel: int) -> None:
    """Apply the fallback mode to one fallback about to run: under ``error`` raise
    ``FallbackError(refusal)``, under ``warn`` emit ``warning`` once per ``key`` and process,
    under ``allow`` nothing. The host fallback of ops and NumPy functions outside
    ``_numpy_protocol``'s tables both come through here."""
    mode = _mode.get() or _env_mode()
    if mode == "error":
        raise FallbackError(refusal)
    if mode == "warn" and key not in _warned:
        _warned.add(key)
        warnings.warn(warning, FallbackWarning, stacklevel=stacklevel + 1)


def _host_allowed(backend: Backend, op: str, dtype: _dtypes.DType) -> None:
    if op in backend.host_ops:
        return  # the backend declared this op a host op: no warning, never an error
    check_fallback(
        (op, dtype.name, backend.name),
        f"{op}: backend '{backend.name}' has no native kernel for {dtype.name} and the op has no "
        f"decomposition, so it would run through the host fallback, which is disabled "
        f"(NDPLANE_FALLBACK=error or fallback_mode('error')).",
        f"{op} on {dtype.name} runs through the host fallback on backend '{backend.name}' "
        f"(copy to NumPy, compute, copy back). Set NDPLANE_FALLBACK=error to make this an error.",
        stacklevel=4,
    )


# ---------------------------------------------------------------------------
# plans: (op, dtype) -> (path, compute dtype, result dtype), cached per device
# ---------------------------------------------------------------------------


def plan(device: Device, op: str, dtype: _dtypes.DType) -> tuple[int, _dtypes.DType, _dtypes.DType]:
    key = (op, dtype)
    p = device._plans.get(key)
    if p is None:
        backend = device.backend
        meta = META.get(op)
        compute, result = meta(dtype, backend.default_dtypes) if meta else (dtype, dtype)
        for d in (compute, result):
            if d not in backend.dtypes:
                raise _unsupported(op, d, device, backend)
        path = _path(backend, op, compute)
        p = device._plans[key] = (path, compute, result)
    return p


def _path(backend: Backend, op: str, dtype: _dtypes.DType) -> int:
    if op in backend.ops and backend.supports(op, dtype):
        return NATIVE
    if op in DECOMPOSITIONS:
        return DECOMPOSE
    return HOST


def _kernel_path(device: Device, op: str, dtype: _dtypes.DType) -> int:
    """Native or host, for primitives that have no decomposition: from the same per-device plan
    cache as the elementwise ops (kernel and elementwise op names never coincide)."""
    p = device._plans.get((op, dtype))
    if p is None:
        backend = device.backend
        path = NATIVE if op in backend.ops and backend.supports(op, dtype) else HOST
        p = device._plans[(op, dtype)] = (path, dtype, dtype)
    return p[0]


def path_of(device: Device, op: str, dtype: _dtypes.DType) -> int | None:
    """Which path ``op`` on ``dtype`` takes on ``device`` (None: not defined for that dtype)."""
    try:
        return plan(device, op, dtype)[0]
    except TypeError:
        return None


def _unsupported(name: str, dtype: _dtypes.DType, device: Device, backend: Backend) -> UnsupportedDTypeError:
    supported = ", ".join(d.name for d in _dtypes.ALL_DTYPES if d in backend.dtypes)
    hint = backend.default_dtypes.get("real floating" if dtype.is_floating else "integral")
    return UnsupportedDTypeError(
        f"{name}: dtype {dtype.name} is not supported on device '{device}' (backend "
        f"'{backend.name}' supports {supported})."
        + (f" Use dtype=ndplane.{hint.name}, or another device." if hint else "")
    )


def check_dtype(device: Device, dtype: _dtypes.DType, name: str) -> Backend:
    backend = device.backend
    if dtype not in backend.dtypes:
        raise _unsupported(name, dtype, device, backend)
    return backend


# ---------------------------------------------------------------------------
# allocation, devices, layouts
# ---------------------------------------------------------------------------


def empty(shape: tuple[int, ...], dtype: _dtypes.DType, device: Device, name: str = "empty") -> Array:
    backend = check_dtype(device, dtype, name)
    size = _layout.prod(shape)
    nbytes = size * dtype.itemsize
    if nbytes > _INDEX_MAX or not size:
        _layout.check_size(shape, size, dtype.itemsize, name)
    storage = Storage(backend.alloc(nbytes), device, backend, nbytes)
    return _new_contiguous(storage, dtype, shape, size)


def _out(device: Device, backend: Backend, dtype: _dtypes.DType, shape: tuple[int, ...], size: int,
         name: str = "result") -> Array:  # fmt: skip
    nbytes = size * dtype.itemsize
    if nbytes > _INDEX_MAX or not size:
        _layout.check_size(shape, size, dtype.itemsize, name)
    return _new_contiguous(Storage(backend.alloc(nbytes), device, backend, nbytes), dtype, shape, size)


def same_device(name: str, *arrays: Array) -> Device:
    dev = arrays[0]._storage.device
    for a in arrays[1:]:
        if a._storage.device is not dev:
            raise DeviceMismatchError(
                f"{name}: operands are on different devices, '{dev}' and '{a._storage.device}'. "
                f"Move one first, e.g. y.to_device('{dev}')."
            )
    return dev


def from_host(host: np.ndarray, device: Device, name: str = "asarray", adopt: bool = False) -> Array:
    """Copy a NumPy array (of an ndplane dtype) to ``device`` as a new contiguous array.

    ``adopt``: hand a host-resident backend the array's own memory when it takes it
    (``Backend.adopt_host``); the caller then gives up ``host`` to the new Array.
    """
    dtype = _dtypes.FROM_NUMPY[host.dtype]
    backend = check_dtype(device, dtype, name)
    host = np.asarray(host, order="C")  # NOTE: not ascontiguousarray, which makes 0-d arrays 1-d
    out = _adopted(host, device, backend, dtype) if adopt else None
    if out is None:
        buf = backend.from_host(host)
        out = _new_contiguous(Storage(buf, device, backend, host.nbytes), dtype, host.shape, host.size)
    return out


def share_host(host: np.ndarray, device: Device) -> Array | None:
    """An Array over ``host``'s own memory (no copy: writes through either show in the other),
    where ``device`` is host-resident and takes it (``Backend.adopt_host``): a C-contiguous,
    aligned, writeable, non-empty array of an ndplane dtype. None where it cannot."""
    dtype = _dtypes.FROM_NUMPY[host.dtype]
    backend = device.backend
    return _adopted(host, device, backend, dtype) if dtype in backend.dtypes else None


def _adopted(host: np.ndarray, device: Device, backend: Backend, dtype: _dtypes.DType) -> Array | None:
    """An Array over ``host``'s memory through ``Backend.adopt_host``, offered only what its
    contract promises (a host-resident backend; C-contiguous, aligned, writeable, non-empty);
    None where it is not offered or declines."""
    flags = host.flags
    if not (flags.c_contiguous and flags.aligned and flags.writeable and host.size
            and "host" in backend.capabilities):  # fmt: skip
        return None
    buf = backend.adopt_host(host)
    if buf is None:
        return None
    return _new_contiguous(Storage(buf, device, backend, host.nbytes), dtype, host.shape, host.size)


def compact(x: Array) -> Array:
    """``x`` if it is C-contiguous, else a contiguous copy (the "view tax")."""
    if x._ref.contiguous:
        return x
    st = x._storage
    r = x._ref
    out = _out(st.device, st.backend, r.dtype, r.shape, r.size)
    if r.size:
        st.backend.copy(r, out._ref)
    return out


def _broadcast_ref(r: Ref, shape: tuple[int, ...], name: str) -> Ref:
    """The layout ``r`` broadcast to ``shape`` (``r`` itself when the shape matches)."""
    if r.shape == shape:
        return r
    strides = _layout.broadcast_strides(r.shape, r.strides, shape, name)
    return Ref(r.buffer, r.dtype, shape, strides, r.offset, _layout.prod(shape), False)


def operand(x: Array, shape: tuple[int, ...], backend: Backend, name: str, keep: list[Array]) -> Ref:
    """The Ref a compute kernel receives for ``x`` broadcast to ``shape``.

    NOTE: Refs do not own storage: a compacted temporary is appended to ``keep``,
    which the caller holds until the kernel has run.
    """
    r = x._ref
    if r.shape == shape and r.contiguous:
        return r
    ref = _broadcast_ref(x._ref, shape, name)
    if "strided" in backend.capabilities:
        return ref
    return _materialize(x, ref, backend, keep)


def _materialize(x: Array, ref: Ref, backend: Backend, keep: list[Array]) -> Ref:
    """A contiguous copy of the view ``ref`` of ``x``'s storage, kept alive in ``keep``."""
    out = _out(x._storage.device, backend, ref.dtype, ref.shape, ref.size)
    if ref.size:
        backend.copy(ref, out._ref)
    keep.append(out)
    return out._ref


# ---------------------------------------------------------------------------
# running a kernel: native or host fallback
# ---------------------------------------------------------------------------


def run(backend: Backend, path: int, method: str, op: str | None, dtype: _dtypes.DType,
        args: tuple[Any, ...], outs: tuple[int, ...], inout: bool = False) -> None:  # fmt: skip
    """Call ``backend.<method>(*args)`` natively or through the host fallback.

    The one calling convention of every kernel primitive and extension: ``args`` are Refs,
    tuples of Refs (``linalg``) or plain values; ``outs`` are the positions written (a tuple
    position: each of its Refs); with ``inout`` they are read too.
    """
    if path == NATIVE:
        if op is None:
            getattr(backend, method)(*args)
        else:
            getattr(backend, method)(op, *args)
        return
    _host_allowed(backend, op or method, dtype)
    host = [_host_arg(backend, a, i in outs and not inout) for i, a in enumerate(args)]
    fn = getattr(reference, method)
    fn(*host) if op is None else fn(op, *host)
    for i in outs:
        if type(args[i]) is tuple:
            for r, h in zip(args[i], host[i]):
                write_host(backend, r, h)
        else:
            write_host(backend, args[i], host[i])


def _host_arg(backend: Backend, a: Any, write_only: bool) -> Any:
    """A kernel argument as the reference kernels take it: a Ref as a host copy (or an empty
    array it will write), a tuple of Refs as a tuple of those, anything else as it is."""
    if type(a) is Ref:
        return np.empty(a.shape, a.dtype.dtype) if write_only else np.array(backend.to_host(a), copy=True)
    if type(a) is tuple and a and type(a[0]) is Ref:
        return tuple(_host_arg(backend, r, write_only) for r in a)
    return a


def write_host(backend: Backend, dst: Ref, values: np.ndarray) -> None:
    """Copy host ``values`` (of ``dst``'s shape) into the device view ``dst``."""
    values = np.asarray(values, dtype=dst.dtype.dtype, order="C")
    buf = backend.from_host(values)
    try:
        src = Ref(buf, dst.dtype, dst.shape, _layout.contiguous_strides(dst.shape), 0, dst.size, True)
        if dst.size:
            backend.copy(src, dst)
    finally:
        backend.free(buf)


# ---------------------------------------------------------------------------
# primitives
# ---------------------------------------------------------------------------


def cast(x: Array, dtype: _dtypes.DType) -> Array:
    """A new array of ``dtype`` with ``x``'s values (NumPy ``astype`` semantics)."""
    r = x._ref
    st = x._storage
    dev = st.device
    backend = check_dtype(dev, dtype, "astype")
    out = _out(dev, backend, dtype, r.shape, r.size)
    if r.size:
        if r.dtype is dtype:
            backend.copy(r, out._ref)
        else:
            path = _kernel_path(dev, "cast", r.dtype)
            keep: list[Array] = []
            src = r if r.contiguous else operand(x, r.shape, backend, "astype", keep)
            run(backend, path, "cast", None, r.dtype, (src, out._ref), (1,))
    if x.requires_grad:
        _graph.record("identity" if r.dtype is dtype else "cast", out, (x,))
    return out


def unary(op: str, x: Array) -> Array:
    st = x._storage
    dev = st.device
    r = x._ref
    path, compute, result = plan(dev, op, r.dtype)
    if path == DECOMPOSE:
        return DECOMPOSITIONS[op](x if r.dtype is compute else cast(x, compute))
    if r.dtype is not compute:
        x = cast(x, compute)
        r = x._ref
    backend = st.backend
    out = _out(dev, backend, result, r.shape, r.size)
    if r.size:
        keep: list[Array] = []
        src = r if r.contiguous else operand(x, r.shape, backend, op, keep)
        run(backend, path, "unary", op, compute, (src, out._ref), (1,))
    if x.requires_grad:
        _graph.record_elementwise(op, out, (x,))
    return out


def binary(op: str, a: Any, b: Any) -> Array:
    """``op(a, b)`` elementwise; either operand may be a Python scalar."""
    return _FAST_BINARY[op](a, b) if op in _FAST_BINARY else _binary(op, a, b)


def fast_binary(op: str, operator: bool = False) -> Callable[[Any, Any], Any]:
    """``op`` as a function of two operands with the hot path inline in one frame.

    The fast path: two contiguous arrays of one dtype, shape and device, no gradient, and a
    cached native plan -- then it is an allocation and one kernel call. Everything else takes
    :func:`_binary`. With ``operator``, an unsupported operand type returns NotImplemented.
    """
    slow = _binary
    array, ref_new, storage, native = _ARRAY, Ref, Storage, NATIVE
    scalars = _SCALARS
    broadcast_shapes = _layout.broadcast_shapes

    def fn(a: Any, b: Any) -> Any:
        if type(a) is array and type(b) is array:
            ra, rb = a._ref, b._ref
            st = a._storage
            if (ra.dtype is rb.dtype and b._storage.device is st.device
                    and not (a.requires_grad or b.requires_grad)):  # fmt: skip
                dev = st.device
                p = dev._plans.get((op, ra.dtype))
                if p is None or p[0] != native or p[1] is not ra.dtype:
                    return slow(op, a, b)
                backend = st.backend
                if not (ra.contiguous and rb.contiguous and ra.shape == rb.shape):
                    # Broadcast or strided operands of one dtype: their layouts as they are,
                    # to a backend that reads strides (the others take _binary's compaction).
                    if "strided" not in backend.capabilities:
                        return slow(op, a, b)
                    shape = ra.shape if ra.shape == rb.shape else broadcast_shapes(ra.shape, rb.shape, name=op)
                    out = _out(dev, backend, p[2], shape, _layout.prod(shape), op)
                    if out._ref.size:
                        backend.binary(op, _broadcast_ref(ra, shape, op), _broadcast_ref(rb, shape, op), out._ref)
                    return out
                size = ra.size
                result = p[2]
                nbytes = size * result.itemsize
                out = object.__new__(array)
                buf = backend.alloc(nbytes)
                out._storage = storage(buf, dev, backend, nbytes)
                out._ref = ref = ref_new(buf, result, ra.shape, ra.strides, 0, size, True)
                out._node = None
                out.requires_grad = False
                out.grad = None
                if size:
                    backend.binary(op, ra, rb, ref)
                return out
        elif type(a) is array or type(b) is array:
            # A float array with a Python float or int: the array's dtype computes, as
            # _binary would decide; the scalar goes to the kernel as a float.
            x, s = (a, b) if type(a) is array else (b, a)
            ts = type(s)
            rx = x._ref
            if ((ts is float or ts is int) and rx.contiguous and rx.dtype.kind == "float"
                    and not x.requires_grad):  # fmt: skip
                st = x._storage
                dev = st.device
                p = dev._plans.get((op, rx.dtype))
                if p is not None and p[0] == native and p[1] is rx.dtype:
                    backend = st.backend
                    out = _out(dev, backend, p[2], rx.shape, rx.size)
                    if rx.size:
                        if x is a:
                            backend.binary(op, rx, float(s), out._ref)
                        else:
                            backend.binary(op, float(s), rx, out._ref)
                    return out
            if operator and not (type(b) is array or isinstance(b, scalars)):
                return NotImplemented
        elif operator and not (type(b) is array or isinstance(b, scalars)):
            return NotImplemented
        return slow(op, a, b)

    fn.__name__ = fn.__qualname__ = op
    return fn


_FAST_BINARY: dict[str, Callable[[Any, Any], Any]] = {}


def _binary(op: str, a: Any, b: Any) -> Array:
    ta, tb = type(a), type(b)
    if ta is _ARRAY:
        dev = a._storage.device
        ra = a._ref
        if tb is _ARRAY:
            rb = b._ref
            if b._storage.device is not dev:
                same_device(op, a, b)
            dt = ra.dtype if ra.dtype is rb.dtype else _dtypes.promote(ra.dtype, rb.dtype, op)
        else:
            dt = _dtypes.scalar_result_dtype(ra.dtype, b, dev.backend.default_dtypes)
            rb = None
    elif tb is _ARRAY:
        dev = b._storage.device
        rb = b._ref
        ra = None
        dt = _dtypes.scalar_result_dtype(rb.dtype, a, dev.backend.default_dtypes)
    else:
        raise TypeError(
            f"{op}: expected at least one ndplane array; got {ta.__name__} and {tb.__name__}."
        )
    path, compute, result = plan(dev, op, dt)
    if ra is None:
        a = _dtypes.python_scalar(a, compute, op)
    elif ra.dtype is not compute:
        a = cast(a, compute)
        ra = a._ref
    if rb is None:
        b = _dtypes.python_scalar(b, compute, op)
    elif rb.dtype is not compute:
        b = cast(b, compute)
        rb = b._ref
    if path == DECOMPOSE:
        return DECOMPOSITIONS[op](a, b)
    if ra is None:
        shape = rb.shape
    elif rb is None or ra.shape == rb.shape:
        shape = ra.shape
    else:
        shape = _layout.broadcast_shapes(ra.shape, rb.shape, name=op)
    backend = dev.backend
    out = _out(dev, backend, result, shape, _layout.prod(shape), op)
    if out._ref.size:
        keep: list[Array] = []
        xa = a if ra is None else operand(a, shape, backend, op, keep)
        xb = b if rb is None else operand(b, shape, backend, op, keep)
        run(backend, path, "binary", op, compute, (xa, xb, out._ref), (2,))
    if (ra is not None and a.requires_grad) or (rb is not None and b.requires_grad):
        _graph.record_elementwise(op, out, (a, b))
    return out


def binary_inplace(op: str, target: Array, other: Any) -> bool:
    """``target = op(target, other)`` straight into ``target``'s memory, when the backend declares
    ``inplace`` and nothing changes shape or dtype; returns False (nothing done) otherwise."""
    st = target._storage
    backend = st.backend
    r = target._ref
    if "inplace" not in backend.capabilities or not r.contiguous:
        return False
    if type(other) is _ARRAY:
        if other._storage.device is not st.device or other.requires_grad:
            return False
        dt = r.dtype if other.dtype is r.dtype else _dtypes.PROMOTION_TABLE.get((r.dtype, other.dtype))
    elif isinstance(other, _SCALARS):
        dt = _dtypes.scalar_result_dtype(r.dtype, other, None)
    else:
        return False
    if dt is not r.dtype:
        return False
    path, compute, result = plan(st.device, op, dt)
    if path != NATIVE or compute is not r.dtype or result is not r.dtype:
        return False
    if type(other) is _ARRAY:
        if _layout.broadcast_shapes(r.shape, other.shape, name=op) != r.shape:
            return False
        keep: list[Array] = []
        if other.dtype is not compute:
            # NOTE: kernels get one dtype (the protocol's promise): x += y with y of a lower dtype
            # (float64 += float32, uint16 += uint8) casts y first, as _binary does.
            other = cast(other, compute)
        elif other._storage is st and other._ref is not r and _overlaps(other._ref, r):
            other = copy_of(other)
        xb = operand(other, r.shape, backend, op, keep)
    else:
        xb = _dtypes.python_scalar(other, compute, op)
    if r.size:
        backend.binary(op, r, xb, r)
    st.version += 1
    return True


def where(cond: Array, a: Array, b: Array) -> Array:
    dev = same_device("where", cond, a, b)
    if cond.dtype is not _dtypes.bool:
        raise TypeError(f"where: condition must be a bool array; got {cond.dtype.name}.")
    dt = _dtypes.promote(a.dtype, b.dtype, "where")
    backend = check_dtype(dev, dt, "where")  # NOTE: before the casts, so the error names where
    shape = _layout.broadcast_shapes(cond.shape, a.shape, b.shape, name="where")
    a = a if a.dtype is dt else cast(a, dt)
    b = b if b.dtype is dt else cast(b, dt)
    out = _out(dev, backend, dt, shape, _layout.prod(shape), "where")
    if out.size:
        path = _kernel_path(dev, "where", dt)
        keep: list[Array] = []
        args = (operand(cond, shape, backend, "where", keep), operand(a, shape, backend, "where", keep),
                operand(b, shape, backend, "where", keep), out._ref)  # fmt: skip
        run(backend, path, "where", None, dt, args, (3,))
    if a.requires_grad or b.requires_grad:
        _graph.record("where", out, (cond, a, b), (cond,))
    return out


def _as_2d(x: Array, backend: Backend, m: int, k: int, keep: list[Array],
           layout: tuple[tuple[int, ...], tuple[int, ...]] | None = None) -> Ref:  # fmt: skip
    """``x`` -- or the view ``layout`` (shape, strides) of its storage at its offset -- as an
    (m, k) Ref; compacts when no (m, k) view exists, or when the backend needs a contiguous one."""
    r = x._ref
    shape, strides = layout if layout is not None else (r.shape, r.strides)
    strides2 = _layout.reshape_strides(shape, strides, (m, k))
    if strides2 is not None:
        contiguous = _layout.is_contiguous((m, k), strides2)
        if contiguous or "strided" in backend.capabilities:
            return Ref(r.buffer, r.dtype, (m, k), strides2, r.offset, m * k, contiguous)
    c = compact(x if layout is None else _new(x._storage, r.dtype, shape, strides, r.offset))
    keep.append(c)
    cr = c._ref
    return Ref(cr.buffer, cr.dtype, (m, k), (k, 1), cr.offset, m * k, True)


def compact_ref(x: Array, keep: list[Array]) -> Ref:
    """The Ref of ``compact(x)``, that array appended to ``keep``.

    NOTE: Refs do not own storage: a temporary whose last Array dies is freed at once, and a
    backend may reuse or refuse (cpu, cuda) its buffer. The caller holds ``keep`` until the
    kernel has run.
    """
    c = compact(x)
    keep.append(c)
    return c._ref


def _flat(x: Array, keep: list[Array]) -> Ref:
    """``x``'s elements in C order as a C-contiguous (N,) Ref: compacted first where ``x`` is not
    contiguous (the copy kept alive in ``keep``)."""
    cr = compact_ref(x, keep)
    return Ref(cr.buffer, cr.dtype, (cr.size,), (1,), cr.offset, cr.size, True)


def fused_reduce(op: str, x: Array, axes: tuple[int, ...], result: _dtypes.DType,
                 per_row: int | None = None, rows: tuple[Array, ...] = ()) -> Array:  # fmt: skip
    """:func:`reduce` through the backend's ``fused:<op>`` (an (M, K) -> (M,) reduction that no
    primitive is, e.g. ``count_nonzero`` of any dtype, or (M, K) -> (M, per_row) as ``minmax``);
    ``rows``: arrays of one value per row (M elements, in the kept axes' order), passed after
    ``x`` as (M,) Refs; the caller checked the capability."""
    st = x._storage
    backend = st.backend
    r = x._ref
    kept, m, k, moved = _layout.reduce_layout(r.shape, r.strides, axes)
    width = () if per_row is None else (per_row,)
    out = _out(st.device, backend, result, kept + width, m * (per_row or 1))
    if m:
        keep: list[Array] = []
        inputs = (_as_2d(x, backend, m, k, keep, moved), *(_flat(v, keep) for v in rows))
        shape = (m, *width)
        ref = Ref(out._ref.buffer, result, shape, _layout.contiguous_strides(shape), 0, out.size, True)
        backend.fused(op, inputs, ref, {})
    return out


def fused_nonzero(x: Array, count: int, index: _dtypes.DType) -> Array:
    """The flat positions (C order) of ``x``'s ``count`` nonzero elements, in the ``index``
    dtype, through the backend's ``fused:nonzero``; the caller checked the capability and
    counted them."""
    st = x._storage
    backend = st.backend
    out = _out(st.device, backend, index, (count,), count)
    if count:
        keep: list[Array] = []
        backend.fused("nonzero", (_as_2d(x, backend, 1, x.size, keep),), out._ref, {})
    return out


def fused_searchsorted(a: Array, v: Array, right: bool, index: _dtypes.DType) -> Array:
    """``searchsorted`` of the flattened ``v`` in the 1-D sorted ``a`` (one real dtype) through
    the backend's ``fused:searchsorted``, in ``v``'s shape; the caller checked the capability."""
    st = v._storage
    backend = st.backend
    out = _out(st.device, backend, index, v.shape, v.size)
    if v.size:
        keep: list[Array] = []
        refs = (_as_2d(a, backend, 1, a.size, keep), _as_2d(v, backend, 1, v.size, keep))
        flat = Ref(out._ref.buffer, index, (v.size,), (1,), 0, v.size, True)
        backend.fused("searchsorted", refs, flat, {"right": right})
    return out


def fused_nll(x: Array, target: Array, reduction: str) -> Array:
    """``nll_loss`` of (M, K) ``x`` (real floating) and (M,) integer ``target`` through the
    backend's ``fused:nll``: (M,) for ``reduction`` "none", else 0-d (then M >= 1); a target
    outside [0, K) raises the backend's IndexError. The caller checked the capability."""
    st = x._storage
    backend = st.backend
    m, k = x.shape
    none = reduction == "none"
    out = _out(st.device, backend, x.dtype, (m,) if none else (), m if none else 1)
    if out.size:
        keep: list[Array] = []
        ref = Ref(out._ref.buffer, x.dtype, (out.size,), (1,), 0, out.size, True)
        backend.fused("nll", (_as_2d(x, backend, m, k, keep), _flat(target, keep)), ref, {"reduction": reduction})
    return out


def fused_permute(perm: Array, values: Array) -> Array:
    """``out[perm[k]] = values[k]`` into a fresh (N,) array of ``values``' dtype, for ``perm`` a
    permutation of [0, N) in the indexing dtype and (N,) ``values``: the backend's
    ``fused:put_axis`` with its ``distinct`` promise, so the writes may run on many threads (a
    scatter_add into zeros cannot split its indices without knowing them distinct). The caller
    checked the capability and that ``perm`` is a permutation."""
    st = values._storage
    backend = st.backend
    n = perm.shape[0]
    out = _out(st.device, backend, values.dtype, (n,), n)
    if n:
        keep: list[Array] = []
        ir, vr, o = compact_ref(perm, keep), compact_ref(values, keep), out._ref
        shape, strides = (1, n, 1), (n, 1, 1)
        backend.fused("put_axis", (ir, Ref(vr.buffer, vr.dtype, shape, strides, vr.offset, n, True)),
                      Ref(o.buffer, o.dtype, shape, strides, 0, n, True), {"distinct": True})  # fmt: skip
    return out


def fused_take_along(x: Array, indices: Array) -> Array:
    """``x`` (..., N) gathered row by row at ``indices`` (..., J) of the same leading shape, in
    the indexing dtype, through the backend's ``fused:take_along`` -> (..., J) C-contiguous; an
    index outside [0, N) raises the backend's IndexError where it declares ``checked-indices``.
    ``x`` is viewed as (M, N) where its layout allows, else compacted. The caller checked the
    capability."""
    st = x._storage
    backend = st.backend
    *lead, n = x.shape
    m, j = _layout.prod(lead), indices.shape[-1]
    out = _out(st.device, backend, x.dtype, (*lead, j), m * j)
    if out.size:
        keep: list[Array] = []
        ir = compact_ref(indices, keep)
        idx = Ref(ir.buffer, ir.dtype, (m, j), (j, 1), ir.offset, m * j, True)
        ref = Ref(out._ref.buffer, x.dtype, (m, j), (j, 1), 0, m * j, True)
        backend.fused("take_along", (_as_2d(x, backend, m, n, keep), idx), ref, {})
    return out


def fused_map(op: str, x: Array, params: dict[str, Any]) -> Array:
    """An elementwise fused op (``clip``): ``x`` as a C-contiguous (N,) Ref (compacted first
    where it is not), into a fresh array of ``x``'s dtype and shape; the caller checked the
    capability."""
    st = x._storage
    backend = st.backend
    r = x._ref
    out = _out(st.device, backend, r.dtype, r.shape, r.size)
    if r.size:
        keep: list[Array] = []
        backend.fused(op, (_flat(x, keep),), _flat(out, keep), params)
    return out


def fused_arange(n: int, dtype: _dtypes.DType, device: Device, start: int | float, step: int | float) -> Array:
    """``start + i * step`` for i in [0, n) (ints for an integer ``dtype``, floats for a
    floating one), made by the backend's ``fused:arange``; the caller checked the capability."""
    out = empty((n,), dtype, device, "arange")
    if n:
        device.backend.fused("arange", (), out._ref, {"start": start, "step": step})
    return out


def fused_random(op: str, device: Device, dtype: _dtypes.DType, n: int, params: dict[str, Any]) -> Array:
    """``n`` values of ``dtype`` made by the backend's ``fused:<op>`` from the Philox stream at
    ``params["key"]``, ``params["counter"]``: ``uniform`` (``low``, ``high``: floats in [low,
    high)) or ``integers`` (``top``, ``low``: integers in [low, low + top]), each bit for bit
    what :class:`ndplane.random.Generator` composes; the caller checked the capability."""
    out = empty((n,), dtype, device, op)
    if n:
        device.backend.fused(op, (), out._ref, params)
    return out


def _batch_norm_applies(op: str, x: Array, *per_channel: Array | None) -> bool:
    """Whether ``fused:<op>`` of batch_norm takes ``x`` and its per-channel operands: the
    backend has it, x is float32/float64, each operand (shape (C,), or (k, C) for a stack of
    coefficients) has x's dtype and device, and no gradient is to be recorded."""
    st = x._storage
    if f"fused:{op}" not in st.backend.capabilities or x.dtype not in (_dtypes.float32, _dtypes.float64):
        return False
    given = [a for a in per_channel if a is not None]
    c = x.shape[1]
    if any(type(a) is not Array or a.dtype is not x.dtype or a.shape[-1:] != (c,) or a.ndim > 2
           or a._storage.device is not st.device for a in given):  # fmt: skip
        return False
    return not (_graph.is_grad_enabled() and any(a.requires_grad for a in (x, *given)))


def _planes(x: Array, r: Ref) -> Ref:
    """A C-contiguous Ref of ``x``'s shape as (batch, channels, the rest): the layout the fused
    batch_norm kernels take."""
    shape = (x.shape[0], x.shape[1], _layout.prod(x.shape[2:]))
    return Ref(r.buffer, x.dtype, shape, _layout.contiguous_strides(shape), r.offset, x.size, True)


def fused_batch_norm(x: Array, mean: Array, var: Array, weight: Array | None, bias: Array | None,
                     eps: float) -> Array | None:  # fmt: skip
    """``nn.functional.batch_norm`` outside training through the backend's ``fused:batch_norm``
    where it applies (float32/float64, every statistic an array of ``x``'s dtype and device of
    shape (C,), no gradient to record); None where it does not (the caller runs the composite)."""
    if not _batch_norm_applies("batch_norm", x, mean, var, weight, bias) or mean.ndim != 1 or var.ndim != 1 \
            or any(a is not None and a.ndim != 1 for a in (weight, bias)):  # fmt: skip
        return None
    st = x._storage
    out = _out(st.device, st.backend, x.dtype, x.shape, x.size)
    if x.size:
        keep: list[Array] = []
        refs = tuple(None if v is None else _flat(v, keep) for v in (mean, var, weight, bias))
        st.backend.fused("batch_norm", (_planes(x, compact_ref(x, keep)), *refs), _planes(x, out._ref), {"eps": float(eps)})
    return out


def fused_batch_norm_grad(x: Array, g: Array, mean: Array, coef: Array | None = None) -> Array | None:
    """Training ``batch_norm``'s backward through the backend's ``fused:batch_norm_grad`` where
    it applies (as :func:`fused_batch_norm`; ``g`` of ``x``'s shape, dtype and device). Without
    ``coef``: the (2, C) sums of ``g`` and of ``g * (x - mean)`` over every axis but 1. With
    ``coef`` (3, C) = (c0, c1, c2): ``((g - c0) - (x - mean) * c1) * c2``, the three broadcast
    along axis 1, bit for bit those broadcast ops. None where it does not apply."""
    if not _batch_norm_applies("batch_norm_grad", x, mean, coef) or mean.ndim != 1:
        return None
    if type(g) is not Array or g.shape != x.shape or g.dtype is not x.dtype or g._storage.device is not x._storage.device:
        return None
    if (coef is not None and coef.shape != (3, x.shape[1])) or (_graph.is_grad_enabled() and g.requires_grad):
        return None
    st = x._storage
    shape = x.shape if coef is not None else (2, x.shape[1])
    out = _out(st.device, st.backend, x.dtype, shape, _layout.prod(shape))
    keep: list[Array] = []
    inputs = [_planes(x, compact_ref(x, keep)), _planes(x, compact_ref(g, keep)), _flat(mean, keep)]
    if coef is not None:
        inputs.append(compact_ref(coef, keep))
    ref = _planes(x, out._ref) if coef is not None else out._ref
    st.backend.fused("batch_norm_grad", tuple(inputs), ref, {"part": "sums" if coef is None else "input"})
    return out


def fused_cross(a: Array, b: Array, shape: tuple[int, ...], axis: int) -> Array | None:
    """``linalg.cross`` of ``a`` and ``b`` (broadcast to ``shape``, the vectors along the negative
    ``axis``) through the backend's ``fused:cross`` where it applies: one device, a real
    non-bool result dtype (a mixed pair cast to it first), no gradient to record. The operands
    go as (M, 3) Refs in place where their layout allows (broadcast ones through zero strides),
    the result is a view with the vectors back on ``axis``. None where it does not apply."""
    st = a._storage
    backend = st.backend
    if "fused:cross" not in backend.capabilities or b._storage.device is not st.device:
        return None
    dtype = a.dtype if a.dtype is b.dtype else _dtypes.promote(a.dtype, b.dtype, "linalg.cross")
    if dtype.kind not in ("int", "uint", "float") or ((a.requires_grad or b.requires_grad) and _graph.is_grad_enabled()):
        return None
    ndim = len(shape)
    order = _layout.move_axes(ndim, (ndim + axis,), (ndim - 1,), "linalg.cross")
    moved = tuple(shape[i] for i in order)
    m = _layout.prod(moved[:-1])
    out = _out(st.device, backend, dtype, moved, m * 3)
    if m:
        keep: list[Array] = []
        refs = []
        for x in (a, b):
            if x.dtype is not dtype:
                x = cast(x, dtype)
                keep.append(x)
            r = x._ref
            layout = None
            if axis != -1 or r.shape != shape:
                strides = _layout.broadcast_strides(r.shape, r.strides, shape, "linalg.cross")
                layout = _layout.permute(shape, strides, order, "linalg.cross")
            refs.append(_as_2d(x, backend, m, 3, keep, layout))
        backend.fused("cross", tuple(refs), Ref(out._ref.buffer, dtype, (m, 3), (3, 1), 0, m * 3, True), {})
    if axis == -1:
        return out
    back = _layout.move_axes(ndim, (ndim - 1,), (ndim + axis,), "linalg.cross")
    shape2, strides2 = _layout.permute(moved, out._ref.strides, back, "linalg.cross")
    return _new(out._storage, dtype, shape2, strides2, 0)


def bounds(x: Array) -> tuple[int, int]:
    """The minimum and maximum of a non-empty integer ``x`` as Python ints (an index bounds
    check): one ``fused:minmax`` call and one read where the backend declares it, else a ``min``
    and a ``max`` reduction copied side by side, so that a device that runs ahead of the host
    (cuda, webgpu) waits once, not twice."""
    axes = tuple(range(x.ndim))
    backend = x._storage.backend
    if "fused:minmax" in backend.capabilities:
        both = fused_reduce("minmax", x, axes, x.dtype, per_row=2)
    else:
        both = _out(x._storage.device, backend, x.dtype, (2,), 2)
        for i, op in enumerate(("min", "max")):
            part = reduce(op, x, axes, x.dtype)  # held: its buffer lives while the copy reads it
            backend.copy(part._ref, view_as(both, (), (), i)._ref)
    lo, hi = both.tolist()
    return int(lo), int(hi)


def move_axes_last(x: Array, axes: tuple[int, ...]) -> tuple[Array, tuple[int, ...], tuple[int, ...]]:
    """A view of ``x`` with ``axes`` moved to the end; returns (view, kept shape, moved shape)."""
    r = x._ref
    keep = tuple(i for i in range(len(r.shape)) if i not in axes)
    order = keep + axes
    if order != tuple(range(len(order))):
        x = _view(x, tuple(r.shape[i] for i in order), tuple(r.strides[i] for i in order), r.offset)
    return x, tuple(r.shape[i] for i in keep), tuple(r.shape[i] for i in axes)


# Reductions that may run in two stages (each stage's result is a partial of the same op).
_SPLITTABLE = frozenset({"sum", "prod", "max", "min", "any", "all"})


def split_reduction(x: Array, axes: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """Where the reduced ``axes`` of ``x`` form no single run in memory (``sum`` of NCHW over
    (0, 2, 3)) but their innermost ones do: ``(inner, rest)``, the axes to reduce first (as
    (M, K) rows that need no copy) and then the rest (numbered on the partial result); else None.
    The alternative is a copy of ``x`` with the reduced axes last."""
    r = x._ref

    def rows_view(reduced: tuple[int, ...]) -> bool:  # (M, K) with ``reduced`` last, no copy
        _, m, k, (shape, strides) = _layout.reduce_layout(r.shape, r.strides, reduced)
        return _layout.reshape_strides(shape, strides, (m, k)) is not None

    if len(axes) < 2 or not r.size or rows_view(axes):
        return None
    # the innermost reduced axis, then each reduced axis whose stride continues the run
    chain = sorted((abs(r.strides[a]), a) for a in axes if r.shape[a] > 1)
    if not chain or chain[0][0] == 0:
        return None
    inner = [chain[0][1]]
    span = chain[0][0] * r.shape[chain[0][1]]
    for stride, a in chain[1:]:
        if stride != span:
            break
        inner.append(a)
        span *= r.shape[a]
    first = tuple(sorted(inner))
    if len(first) == len([a for a in axes if r.shape[a] > 1]):
        return None
    if not rows_view(first):
        return None
    rest = tuple(a - sum(1 for b in first if b < a) for a in axes if a not in first)
    return first, rest


def reduce(op: str, x: Array, axes: tuple[int, ...], result: _dtypes.DType) -> Array:
    """Reduce ``axes`` of ``x`` into a new array of dtype ``result`` (kept axes only)."""
    st = x._storage
    dev = st.device
    backend = st.backend
    if result not in backend.dtypes:
        check_dtype(dev, result, op)
    r = x._ref
    if op in _SPLITTABLE and result is not _dtypes.float16 and len(axes) > 1:
        # NOTE: in two stages rather than through a copy of x with the reduced axes last (float16
        # excepted: its partials would round to float16, where one pass accumulates in float32)
        split = split_reduction(x, axes)
        if split is not None:
            return reduce(op, reduce(op, x, split[0], result), split[1], result)
    # NOTE: the (M, K) layout with the reduced axes last, from a memoised layout function:
    # no intermediate Array unless the operand has to be compacted.
    kept, m, k, moved = _layout.reduce_layout(r.shape, r.strides, axes)
    out = _out(dev, backend, result, kept, m)
    if m:
        if k == 0 and op in ("max", "min", "argmax", "argmin"):
            raise ValueError(f"{op}: zero-size reduction over an axis of length 0 has no identity.")
        keep: list[Array] = []
        src = _as_2d(x, backend, m, k, keep, moved)
        path = _kernel_path(dev, op, r.dtype)
        run(backend, path, "reduce", op, r.dtype,
            (src, Ref(out._ref.buffer, result, (m,), (1,), 0, m, True)), (1,))  # fmt: skip
    return out


def scan(op: str, x: Array, axis: int, result: _dtypes.DType) -> Array:
    """Inclusive scan along ``axis``; the result has ``x``'s shape and dtype ``result``."""
    dev = x._storage.device
    backend = check_dtype(dev, result, op)
    moved, kept, red = move_axes_last(x, (axis,))
    m, k = _layout.prod(kept), red[0]
    out = _out(dev, backend, result, kept + red, m * k)
    if m * k:
        path = _kernel_path(dev, op, x.dtype)
        keep: list[Array] = []
        run(backend, path, "scan", op, x.dtype,
            (_as_2d(moved, backend, m, k, keep), Ref(out._ref.buffer, result, (m, k), (k, 1), 0, m * k, True)),
            (1,))  # fmt: skip
    return _move_axis_back(out, axis)


def _move_axis_back(out: Array, axis: int) -> Array:
    nd = out.ndim
    if axis == nd - 1:
        return out
    r = out._ref
    order = list(range(nd - 1))
    order.insert(axis, nd - 1)
    return _view(out, tuple(r.shape[i] for i in order), tuple(r.strides[i] for i in order), r.offset)


def _matmul_operand(x: Array, ref: Ref, backend: Backend, keep: list[Array]) -> Ref:
    """A (B, R, C) operand over ``x``'s storage as the kernel may see it: the matrix row- or
    column-major as a BLAS takes it (``Ref.is_blas_matrix``; batch stride free) on strided
    backends, else C-contiguous (compacted): a reversed or broadcast matrix is compacted."""
    if ref.contiguous or ("strided" in backend.capabilities and ref.is_blas_matrix()):
        return ref
    return _materialize(x, ref, backend, keep)


def matmul3(a: Array, ra: Ref, b: Array, rb: Ref, shape: tuple[int, ...]) -> Array:
    """``ra`` (B, M, K) @ ``rb`` (B, K, N), views of ``a``'s and ``b``'s storage of one dtype
    (a batch stride of 0 broadcasts), into a new contiguous array of ``shape`` (B*M*N elements)."""
    st = a._storage
    dev = st.device
    (batch, m, k), n = ra.shape, rb.shape[2]
    path, compute, result = plan(dev, "matmul", ra.dtype)
    backend = st.backend
    size = batch * m * n
    out = _out(dev, backend, result, shape, size, "matmul")
    if size:
        oref = Ref(out._ref.buffer, result, (batch, m, n), (m * n, n, 1), 0, size, True)
        if k == 0:
            backend.fill(oref, _dtypes.python_scalar(0, result, "matmul"))
        else:
            keep: list[Array] = []
            args = (_matmul_operand(a, ra, backend, keep), _matmul_operand(b, rb, backend, keep), oref)
            run(backend, path, "matmul", None, compute, args, (2,))
    return out


def take_last(x: Array, indices: Array) -> Array:
    """``x`` (..., N) gathered at 1-D ``indices`` in [0, N) along the last axis -> (..., K)."""
    dev = x._storage.device
    backend = dev.backend
    *lead, n = x.shape
    m, k = _layout.prod(lead), indices.shape[0]
    out = _out(dev, backend, x.dtype, (*lead, k), m * k)
    if out.size:
        path = _kernel_path(dev, "take", x.dtype)
        keep = [compact(indices)]
        args = (_as_2d(x, backend, m, n, keep), keep[0]._ref, Ref(out._ref.buffer, x.dtype, (m, k), (k, 1), 0, m * k, True))
        run(backend, path, "take", None, x.dtype, args, (2,))
    return out


def scatter_add_last(target: Array, indices: Array, values: Array) -> None:
    """``target[..., indices[k]] += values[..., k]`` in place; ``target`` may be any view."""
    st = target._storage
    backend = st.backend
    *lead, n = target.shape
    m, k = _layout.prod(lead), indices.shape[0]
    if not m * k:
        return
    path = _kernel_path(st.device, "scatter_add", target.dtype)
    keep = [compact(indices), compact(values)]
    idx = keep[0]._ref
    vr = keep[1]._ref
    vals = Ref(vr.buffer, vr.dtype, (m, k), (k, 1), vr.offset, m * k, True)
    r = target._ref
    strides = _layout.reshape_strides(r.shape, r.strides, (m, n))
    if strides is not None and ("strided" in backend.capabilities or r.contiguous):
        dst = Ref(r.buffer, r.dtype, (m, n), strides, r.offset, m * n, _layout.is_contiguous((m, n), strides))
        run(backend, path, "scatter_add", None, target.dtype, (dst, idx, vals), (0,), inout=True)
    else:
        # NOTE: a backend without ``strided`` only ever sees contiguous refs: scatter into a
        # contiguous copy of the target, then copy it back through the view.
        tmp = compact(target)
        if tmp is target:
            tmp = copy_of(target)
        tr = tmp._ref
        dst = Ref(tr.buffer, tr.dtype, (m, n), (n, 1), 0, m * n, True)
        run(backend, path, "scatter_add", None, target.dtype, (dst, idx, vals), (0,), inout=True)
        backend.copy(tr, r)
    st.version += 1


def sort_last(x: Array, descending: bool, stable: bool, values: bool, indices: bool,
              index_dtype: _dtypes.DType) -> tuple[Array | None, Array | None]:  # fmt: skip
    dev = x._storage.device
    backend = dev.backend
    *lead, k = x.shape
    m = _layout.prod(lead)
    vout = _out(dev, backend, x.dtype, x.shape, x.size) if values else None
    iout = _out(dev, backend, index_dtype, x.shape, x.size) if indices else None
    if x.size:
        path = _kernel_path(dev, "sort", x.dtype)
        vr = Ref(vout._ref.buffer, x.dtype, (m, k), (k, 1), 0, m * k, True) if vout is not None else None
        ir = Ref(iout._ref.buffer, index_dtype, (m, k), (k, 1), 0, m * k, True) if iout is not None else None
        outs = tuple(i for i, r in ((1, vr), (2, ir)) if r is not None)
        keep: list[Array] = []
        run(backend, path, "sort", None, x.dtype,
            (_as_2d(x, backend, m, k, keep), vr, ir, descending, stable), outs)  # fmt: skip
    return vout, iout


def random_bits(device: Device, key: int, counter: int, n: int) -> Array:
    backend = check_dtype(device, _dtypes.uint32, "random_bits")
    out = _out(device, backend, _dtypes.uint32, (n,), n)
    if n:
        path = _kernel_path(device, "random_bits", _dtypes.uint32)
        run(backend, path, "random_bits", None, _dtypes.uint32,
            (key, counter, out._ref), (2,))  # fmt: skip
    return out


def copy_of(x: Array) -> Array:
    """A new contiguous array with ``x``'s values."""
    st = x._storage
    r = x._ref
    out = _out(st.device, st.backend, r.dtype, r.shape, r.size)
    if r.size:
        st.backend.copy(r, out._ref)
    if x.requires_grad:
        _graph.record("identity", out, (x,))
    return out


def assign(dst: Array, src: Array | bool | int | float | complex, name: str = "__setitem__") -> None:
    """``dst[...] = src`` into the view ``dst``: broadcast, cast to ``dst``'s dtype, copy."""
    st = dst._storage
    backend = st.backend
    r = dst._ref
    if type(src) is not _ARRAY:
        if not isinstance(src, _SCALARS + (np.generic,)):
            raise TypeError(f"{name}: value must be an ndplane array or a Python scalar; got {type(src).__name__}.")
        _check_scalar_kind(src, r.dtype, name)
        if r.size:
            backend.fill(r, _dtypes.python_scalar(src, r.dtype, name))
        st.version += 1
        return
    same_device(name, dst, src)
    if src.dtype is not r.dtype:
        src = cast(src, r.dtype)
    sref = _broadcast_ref(src._ref, r.shape, name)
    if r.size:
        if src._storage is st and _overlaps(sref, r):
            src = copy_of(src)
            sref = _broadcast_ref(src._ref, r.shape, name)
        backend.copy(sref, r)
    st.version += 1


_KIND_ORDER = {"bool": 0, "int": 1, "uint": 1, "float": 2, "complex": 3}


def _check_scalar_kind(value: Any, dtype: _dtypes.DType, name: str) -> None:
    kind = _dtypes.scalar_kind(value)
    if _KIND_ORDER[kind] > _KIND_ORDER[dtype.kind]:
        raise TypeError(f"{name}: cannot store a Python {kind} in an array of dtype {dtype.name}.")


def _overlaps(a: Ref, b: Ref) -> bool:
    lo_a, hi_a = _layout.extent(a.shape, a.strides, a.offset)
    lo_b, hi_b = _layout.extent(b.shape, b.strides, b.offset)
    return lo_a <= hi_b and lo_b <= hi_a


def to_device(x: Array, device: Device) -> Array:
    if x._storage.device is device:
        return x
    host = x._storage.backend.to_host(x._ref)
    return from_host(host, device, "to_device")


def view_as(x: Array, shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> Array:
    return _new(x._storage, x._ref.dtype, shape, strides, offset)


# ---------------------------------------------------------------------------
# optional extension kernels: linalg and fft (native, else host fallback)
# ---------------------------------------------------------------------------


def linalg(op: str, inputs: tuple[Array, ...],
           outputs: tuple[tuple[tuple[int, ...], _dtypes.DType], ...]) -> tuple[Array, ...]:  # fmt: skip
    """Run ``Backend.linalg(op, ...)`` on ``inputs`` (one dtype, any layout: compacted here)
    into fresh outputs of the given ``(shape, dtype)``s, natively or through the host fallback."""
    dev = inputs[0]._storage.device
    backend = dev.backend
    dtype = inputs[0].dtype
    for _, dt in outputs:
        check_dtype(dev, dt, op)
    keep = [compact(x) for x in inputs]
    outs = tuple(_out(dev, backend, dt, shape, _layout.prod(shape), op) for shape, dt in outputs)
    if not any(o.size for o in outs):
        return outs
    refs = tuple(x._ref for x in keep)
    orefs = tuple(o._ref for o in outs)
    run(backend, _kernel_path(dev, op, dtype), "linalg", op, dtype, (refs, orefs), (1,))
    return outs


def fft_axes(op: str, x: Array, axes: tuple[int, ...], shape: tuple[int, ...], dtype: _dtypes.DType,
             norm: str, last: int) -> Array:  # fmt: skip
    """Run ``Backend.fft(op, x, out, norm, axes)`` (capability ``fft-axes``) on ``x`` as it lies
    into a fresh array of ``shape`` and ``dtype``, C-contiguous with its axis ``last`` moved to
    the end (the layout the 1-D transforms one axis at a time give)."""
    dev = x._storage.device
    backend = check_dtype(dev, dtype, op)
    order = [i for i in range(len(shape)) if i != last] + [last]
    out = _out(dev, backend, dtype, tuple(shape[i] for i in order), _layout.prod(shape), op)
    if last != len(shape) - 1:
        strides = [0] * len(shape)
        for i, st in zip(order, out._ref.strides):
            strides[i] = st
        out = _view(out, shape, tuple(strides), 0)
    if out.size and x.size:
        run(backend, _kernel_path(dev, op, x.dtype), "fft", op, x.dtype, (x._ref, out._ref, norm, axes), (1,))
    return out


def fft(op: str, x: Array, shape: tuple[int, ...], dtype: _dtypes.DType, norm: str) -> Array:
    """Run ``Backend.fft(op, x, out, norm)`` on ``x`` (..., N) along its last axis into a fresh
    array of ``shape`` (..., K) and ``dtype``, natively or through the host fallback."""
    dev = x._storage.device
    backend = check_dtype(dev, dtype, op)
    out = _out(dev, backend, dtype, shape, _layout.prod(shape), op)
    if out.size and x.size:
        *lead, n = x.shape
        m = _layout.prod(lead)
        c = compact(x)  # NOTE: holds the compacted operand alive until the kernel has run
        src = Ref(c._ref.buffer, x.dtype, (m, n), (n, 1), c._ref.offset, m * n, True)
        k = shape[-1]
        dst = Ref(out._ref.buffer, dtype, (m, k), (k, 1), 0, m * k, True)
        run(backend, _kernel_path(dev, op, x.dtype), "fft", op, x.dtype, (src, dst, norm), (1,))
    return out
