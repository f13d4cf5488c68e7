"""The backend protocol (version 1): :class:`Ref` and the :class:`Backend` base class.

A backend serves one device and implements "dumb" kernels over :class:`Ref`
objects.  The core has already checked shapes, promoted dtypes, broadcast
operands and allocated outputs before any method here runs; a kernel never
decides semantics.  See ``docs/backend-authors.md`` for a walk-through.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._layout import contiguous_strides, is_contiguous, prod
from .ops import PROTOCOL_VERSION

if TYPE_CHECKING:
    import numpy as np

    from .._dtypes import DType

__all__ = ["Ref", "Backend"]


class Ref:
    """What a kernel sees of an array: a buffer handle plus a layout in elements.

    ``buffer`` is the backend's own handle (whatever ``alloc``/``from_host``
    returned).  ``strides`` and ``offset`` count elements, not bytes.  Only
    backends with the ``strided`` capability see strides other than the
    C-contiguous ones in compute kernels (``copy``, ``fill`` and ``to_host``
    always may).

    Refs are immutable and built once per array, so they are cheap to pass.
    """

    __slots__ = ("buffer", "dtype", "shape", "strides", "offset", "size", "contiguous")

    def __init__(
        self,
        buffer: Any,
        dtype: DType,
        shape: tuple[int, ...],
        strides: tuple[int, ...],
        offset: int,
        size: int,
        contiguous: bool,
    ) -> None:
        self.buffer = buffer
        self.dtype = dtype
        self.shape = shape
        self.strides = strides
        self.offset = offset
        self.size = size  # number of elements, prod(shape)
        self.contiguous = contiguous  # C-contiguous (size-1 axes ignored)

    @classmethod
    def over(cls, buffer: Any, dtype: DType, shape: tuple[int, ...]) -> Ref:
        """A C-contiguous Ref of ``shape`` from element 0 of ``buffer``: how a backend describes
        scratch memory it allocated itself, with the core's own stride rule.

        >>> Ref.over(None, None, (2, 3, 4)).strides
        (12, 4, 1)
        """
        shape = tuple(shape)
        return cls(buffer, dtype, shape, contiguous_strides(shape), 0, prod(shape), True)

    def permuted(self, order: tuple[int, ...]) -> Ref:
        """The same elements with the axes in ``order`` (a view: nothing is copied), its
        ``contiguous`` flag recomputed.

        >>> r = Ref.over(None, None, (2, 3)).permuted((1, 0))
        >>> r.shape, r.strides, r.contiguous
        ((3, 2), (1, 3), False)
        """
        shape = tuple(self.shape[i] for i in order)
        strides = tuple(self.strides[i] for i in order)
        return Ref(self.buffer, self.dtype, shape, strides, self.offset, self.size, is_contiguous(shape, strides))

    def has_c_strides(self) -> bool:
        """Whether the strides are C-contiguous (size-1 axes ignored), from the numbers
        themselves rather than the ``contiguous`` flag; an empty Ref has no layout (True).

        >>> Ref(None, None, (3, 1), (1, 7), 0, 3, True).has_c_strides()
        True
        """
        return is_contiguous(self.shape, self.strides)

    def is_blas_matrix(self) -> bool:
        """Whether the last two axes are a matrix a BLAS takes: row-major (unit column stride, a
        row stride of at least the column count) or column-major (the transpose), where the
        stride of an axis of length 1 does not count. ``Backend.matmul`` on a ``strided``
        backend sees only such matrices.

        >>> Ref(None, None, (3, 4), (1, 3), 0, 12, False).is_blas_matrix()
        True
        >>> Ref(None, None, (3, 4), (-4, 1), 0, 12, False).is_blas_matrix()  # reversed rows
        False
        """
        (r, c), (rs, cs) = self.shape[-2:], self.strides[-2:]
        return ((c == 1 or cs == 1) and (r == 1 or rs >= c)) or ((r == 1 or rs == 1) and (c == 1 or cs >= r))

    def __repr__(self) -> str:
        return (
            f"Ref(dtype={self.dtype.name}, shape={self.shape}, strides={self.strides}, "
            f"offset={self.offset})"
        )


class Backend:
    """Base class of a backend: one instance serves one device.

    Subclasses set the description attributes and override the methods for
    the ops they list in :attr:`ops`.  Required methods raise
    ``NotImplementedError`` here; optional ones are only called when the
    backend declares them in :attr:`ops` or :attr:`capabilities`.

    Guarantees the core gives every compute kernel (``unary``, ``binary``,
    ``where``, ``cast``, ``reduce``, ``scan``, ``matmul``, ``take``, ``sort``,
    ``random_bits``):

    - operands have the dtypes the method documents (``binary`` gets two equal
      dtypes), and every dtype is in :attr:`dtypes`;
    - ``out`` is freshly allocated, C-contiguous, and never aliases an input
      (unless the backend declares ``inplace``);
    - without the ``strided`` capability every input Ref is C-contiguous.

    What every backend guarantees the core: its methods may be called from several Python
    threads at once, and ``free`` from any thread (the garbage collector's too, inside another
    call); each call's result is what it would be alone. Shared mutable state (an open command
    encoder, a staging ring, a buffer pool) is the backend's to serialise
    (conformance ``test_threads.py``).
    """

    #: Backend name, the device kind in device strings (``"numpy"``, ``"cpu"``).
    name: str = ""
    #: The protocol version this backend implements.
    protocol_version: int = PROTOCOL_VERSION
    #: The device index this instance serves (``"cpu:1"`` -> 1).
    index: int = 0
    #: Supported dtypes; arrays of other dtypes can not be created on this device.
    dtypes: frozenset[DType] = frozenset()
    #: ``{"real floating": ..., "complex floating": ..., "integral": ..., "indexing": ...}``.
    default_dtypes: dict[str, DType] = {}  # noqa: RUF012 - a per-backend value, set by subclasses
    #: Capability names from :mod:`ndplane.backend.ops` (``"strided"``, ``"host"``, ...).
    capabilities: frozenset[str] = frozenset()
    #: Names of the ops implemented natively (op names from :mod:`ndplane.backend.ops`).
    ops: frozenset[str] = frozenset()
    #: Optional-extension ops (``LINALG_OPS``, ``FFT_OPS``) the backend leaves to the core's host
    #: fallback on purpose: they run there without a ``FallbackWarning``, even under
    #: ``NDPLANE_FALLBACK=error``, because the backend declared it.
    host_ops: frozenset[str] = frozenset()
    #: With the ``"dlpack"`` capability: the DLPack ``(device_type, device_id)`` of this
    #: device's memory (``(1, 0)`` CPU, ``(2, n)`` CUDA device n, ...).
    dlpack_device: tuple[int, int] | None = None
    #: Lines ``ndplane info`` prints about this device (e.g. which hardware features gave which
    #: dtypes); informational only.
    notes: tuple[str, ...] = ()

    def supports(self, op: str, dtype: DType) -> bool:
        """Whether ``op`` runs natively for inputs of ``dtype``. Override for per-dtype gaps."""
        return op in self.ops

    def memory_stats(self) -> dict[str, int]:
        """Live memory: ``{"buffers": count, "bytes": total}`` of buffers not yet freed."""
        raise NotImplementedError("need memory_stats")

    # -- memory (required) ---------------------------------------------------

    def alloc(self, nbytes: int) -> Any:
        """Allocate ``nbytes`` (may be 0) of uninitialised memory and return a handle.

        Raise :class:`ndplane.OutOfMemoryError` naming the device and size on failure.
        """
        raise NotImplementedError("need alloc")

    def free(self, buffer: Any) -> None:
        """Release a handle returned by ``alloc`` or ``from_host``; called exactly once."""
        raise NotImplementedError("need free")

    def from_host(self, array: np.ndarray) -> Any:
        """Return a new buffer holding the C-contiguous ``array`` (of a supported dtype)."""
        raise NotImplementedError("need from_host")

    def to_host(self, ref: Ref) -> np.ndarray:
        """Return a NumPy array with the values of ``ref`` (any layout); wait for pending work."""
        raise NotImplementedError("need to_host")

    def copy(self, src: Ref, dst: Ref) -> None:
        """``dst[...] = src``: equal shapes and dtypes, both of any layout, no overlap."""
        raise NotImplementedError("need copy")

    def fill(self, dst: Ref, value: bool | int | float | complex) -> None:
        """``dst[...] = value``; ``dst`` may be any view, ``value`` is already of its dtype."""
        raise NotImplementedError("need fill")

    def synchronize(self) -> None:
        """Wait until every submitted kernel has finished (no-op for synchronous backends)."""

    def adopt_host(self, array: np.ndarray) -> Any:
        """Optional: a buffer handle over ``array``'s own memory, without a copy; ``None`` declines.

        Called only on backends with the ``"host"`` capability, with a C-contiguous, aligned,
        writable, non-empty ``array`` of a supported dtype: one that belongs to the new array
        alone (``ndplane.load`` passes tensors memory-mapped from a checkpoint, copy-on-write,
        so writes never reach the file; unpickling, the bytes an array arrived in, protocol 5:
        a Dask worker's received frame), or one the user shares on purpose
        (``asarray(a, copy=False)``), which the user may go on reading and writing through
        NumPy between kernels. The handle is then
        like one from ``from_host``: the core writes through it, passes it in Refs and frees it
        once, so keep ``array`` alive with it and count it in ``memory_stats``. The default
        returns ``None`` and the core copies through ``from_host`` instead.
        """
        return None

    # -- compute (optional: listed by name in ``ops``) -----------------------

    def unary(self, op: str, x: Ref, out: Ref) -> None:
        """``out = op(x)`` elementwise; same shape. ``out``'s dtype is the op's result dtype
        (bool for ``isnan`` etc., real for ``abs``/``real``/``imag`` of complex); ``x`` has
        already been cast to the computation dtype."""
        raise NotImplementedError(f"need unary {op!r}")

    def binary(self, op: str, a: Ref | Any, b: Ref | Any, out: Ref) -> None:
        """``out = op(a, b)`` elementwise. ``a`` and ``b`` have one dtype and ``out``'s shape
        (broadcast by the core: with ``strided`` through zero strides); either one may instead
        be a Python scalar already converted to that dtype. ``out`` is bool for comparisons."""
        raise NotImplementedError(f"need binary {op!r}")

    def where(self, cond: Ref, a: Ref, b: Ref, out: Ref) -> None:
        """``out = cond ? a : b``; ``cond`` is bool; all of ``out``'s shape; ``a``, ``b``, ``out``
        share one dtype."""
        raise NotImplementedError("need where")

    def cast(self, x: Ref, out: Ref) -> None:
        """``out = x`` converted to ``out.dtype`` with NumPy's ``astype`` semantics."""
        raise NotImplementedError("need cast")

    def reduce(self, op: str, x: Ref, out: Ref) -> None:
        """Reduce the last axis of the 2-D ``x`` (M, K) into ``out`` (M,).

        ``sum``/``prod`` accumulate in ``out.dtype`` (which may be wider than ``x``'s);
        ``max``/``min`` propagate NaN; ``argmax``/``argmin`` write the first index of the
        extreme (NaN counts as extreme) into an integer ``out``; ``any``/``all`` write bool.
        K may be 0 only for ``sum``, ``prod``, ``any`` and ``all``."""
        raise NotImplementedError(f"need reduce {op!r}")

    def scan(self, op: str, x: Ref, out: Ref) -> None:
        """Inclusive ``cumulative_sum``/``cumulative_prod`` along the last axis of the 2-D ``x``
        (M, K) into ``out`` (M, K) of ``out.dtype`` (may be wider than ``x``'s)."""
        raise NotImplementedError(f"need scan {op!r}")

    def matmul(self, a: Ref, b: Ref, out: Ref) -> None:
        """``out[i] = a[i] @ b[i]`` for ``a`` (B, M, K), ``b`` (B, K, N), ``out`` (B, M, N),
        one dtype. With ``strided``, each matrix is row-major (unit stride on axis -1, a row
        stride of at least its column count) or column-major (the transpose), as a BLAS takes
        it -- the stride of an axis of length 1 is arbitrary -- and batch strides may be 0."""
        raise NotImplementedError("need matmul")

    def take(self, x: Ref, indices: Ref, out: Ref) -> None:
        """``out[m, k] = x[m, indices[k]]`` for ``x`` (M, N), 1-D integer ``indices`` (K,),
        ``out`` (M, K). The core has checked every index is in ``[0, N)``, unless the backend
        declares ``CHECKED_INDICES``: then it raises IndexError for an index outside ``[0, N)``
        (negative ones included) before it reads ``x``."""
        raise NotImplementedError("need take")

    def scatter_add(self, out: Ref, indices: Ref, values: Ref) -> None:
        """``out[m, indices[k]] += values[m, k]`` for ``out`` (M, N) (a view the user named;
        any layout on ``strided`` backends), ``indices`` (K,) in ``[0, N)`` (may repeat),
        ``values`` (M, K) of ``out``'s dtype."""
        raise NotImplementedError("need scatter_add")

    def sort(
        self, x: Ref, values_out: Ref | None, indices_out: Ref | None, descending: bool, stable: bool
    ) -> None:
        """Sort each row of the 2-D ``x`` (M, K). Writes the sorted values and/or the integer
        permutation (either may be None). NaNs sort last (first when descending: the
        reverse order), -0.0 equals 0.0; ``stable`` keeps equal elements in input order
        (descending stable keeps them in input order too)."""
        raise NotImplementedError("need sort")

    def fused(self, op: str, inputs: tuple[Ref | None, ...], out: Ref, params: dict[str, Any]) -> None:
        """A fused composite, called only when the backend declares the capability ``"fused:<op>"``.

        It must match the generic algorithm in :mod:`ndplane.composite` within float tolerance.
        All Refs are C-contiguous; ``x`` is 2-D (M, K) and the op works along its last axis:

        - ``softmax`` / ``log_softmax``: ``inputs = (x,)``, ``out`` (M, K);
        - ``logsumexp``: ``inputs = (x,)``, ``out`` (M,);
        - ``layer_norm``: ``inputs = (x, weight, bias)`` with ``weight``/``bias`` (K,) or None,
          ``params = {"eps": float}``, ``out`` (M, K) = (x - mean) / sqrt(var + eps) * weight + bias
          (biased variance over the row).
        - ``adam`` (the optimizers' update, the one fused op that writes its operands in place):
          ``inputs = (grad, exp_avg, exp_avg_sq)``, ``out = param``; all four C-contiguous, of
          one real floating dtype and one shape (any rank). ``params = {"lr", "beta1", "beta2",
          "eps", "weight_decay": float, "decoupled": bool, "step": int >= 1}``. With
          ``g = grad + weight_decay * param`` unless ``decoupled`` (else ``g = grad``), it sets
          ``exp_avg = beta1 * exp_avg + (1 - beta1) * g``,
          ``exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g * g`` and
          ``param -= lr / (1 - beta1**step) * exp_avg / (sqrt(exp_avg_sq) / sqrt(1 - beta2**step) + eps)
          + (lr * weight_decay * param if decoupled else 0)`` (``param`` on the right: before the
          update), computing float16 in float32 -- :class:`ndplane.optim.Adam`'s generic rule.
        - ``conv2d`` (:func:`ndplane.nn.functional.conv2d`, forward and backward; not (M, K)):
          ``params = {"stride", "padding", "dilation": (int, int), "groups": int, "grad": None |
          "input" | "weight" | "bias"}``; one float dtype (float32 or float64), every Ref
          C-contiguous. With ``x`` (N, C, H, W), ``weight`` (O, C / groups, KH, KW) and ``g``
          (N, O, OH, OW): ``grad`` None: ``inputs = (x, weight, bias or None)``, ``out`` (N, O, OH,
          OW) the cross-correlation of the zero-padded ``x`` plus ``bias``; ``"input"``:
          ``inputs = (g, weight)``, ``out`` the gradient of ``x``; ``"weight"``: ``inputs = (x, g)``,
          ``out`` the gradient of ``weight``; ``"bias"``: ``inputs = (g,)``, ``out`` (O,) ``g``
          summed over N, OH and OW.
        - ``take_axis`` (``take`` along an axis other than the last, so the result comes out
          C-contiguous instead of a transposed view of ``take``'s (M, K)): ``inputs = (x,
          indices)`` with ``x`` (A, N, B), ``indices`` (K,) in the indexing dtype, every one in
          ``[0, N)`` (with ``CHECKED_INDICES``: any, an IndexError for one outside); ``out``
          (A, K, B) of ``x``'s dtype, ``out[a, k, b] = x[a, indices[k], b]``.
        - ``take_along`` (:func:`ndplane.take_along_axis`: one gather instead of a bounds
          check, each index offset by its row and a flat ``take``): ``inputs = (x, indices)``
          with ``x`` (M, N) of any dtype, laid out as :meth:`reduce`'s ``x``, and ``indices``
          (M, J) C-contiguous in the indexing dtype, every one in ``[0, N)`` (with
          ``CHECKED_INDICES``: any, an IndexError for one outside, a negative one too); ``out``
          (M, J) C-contiguous of ``x``'s dtype, ``out[m, j] = x[m, indices[m, j]]``.
        - ``put_axis`` (``x[int array] = y`` on one axis, in place like ``adam``): ``inputs =
          (indices, values)``, ``indices`` (K,) as above, ``values`` (A, K, B) of ``out``'s dtype,
          ``out`` (A, N, B) the array written: ``out[a, indices[k], b] = values[a, k, b]``; where
          an index repeats the last ``k`` wins. ``values`` never shares memory with ``out``.
          Any dtype, for both. ``params`` is ``{}`` or ``{"distinct": True}``: the core's promise
          that no index repeats (a permutation, as ``unique_inverse`` scatters through), so the
          rows may be written in any order, on many threads; a backend may ignore it (writing in
          order is right either way). Where the promise is broken which value lands is
          unspecified, but every write stays inside ``out``.
        - ``max_pool2d`` / ``avg_pool2d`` (:func:`ndplane.nn.functional.max_pool2d`, forward and
          the input gradient): ``params = {"kernel", "stride": (int, int), "grad": None |
          "input"}``, float32 or float64, no padding. ``grad`` None: ``inputs = (x,)`` with ``x``
          (N, C, H, W), ``out`` (N, C, OH, OW), ``OH = (H - KH) // SH + 1``: each window's maximum
          (NaN propagates) or its sum divided by ``KH * KW``. ``"input"``: ``inputs = (g, x)``
          (max) or ``(g,)`` (avg), ``g`` (N, C, OH, OW), ``out`` (N, C, H, W): the max's ``g`` goes
          to every element equal to its window's maximum as ``(g * hit) / count``; the average's
          as ``g / (KH * KW)`` to each; where windows overlap the parts add up.
        - ``count_nonzero`` (of a non-bool ``x``, in one pass instead of ``x != 0`` summed):
          ``inputs = (x,)`` with ``x`` (M, K) of any dtype, laid out as :meth:`reduce`'s ``x``
          (any strides on ``strided`` backends); ``out`` (M,) of the default integer dtype: the
          number of nonzero elements of each row (NaN counts; ``-0.0`` does not).
        - ``minmax`` (the bounds check of integer indices -- ``take``, ``x[int array]`` -- in
          one call instead of a ``min`` and a ``max`` reduction): ``inputs = (x,)`` with ``x``
          (M, K), ``K >= 1``, of an integer dtype, laid out as :meth:`reduce`'s ``x``; ``out``
          (M, 2) C-contiguous of ``x``'s dtype: each row's minimum, then its maximum.
        - ``nonzero`` (``nonzero``, ``x[bool mask]``, ``unique_*``: the flat positions of the
          nonzero elements in one pass instead of a prefix sum and a scatter): ``inputs = (x,)``
          with ``x`` (1, K) of any dtype, laid out as :meth:`reduce`'s ``x``; ``out`` (N,)
          C-contiguous of the indexing dtype, where the core counted N nonzero elements (NaN
          counts; ``-0.0`` does not): the positions ``k`` of those elements, ascending. A
          count other than N raises ``ValueError`` and writes nothing past ``out``.
        - ``searchsorted`` (a binary search per value instead of a joint sort and a scatter):
          ``inputs = (a, v)`` with ``a`` (1, N), ``N >= 0``, ascending in :meth:`sort`'s order,
          and ``v`` (1, K), both of one dtype (bool, integer or real floating), laid out as :meth:`reduce`'s ``x``;
          ``params = {"right": bool}``; ``out`` (K,) C-contiguous of the indexing dtype: for each
          ``v[0, k]``, how many elements of ``a`` sort before it (``right``: how many do not sort
          after it), in the sort order (NaN after everything, ``-0.0`` equal to ``0.0``).
        - ``sumsq`` (2-norms, ``var``, ``std``: the sum of squares in one pass, without the
          squares -- or the deviations -- written out first): ``inputs = (x,)`` or ``(x, c)``
          with ``x`` (M, K) of a real floating dtype, laid out as :meth:`reduce`'s ``x``, and
          ``c`` (M,) C-contiguous of ``x``'s dtype; ``out`` (M,) C-contiguous of ``x``'s dtype:
          each row's sum of ``(x[m, k] - c[m])**2`` (``c = 0`` without it), accumulated as
          :meth:`reduce`'s ``sum`` accumulates (float16 in float32).
        - ``clip`` (``clip`` with scalar bounds in one pass instead of ``maximum`` then
          ``minimum``): ``inputs = (x,)`` with ``x`` (N,) C-contiguous of a real floating dtype;
          ``params = {"min", "max": float or None}``, never NaN; ``out`` (N,) C-contiguous of
          ``x``'s dtype: ``minimum(maximum(x, min), max)`` as :meth:`binary` computes them with
          a scalar operand of ``x``'s dtype (a NaN ``x`` stays NaN), an absent bound skipped.
        - ``arange`` (``arange``, ``linspace``: evenly spaced values made on the device instead
          of on the host and copied): ``inputs = ()``; ``out`` (N,) C-contiguous of an integer
          or real floating dtype; ``params = {"start", "step"}``, Python ints for an integer
          ``out`` (then ``out[i] = start + i * step`` in wrapping int64, cast as :meth:`cast`
          does) or floats for a floating one (then ``i * step + start`` in float64 -- the
          product rounded, then the sum, no fused multiply-add -- rounded to ``out``'s dtype
          once).
        - ``uniform`` (:meth:`ndplane.random.Generator.random`, ``uniform`` and ``normal``'s
          uniforms in one pass instead of :meth:`random_bits` and about eight elementwise
          kernels): ``inputs = ()``; ``out`` (N,) C-contiguous float32 or float64; ``params =
          {"key": int, "counter": int, "low": float, "high": float}`` as :meth:`random_bits`
          takes them. With ``w`` the words :meth:`random_bits` would write from that counter,
          ``u[i] = (w[i] >> 8) * 2**-24`` for float32 and ``((w[2i] >> 5) * 2**26 + (w[2i+1] >>
          6)) * 2**-53`` for float64 (exact), then ``out[i] = u[i] * (high - low) + low`` as
          :meth:`binary` computes a multiply and then an add with scalar operands rounded to
          ``out``'s dtype (``high - low`` taken in float64 first; no fused multiply-add): bit
          for bit the generic algorithm.
        - ``batch_norm`` (:func:`ndplane.nn.functional.batch_norm` outside training, with no
          gradient recorded: one pass instead of a multiply, an add and the per-channel kernels
          that fold the statistics): ``inputs = (x, mean, var, weight, bias)`` with ``x`` (A, C,
          B) C-contiguous float32 or float64 (the batch, the channels, the rest flattened) and
          the others (C,) C-contiguous of ``x``'s dtype, ``weight`` and ``bias`` possibly None;
          ``params = {"eps": float}``; ``out`` like ``x``: ``out = x * s[c] + t[c]`` with ``s = 1 /
          sqrt(var + eps)`` (times ``weight``) and ``t = bias - mean * s`` (``-mean * s`` without
          a bias), each operation rounded to ``x``'s dtype as :meth:`binary` and :meth:`unary`
          round it (``eps`` rounded to the dtype first, no fused multiply-add): the generic
          algorithm bit for bit.
        - ``cross`` (:func:`ndplane.linalg.cross` in one pass instead of six multiplies, three
          subtracts and a stack): ``inputs = (a, b)``, both (M, 3) of one real non-bool dtype,
          laid out as :meth:`reduce`'s ``x`` (broadcast operands through zero strides on
          ``strided`` backends); ``out`` (M, 3) C-contiguous of that dtype: ``out[m] = (a1 b2 -
          a2 b1, a2 b0 - a0 b2, a0 b1 - a1 b0)`` of row m, each product and difference rounded as
          :meth:`binary` rounds it (float16 computed in float32, integers wrapping; no fused
          multiply-add): the generic algorithm bit for bit.
        - ``nll`` (:func:`ndplane.nn.functional.nll_loss`: the gather, the bounds check and the
          sum in one call instead of a bounds check, the flat positions, a ``take`` and a
          ``sum``): ``inputs = (x, target)`` with ``x`` (M, K) of a real floating dtype, laid out
          as :meth:`reduce`'s ``x``, and ``target`` (M,) C-contiguous of any integer dtype;
          ``params = {"reduction": "none" | "sum" | "mean"}``; ``out`` C-contiguous of ``x``'s
          dtype: for ``"none"`` (M,) with ``out[m] = -x[m, target[m]]``, else (1,) with the
          negated sum of the ``x[m, target[m]]`` accumulated as :meth:`reduce`'s ``sum``
          accumulates (float16 in float32), divided by M for ``"mean"`` (then ``M >= 1``). A
          target outside ``[0, K)`` raises ``IndexError`` (the core then names it); ``out`` is
          unspecified after an error. A backend that cannot raise it synchronously (one that
          queues its work) does not declare the op.
        """
        raise NotImplementedError(f"need fused {op!r}")

    # -- optional extensions: capabilities "linalg" and "fft" -----------------

    def linalg(self, op: str, inputs: tuple[Ref, ...], outputs: tuple[Ref, ...]) -> None:
        """A linear-algebra kernel over a batch of matrices, called only for the ops of
        :data:`~ndplane.backend.ops.LINALG_OPS` the backend lists in :attr:`ops` (declare the
        ``"linalg"`` capability too). Without it the core runs the host fallback.

        All Refs are fresh or compacted, C-contiguous; inputs share one floating dtype
        (float32, float64, complex64 or complex128; the core casts others first); ``B`` is
        the flattened batch. ``real`` below is the real dtype of the input's.

        - ``cholesky``: ``(a (B,N,N),) -> (L (B,N,N),)``, lower factor of a Hermitian
          positive-definite ``a`` (only its lower triangle is read);
        - ``qr``: ``(a (B,M,N),) -> (q (B,M,K), r (B,K,N))``; ``K = min(M, N)`` (reduced) or
          ``K = M`` (complete, recognisable from ``q``'s shape);
        - ``svd``: ``(a (B,M,N),) -> (u (B,M,J), s (B,K) real, vh (B,J',N))``, singular values
          descending; ``J = J' = K = min(M, N)`` (reduced) or ``J = M, J' = N`` (full);
        - ``svdvals``: ``(a,) -> (s (B,K) real,)``;
        - ``eigh``: ``(a (B,N,N),) -> (w (B,N) real ascending, v (B,N,N))`` of a Hermitian ``a``
          (lower triangle read); ``eigvalsh``: ``(a,) -> (w,)``;
        - ``solve``: ``(a (B,N,N), b (B,N,K)) -> (x (B,N,K),)`` with ``a @ x = b``;
        - ``inv``: ``(a (B,N,N),) -> (inverse (B,N,N),)``;
        - ``det``: ``(a (B,N,N),) -> (det (B,),)``;
        - ``slogdet``: ``(a (B,N,N),) -> (sign (B,), logabsdet (B,) real)``.

        ``B``, ``M``, ``N`` and ``K`` may be 0. A singular or non-positive-definite input
        may raise a ``ValueError`` subclass (NumPy's ``LinAlgError`` is one) or give
        non-finite values, but must never crash.
        """
        raise NotImplementedError(f"need linalg {op!r}")

    def fft(self, op: str, x: Ref, out: Ref, norm: str, axes: tuple[int, ...] | None = None) -> None:
        """A one-dimensional discrete Fourier transform along the last axis, called only for
        the ops of :data:`~ndplane.backend.ops.FFT_OPS` the backend lists in :attr:`ops`
        (declare the ``"fft"`` capability too); otherwise the core runs the host fallback.

        ``x`` (M, N) and ``out`` (M, K) are C-contiguous; the core has already padded or
        truncated ``x`` to the transform length, so ``K`` and the length ``n`` follow from
        the shapes: ``fft``/``ifft``: complex -> complex, ``n = N = K``; ``rfft``: real ->
        complex, ``n = N``, ``K = n // 2 + 1``; ``ihfft``: real -> complex, same shapes as
        ``rfft``; ``irfft``: complex -> real, ``n = K``, ``N = n // 2 + 1``; ``hfft``:
        complex -> real, same shapes as ``irfft``. ``x`` and ``out`` have matching
        precision (float32 with complex64, float64 with complex128). ``norm`` is
        ``"backward"`` (no scaling forward, 1/n inverse), ``"ortho"`` (1/sqrt(n) both ways)
        or ``"forward"`` (1/n forward), with NumPy's meaning of forward for each op.
        A backend declaring ``"fft-real-input"`` (:data:`~ndplane.backend.ops.FFT_REAL_INPUT`)
        also gets a real ``x`` for ``fft``/``ifft`` (float32 with complex64 ``out``, float64
        with complex128; ``K = N``): the transform of ``x`` read as complex. A backend declaring
        ``"fft-axes"`` (:data:`~ndplane.backend.ops.FFT_AXES`) also gets ``axes``: then ``x`` and
        ``out`` have any rank and strides, and the transform runs over those axes (``fftn``,
        ``ifftn``, ``rfftn``, ``irfftn``; see the constant). Without it, ``axes`` is never passed.
        """
        raise NotImplementedError(f"need fft {op!r}")

    # -- optional extension: capability "dlpack" ------------------------------

    def export_dlpack(self, ref: Ref, owner: Any, stream: Any) -> Any:
        """An object whose ``__dlpack__`` (with or without ``max_version``) and
        ``__dlpack_device__`` share ``ref``'s memory with no copy, and which keeps ``owner``
        (the exporting Array) alive as long as a consumer holds what it exported.

        ``stream`` is the consumer's, as it passed it to ``Array.__dlpack__``: before this
        returns, all work queued on the device is ordered before that stream (None: finished;
        -1: no ordering asked for; otherwise a device-specific handle, e.g. a
        ``cudaStream_t`` as an integer, 1 and 2 CUDA's legacy and per-thread default streams).
        """
        raise NotImplementedError("need export_dlpack")

    def import_dlpack(self, obj: Any) -> tuple[Any, str, tuple[int, ...], tuple[int, ...], int] | None:
        """Wrap the memory of ``obj`` (a DLPack producer whose ``__dlpack_device__`` is this
        device's) with no copy: ``(buffer, dtype name, shape, strides in elements, nbytes)``,
        element 0 at the buffer's start; ``free`` of that buffer releases ``obj``. The device
        orders its later work after the producer's (pass the device's stream to ``__dlpack__``).
        None where it cannot share (e.g. a layout it does not take): the core then copies."""
        raise NotImplementedError("need import_dlpack")

    def device_pointer(self, ref: Ref) -> tuple[int, int | None]:
        """With ``"dlpack"`` on CUDA memory (``dlpack_device[0] == 2``): the address of ``ref``'s
        element 0 and the stream (a ``cudaStream_t`` as an integer) its pending work is queued
        on, or None when none is pending -- what ``__cuda_array_interface__`` (version 3) hands
        a consumer, which then synchronises with that stream itself."""
        raise NotImplementedError("need device_pointer")

    def random_bits(self, key: int, counter: int, out: Ref) -> None:
        """Fill the 1-D uint32 ``out`` with the Philox-4x32-10 stream: word ``i`` is word
        ``i % 4`` of Philox(key, counter + i // 4), ``key`` a 64-bit and ``counter`` a
        128-bit integer (see :func:`ndplane.backend.reference.philox4x32`)."""
        raise NotImplementedError("need random_bits")
