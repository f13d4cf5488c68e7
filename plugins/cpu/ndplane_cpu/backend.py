"""The cpu backend: a thin adapter from the protocol to the native module.

Kernel methods are the native functions themselves (``staticmethod``), so a
call from the core goes straight into C++ with the protocol's Refs: the
native side reads each Ref's slots, checks the layout against its buffer and
releases the GIL only for large work.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import numpy as np

import ndplane
from ndplane.backend import (
    HOST_RESIDENT,
    INPLACE,
    STRIDED,
    Backend,
    BackendSpec,
    Ref,
    hookimpl,
)
from ndplane.backend.ops import FFT, FFT_OPS, LINALG

from . import _fft

# The single-kernel methods of the protocol this adapter implements below.
_KERNEL_OPS = frozenset({"where", "cast", "matmul", "take", "scatter_add", "sort", "random_bits"})
_DEFAULTS = {
    "real floating": ndplane.float64, "complex floating": ndplane.complex128,
    "integral": ndplane.int64, "indexing": ndplane.int64,
}  # fmt: skip
# log2 of the cycles OpenBLAS's idle threads poll before they sleep (see _native).
_OPENBLAS_THREAD_TIMEOUT = 19


@functools.cache
def _native() -> Any:
    # NOTE: imported on first use, so that discovering the plugin loads no C++ code.
    # scipy_openblas32 loads libscipy_openblas.so (RTLD_GLOBAL) on import; _native then finds it
    # by soname wherever the package is installed, with no rpath into it (CMakeLists.txt).
    # NOTE: OpenBLAS reads OPENBLAS_THREAD_TIMEOUT once, when the library loads: its idle
    # threads poll for 2**n cycles before sleeping, 2**28 (about 0.1 s) by default. After one
    # threaded gemm its workers then hold cores that the backend's own pool needs for the next
    # 0.1 s: a digits CNN epoch right after an evaluation ran 36-40 ms instead of 22-25. 2**19
    # cycles is about the 200 us that the pool's own workers poll (NDPLANE_CPU_SPIN_US); a
    # value the user set wins.
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", str(_OPENBLAS_THREAD_TIMEOUT))
    import scipy_openblas32  # noqa: F401

    from . import _native as native

    native.init(Ref, tuple(ndplane.ALL_DTYPES), ndplane.OutOfMemoryError, "cpu:0")
    # NOTE: the reference backend raises NumPy's LinAlgError (a ValueError) on singular input.
    native.set_linalg_error(np.linalg.LinAlgError)
    return native


def _make_backend_class() -> type[Backend]:
    native = _native()
    by_name = {d.name: d for d in ndplane.ALL_DTYPES}
    table = native.op_dtypes()
    support = {op: frozenset(by_name[n] for n in names)
               for kind in ("unary", "binary") for op, names in table[kind].items()}  # fmt: skip
    lapack = frozenset({ndplane.float32, ndplane.float64, ndplane.complex64, ndplane.complex128})
    # NOTE: the FFT is FFTW's or ducc0's (_fft.py), claimed only where one of them is installed;
    # without both the core runs the host fallback.
    fft_ops = _fft.OPS if _fft.available() else frozenset()
    support.update({op: lapack for op in (*table["linalg"], *fft_ops)})
    # NOTE: the ops this build has, from its own tables -- never the core's lists, so a newer
    # core's ops reach this backend as decompositions or host fallbacks, not as claims.
    native_ops = frozenset(support) | frozenset(table["reduce"]) | frozenset(table["scan"]) | _KERNEL_OPS
    # NOTE: "checked-indices", "fft-real-input" and "fft-axes" (ndplane.backend.CHECKED_INDICES,
    # FFT_REAL_INPUT, FFT_AXES) by their names: a core of 0.1 from before them still loads this
    # plugin (and ignores them: it checks every index first, casts a real signal to complex, and
    # moves each transform's axis last in a C-contiguous copy). "fft-axes" runs on ducc0.
    _capabilities = {STRIDED, INPLACE, HOST_RESIDENT, LINALG, "checked-indices"}
    _capabilities |= {FFT, "fft-real-input"} if fft_ops else set()
    _capabilities |= {"fft-axes"} if fft_ops and _fft._ducc_available() else set()
    _capabilities |= {f"fused:{op}" for op in table["fused"]}
    _fft_kernel, _fft_plans = _fft.make_fft(native.num_threads, native)

    class CpuBackend(Backend):
        """C++ kernels for every primitive and dtype; strided; buffers in host memory; LAPACK linalg; FFTW/ducc0 FFT."""

        name = "cpu"
        #: Without FFTW and ducc0 the FFT runs through the host fallback on purpose (NumPy's
        #: pocketfft, in the same host memory): no FallbackWarning, even under NDPLANE_FALLBACK=error.
        host_ops = frozenset() if fft_ops else FFT_OPS
        notes = (
            (f"fft: {' and '.join(_fft.engines())}, the faster measured per layout",)
            if fft_ops
            else ("fft: neither pyFFTW nor ducc0 is installed (pip install 'ndplane-cpu[fft]'): NumPy's FFT on the host",)
        )
        dtypes = frozenset(ndplane.ALL_DTYPES)
        default_dtypes = _DEFAULTS
        # NOTE: INPLACE: every elementwise loop reads element i of its inputs before it writes
        # element i of out, so out may be an input of the same layout (x += y, no allocation).
        capabilities = frozenset(_capabilities)
        ops = native_ops
        isa = native.isa()
        vector_math = native.vector_math()  # "libmvec" or "scalar" (src/vmath.h)

        def __init__(self, index: int = 0) -> None:
            self.index = index

        def __repr__(self) -> str:
            return (
                f"<CpuBackend cpu:{self.index} ({self.isa}, {self.vector_math} math, "
                f"{native.num_threads()} threads)>"
            )

        def supports(self, op: str, dtype: Any) -> bool:
            dtypes = support.get(op)
            return dtype in dtypes if dtypes is not None else op in native_ops

        def memory_stats(self) -> dict[str, int]:
            buffers, nbytes, _cached = native.memory_stats()
            return {"buffers": buffers, "bytes": nbytes}

        # -- memory: alloc raises ndplane.OutOfMemoryError naming the device and size
        alloc = staticmethod(native.alloc)
        free = staticmethod(native.free)
        copy = staticmethod(native.copy)
        fill = staticmethod(native.fill)

        def from_host(self, array: np.ndarray) -> Any:
            return native.from_host(np.ascontiguousarray(array))

        def adopt_host(self, array: np.ndarray) -> Any:
            # NOTE: a Buffer over the array's own memory, holding the array's buffer export until
            # it dies (a checkpoint's mapped pages, a chunk received by a Dask worker).
            return native.adopt_host(array) if array.nbytes else None

        def to_host(self, ref: Ref) -> np.ndarray:
            dtype = ref.dtype.dtype
            if ref.size == 0:
                return np.empty(ref.shape, dtype)
            size = dtype.itemsize
            # NOTE: a view, not a copy; NumPy checks it against the buffer's bounds and
            # keeps the buffer alive.
            return np.ndarray(ref.shape, dtype, buffer=ref.buffer, offset=ref.offset * size,
                              strides=tuple(s * size for s in ref.strides))  # fmt: skip

        # -- compute
        unary = staticmethod(native.unary)
        binary = staticmethod(native.binary)
        where = staticmethod(native.where)
        cast = staticmethod(native.cast)
        reduce = staticmethod(native.reduce)
        scan = staticmethod(native.scan)
        matmul = staticmethod(native.matmul)
        take = staticmethod(native.take)
        scatter_add = staticmethod(native.scatter_add)
        sort = staticmethod(native.sort)
        fused = staticmethod(native.fused)
        linalg = staticmethod(native.linalg)  # LAPACK: float32, float64, complex64, complex128
        fft = staticmethod(_fft_kernel)  # FFTW or ducc0, measured per layout: f32, f64, c64, c128
        fft_plans = _fft_plans  # which engine runs each layout (tests, benchmarks)

        def random_bits(self, key: int, counter: int, out: Ref) -> None:
            native.random_bits(key, counter, out)  # NOTE: the 128-bit counter split in C++, as for fused:uniform

    return CpuBackend


_backend_class: type[Backend] | None = None


def backend_class() -> type[Backend]:
    """The CpuBackend class (loads the native module on first call)."""
    global _backend_class
    if _backend_class is None:
        _backend_class = _make_backend_class()
    return _backend_class


def _available() -> tuple[bool, str]:
    try:
        _native()
    except Exception as exc:  # noqa: BLE001 - any failure makes the backend unavailable
        return False, (f"the native module failed to load ({type(exc).__name__}: {exc}); "
                       f"reinstall ndplane-cpu (pip install --force-reinstall ndplane-cpu)")  # fmt: skip
    return True, ""


@hookimpl
def ndplane_register_backends() -> list[BackendSpec]:
    return [
        BackendSpec(
            name="cpu",
            factory=lambda index: backend_class()(index),
            protocol_version=1,  # the protocol this plugin implements, stated, not inherited
            distribution="ndplane-cpu",
            version="0.1.0",
            is_available=_available,
            priority=20,
            description="C++ kernels (nanobind), multithreaded and vectorised; OpenBLAS GEMM",
        )
    ]
