"""The NumPy reference backend and its test-only fake devices.

Buffers are NumPy arrays; every kernel views its Refs as NumPy arrays (the
``ndarray`` constructor checks each view against the buffer's bounds, and a Ref
of a freed buffer raises) and runs the shared reference kernels of
:mod:`ndplane.backend.reference`.

Fake devices, for testing the core as array-api-strict does:

- ``numpy:0`` and ``numpy:1``: two distinct devices (device-mixing errors);
- ``numpy-nof64``: no float64, complex128, int64 or uint64, 32-bit defaults
  (unsupported-dtype errors, a 32-bit indexing dtype, as on WebGPU);
- ``numpy-contig``: without the ``strided`` capability, so the core must
  compact every operand first (it raises on a strided compute operand).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

import ndplane
from ndplane.backend import (
    ALL_OPS,
    DLPACK,
    HOST_RESIDENT,
    INPLACE,
    STRIDED,
    Backend,
    BackendSpec,
    Ref,
    held_view,
    hookimpl,
)
from ndplane.backend import reference as K
from ndplane.backend.ops import FFT, FFT_AXES, FFT_OPS, FFT_REAL_INPUT, LINALG, LINALG_OPS

_ALL = frozenset(ndplane.ALL_DTYPES)
_DEFAULTS_64 = {
    "real floating": ndplane.float64, "complex floating": ndplane.complex128,
    "integral": ndplane.int64, "indexing": ndplane.int64,
}  # fmt: skip
_DEFAULTS_32 = {
    "real floating": ndplane.float32, "complex floating": ndplane.complex64,
    "integral": ndplane.int32, "indexing": ndplane.int32,
}  # fmt: skip
_NO_64 = _ALL - {ndplane.float64, ndplane.complex128, ndplane.int64, ndplane.uint64}
_NAMES = {d.dtype: d.name for d in ndplane.ALL_DTYPES}


class _Exported:
    """What ``export_dlpack`` hands the core: NumPy's DLPack export of the held view."""

    __slots__ = ("array",)

    def __init__(self, view: np.ndarray, owner: Any) -> None:
        self.array = held_view(view, owner)

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


