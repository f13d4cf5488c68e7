"""Names shared by the core and every backend: protocol version, ops, capabilities.

Op names are the Array API function names.  A backend lists in ``Backend.ops``
the names it implements natively; the core takes a decomposition or the host
fallback for every other one.
"""

from __future__ import annotations

PROTOCOL_VERSION = 1

UNARY_OPS = frozenset({
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_invert", "ceil",
    "conj", "cos", "cosh", "erf", "exp", "expm1", "floor", "gelu", "imag", "isfinite", "isinf",
    "isnan", "log", "log1p", "log2", "log10", "logical_not", "negative", "real", "reciprocal",
    "round", "sigmoid", "sign", "signbit", "silu", "sin", "sinh", "sqrt", "square", "tan", "tanh", "trunc",
})  # fmt: skip
"""``Backend.unary(op, x, out)`` ops. Four have no Array API name and came after the others, each
with a core decomposition, so a backend without them loses nothing and :data:`PROTOCOL_VERSION`
is unchanged; all four take and give real floating dtypes: ``sigmoid`` (``1 / (1 + exp(-x))``;
``ndplane.nn.functional.sigmoid``), ``erf`` (the error function; ``ndplane.special.erf``),
``gelu`` (``x * Phi(x)``, Phi the standard normal CDF, ``x / 2 * erfc(-x / sqrt 2)``;
``ndplane.nn.functional.gelu``) and ``silu`` (``x * sigmoid(x)``; ``ndplane.nn.functional.silu``)."""

BINARY_OPS = frozenset({
    "add", "atan2", "bce_with_logits", "bitwise_and", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift",
    "bitwise_xor", "copysign", "divide", "equal", "floor_divide", "greater", "greater_equal",
    "hypot", "less", "less_equal", "logaddexp", "logaddexp2", "logical_and", "logical_or", "logical_xor",
    "maximum", "minimum", "multiply", "nextafter", "not_equal", "pow", "remainder", "subtract",
})  # fmt: skip
"""``Backend.binary(op, a, b, out)`` ops. One has no Array API name and came after the others,
with a core decomposition, so :data:`PROTOCOL_VERSION` is unchanged: ``bce_with_logits``
(real floating dtypes; ``x`` the logits, ``t`` the targets: ``(1 - t) x + log1p(exp(-x))`` for
``x >= 0``, ``-t x + log1p(exp(x))`` below, the binary cross entropy with logits of
``ndplane.nn.functional.binary_cross_entropy_with_logits``)."""

COMPARISON_OPS = frozenset({"equal", "not_equal", "greater", "greater_equal", "less", "less_equal"})

REDUCE_OPS = frozenset({"sum", "prod", "max", "min", "argmax", "argmin", "any", "all"})
"""``Backend.reduce(op, x, out)`` ops (over the last axis)."""

SCAN_OPS = frozenset({"cumulative_sum", "cumulative_prod"})
"""``Backend.scan(op, x, out)`` ops (along the last axis)."""

KERNEL_OPS = frozenset({"where", "cast", "matmul", "take", "scatter_add", "sort", "random_bits"})
"""Single-kernel methods; each is listed in ``Backend.ops`` under its own name."""

ALL_OPS = UNARY_OPS | BINARY_OPS | REDUCE_OPS | SCAN_OPS | KERNEL_OPS

# Capabilities (``Backend.capabilities``).
STRIDED = "strided"
"""Compute kernels accept arbitrary strides (0 and negative included); see the guide."""
INPLACE = "inplace"
"""``binary``'s ``out`` may be one of its inputs (the same Ref): ``x += y`` runs with no copy."""
HOST_RESIDENT = "host"
"""Buffers live in host memory, so ``numpy.asarray(x)`` may share them."""

FUSED_OPS = frozenset({
    "softmax", "log_softmax", "logsumexp", "layer_norm", "adam", "conv2d", "take_axis", "put_axis",
    "max_pool2d", "avg_pool2d", "count_nonzero", "minmax", "nonzero", "searchsorted", "arange", "sumsq",
    "clip", "nll", "uniform", "batch_norm", "batch_norm_grad", "cross", "integers", "take_along",
})  # fmt: skip
"""Composites a backend may fuse: it declares ``"fused:<op>"`` and implements ``Backend.fused``.
Each is optional (a backend without it gets the generic algorithm), so adding one -- ``adam``
came after the first four -- leaves :data:`PROTOCOL_VERSION` unchanged."""

