"""The cuda backend: a thin adapter from the protocol to the native module.

One backend instance per visible GPU (``cuda:0``, ``cuda:1``, ...), each with one
non-blocking stream: kernels are queued and return at once; ``to_host`` and
``synchronize`` wait. Buffers come from a caching allocator per device
(``NDPLANE_CUDA_NO_CACHE=1`` turns caching off, e.g. for compute-sanitizer).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np

import ndplane
from ndplane.backend import DLPACK, FFT_OPS, LINALG_OPS, STRIDED, Backend, BackendSpec, Ref, hookimpl

_M64 = (1 << 64) - 1
# The single-kernel methods of the protocol this adapter implements below.
_KERNEL_OPS = frozenset({"where", "cast", "matmul", "take", "scatter_add", "sort", "random_bits"})
# NOTE: cuSOLVER and cuFFT are not bound yet: linalg and fft are declared host ops (NumPy, a
# copy each way, no FallbackWarning), said in `ndplane info cuda` and docs/backends.md.
_HOST_OPS = LINALG_OPS | FFT_OPS
_NOTES = (
    "linalg (cholesky, qr, svd, eigh, solve, inv, det, ...) and fft run on the host through NumPy, "
    "with a copy each way: cuSOLVER and cuFFT are not bound yet",
)
_DEFAULTS = {
    "real floating": ndplane.float64, "complex floating": ndplane.complex128,
    "integral": ndplane.int64, "indexing": ndplane.int64,
}  # fmt: skip


@functools.cache
def _native() -> Any:
    # NOTE: imported on first use, so that discovering the plugin loads no CUDA code.
    from . import _native as native

    native.init(tuple(ndplane.ALL_DTYPES), ndplane.OutOfMemoryError)
    native.set_cublas_candidates(_cublas_candidates())
    return native


class _Exported:
    """What ``export_dlpack`` hands the core: one DLPack producer over the device memory, whether
    nanobind made an ``nb_ndarray`` (its own ``__dlpack__``; nanobind >= 2.2) or, as older
    nanobinds do, the legacy capsule itself (then every ``max_version`` gets that capsule,
    which the DLPack protocol allows)."""

    __slots__ = ("_made", "_device")

    def __init__(self, made: Any, device: tuple[int, int]) -> None:
        self._made, self._device = made, device

    def __dlpack__(self, **kwargs: Any) -> Any:
        made = self._made
        return made.__dlpack__(**kwargs) if hasattr(made, "__dlpack__") else made

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._device


def _cublas_candidates() -> list[str]:
    """libcublas from NVIDIA's wheels (``pip install nvidia-cublas``), if installed."""
    try:
        import nvidia
    except ImportError:
        return []
    found = []
    for root in getattr(nvidia, "__path__", []):
        for major in ("cu13", "cublas"):
            lib = Path(root) / major / "lib" / "libcublas.so.13"
            if lib.exists():
                found.append(str(lib))
    return found


@functools.cache
def _probe() -> tuple[bool, int, str]:
    try:
        native = _native()
    except Exception as exc:  # noqa: BLE001 - any failure makes the backend unavailable
        return False, 0, (f"the native module failed to load ({type(exc).__name__}: {exc}); "
                          f"reinstall ndplane-cuda (pip install --force-reinstall ndplane-cuda)")  # fmt: skip
    ok, count, _driver, _runtime, reason = native.probe()
    return bool(ok), int(count), str(reason)


