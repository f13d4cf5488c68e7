"""The WebGPU backend: every primitive as a WGSL compute shader, run through wgpu-py.

Device ``"webgpu:i"`` is the i-th compute-capable adapter (Vulkan, Metal or D3D12), real
GPUs first. Importing this module starts nothing: :func:`_probe` asks wgpu for
adapters on the first availability check, and ``BackendSpec.factory`` creates the
device, once per adapter per process (see :mod:`ndplane_webgpu._runtime`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

import ndplane
from ndplane.backend import (
    BINARY_OPS,
    KERNEL_OPS,
    REDUCE_OPS,
    SCAN_OPS,
    STRIDED,
    UNARY_OPS,
    Backend,
    BackendSpec,
    Ref,
    hookimpl,
)
from ndplane.backend.ops import FFT_OPS, LINALG_OPS

from . import _codegen as G
from . import _kernels as Kn

if TYPE_CHECKING:
    from ._runtime import Runtime  # imported at first use: it loads wgpu

__all__ = ["WebGPUBackend", "ndplane_register_backends"]

# NOTE: complex64 is a pair of f32 moved as two u32 words (kernels/complex.wgsl): no feature.
_BASE_DTYPES = ("bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float32", "complex64")
# Dtypes an adapter feature adds: (features, dtypes). float64 takes both 64-bit features, as its
# bits travel as a u64 (naga validates no bitcast of an f64 to two u32 words). float16 is stored
# as bits and computed in f32, so it needs no feature; it is offered where "shader-f16" is, as
# before (a sign of half-precision hardware).
FEATURE_DTYPES = (
    (("shader-f16",), ("float16",)),
    (("shader-int64",), ("int64", "uint64")),
    (("shader-int64", "shader-f64"), ("float64", "complex128")),
)
_FUSED_ROWS = ("softmax", "log_softmax", "logsumexp")
_BOOL_RESULT = frozenset({"isfinite", "isinf", "isnan", "logical_not", "signbit"})
_F = TypeVar("_F", bound=Callable[..., Any])


def _serialized(method: _F) -> _F:
    """``method`` under its device's lock: the Runtime records every dispatch into one open
    command encoder and compute pass, stages parameters in one ring and keeps one pool of freed
    buffers, so two Python threads calling at once would interleave their commands. Re-entrant:
    a buffer freed by the garbage collector in the middle of a call takes it again."""

    @functools.wraps(method)
    def locked(self: WebGPUBackend, *args: Any, **kwargs: Any) -> Any:
        rt = self.rt
        with rt.lock:
            _free_pending(rt)
            return method(self, *args, **kwargs)

    return locked  # type: ignore[return-value]


def _free_pending(rt: Runtime) -> None:
    """The frees queued while another thread held ``rt.lock`` (see ``WebGPUBackend.free``)."""
    pending = rt.pending_frees
    while pending:
        rt.free(pending.pop())


class WebGPUBackend(Backend):
    """WGSL kernels on one wgpu adapter: strided, 32-bit compute (64-bit where the adapter has
    the features), 8/16-bit packed storage."""

    name = "webgpu"
    protocol_version = 1
    capabilities = frozenset({STRIDED} | {f"fused:{op}" for op in _FUSED_ROWS})
    #: Ops this backend runs through the host fallback on purpose (no WGSL kernels for them);
    #: the core should neither warn nor refuse them (see the plugin's README).
    host_ops = frozenset(LINALG_OPS | FFT_OPS)
    ops = frozenset(
        {op for op in UNARY_OPS if op in G.UNARY} | {op for op in BINARY_OPS if op in G.BINARY}
        | REDUCE_OPS | SCAN_OPS | KERNEL_OPS
    )  # fmt: skip

    def __init__(self, index: int = 0) -> None:
        from . import _runtime

        self.index = index
        self.rt = rt = _runtime.runtime(index)
        names, self.notes = _dtypes_of(rt.features)
        #: f32 arithmetic flushes subnormals to zero on this adapter (a probe at creation);
        #: the float32 functions avoid float operations on subnormals where they can.
        self.flushes_f32_subnormals = rt.flushes_f32_subnormals()
        if self.flushes_f32_subnormals:
            self.notes += ("float32 subnormals flush to zero on this adapter (WGSL permits it): exp, log, "
                           "sqrt and pow handle them in integers, other float32 results may flush",)  # fmt: skip
        self.dtypes = frozenset(getattr(ndplane, n) for n in names)
        wide = "int64" in names
        f64 = "float64" in names
        self.default_dtypes = {
            "real floating": ndplane.float64 if f64 else ndplane.float32,
            "complex floating": ndplane.complex128 if f64 else ndplane.complex64,
            "integral": ndplane.int64 if wide else ndplane.int32,
            "indexing": ndplane.int64 if wide else ndplane.int32,
        }  # fmt: skip
        # NOTE: the generic matmul keeps two 1024-element tiles of the compute type in workgroup
        # memory: 32 KiB for complex128, more than WebGPU guarantees (16 KiB).
        self._matmul_c128 = rt.adapter.limits["max-compute-workgroup-storage-size"] >= 32768
        self.info = dict(rt.adapter.info)

    def __repr__(self) -> str:
        return f"<WebGPUBackend webgpu:{self.index} {self.info.get('device', '')!r}>"

    def supports(self, op: str, dtype: Any) -> bool:
        if op in G.UNARY or op in G.BINARY:
            expr = G.op_expr(G.UNARY if op in G.UNARY else G.BINARY, op, dtype.name)
            # NOTE: float64 transcendentals come from kernels/f64math.wgsl; until it defines one,
            # the op is not native on float64 (never WGSL's f64 built-ins, see float64.wgsl).
            return expr is not None and not G.missing_math(expr)
        if op == "matmul" and dtype.name == "complex128":
            return self._matmul_c128
        if op in ("sort", "random_bits") and dtype.kind == "complex":
            return False  # the core orders no complex values and draws no complex bits
        return op in self.ops

    # -- memory --------------------------------------------------------------

    @_serialized
    def memory_stats(self) -> dict[str, int]:
        return {"buffers": self.rt.live_buffers, "bytes": self.rt.live_bytes}

    @_serialized
    def alloc(self, nbytes: int) -> Any:
        return self.rt.alloc(nbytes)

    def free(self, buffer: Any) -> None:
        # NOTE: never waits for the lock. The garbage collector frees from finalizers on any
        # thread, wgpu's callback threads included: a free there that waited for the lock while
        # the thread holding it waited for that callback deadlocked (the array-api suite on
        # lavapipe, 2026-11-27). Where another thread holds the lock, the free is queued and the
        # next call that takes the lock performs it (the same thread re-enters at once).
        rt = self.rt
        if rt.lock.acquire(blocking=False):
            try:
                _free_pending(rt)
                rt.free(buffer)
            finally:
                rt.lock.release()
        else:
            rt.pending_frees.append(buffer)

    @_serialized
    def from_host(self, array: np.ndarray) -> Any:
        buf = self.rt.alloc(array.nbytes)
        self.rt.write(buf, array.reshape(-1).view(np.uint8))
        return buf

    @_serialized
    def to_host(self, ref: Ref) -> np.ndarray:
        dt = ref.dtype.dtype
        if ref.size == 0:
            return np.empty(ref.shape, dt)
        if ref.contiguous:
            src, off = ref.buffer, ref.offset
        else:
            src = self.rt.alloc(ref.size * dt.itemsize)
            try:
                Kn.elementwise(self.rt, "$a", _contig(ref, src), [ref])
            except BaseException:
                self.rt.free(src)
                raise
            off = 0
        try:
            raw = self.rt.read(src, off * dt.itemsize, (off + ref.size) * dt.itemsize)
        finally:
            if src is not ref.buffer:
                self.rt.free(src)
        return np.frombuffer(raw, dt).reshape(ref.shape).copy()

    @_serialized
    def copy(self, src: Ref, dst: Ref) -> None:
        if src.size == 0:
            return
        isz = src.dtype.itemsize
        if (src.contiguous and dst.contiguous and src.buffer is not dst.buffer
                and (src.offset * isz) % 4 == 0 and (dst.offset * isz) % 4 == 0
                and (src.size * isz) % 4 == 0):  # fmt: skip
            Kn.copy_bytes(self.rt, src.buffer, src.offset * isz, dst.buffer, dst.offset * isz,
                          src.size * isz)  # fmt: skip
        else:
            Kn.elementwise(self.rt, "$a", dst, [src])

    @_serialized
    def fill(self, dst: Ref, value: Any) -> None:
        if dst.size:
            Kn.elementwise(self.rt, "$a", dst, [value])

    @_serialized
    def synchronize(self) -> None:
        self.rt.synchronize()

    # -- elementwise ---------------------------------------------------------

    @_serialized
    def unary(self, op: str, x: Ref, out: Ref) -> None:
        expr = _expr(G.UNARY, op, x.dtype.name, "$x", "$a")
        ct = G.DTYPES[x.dtype.name].ct
        res = "bool" if op in _BOOL_RESULT else G.PART[ct] if ct in G.PART and op in G.REAL_RESULT else ct
        self._ew(G.conv(res, G.DTYPES[out.dtype.name].ct, expr), out, [x])

    @_serialized
    def binary(self, op: str, a: Any, b: Any, out: Ref) -> None:
        dt = (a if type(a) is Ref else b).dtype.name
        expr = _expr(G.BINARY, op, dt)
        bool_res = op in G.BOOL_BINARY
        res = "bool" if bool_res else G.DTYPES[dt].ct
        self._ew(G.conv(res, G.DTYPES[out.dtype.name].ct, expr), out, [a, b])

    @_serialized
    def where(self, cond: Ref, a: Ref, b: Ref, out: Ref) -> None:
        self._ew("select($c, $b, $a)", out, [cond, a, b])

    @_serialized
    def cast(self, x: Ref, out: Ref) -> None:
        self._ew(G.cast_expr(x.dtype.name, out.dtype.name, "$a"), out, [x])

    def _ew(self, expr: str, out: Ref, inputs: list[Any]) -> None:
        if out.size:
            Kn.elementwise(self.rt, expr, out, inputs)

    # -- reductions, scans, linear algebra -----------------------------------

    @_serialized
    def reduce(self, op: str, x: Ref, out: Ref) -> None:
        M, K = x.shape
        if M == 0:
            return
        if K == 0:
            self.fill(out, {"sum": 0, "prod": 1, "any": False, "all": True}[op])
            return
        Kn.reduce(self.rt, op, x, out)

    @_serialized
    def scan(self, op: str, x: Ref, out: Ref) -> None:
        if x.size:
            Kn.scan(self.rt, op, x, out)

    @_serialized
    def matmul(self, a: Ref, b: Ref, out: Ref) -> None:
        if out.size == 0:
            return
        if a.shape[2] == 0:
            self.fill(out, False if out.dtype.kind == "bool" else 0)
            return
        Kn.matmul(self.rt, a, b, out)

    @_serialized
    def fused(self, op: str, inputs: tuple[Ref | None, ...], out: Ref, params: dict[str, Any]) -> None:
        if op not in _FUSED_ROWS:
            raise NotImplementedError(f"webgpu: no fused {op!r}")
        x = inputs[0]
        assert x is not None
        missing = G.missing_math("f64_exp( f64_log(") if x.dtype.name == "float64" else []
        if missing:
            raise NotImplementedError(f"webgpu: fused {op} on {x.dtype.name} needs {', '.join(missing)} "
                                      "(kernels/f64math.wgsl)")  # fmt: skip
        if out.size:
            Kn.rows(self.rt, op, x, out)

    # -- indexing, sorting, random -------------------------------------------

    @_serialized
    def take(self, x: Ref, indices: Ref, out: Ref) -> None:
        if out.size:
            Kn.take(self.rt, x, indices, out)

    @_serialized
    def scatter_add(self, out: Ref, indices: Ref, values: Ref) -> None:
        if values.size:
            Kn.scatter_add(self.rt, out, indices, values)

    @_serialized
    def sort(self, x: Ref, values_out: Ref | None, indices_out: Ref | None,
             descending: bool, stable: bool) -> None:  # fmt: skip
        if x.size and (values_out is not None or indices_out is not None):
            Kn.sort(self.rt, x, values_out, indices_out, descending)

    @_serialized
    def random_bits(self, key: int, counter: int, out: Ref) -> None:
        if out.size:
            Kn.random_bits(self.rt, key, counter, out)


def _expr(table: dict[str, dict[str, str]], op: str, dtype: str, *rename: str) -> str:
    expr = G.op_expr(table, op, dtype)
    if expr is None:
        raise NotImplementedError(f"webgpu: no kernel for {op} on {dtype}")
    if rename:
        expr = expr.replace(*rename)
    return expr


def _dtypes_of(features: frozenset[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(dtype names, notes for ``ndplane info``) of an adapter with ``features``."""
    names, notes = _BASE_DTYPES, [f"{', '.join(_BASE_DTYPES)}: declared on every adapter (no feature needed)"]
    for needs, dts in FEATURE_DTYPES:
        missing = [f for f in needs if f not in features]
        if not missing:
            names += dts
            notes.append(f"{', '.join(dts)}: declared, from adapter feature {' and '.join(needs)}")
        else:
            notes.append(f"{', '.join(dts)}: not declared, the adapter lacks feature {' and '.join(missing)}")
    return names, tuple(notes)