class NumpyBackend(Backend):
    """The reference backend: every primitive, every dtype, strided, on NumPy (linalg and fft too)."""

    ops = ALL_OPS | LINALG_OPS | FFT_OPS

    def __init__(
        self,
        index: int = 0,
        name: str = "numpy",
        dtypes: frozenset[Any] = _ALL,
        default_dtypes: dict[str, Any] | None = None,
        strided: bool = True,
    ) -> None:
        self.name = name
        self.index = index
        self.dtypes = dtypes
        self.default_dtypes = dict(default_dtypes or _DEFAULTS_64)
        base = {HOST_RESIDENT, INPLACE, LINALG, FFT, FFT_REAL_INPUT, DLPACK}  # NumPy ufuncs handle out= aliasing an input
        self.dlpack_device = (1, 0)
        # NOTE: "fft-axes" hands fft strided operands of any rank: only for the strided device.
        self.capabilities = frozenset(base | {STRIDED, FFT_AXES} if strided else base)
        self._buffers = 0
        self._bytes = 0
        # NOTE: the buffers freed while a Ref may still name them (id -> buffer, weakly: an entry
        # goes when its array does): a kernel handed such a Ref raises, as a GPU backend must (its
        # memory is reused at once), where NumPy would read the still-allocated array.
        self._freed: weakref.WeakValueDictionary[int, np.ndarray] = weakref.WeakValueDictionary()

    def __repr__(self) -> str:
        return f"<NumpyBackend {self.name}:{self.index}>"

    def _view(self, ref: Ref) -> np.ndarray:
        """``ref`` as a NumPy view; a Ref whose buffer was freed is the core's defect."""
        if self._freed and self._freed.get(id(ref.buffer)) is ref.buffer:
            raise ValueError(f"{self.name}: a kernel was handed a Ref whose buffer was freed ({ref!r}).")
        return _view(ref)

    def _born(self, buf: np.ndarray) -> np.ndarray:
        self._buffers += 1
        self._bytes += buf.nbytes
        return buf

    # -- memory --------------------------------------------------------------

    def memory_stats(self) -> dict[str, int]:
        return {"buffers": self._buffers, "bytes": self._bytes}

    def alloc(self, nbytes: int) -> np.ndarray:
        try:
            buf = np.empty(nbytes, np.uint8)
        except MemoryError:
            raise ndplane.OutOfMemoryError(
                f"{self.name}:{self.index}: out of memory allocating {nbytes} bytes "
                f"({self._bytes} bytes in {self._buffers} live buffers)."
            ) from None
        return self._born(buf)

    def free(self, buffer: np.ndarray) -> None:
        self._freed[id(buffer)] = buffer
        self._buffers -= 1
        self._bytes -= buffer.nbytes

    def from_host(self, array: np.ndarray) -> np.ndarray:
        buf = self.alloc(array.nbytes)
        buf.view(array.dtype)[...] = array.reshape(-1)
        return buf

    def adopt_host(self, array: np.ndarray) -> np.ndarray:
        # A flat byte view of the array's memory: its base chain keeps that memory alive.
        return self._born(array.reshape(-1).view(np.uint8))

    def to_host(self, ref: Ref) -> np.ndarray:
        return self._view(ref)

    # -- DLPack: NumPy's own, on views of the buffers
    def export_dlpack(self, ref: Ref, owner: Any, stream: Any) -> Any:
        return _Exported(self._view(ref), owner)

    def import_dlpack(self, obj: Any) -> tuple[Any, str, tuple[int, ...], tuple[int, ...], int] | None:
        a = np.from_dlpack(obj)
        if not (a.flags.c_contiguous and a.flags.writeable and a.dtype in _NAMES):
            return None  # a view, read-only or of no ndplane dtype: the core copies
        buf = self._born(a.reshape(-1).view(np.uint8))
        return buf, _NAMES[a.dtype], a.shape, tuple(s // a.itemsize for s in a.strides), buf.nbytes

    def copy(self, src: Ref, dst: Ref) -> None:
        np.copyto(self._view(dst), self._view(src))

    def fill(self, dst: Ref, value: Any) -> None:
        self._view(dst)[...] = value

    # -- compute -------------------------------------------------------------

    def unary(self, op: str, x: Ref, out: Ref) -> None:
        K.unary(op, self._view(x), self._view(out))

    def binary(self, op: str, a: Any, b: Any, out: Ref) -> None:
        K.binary(op, self._view(a) if type(a) is Ref else a, self._view(b) if type(b) is Ref else b, self._view(out))

    def where(self, cond: Ref, a: Ref, b: Ref, out: Ref) -> None:
        K.where(self._view(cond), self._view(a), self._view(b), self._view(out))

    def cast(self, x: Ref, out: Ref) -> None:
        K.cast(self._view(x), self._view(out))

    def reduce(self, op: str, x: Ref, out: Ref) -> None:
        K.reduce(op, self._view(x), self._view(out))

    def scan(self, op: str, x: Ref, out: Ref) -> None:
        K.scan(op, self._view(x), self._view(out))

    def matmul(self, a: Ref, b: Ref, out: Ref) -> None:
        # The reference backend holds the core to the protocol, so the conformance suite on
        # this device catches a core that passes a matrix no BLAS takes.
        if not (a.is_blas_matrix() and b.is_blas_matrix()):
            raise ValueError(f"matmul: the core passed a matrix no BLAS takes ({a!r}, {b!r}).")
        K.matmul(self._view(a), self._view(b), self._view(out))

    def take(self, x: Ref, indices: Ref, out: Ref) -> None:
        K.take(self._view(x), self._view(indices), self._view(out))

    def scatter_add(self, out: Ref, indices: Ref, values: Ref) -> None:
        K.scatter_add(self._view(out), self._view(indices), self._view(values))

    def sort(self, x: Ref, values_out: Ref | None, indices_out: Ref | None,
             descending: bool, stable: bool) -> None:  # fmt: skip
        K.sort(self._view(x), values_out and self._view(values_out), indices_out and self._view(indices_out),
               descending, stable)  # fmt: skip

    def random_bits(self, key: int, counter: int, out: Ref) -> None:
        K.random_bits(key, counter, self._view(out))

    def linalg(self, op: str, inputs: tuple[Ref, ...], outputs: tuple[Ref, ...]) -> None:
        K.linalg(op, tuple(self._view(r) for r in inputs), tuple(self._view(r) for r in outputs))

    def fft(self, op: str, x: Ref, out: Ref, norm: str, axes: tuple[int, ...] | None = None) -> None:
        K.fft(op, self._view(x), self._view(out), norm, axes)


class ContigBackend(NumpyBackend):
    """``numpy-contig``: no ``strided`` capability, and it holds the core to that contract.

    Every Ref a compute kernel receives, input or output, must be C-contiguous (the
    contract in ``docs/backend-authors.md``); a strided one raises instead of being read
    correctly by NumPy anyway, so the test suite run on this device catches a core path
    that forgets to compact. ``copy``, ``fill`` and ``to_host`` take any layout.
    """

    def __init__(self, index: int = 0, name: str = "numpy-contig") -> None:
        super().__init__(index, name=name, strided=False)


def _contig_checked(method: str) -> Any:
    """``NumpyBackend.<method>``, first refusing any strided (or mislabelled) Ref argument."""
    kernel = getattr(NumpyBackend, method)

    def checked(self: ContigBackend, *args: Any) -> None:
        refs = [r for arg in args for r in (arg if type(arg) is tuple else (arg,)) if type(r) is Ref]
        for r in refs:
            if not (r.contiguous and r.has_c_strides()):
                raise AssertionError(
                    f"{self.name}.{method}: got a non-contiguous Ref (shape {r.shape}, strides "
                    f"{r.strides}) on a backend without the 'strided' capability; the core must "
                    "compact it first"
                )
        kernel(self, *args)

    checked.__name__ = method
    return checked


for _method in ("unary", "binary", "where", "cast", "reduce", "scan", "matmul", "take", "scatter_add", "sort",
                "random_bits", "linalg", "fft"):  # fmt: skip
    setattr(ContigBackend, _method, _contig_checked(_method))


def _view(ref: Ref) -> np.ndarray:
    size = ref.dtype.itemsize
    return np.ndarray(
        ref.shape, ref.dtype.dtype, buffer=ref.buffer, offset=ref.offset * size,
        strides=tuple(s * size for s in ref.strides),
    )  # fmt: skip


def _spec(name: str, count: int, test_only: bool, description: str, cls: type[NumpyBackend] = NumpyBackend,
          **kwargs: Any) -> BackendSpec:  # fmt: skip
    return BackendSpec(
        name=name,
        factory=lambda index: cls(index, name=name, **kwargs),
        protocol_version=1,  # the protocol this plugin implements, stated, not inherited
        distribution="ndplane-numpy",
        version="0.1.0",
        device_count=lambda: count,
        priority=10,
        test_only=test_only,
        description=description,
    )


@hookimpl
def ndplane_register_backends() -> list[BackendSpec]:
    return [
        _spec("numpy", 2, False, "reference backend over NumPy (numpy:1 is a second, distinct device)"),
        _spec("numpy-nof64", 1, True, "test device: no 64-bit dtypes, 32-bit defaults (like WebGPU)",
              dtypes=_NO_64, default_dtypes=_DEFAULTS_32),
        _spec("numpy-contig", 1, True, "test device without the strided capability",
              cls=ContigBackend),
    ]  # fmt: skip
