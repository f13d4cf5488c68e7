"""Shared pieces of the conformance suite: hypothesis settings, strategies, NumPy comparisons.

The central strategy is :func:`arrays`: it draws values (special floats mixed in),
then a LAYOUT for them — transposed, sliced with steps, negative strides, an
offset, broadcast, or a chain of those — and builds the ndplane array through
those same view ops. The same ops applied to the NumPy base give the reference,
so every test compares an ndplane view with a NumPy view of equal values.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ndplane as nd
from ndplane.backend import Ref, plugins

# ---------------------------------------------------------------------------
# hypothesis profiles: "ci" (the default: few, derandomized examples) and "deep"
# ---------------------------------------------------------------------------
_COMMON: dict[str, Any] = dict(
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)  # fmt: skip
settings.register_profile("ndplane-ci", max_examples=8, derandomize=True, database=None, **_COMMON)
settings.register_profile("ndplane-deep", max_examples=300, **_COMMON)
PROFILE_NAME = "ndplane-" + (os.environ.get("NDPLANE_HYPOTHESIS_PROFILE", "ci").strip() or "ci")
PROFILE = settings.get_profile(PROFILE_NAME)


def hyp(scale: float = 1.0) -> settings:
    """Settings of the active profile, with ``scale`` times its number of examples."""
    return settings(PROFILE, max_examples=max(1, int(PROFILE.max_examples * scale)))


# ---------------------------------------------------------------------------
# dtypes
# ---------------------------------------------------------------------------
BY_NAME = {d.name: d for d in nd.ALL_DTYPES}
KIND = {d: d.kind for d in nd.ALL_DTYPES}  # "bool" | "int" | "uint" | "float" | "complex"
REAL_OF = {nd.complex64: nd.float32, nd.complex128: nd.float64}
#: The order of kinds in the promotion table: an in-place result may not rise above its target's.
KIND_RANK = {"bool": 0, "int": 1, "uint": 1, "float": 2, "complex": 3}


def supported(device: nd.Device, kinds: Sequence[str] | None = None) -> list[nd.DType]:
    """The device's dtypes (of ``kinds`` if given), in the standard order."""
    have = device.backend.dtypes
    return [d for d in nd.ALL_DTYPES if d in have and (kinds is None or d.kind in kinds)]


def require(device: nd.Device, *dtypes: nd.DType) -> None:
    """Skip the test unless every dtype is supported on ``device``."""
    missing = [d.name for d in dtypes if d not in device.backend.dtypes]
    if missing:
        pytest.skip(f"{device} does not support {', '.join(missing)}")


def skip_unless(device: nd.Device, dtype_name: str) -> nd.DType:
    dtype = BY_NAME[dtype_name]
    require(device, dtype)
    return dtype


def default(device: nd.Device, kind: str) -> nd.DType:
    """The device's default dtype of ``kind``; skips the test when it has none (no complex)."""
    dtype = device.backend.default_dtypes.get(kind)
    if dtype is None:
            pytest.skip(f"{device} has no default {kind} dtype")
    return dtype


def np_dtype(dtype: nd.DType) -> np.dtype:
    return np.dtype(dtype.name)


def other_device(device: nd.Device) -> nd.Device:
    """A second device to mix with ``device``: another index of its backend, else numpy:0."""
    spec = plugins.backend_specs().get(device.kind)
    if spec is not None and spec.device_count() >= 2:
        return nd.Device(device.kind, 1 if device.index == 0 else 0)
    if device.kind != "numpy" and "numpy" in plugins.backend_specs():
        return nd.Device("numpy")
    pytest.skip(f"no second device to mix with {device}")
    raise AssertionError  # unreachable


# ---------------------------------------------------------------------------
# values: a domain per op, sampled with a NumPy generator seeded by hypothesis
# ---------------------------------------------------------------------------
SPECIAL_FLOATS = (math.nan, math.inf, -math.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5)