def _contig(ref: Ref, buf: Any) -> Ref:
    shape = ref.shape
    strides, acc = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        strides[d] = acc
        acc *= shape[d]
    return Ref(buf, ref.dtype, shape, tuple(strides), 0, ref.size, True)


# ---------------------------------------------------------------------------
# discovery
# ---------------------------------------------------------------------------


@functools.cache
def _probe() -> tuple[bool, str, int, bool]:
    """(available, why not, adapter count, first adapter is software), asked once."""
    try:
        from . import _runtime

        found = _runtime.adapters()
    except Exception as exc:  # noqa: BLE001 - a broken driver stack means unavailable
        return False, (f"wgpu could not enumerate adapters ({type(exc).__name__}: {exc}); "
                       "install a Vulkan driver (on Linux without a GPU: "
                       "apt-get install mesa-vulkan-drivers) and set XDG_RUNTIME_DIR."), 0, False
    if not found:
        return False, ("wgpu found no Vulkan, Metal or D3D12 adapter; install a GPU driver with "
                       "Vulkan support (on Linux without a GPU: apt-get install "
                       "mesa-vulkan-drivers for Mesa's lavapipe)."), 0, False  # fmt: skip
    return True, "", len(found), _runtime.is_software(found[0])


def _available() -> tuple[bool, str]:
    ok, why, _, _ = _probe()
    return ok, why


def _count() -> int:
    return _probe()[2]


def _priority() -> int:
    # NOTE: below cpu (20) even on a real GPU: webgpu has no float64, int64 or complex128 on an
    # adapter without the features, so becoming the default could silently change a program's
    # dtypes, and most small programs run faster on cpu. A software adapter (lavapipe) ranks
    # below numpy (10) too.
    ok, _, _, software = _probe()
    return 0 if not ok else 5 if software else 15


@hookimpl
def ndplane_register_backends() -> list[BackendSpec]:
    from . import __version__

    return [
        BackendSpec(
            name="webgpu",
            factory=WebGPUBackend,
            protocol_version=1,  # the protocol this plugin implements, stated, not inherited
            distribution="ndplane-webgpu",
            version=__version__,
            is_available=_available,
            device_count=_count,
            priority=_priority,
            description="WGSL compute shaders through wgpu-py (Vulkan, Metal, D3D12)",
        )
    ]