CAPABILITIES = frozenset({STRIDED, INPLACE, HOST_RESIDENT} | {f"fused:{op}" for op in FUSED_OPS})

# Keys of ``Backend.default_dtypes`` (the Array API inspection names).
DEFAULT_DTYPE_KINDS = ("real floating", "complex floating", "integral", "indexing")

# ---------------------------------------------------------------------------
# Optional extensions: linear algebra and FFT kernels (capabilities "linalg" and "fft").
# ---------------------------------------------------------------------------
LINALG = "linalg"
"""The backend implements ``Backend.linalg`` for the :data:`LINALG_OPS` it lists in ``ops``."""
FFT = "fft"
"""The backend implements ``Backend.fft`` for the :data:`FFT_OPS` it lists in ``ops``."""

LINALG_OPS = frozenset({
    "cholesky", "qr", "svd", "svdvals", "eigh", "eigvalsh", "solve", "inv", "det", "slogdet",
})  # fmt: skip
"""``Backend.linalg(op, inputs, outputs)`` ops, on batches of matrices; see ``Backend.linalg``.
Every other ``ndplane.linalg`` function is a core composite of these and the primitives."""

FFT_OPS = frozenset({"fft", "ifft", "rfft", "irfft", "hfft", "ihfft"})
"""``Backend.fft(op, x, out, norm)`` ops: one-dimensional transforms along the last axis.
The n-dimensional transforms, padding/truncation and the shifts are core composites."""

DLPACK = "dlpack"
"""The backend shares its memory through DLPack without a copy: it sets
``Backend.dlpack_device`` and implements ``Backend.export_dlpack`` and ``Backend.import_dlpack``.
Optional (without it a device array exports a host copy and imports by copying), so adding it
left :data:`PROTOCOL_VERSION` unchanged."""

CHECKED_INDICES = "checked-indices"
"""``take``, and ``fused:take_axis`` and ``fused:take_along`` where declared, raise IndexError for
an index outside ``[0, N)`` (a negative one too) before they return, instead of trusting the
core's check. The core then runs them on a gather's indices as given and checks them itself
(naming the index, or making negative ones count from the end) only after such an error: one
bounds pass and one read to the host fewer per ``take``, ``take_along_axis`` and ``x[int
array]``. Optional, so adding it left :data:`PROTOCOL_VERSION` unchanged; a backend that queues
its work (and so cannot raise in the call) leaves it out."""

FFT_REAL_INPUT = "fft-real-input"
"""``Backend.fft``'s ``fft`` and ``ifft`` also take a real ``x`` (float32 with a complex64 ``out``,
float64 with complex128, ``out`` as long as ``x``) and give the transform of ``x`` read as a
complex signal. The core then hands a real signal over as it is, where it cast it to complex
before: a backend can run the real transform (half the work) and fill the other half of the
spectrum as the conjugate mirror of the first, as PyTorch does, with no complex copy of the input.
Optional (the core casts for a backend without it), so adding it left :data:`PROTOCOL_VERSION`
unchanged."""

FFT_AXES = "fft-axes"
"""``Backend.fft`` also takes a fifth argument, ``axes``: a tuple of distinct axes in ``0..ndim-1``,
and then ``x`` and ``out`` are Refs of any rank and any strides (``x`` as the array lies, no
copy; ``out`` fresh, C-contiguous with the axis the core would transform last moved innermost). ``fft``/``ifft`` transform over every axis in ``axes``
(NumPy's ``fftn``/``ifftn``); ``rfft`` is ``rfftn`` (real to complex over the last of ``axes``,
then complex over the others) and ``irfft`` is ``irfftn`` (complex over all but the last, then
complex to real over the last), with the output's lengths giving ``s``; ``hfft`` and ``ihfft``
come with one axis only. ``norm`` scales by the product of the transform lengths, as NumPy's.
The core then runs a transform along any axis, and the n-dimensional ones, as one call on the
operand as it lies, where it moved the axis last and copied it to a C-contiguous (M, N) array per
axis before (the gradient's path still does: autograd records one node per 1-D transform).
Optional, so adding it left :data:`PROTOCOL_VERSION` unchanged."""

CAPABILITIES = CAPABILITIES | {LINALG, FFT, DLPACK, CHECKED_INDICES, FFT_REAL_INPUT, FFT_AXES}