def _make_backend_class() -> type[Backend]:
    native = _native()
    by_name = {d.name: d for d in ndplane.ALL_DTYPES}
    table = native.op_dtypes()
    support = {op: frozenset(by_name[n] for n in names)
               for kind in ("unary", "binary") for op, names in table[kind].items() if names}  # fmt: skip
    # NOTE: the ops this build has, from its own tables -- never the core's lists, so a newer
    # core's ops reach this backend as decompositions or host fallbacks, not as claims.
    native_ops = frozenset(support) | frozenset(table["reduce"]) | frozenset(table["scan"]) | _KERNEL_OPS

    class CudaBackend(Backend):
        """CUDA kernels on one NVIDIA GPU: strided elementwise, deterministic reductions and
        scans, cuBLAS matmul, radix sort, take and a deterministic scatter_add, fused softmax,
        log_softmax, logsumexp, layer_norm and Adam, Philox random bits, DLPack both ways;
        asynchronous on one stream per device."""

        name = "cuda"
        dtypes = frozenset(ndplane.ALL_DTYPES)
        default_dtypes = _DEFAULTS
        capabilities = frozenset({STRIDED, DLPACK} | {f"fused:{op}" for op in native.fused_ops()})
        ops = native_ops
        host_ops = _HOST_OPS
        notes = _NOTES

        def __init__(self, index: int = 0) -> None:
            self.index = index
            self.dlpack_device = (2, index)  # kDLCUDA
            self.device_name, self.multiprocessors = native.device_info(index)
            native.set_grid_limit(self.multiprocessors * 8)

        def __repr__(self) -> str:
            return f"<CudaBackend cuda:{self.index} ({self.device_name})>"

        def supports(self, op: str, dtype: Any) -> bool:
            dtypes = support.get(op)
            return dtype in dtypes if dtypes is not None else op in native_ops

        def memory_stats(self) -> dict[str, int]:
            """``buffers`` and ``bytes`` live, plus the cache: ``reserved_bytes`` held from the
            driver in ``segments`` (``raw_allocs`` cudaMalloc calls so far), ``cached_bytes`` of
            those free for reuse, ``peak_bytes``."""
            return dict(native.memory_stats(self.index))

        def empty_cache(self) -> None:
            """Return every cached, unused segment to the driver."""
            native.empty_cache(self.index)

        # -- memory: alloc raises ndplane.OutOfMemoryError naming the device and size
        def alloc(self, nbytes: int) -> Any:
            return native.alloc(self.index, nbytes)

        free = staticmethod(native.free)
        copy = staticmethod(native.copy)
        fill = staticmethod(native.fill)

        def from_host(self, array: np.ndarray) -> Any:
            return native.from_host(self.index, np.ascontiguousarray(array))

        def to_host(self, ref: Ref) -> np.ndarray:
            out = np.empty(ref.shape, ref.dtype.dtype)
            native.to_host(ref, out.ctypes.data, out.nbytes)
            return out

        def synchronize(self) -> None:
            native.synchronize(self.index)

        # -- DLPack: the device memory itself, ordered by CUDA events
        def export_dlpack(self, ref: Ref, owner: Any, stream: Any) -> Any:
            return _Exported(native.export_dlpack(ref, owner, stream), self.dlpack_device)

        device_pointer = staticmethod(native.device_pointer)

        def import_dlpack(self, obj: Any) -> tuple[Any, str, tuple[int, ...], tuple[int, ...], int] | None:
            # NOTE: our stream to the producer, so its pending work is ordered before ours (the
            # non-blocking stream does not wait for the legacy default stream by itself).
            capsule = obj.__dlpack__(stream=native.stream_handle(self.index))
            return native.import_dlpack(self.index, capsule)  # type: ignore[no-any-return]

        # -- compute
        unary = staticmethod(native.unary)
        binary = staticmethod(native.binary)
        where = staticmethod(native.where)
        cast = staticmethod(native.cast)
        reduce = staticmethod(native.reduce)
        scan = staticmethod(native.scan)
        matmul = staticmethod(native.matmul)
        fused = staticmethod(native.fused)
        take = staticmethod(native.take)
        scatter_add = staticmethod(native.scatter_add)
        sort = staticmethod(native.sort)

        def random_bits(self, key: int, counter: int, out: Ref) -> None:
            native.random_bits(key & _M64, counter & _M64, (counter >> 64) & _M64, out)

    return CudaBackend


@functools.cache
def backend_class() -> type[Backend]:
    """The CudaBackend class (loads the native module on first call)."""
    return _make_backend_class()


def _available() -> tuple[bool, str]:
    ok, _count, reason = _probe()
    return ok, reason


def _device_count() -> int:
    return _probe()[1]


@hookimpl
def ndplane_register_backends() -> list[BackendSpec]:
    return [
        BackendSpec(
            name="cuda",
            factory=lambda index: backend_class()(index),
            protocol_version=1,  # the protocol this plugin implements, stated, not inherited
            distribution="ndplane-cuda",
            version="0.1.0",
            is_available=_available,
            device_count=_device_count,
            priority=40,  # above cpu (20) and webgpu (15 on a real GPU): a usable NVIDIA GPU is the default
            description="CUDA kernels (nanobind + nvcc) on NVIDIA GPUs; cuBLAS matmul loaded at run time",
        )
    ]