class Values:
    """The values an array is filled with: a range (clipped to the dtype), specials, zeros.

    Integers: uniform in ``[lo, hi]`` with the bounds and 0 mixed in. Floats: uniform in
    ``[lo, hi]``, some rounded to integers and halves, and (``special``) nan, +-inf, -0.0
    mixed in; subnormals are flushed to zero (GPUs may flush them). ``grid``: multiples of
    ``grid`` only. Complex: both parts so, without specials. ``nonzero`` replaces zeros.

    Values are drawn by NumPy from a hypothesis-drawn seed: an element-by-element hypothesis
    strategy costs milliseconds per array, which the suite's time budget cannot pay.
    """

    __slots__ = ("grid", "hi", "lo", "nonzero", "special")

    def __init__(self, lo: float | None = None, hi: float | None = None, *, special: bool = True,
                 nonzero: bool = False, grid: float | None = None) -> None:  # fmt: skip
        self.lo, self.hi, self.special, self.nonzero, self.grid = lo, hi, special, nonzero, grid

    def __repr__(self) -> str:
        return (
            f"Values({self.lo}, {self.hi}, special={self.special}, nonzero={self.nonzero}, grid={self.grid})"
        )

    def sample(self, rng: np.random.Generator, dtype: nd.DType, shape: tuple[int, ...]) -> np.ndarray:
        t = np_dtype(dtype)
        kind = dtype.kind
        if kind == "bool":
            return np.ones(shape, t) if self.nonzero else rng.random(shape) < 0.5
        if kind in ("int", "uint"):
            return self._ints(rng, t, shape)
        if kind == "float":
            return self._floats(rng, t, shape, self.special)
        part = np_dtype(REAL_OF[dtype])
        out = self._floats(rng, part, shape, False) + 1j * self._floats(rng, part, shape, False)
        return out.astype(t)

    def _ints(self, rng: np.random.Generator, t: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        info = np.iinfo(t)
        lo = int(info.min) if self.lo is None else max(int(info.min), math.ceil(self.lo))
        hi = int(info.max) if self.hi is None else min(int(info.max), math.floor(self.hi))
        wide = np.uint64 if t == np.uint64 else np.int64
        out = rng.integers(lo, hi, size=shape, dtype=wide, endpoint=True)
        pick = rng.random(shape)
        small = rng.integers(max(lo, -3), min(hi, 3), size=shape, dtype=wide, endpoint=True)
        out = np.where(pick < 0.3, small, out)
        out = np.where(pick > 0.95, np.asarray(hi, wide), np.where(pick > 0.9, np.asarray(lo, wide), out))
        out = np.asarray(out).astype(t)
        if self.nonzero:
            out[out == 0] = 1 if lo <= 1 <= hi else (lo if lo != 0 else hi)
        return out

    def _floats(
        self, rng: np.random.Generator, t: np.dtype, shape: tuple[int, ...], special: bool
    ) -> np.ndarray:
        lo = -100.0 if self.lo is None else float(self.lo)
        hi = 100.0 if self.hi is None else float(self.hi)
        if self.grid:
            out = rng.integers(math.ceil(lo / self.grid), math.floor(hi / self.grid), size=shape,
                               endpoint=True) * self.grid  # fmt: skip
        else:
            out = rng.uniform(lo, hi, size=shape)
            pick = rng.random(shape)
            out = np.where(pick < 0.2, np.clip(np.round(out * 2) / 2, lo, hi), out)
            out = np.where(pick > 0.9, np.clip(rng.uniform(-1, 1, size=shape), lo, hi), out)
        with np.errstate(all="ignore"):
            out = np.asarray(out).astype(t)
        tiny = np.finfo(t).tiny
        out[np.abs(out) < tiny] = 0
        if special:
            mask = rng.random(shape) < 0.15
            out[mask] = rng.choice(np.array(SPECIAL_FLOATS, t), size=int(mask.sum()))
        if self.nonzero:
            out[out == 0] = 1
        return out


# ---------------------------------------------------------------------------
# shapes
# ---------------------------------------------------------------------------


def shapes(min_dims: int = 0, max_dims: int = 4, min_side: int = 0,
           max_side: int = 4) -> st.SearchStrategy[tuple[int, ...]]:  # fmt: skip
    """Small shapes: 0-d, empty, size-1 axes and up to 4-D."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def broadcastable_shape(shape: tuple[int, ...]) -> st.SearchStrategy:
    """A shape that broadcasts with ``shape`` to exactly ``shape`` (axes may become 1 or vanish)."""

    @st.composite
    def strategy(draw: Any) -> tuple[int, ...]:
        drop = draw(st.integers(0, len(shape)))
        return tuple(1 if draw(st.booleans()) else n for n in shape[drop:])

    return strategy()


def mutually_broadcastable(shape: tuple[int, ...]) -> st.SearchStrategy:
    """Two shapes whose broadcast is ``shape``."""
    return st.tuples(broadcastable_shape(shape), broadcastable_shape(shape)).filter(
        lambda p: np.broadcast_shapes(*p) == shape
    )


# ---------------------------------------------------------------------------
# layouts: the same view ops on an ndplane array and its NumPy reference
# ---------------------------------------------------------------------------
LAYOUTS = ("contiguous", "permute", "step", "negative step", "flip", "offset", "int index", "broadcast")


def _garbage(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """Filler for the storage around a view; it must never show up in results."""
    if dtype.kind == "b":
        return np.ones(shape, dtype)
    return np.full(shape, 7, dtype)


class _NP:
    """The view ops of a layout, spelled for NumPy arrays."""

    permute_dims = staticmethod(lambda x, perm: np.transpose(x, perm))
    flip = staticmethod(lambda x, axis: np.flip(x, axis=axis))


@st.composite
def _view_op(draw: Any, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """One view op producing ``shape``, as a tuple ``(kind, *params)``."""
    ndim = len(shape)
    choices = ["offset", "int index"] + (["step", "negative step", "flip"] if ndim else [])
    choices += ["permute"] if ndim >= 2 else []
    kind = draw(st.sampled_from(choices))
    if kind == "permute":
        return (kind, tuple(draw(st.permutations(range(ndim)))))
    if kind == "flip":
        return (kind, tuple(sorted(draw(st.sets(st.integers(0, ndim - 1), min_size=1)))))
    if kind == "offset":
        return (kind,)
    if kind == "int index":
        return (kind, draw(st.integers(0, ndim)))
    return (kind, draw(st.integers(0, ndim - 1)), draw(st.integers(2, 3)), draw(st.integers(0, 1)))


def _step_key(op: tuple[Any, ...], n: int) -> tuple[tuple[slice, ...], int]:
    kind, axis, step, start = op
    length = start + n * step
    if kind == "step":
        key = slice(start, start + n * step, step)
    else:  # elements at length-1-start, length-1-start-step, ...
        key = slice(length - 1 - start, None, -step) if n else slice(0, 0, -step)
    return (slice(None),) * axis + (key,), length


def _base_of(op: tuple[Any, ...], values: np.ndarray) -> np.ndarray:
    """A contiguous array that ``op`` views as ``values``."""
    kind, shape = op[0], values.shape
    if kind == "permute":
        return np.ascontiguousarray(values.transpose(np.argsort(op[1])))
    if kind == "flip":
        return np.ascontiguousarray(np.flip(values, axis=op[1]))
    if kind == "offset":
        if not shape:
            return np.stack([_garbage((), values.dtype), values])
        return np.concatenate([_garbage((1, *shape[1:]), values.dtype), values], axis=0)
    if kind == "int index":
        return np.stack([_garbage(shape, values.dtype), values], axis=op[1])
    axis = op[1]
    key, length = _step_key(op, shape[axis])
    base = _garbage((*shape[:axis], length, *shape[axis + 1 :]), values.dtype)
    base[key] = values
    return base


def _base_shape(op: tuple[Any, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    return _base_of(op, np.zeros(shape, np.int8)).shape


class Layout:
    """A drawn layout for arrays of one shape: a broadcast, a chain of view ops, a value seed.

    ``build(device, dtype)`` makes an ndplane array of that layout and its NumPy reference;
    one layout serves every dtype, so a test draws it once and checks all dtypes.
    """

    __slots__ = ("ops", "seed", "shape", "small")

    def __init__(self, shape: tuple[int, ...], small: tuple[int, ...], ops: list[tuple[Any, ...]], seed: int):
        self.shape, self.small, self.ops, self.seed = shape, small, ops, seed

    def __repr__(self) -> str:
        kinds = [op[0] for op in self.ops] + (["broadcast"] if self.small != self.shape else [])
        return f"Layout(shape={self.shape}, views={self.ops}, broadcast_from={self.small}, seed={self.seed}, kinds={kinds})"

    @property
    def kinds(self) -> list[str]:
        return [op[0] for op in self.ops] + (["broadcast"] if self.small != self.shape else []) or [
            "contiguous"
        ]

    def build(
        self, device: nd.Device, dtype: nd.DType, values: Values | None = None, data: np.ndarray | None = None
    ) -> Drawn:
        if data is None:
            data = (values or Values()).sample(np.random.default_rng(self.seed), dtype, self.small)
        data = np.asarray(data, np_dtype(dtype))
        bases = [data]
        for op in self.ops:
            bases.append(_base_of(op, bases[-1]))
        x = nd.asarray(bases[-1], device=device)
        ref = bases[-1]
        for op in reversed(self.ops):
            x = _apply(op, nd, x)
            ref = np.asarray(_apply(op, _NP, ref))
        if self.small != self.shape:
            x = nd.broadcast_to(x, self.shape)
            ref = np.broadcast_to(ref, self.shape)
        assert ref.shape == self.shape and x.shape == self.shape, (ref.shape, x.shape, self.shape)
        return Drawn(x, ref, self.kinds)


def _apply(op: tuple[Any, ...], m: Any, x: Any) -> Any:
    kind = op[0]
    if kind == "permute":
        return m.permute_dims(x, op[1])
    if kind == "flip":
        return m.flip(x, axis=op[1])
    if kind == "offset":
        return x[1] if x.ndim == 1 and op[-1] == "0d" else x[1:]
    if kind == "int index":
        return x[(slice(None),) * op[1] + (-1,)]
    n = (x.shape[op[1]] - op[3]) // op[2]
    key, _ = _step_key(op, n)
    return x[key]


@st.composite
def layouts(draw: st.DrawFn, shape: tuple[int, ...] | st.SearchStrategy[tuple[int, ...]] | None = None, *,
            broadcast: bool = True, depth: int = 2) -> Layout:  # fmt: skip
    """A :class:`Layout`: 0-d, empty, size-1 and up to 4-D shapes; views chained up to ``depth``."""
    if shape is None:
        shape = shapes()
    if isinstance(shape, st.SearchStrategy):
        shape = draw(shape)
    shape = tuple(shape)
    small = shape
    if broadcast and shape and draw(st.integers(0, 4)) == 0:
        small = draw(broadcastable_shape(shape))
    ops: list[tuple[Any, ...]] = []
    current = small
    for _ in range(draw(st.integers(0, depth))):
        op = draw(_view_op(current))
        if op[0] == "offset" and not current:
            op = (*op, "0d")
        ops.append(op)
        current = _base_shape(op, current)
    return Layout(shape, small, ops, draw(st.integers(0, 2**32 - 1)))


class Drawn:
    """An ndplane array with a drawn layout and the NumPy array of the same view."""

    __slots__ = ("layout", "ref", "x")

    def __init__(self, x: nd.Array, ref: np.ndarray, layout: list[str]) -> None:
        self.x, self.ref, self.layout = x, ref, layout

    def __repr__(self) -> str:
        return (
            f"Drawn(layout={self.layout}, shape={self.ref.shape}, dtype={self.ref.dtype}, ref={self.ref!r})"
        )


@st.composite
def arrays(
    draw: Any, device: nd.Device, dtype: nd.DType, shape: tuple[int, ...] | st.SearchStrategy | None = None,
    values: Values | None = None, *, broadcast: bool = True, depth: int = 2,
) -> Drawn:  # fmt: skip
    """An ndplane array on ``device`` with drawn values and layout, plus its NumPy reference.

    Layouts: contiguous, transposed, sliced with steps, negative strides, flipped,
    offset, integer-indexed out of a bigger array, broadcast (stride 0), and chains.
    """
    return draw(layouts(shape, broadcast=broadcast, depth=depth)).build(device, dtype, values)


# ---------------------------------------------------------------------------
# comparisons
# ---------------------------------------------------------------------------
#: (rtol, atol) per result dtype when the reference is computed in float64.
TOLERANCE = {
    nd.float16: (4e-3, 1e-3), nd.float32: (2e-5, 1e-6), nd.float64: (1e-10, 1e-12),
    nd.complex64: (2e-5, 1e-6), nd.complex128: (1e-10, 1e-12),
}  # fmt: skip


def host(x: nd.Array) -> np.ndarray:
    return x.to_numpy()


def assert_c_order(x: nd.Array, msg: str = "") -> None:
    """``x`` is laid out in C order (strides of the axes longer than 1 as a fresh array's): a
    function's new result must not depend on the road it took, or whether a later ``reshape``
    views or copies would differ between devices."""
    want, step = [], 1
    for n in reversed(x.shape):
        want.append(step)
        step *= n
    want.reverse()
    bad = [(s, w) for n, s, w in zip(x.shape, x.strides, want) if n > 1 and s != w]
    assert not bad, f"{msg}strides {x.strides} for shape {x.shape}: not C order"


def assert_same(
    got: nd.Array, expected: Any, dtype: nd.DType | None = None, *, exact: bool = False,
    signed_zeros: bool = False, tol: tuple[float, float] | None = None, scale: float = 1.0,
    mask: np.ndarray | None = None, msg: str = "",
) -> None:  # fmt: skip
    """Compare an ndplane result with a NumPy reference: type, dtype, shape, then values.

    Integers and bools compare exactly; floats match NaN and infinity positions exactly
    and finite values within the tolerance of the result dtype (``exact``: bit for bit
    up to the sign of zero, which ``signed_zeros`` checks too). ``mask`` selects the
    elements to compare (the others are undefined for the op).
    """
    assert type(got) is nd.Array, f"{msg}expected an ndplane Array, got {type(got).__name__}"
    if dtype is not None:
        assert got.dtype is dtype, f"{msg}dtype {got.dtype.name} != expected {dtype.name}"
    expected = np.asarray(expected)
    assert got.shape == expected.shape, f"{msg}shape {got.shape} != expected {expected.shape}"
    actual = host(got)
    assert actual.dtype == np_dtype(got.dtype), f"{msg}to_numpy() dtype {actual.dtype} != {got.dtype.name}"
    if mask is not None:
        actual, expected = actual[mask], np.broadcast_to(expected, mask.shape)[mask]
    assert_values(actual, expected, got.dtype, exact=exact, signed_zeros=signed_zeros, tol=tol, scale=scale,
                  msg=msg)  # fmt: skip


def assert_values(
    actual: np.ndarray, expected: np.ndarray, dtype: nd.DType, *, exact: bool = False,
    signed_zeros: bool = False, tol: tuple[float, float] | None = None, scale: float = 1.0, msg: str = "",
) -> None:  # fmt: skip
    kind = dtype.kind
    if kind in ("bool", "int", "uint"):
        expected = expected.astype(np_dtype(dtype)) if expected.dtype != np_dtype(dtype) else expected
        if not np.array_equal(actual, expected):
            bad = np.argwhere(actual != expected)[:5]
            raise AssertionError(
                f"{msg}values differ at {bad.tolist()}:\n got {actual!r}\n expected {expected!r}"
            )
        return
    parts = (
        [(actual.real, expected.real), (actual.imag, expected.imag)]
        if kind == "complex"
        else [(actual, expected)]
    )
    rtol, atol = tol or TOLERANCE[dtype]
    rtol, atol = rtol * scale, atol * scale
    for a, e in parts:
        with np.errstate(all="ignore"):
            e64 = e.astype(np.float64)
            a64 = a.astype(np.float64)
            nan_ok = np.isnan(a64) == np.isnan(e64)
            inf_ok = np.where(np.isinf(e64) | np.isinf(a64), a64 == e64, True)
            finite = np.isfinite(e64) & np.isfinite(a64)
            if exact:
                close = np.where(finite, a64 == e64, True)
            elif kind == "complex":
                mag = np.abs(expected.astype(np.complex128))
                mag = np.broadcast_to(mag, e64.shape) if mag.shape != e64.shape else mag
                close = np.where(
                    finite, np.abs(a64 - e64) <= atol + rtol * np.maximum(mag, np.abs(e64)), True
                )
            else:
                close = np.where(finite, np.abs(a64 - e64) <= atol + rtol * np.abs(e64), True)
            ok = nan_ok & inf_ok & close
            if signed_zeros:
                ok &= np.where((a64 == 0) & (e64 == 0), np.signbit(a64) == np.signbit(e64), True)
        if not ok.all():
            bad = np.argwhere(~ok)[:5].tolist()
            idx = tuple(np.argwhere(~ok)[0]) if a.ndim else ()
            raise AssertionError(
                f"{msg}values differ at {bad} (first: got {a[idx]!r}, expected {e[idx]!r}; "
                f"rtol={rtol}, atol={atol}, exact={exact}, signed_zeros={signed_zeros}):\n"
                f" got {actual!r}\n expected {expected!r}"
            )


def to_result(values: np.ndarray, dtype: nd.DType) -> np.ndarray:
    """A float64/complex128 reference rounded to the result dtype (overflow gives inf, as it should)."""
    with np.errstate(all="ignore"):
        return np.asarray(values).astype(np_dtype(dtype))


def wide(a: np.ndarray) -> np.ndarray:
    """``a`` in float64 (complex128 for complex): where references are computed."""
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    return a.astype(np.float64)


# ---------------------------------------------------------------------------
# kernel spy: which backend methods ran (errors must be raised before any kernel)
# ---------------------------------------------------------------------------
KERNELS = ("unary", "binary", "where", "cast", "reduce", "scan", "matmul", "take", "scatter_add", "sort",
           "random_bits", "copy", "fill", "alloc", "from_host", "fused", "linalg", "fft")  # fmt: skip


class KernelSpy:
    """Records the calls of a backend's kernels while active (instance attributes shadow methods),
    and the buffers of the Refs they (and ``to_host``) received.

    ``available`` is False for backends whose instances take no attributes (a C extension
    type without ``__dict__``); then only memory is checked.
    """

    def __init__(self, device: nd.Device) -> None:
        self.backend = device.backend
        self.calls: list[str] = []
        self.received: list[tuple[str, Any]] = []  # (kernel, buffer) for every Ref, fused inputs too
        self.available = hasattr(self.backend, "__dict__")

    def touched(self, x: nd.Array) -> bool:
        """Whether a kernel or ``to_host`` received a Ref of ``x``'s memory (a fused input too)."""
        return bool(self.touched_by(x))

    def touched_by(self, x: nd.Array) -> set[str]:
        """The kernels (and ``to_host``) that received a Ref of ``x``'s memory, fused inputs included."""
        return {name for name, b in self.received if b is x._storage.buffer}

    def __enter__(self) -> KernelSpy:
        if not self.available:
            return self
        for name in (*KERNELS, "to_host"):
            original = getattr(self.backend, name)

            def spy(*args: Any, _name: str = name, _orig: Any = original) -> Any:
                if _name != "to_host":
                    self.calls.append(_name)
                refs = [r for a in args for r in (a if type(a) is tuple else (a,)) if type(r) is Ref]
                self.received += [(_name, r.buffer) for r in refs]
                return _orig(*args)

            setattr(self.backend, name, spy)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.available:
            for name in (*KERNELS, "to_host"):
                self.backend.__dict__.pop(name, None)


def live_backends() -> dict[nd.Device, Any]:
    """Every device whose backend has started (for memory checks)."""
    return {d: d._backend for d in list(nd.Device._interned.values()) if d._backend is not None}


def promotes(a: nd.DType, b: nd.DType) -> bool:
    """Whether the two dtypes have a common promoted dtype."""
    try:
        nd.result_type(a, b)
    except TypeError:
        return False
    return True


def conv2d_reference(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, stride: tuple[int, int] = (1, 1),
                     padding: tuple[int, int] = (0, 0), dilation: tuple[int, int] = (1, 1), groups: int = 1,
                     g: np.ndarray | None = None) -> Any:  # fmt: skip
    """ndplane.composite's conv2d (im2col + matmul) in float64: the output, or with ``g`` (the
    output's gradient) the gradients of x, w and b: the oracle of ``fused:conv2d``."""
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    (n, c, hh, ww), (o, cg, kh, kw) = x.shape, w.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh, ow = (hh + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (ww + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    win = [(slice(i * dh, i * dh + sh * (oh - 1) + 1, sh), slice(j * dw, j * dw + sw * (ow - 1) + 1, sw))
           for i in range(kh) for j in range(kw)]  # fmt: skip
    cols = np.stack([xp[:, :, a, bb] for a, bb in win], axis=2).reshape(n, groups, cg * kh * kw, oh * ow)
    wg = w.reshape(groups, o // groups, cg * kh * kw)
    if g is None:
        y = np.matmul(wg, cols).reshape(n, o, oh, ow)
        return y + (0 if b is None else np.asarray(b, np.float64).reshape(1, o, 1, 1))
    g4 = np.asarray(g, np.float64).reshape(n, groups, o // groups, oh * ow)
    gw = np.einsum("ngol,ngkl->gok", g4, cols).reshape(w.shape)
    gcols = np.einsum("gok,ngol->ngkl", wg, g4).reshape(n, c, kh * kw, oh, ow)
    gxp = np.zeros(xp.shape)
    for k, (a, bb) in enumerate(win):
        gxp[:, :, a, bb] += gcols[:, :, k]
    return gxp[:, :, ph : ph + hh, pw : pw + ww], gw, g4.sum(axis=(0, 3)).reshape(o)


def composite_reference(op: str, x: np.ndarray, weight: np.ndarray | None = None,
                        bias: np.ndarray | None = None, eps: float = 1e-5) -> np.ndarray:  # fmt: skip
    """ndplane.composite's algorithms along the last axis, in float64: the oracle of every
    backend's ``fused:*`` kernel (and of the generic road)."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        if op == "layer_norm":
            xc = x - x.mean(-1, keepdims=True)
            out = xc / np.sqrt((xc * xc).mean(-1, keepdims=True) + eps)
            return out * (1 if weight is None else weight) + (0 if bias is None else bias)
        if x.shape[-1] == 0:  # an empty axis: empty results; logsumexp the log of 0
            return np.full(x.shape[:-1], -np.inf) if op == "logsumexp" else x.copy()
        m = x.max(-1, keepdims=True)
        if op == "softmax":
            e = np.exp(x - m)
            return e / e.sum(-1, keepdims=True)
        if op == "log_softmax":
            z = x - m
            return z - np.log(np.exp(z).sum(-1, keepdims=True))
        if op == "logsumexp":
            m = np.where(np.isfinite(m), m, 0.0)
            return np.log(np.exp(x - m).sum(-1)) + m[..., 0]
    raise ValueError(f"composite_reference: unknown op {op!r}")

