"""The rows of bench_api.py: each function of the ndplane namespace, ``linalg``, ``fft`` and
``nn.functional`` as a table entry saying which operands it takes and what ndplane, NumPy and
PyTorch each call on them.

A call is ``f(module, *operands)``, ``module`` being ``ndplane``, ``numpy`` or ``torch``.
``SAME`` in a peer's slot means ndplane's call made with the peer's module (NumPy 2 follows
the Array API, and many ``torch.linalg``/``torch.fft``/``torch.nn.functional`` calls read as
ndplane's do); ``None`` means the peer has no such function. Operands are made on the host
by ``INPUTS`` and handed to each library by bench_api.py: NumPy arrays become one ndplane
array each, which NumPy and PyTorch view without a copy; ``Dt``, ``Gen`` and ``Host`` become
each library's dtype, seeded generator and the host array itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from bench_math import BINARY, UNARY

from ndplane._elementwise import NOT_EXPORTED, OPS

GOAL, SORT_GOAL = 1.2, 1.0  # ndplane's time over the faster peer's, at the medium and large sizes (issue 17)
FLOATS = ("float32", "float64")
INTS = ("int32", "int64")
COMPLEX = {"float32": "complex64", "float64": "complex128"}
SAME = "same"


@dataclass(frozen=True)
class Dt:
    name: str  # a dtype by name: each library's attribute of that name


@dataclass(frozen=True)
class Gen:
    seed: int  # a random generator seeded so, of each library's kind


@dataclass(frozen=True)
class Host:
    array: np.ndarray = field(compare=False)  # given to every library as this NumPy array


@dataclass(frozen=True)
class Size:
    label: str
    shape: tuple[int, int]  # the 2-D operand; 1-D operands hold as many elements
    cube: tuple[int, int, int]
    mat: int  # the side of the matrices of O(n^3) linear algebra
    fft: tuple[int, int]  # the sides of the fft's square operand: a power of two, and not
    image: tuple[int, int, int, int]  # NCHW, for convolution and pooling

    @property
    def n(self) -> int:
        return self.shape[0] * self.shape[1]


SIZES = {s.label: s for s in [
    Size("small", (32, 32), (8, 8, 16), 32, (32, 30), (2, 4, 16, 16)),
    Size("medium", (1000, 1000), (100, 100, 100), 128, (256, 250), (8, 16, 64, 64)),
    Size("large", (3000, 3000), (150, 200, 300), 512, (1024, 1000), (16, 32, 128, 128)),
]}  # fmt: skip
QUICK_SIZES = {s.label: s for s in [
    Size("small", (4, 8), (2, 4, 4), 4, (8, 6), (1, 2, 4, 4)),
    Size("medium", (16, 16), (4, 8, 8), 8, (16, 12), (1, 2, 8, 8)),
    Size("large", (32, 32), (8, 8, 16), 16, (32, 30), (2, 2, 8, 8)),
]}  # fmt: skip


@dataclass(frozen=True)
class Case:
    name: str
    group: str
    inputs: str  # a key of INPUTS, with ":ARG" for the maker's argument
    nd: Callable[..., Any]
    np: Callable[..., Any] | str | None = SAME
    torch: Callable[..., Any] | str | None = None
    dtypes: tuple[str, ...] = FLOATS
    domain: tuple[float, float] | None = None  # of the values (default -10..10; integers -2^15..2^15)
    goal: float = GOAL
    func: str = ""  # the ndplane function, a path below the namespace (default: the name's first word)

    def path(self) -> str:
        return self.func or self.name.split()[0]

    def call(self, lib: str) -> Callable[..., Any] | None:
        f = {"ndplane": self.nd, "numpy": self.np, "torch": self.torch}[lib]
        return self.nd if f == SAME else f  # type: ignore[return-value]


# ---------------------------------------------------------------------------
# operands
# ---------------------------------------------------------------------------


def values(rng: np.random.Generator, shape: Any, dtype: str, domain: tuple[float, float] | None = None) -> np.ndarray:
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith(("int", "uint")):
        lo, hi = domain or (-(2**15), 2**15)
        return rng.integers(int(lo), int(hi), shape).astype(dtype)
    if dtype.startswith("complex"):
        return (values(rng, shape, "float64", domain) + 1j * values(rng, shape, "float64", domain)).astype(dtype)
    lo, hi = domain or (-10.0, 10.0)
    return rng.uniform(lo, hi, shape).astype(dtype)


def _other_float(dt: str) -> str:
    return "float32" if dt == "float64" else "float64"


def _indices(rng: np.random.Generator, high: int, count: int) -> np.ndarray:
    return rng.integers(0, high, count).astype(np.int64)


def _spd(rng: np.random.Generator, n: int, dt: str) -> np.ndarray:
    a = rng.standard_normal((n, n))
    return (a @ a.T / n + np.eye(n)).astype(dt)


def _sparse(rng: np.random.Generator, s: Size, dt: str) -> np.ndarray:
    x = values(rng, s.shape, dt, (1, 100))
    x[rng.random(s.shape) < 0.5] = 0
    return x


def _spectrum(rng: np.random.Generator, k: int, dt: str, half: bool) -> np.ndarray:
    return values(rng, (k, k // 2 + 1 if half else k), COMPLEX[dt], (-1, 1))


Maker = Callable[[Size, str, np.random.Generator, Any, str], tuple[Any, ...]]
INPUTS: dict[str, Maker] = {
    "x": lambda s, dt, rng, dom, a: (values(rng, s.shape, dt, dom),),
    "xy": lambda s, dt, rng, dom, a: (values(rng, s.shape, dt, dom), values(rng, s.shape, dt, dom)),
    "v": lambda s, dt, rng, dom, a: (values(rng, s.n, dt, dom),),
    "dups": lambda s, dt, rng, dom, a: (rng.integers(0, max(2, s.n // 8), s.n).astype(dt),),
    "x3": lambda s, dt, rng, dom, a: (values(rng, s.cube, dt, dom),),
    "x1": lambda s, dt, rng, dom, a: (values(rng, (1, *s.shape), dt, dom),),
    "row": lambda s, dt, rng, dom, a: (values(rng, s.shape[1], dt, dom), s.shape),
    "x_row": lambda s, dt, rng, dom, a: (values(rng, s.shape, dt, dom), values(rng, s.shape[1], dt, dom)),
    "x_dt": lambda s, dt, rng, dom, a: (values(rng, s.shape, dt, dom), Dt(_other_float(dt))),
    "host": lambda s, dt, rng, dom, a: (Host(values(rng, s.shape, dt, dom)),),
    "shape": lambda s, dt, rng, dom, a: (s.shape, Dt(dt)),
    "count": lambda s, dt, rng, dom, a: (s.n, Dt(dt)),
    "side": lambda s, dt, rng, dom, a: (s.shape[0], Dt(dt)),
    "axes": lambda s, dt, rng, dom, a: (values(rng, s.shape[1], dt, dom), values(rng, s.shape[0], dt, dom)),
    "bools": lambda s, dt, rng, dom, a: (np.full(s.shape, a == "true"),),
    "where": lambda s, dt, rng, dom, a: (rng.random(s.shape) < 0.5, *INPUTS["xy"](s, dt, rng, dom, a)),
    "sparse": lambda s, dt, rng, dom, a: (_sparse(rng, s, dt),),
    "sorted": lambda s, dt, rng, dom, a: (np.sort(values(rng, s.shape[1], dt, dom)), values(rng, s.n, dt, dom)),
    "mask": lambda s, dt, rng, dom, a: (values(rng, s.shape, dt, dom), rng.random(s.shape) < 0.5),
    "rows": lambda s, dt, rng, dom, a: (values(rng, s.shape, dt, dom), _indices(rng, s.shape[0], s.shape[0])),
    "rows_set": lambda s, dt, rng, dom, a: (*INPUTS["rows"](s, dt, rng, dom, a), values(rng, s.shape, dt, dom)),
    "flat": lambda s, dt, rng, dom, a: (values(rng, s.n, dt, dom), _indices(rng, s.n, s.n)),
    "along": lambda s, dt, rng, dom, a: (values(rng, s.shape, dt, dom), rng.permuted(
        np.broadcast_to(np.arange(s.shape[1]), s.shape), axis=-1).astype(np.int64)),
    "mat": lambda s, dt, rng, dom, a: (values(rng, (s.mat, s.mat), dt, (-1, 1)),),
    "mat2": lambda s, dt, rng, dom, a: (values(rng, (s.mat, s.mat), dt, (-1, 1)), values(rng, (s.mat, s.mat), dt, (-1, 1))),
    "spd": lambda s, dt, rng, dom, a: (_spd(rng, s.mat, dt),),
    "solve": lambda s, dt, rng, dom, a: (_spd(rng, s.mat, dt), values(rng, (s.mat, s.mat), dt, (-1, 1))),
    "vec3": lambda s, dt, rng, dom, a: (values(rng, (s.n // 3, 3), dt, dom), values(rng, (s.n // 3, 3), dt, dom)),
    "outer": lambda s, dt, rng, dom, a: (values(rng, s.shape[0], dt, dom), values(rng, s.shape[1], dt, dom)),
    "real": lambda s, dt, rng, dom, a: (values(rng, (s.fft[int(a)],) * 2, dt, (-1, 1)),),
    "spectrum": lambda s, dt, rng, dom, a: (_spectrum(rng, s.fft[int(a)], dt, False),),
    "half": lambda s, dt, rng, dom, a: (_spectrum(rng, s.fft[int(a)], dt, True),),
    "fft_count": lambda s, dt, rng, dom, a: (s.fft[0], Dt(dt)),
    "linear": lambda s, dt, rng, dom, a: (values(rng, s.shape, dt, (-1, 1)), values(
        rng, (min(256, s.shape[1]), s.shape[1]), dt, (-1, 1)), values(rng, min(256, s.shape[1]), dt, (-1, 1))),
    "norm": lambda s, dt, rng, dom, a: (values(rng, s.shape, dt, dom), values(rng, s.shape[1], dt, dom),
                                        values(rng, s.shape[1], dt, dom)),
    "labels": lambda s, dt, rng, dom, a: (values(rng, s.shape, dt, dom), _indices(rng, s.shape[1], s.shape[0])),
    "probs": lambda s, dt, rng, dom, a: (values(rng, s.shape, dt, dom), values(rng, s.shape, dt, (0, 1))),
    "image": lambda s, dt, rng, dom, a: (values(rng, s.image, dt, (-1, 1)),),
    "conv": lambda s, dt, rng, dom, a: (values(rng, s.image, dt, (-1, 1)), values(
        rng, (2 * s.image[1], s.image[1], 3, 3), dt, (-1, 1)), values(rng, 2 * s.image[1], dt, (-1, 1))),
    "bn": lambda s, dt, rng, dom, a: (values(rng, s.image, dt, (-1, 1)), *(values(rng, s.image[1], dt, (0.5, 2))
                                                                           for _ in range(4))),
    "gen": lambda s, dt, rng, dom, a: (Gen(0), s.shape, Dt(dt)),
    "gen_n": lambda s, dt, rng, dom, a: (Gen(0), s.n),
}  # fmt: skip


def make_inputs(case: Case, s: Size, dt: str, rng: np.random.Generator) -> tuple[Any, ...]:
    kind, _, arg = case.inputs.partition(":")
    return INPUTS[kind](s, dt, rng, case.domain, arg)


# ---------------------------------------------------------------------------
# the tables
# ---------------------------------------------------------------------------


def _copy(m: Any, a: Any) -> Any:
    """A C-contiguous copy of the view ``a`` (ndplane or NumPy: ``m``)."""
    return m.asarray(a, copy=True) if m.__name__ == "ndplane" else np.copy(a, order="C")


def _set_slice(m: Any, x: Any, y: Any) -> None:
    x[1:] = y[:-1]


def _set_rows(m: Any, x: Any, i: Any, y: Any) -> None:
    x[i] = y


def _set_mask(m: Any, x: Any, mask: Any) -> None:
    x[mask] = 0


# elementwise: every op of ndplane._elementwise.OPS, PyTorch's function found by name but for these
TORCH_NAMES = {"bitwise_invert": "bitwise_not", "conj": "conj_physical", "equal": "eq"}
COMPLEX_ONLY = ("real", "imag", "conj")  # timed on complex input (on real input they are copies)
DOMAINS = {**{n: op.domain for n, op in OPS.items() if op.domain}, **UNARY, **BINARY, "sqrt": (0, 100),
           "bitwise_left_shift": (0, 16), "bitwise_right_shift": (0, 16)}  # fmt: skip


def _elementwise_case(name: str) -> Case:
    op = OPS[name]
    ref = op.reference if isinstance(op.reference, np.ufunc) else getattr(np, name)
    tname = TORCH_NAMES.get(name, name)
    f_nd = lambda m, *xs: getattr(m, name)(*xs)  # noqa: E731
    f_np = lambda m, *xs: ref(*xs)  # noqa: E731
    f_torch = lambda t, *xs: getattr(t, tname)(*xs)  # noqa: E731
    if name in ("real", "imag"):  # NumPy and PyTorch return views of complex input; ndplane copies
        f_np = lambda m, x: np.copy(ref(x))  # noqa: E731
        f_torch = lambda t, x: getattr(t, tname)(x).clone()  # noqa: E731
    floats = COMPLEX_ONLY if name in COMPLEX_ONLY else ()
    dtypes = (tuple(COMPLEX.values()) if floats else FLOATS) if "float" in op.kinds else (
        INTS if "int" in op.kinds else ("bool",))  # fmt: skip
    return Case(name, "elementwise", "xy" if op.arity == 2 else "x", f_nd, f_np, f_torch, dtypes, DOMAINS.get(name))


def _elementwise() -> list[Case]:
    # NOTE: a row without an Array API name (sigmoid) is timed by its public name, in _nn_cases.
    return [_elementwise_case(name) for name in OPS if name not in NOT_EXPORTED]


# reductions: ndplane's name -> PyTorch's function and keywords
REDUCTIONS = {"sum": ("sum", {}), "prod": ("prod", {}), "mean": ("mean", {}), "std": ("std", {"correction": 0}),
              "var": ("var", {"correction": 0}), "max": ("amax", {}), "min": ("amin", {}), "argmax": ("argmax", {}),
              "argmin": ("argmin", {}), "all": ("all", {}), "any": ("any", {})}  # fmt: skip
NEAR_ONE = (0.999, 1.001)  # products of 10^7 of them stay finite and normal


def _reduction_case(name: str, axis: int | None) -> Case:
    tname, kw = REDUCTIONS[name]
    dim = {} if axis is None else {"dim": axis}
    inputs, dtypes = ("bools:" + ("true" if name == "all" else "false"), ("bool",)) if name in ("all", "any") else ("x", FLOATS)
    return Case(f"{name} axis={axis}", "reduction", inputs, lambda m, x: getattr(m, name)(x, axis=axis), SAME,
                lambda t, x: getattr(t, tname)(x, **dim, **kw), dtypes, NEAR_ONE if name == "prod" else None)  # fmt: skip


def _cumulative_case(name: str, axis: int | None) -> Case:
    tname = {"cumulative_sum": "cumsum", "cumulative_prod": "cumprod"}[name]
    dtypes = FLOATS + INTS if name == "cumulative_sum" else FLOATS
    dom = NEAR_ONE if name == "cumulative_prod" else None
    if axis is None:  # 1-D: the Array API requires an axis for more dimensions
        return Case(f"{name} 1-D", "reduction", "v", lambda m, v: getattr(m, name)(v), SAME,
                    lambda t, v: getattr(t, tname)(v, dim=0), dtypes, dom)  # fmt: skip
    return Case(f"{name} axis={axis}", "reduction", "x", lambda m, x: getattr(m, name)(x, axis=axis), SAME,
                lambda t, x: getattr(t, tname)(x, dim=axis), dtypes, dom)  # fmt: skip


def _reductions() -> list[Case]:
    out = [_reduction_case(n, a) for n in REDUCTIONS for a in (None, 0, -1)]
    return out + [_cumulative_case(n, a) for n in ("cumulative_sum", "cumulative_prod") for a in (None, 0, -1)]


def _sorting() -> list[Case]:
    out = []
    for stable in (True, False):
        out += [Case(f"sort stable={stable}", "sorting", "v", lambda m, v, s=stable: m.sort(v, stable=s), SAME, SAME,
                     FLOATS + INTS, goal=SORT_GOAL),
                Case(f"argsort stable={stable}", "sorting", "v", lambda m, v, s=stable: m.argsort(v, stable=s), SAME,
                     SAME, FLOATS + INTS, goal=SORT_GOAL)]  # fmt: skip
    return out + [Case("sort axis=-1 (rows)", "sorting", "x", lambda m, x: m.sort(x, axis=-1, stable=False), SAME,
                       lambda t, x: t.sort(x, dim=-1), FLOATS + INTS, goal=SORT_GOAL)]  # fmt: skip


def _fft() -> list[Case]:
    out = []
    for side, kind in ((0, "pow2"), (1, "non-pow2")):
        for name, inputs in (("fft", "real"), ("ifft", "spectrum"), ("rfft", "real"), ("irfft", "half"),
                             ("hfft", "half"), ("ihfft", "real"), ("fftn", "real"), ("ifftn", "spectrum"),
                             ("rfftn", "real"), ("irfftn", "half")):  # fmt: skip
            out.append(Case(f"fft.{name} {kind}", "fft", f"{inputs}:{side}",
                            lambda m, x, f=name: getattr(m.fft, f)(x), SAME, SAME))  # fmt: skip
    return out + [
        Case("fft.fftshift", "fft", "real:0", lambda m, x: m.fft.fftshift(x), SAME, SAME),
        Case("fft.ifftshift", "fft", "real:0", lambda m, x: m.fft.ifftshift(x), SAME, SAME),
        Case("fft.fftfreq", "fft", "fft_count", lambda m, n, dt: m.fft.fftfreq(n, dtype=dt, device="cpu"),
             lambda m, n, dt: np.fft.fftfreq(n), lambda t, n, dt: t.fft.fftfreq(n, dtype=dt)),
        Case("fft.rfftfreq", "fft", "fft_count", lambda m, n, dt: m.fft.rfftfreq(n, dtype=dt, device="cpu"),
             lambda m, n, dt: np.fft.rfftfreq(n), lambda t, n, dt: t.fft.rfftfreq(n, dtype=dt)),
    ]  # fmt: skip


def _nn(name: str, inputs: str, call: Callable[..., Any], np_call: Callable[..., Any] | None = None,
        torch_call: Callable[..., Any] | str = SAME, **kw: Any) -> Case:  # fmt: skip
    """A row of nn.functional: ``call(F, *operands)`` with F each library's nn.functional."""
    return Case(f"nn.functional.{name}" + kw.pop("variant", ""), "nn.functional", inputs,
                lambda m, *xs: call(m.nn.functional, *xs), np_call,
                torch_call if torch_call != SAME else lambda t, *xs: call(t.nn.functional, *xs), **kw)  # fmt: skip


def _sigmoid(m: Any, x: Any) -> Any:
    return 1 / (1 + np.exp(-x))


def _nn_cases() -> list[Case]:
    return [
        _nn("linear", "linear", lambda F, x, w, b: F.linear(x, w, b), lambda m, x, w, b: x @ w.T + b),
        _nn("relu", "x", lambda F, x: F.relu(x), lambda m, x: np.maximum(x, 0)),
        _nn("gelu", "x", lambda F, x: F.gelu(x)),
        _nn("silu", "x", lambda F, x: F.silu(x)),
        _nn("sigmoid", "x", lambda F, x: F.sigmoid(x), _sigmoid),
        _nn("tanh", "x", lambda F, x: F.tanh(x), lambda m, x: np.tanh(x)),
        _nn("softmax", "x", lambda F, x: F.softmax(x, axis=-1), None,
            lambda t, x: t.nn.functional.softmax(x, dim=-1)),
        _nn("log_softmax", "x", lambda F, x: F.log_softmax(x, axis=-1), None,
            lambda t, x: t.nn.functional.log_softmax(x, dim=-1)),
        _nn("logsumexp", "x", lambda F, x: F.logsumexp(x, axis=-1), None, lambda t, x: t.logsumexp(x, dim=-1)),
        _nn("cross_entropy", "labels", lambda F, x, y: F.cross_entropy(x, y)),
        _nn("nll_loss", "labels", lambda F, x, y: F.nll_loss(x, y)),
        _nn("one_hot", "labels", lambda F, x, y: F.one_hot(y, x.shape[-1])),
        _nn("binary_cross_entropy_with_logits", "probs", lambda F, x, y: F.binary_cross_entropy_with_logits(x, y)),
        _nn("mse_loss", "xy", lambda F, x, y: F.mse_loss(x, y), lambda m, x, y: np.mean((x - y) ** 2)),
        _nn("layer_norm", "norm", lambda F, x, w, b: F.layer_norm(x, (x.shape[-1],), w, b)),
        _nn("batch_norm", "bn", lambda F, x, rm, rv, w, b: F.batch_norm(x, rm, rv, w, b, training=False),
            variant=" (eval)"),
        _nn("batch_norm", "bn", lambda F, x, rm, rv, w, b: F.batch_norm(x, rm, rv, w, b, training=True),
            variant=" (train)"),
        _nn("conv2d", "conv", lambda F, x, w, b: F.conv2d(x, w, b, padding=1), variant=" 3x3"),
        _nn("max_pool2d", "image", lambda F, x: F.max_pool2d(x, 2), variant=" 2x2"),
        _nn("avg_pool2d", "image", lambda F, x: F.avg_pool2d(x, 2), variant=" 2x2"),
        _nn("dropout", "x", lambda F, x: F.dropout(x, 0.5, training=False), variant=" (eval)"),
        _nn("embedding", "rows", lambda F, w, i: F.embedding(i, w), lambda m, w, i: w[i]),
        _nn("pad2d", "image", lambda F, x: F.pad2d(x, 1), lambda m, x: np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))),
            lambda t, x: t.nn.functional.pad(x, (1, 1, 1, 1))),
        _nn("unfold2d", "image", lambda F, x: F.unfold2d(x, (3, 3), (1, 1)), None,
            lambda t, x: t.nn.functional.unfold(x, 3), variant=" 3x3"),
    ]  # fmt: skip


def _tables() -> list[Case]:
    T = FLOATS + INTS
    return [
        # manipulation ("+ copy": the view made contiguous, in each library)
        Case("concat axis=0", "manipulation", "xy", lambda m, x, y: m.concat([x, y], axis=0), SAME,
             lambda t, x, y: t.cat([x, y], dim=0)),
        Case("concat axis=-1", "manipulation", "xy", lambda m, x, y: m.concat([x, y], axis=-1), SAME,
             lambda t, x, y: t.cat([x, y], dim=-1)),
        Case("stack axis=0", "manipulation", "xy", lambda m, x, y: m.stack([x, y], axis=0), SAME,
             lambda t, x, y: t.stack([x, y], dim=0)),
        Case("reshape (view)", "manipulation", "x", lambda m, x: m.reshape(x, (-1,)), SAME, SAME),
        Case("reshape (copy)", "manipulation", "x", lambda m, x: m.reshape(m.permute_dims(x, (1, 0)), (-1,)), SAME,
             lambda t, x: t.reshape(x.T, (-1,))),
        Case("permute_dims 3-D (2 0 1) + copy", "manipulation", "x3", lambda m, x: _copy(m, m.permute_dims(x, (2, 0, 1))),
             SAME, lambda t, x: t.permute(x, (2, 0, 1)).contiguous()),
        Case("matrix_transpose + copy", "manipulation", "x", lambda m, x: _copy(m, m.matrix_transpose(x)), SAME,
             lambda t, x: x.mT.contiguous()),
        Case("flip axis=0 + copy", "manipulation", "x", lambda m, x: _copy(m, m.flip(x, axis=0)), SAME,
             lambda t, x: t.flip(x, (0,))),
        Case("flip axis=-1 + copy", "manipulation", "x", lambda m, x: _copy(m, m.flip(x, axis=-1)), SAME,
             lambda t, x: t.flip(x, (-1,))),
        Case("roll axis=None", "manipulation", "x", lambda m, x: m.roll(x, 7), SAME, SAME),
        Case("roll axis=0", "manipulation", "x", lambda m, x: m.roll(x, 7, axis=0), SAME, lambda t, x: t.roll(x, 7, 0)),
        Case("repeat axis=0", "manipulation", "x", lambda m, x: m.repeat(x, 2, axis=0), SAME,
             lambda t, x: t.repeat_interleave(x, 2, dim=0)),
        Case("tile reps=2x1", "manipulation", "x", lambda m, x: m.tile(x, (2, 1)), SAME, SAME),
        Case("expand_dims (view)", "manipulation", "x", lambda m, x: m.expand_dims(x, axis=0), SAME,
             lambda t, x: t.unsqueeze(x, 0)),
        Case("squeeze (view)", "manipulation", "x1", lambda m, x: m.squeeze(x, axis=0), SAME,
             lambda t, x: t.squeeze(x, 0)),
        Case("moveaxis (view)", "manipulation", "x3", lambda m, x: m.moveaxis(x, 0, -1), SAME, SAME),
        Case("moveaxis + copy", "manipulation", "x3", lambda m, x: _copy(m, m.moveaxis(x, 0, -1)), SAME,
             lambda t, x: t.moveaxis(x, 0, -1).contiguous()),
        Case("broadcast_to + copy", "manipulation", "row", lambda m, r, s: _copy(m, m.broadcast_to(r, s)), SAME,
             lambda t, r, s: t.broadcast_to(r, s).contiguous()),
        Case("broadcast_arrays (views)", "manipulation", "x_row", lambda m, x, r: m.broadcast_arrays(x, r), SAME,
             lambda t, x, r: t.broadcast_tensors(x, r)),
        Case("unstack axis=0 (views)", "manipulation", "x", lambda m, x: m.unstack(x, axis=0), SAME,
             lambda t, x: t.unbind(x, 0)),
        Case("diff axis=-1", "manipulation", "x", lambda m, x: m.diff(x, axis=-1), SAME, lambda t, x: t.diff(x, dim=-1)),
        Case("clip", "elementwise", "x", lambda m, x: m.clip(x, -1.0, 1.0), SAME, SAME),
        # pow with a Python scalar: what x ** 2 in a loss or a variance costs (a square, not exp(2 log x))
        Case("x ** 2", "elementwise", "x", lambda m, x: x**2, SAME, SAME, func="pow"),
        Case("x ** 0.5", "elementwise", "x", lambda m, x: x**0.5, SAME, SAME, domain=(0, 100), func="pow"),
        Case("x ** 3", "elementwise", "x", lambda m, x: x**3, SAME, SAME, func="pow"),
        Case("positive", "elementwise", "x", lambda m, x: m.positive(x), SAME, None),
        Case("astype to the other float", "elementwise", "x_dt", lambda m, x, dt: m.astype(x, dt), SAME,
             lambda t, x, dt: x.to(dt)),
        # creation
        Case("zeros", "creation", "shape", lambda m, s, dt: m.zeros(s, dtype=dt, device="cpu"), SAME, SAME),
        Case("ones", "creation", "shape", lambda m, s, dt: m.ones(s, dtype=dt, device="cpu"), SAME, SAME),
        Case("empty", "creation", "shape", lambda m, s, dt: m.empty(s, dtype=dt, device="cpu"), SAME, SAME),
        Case("full", "creation", "shape", lambda m, s, dt: m.full(s, 1.5, dtype=dt, device="cpu"), SAME, SAME),
        Case("arange", "creation", "count", lambda m, n, dt: m.arange(n, dtype=dt, device="cpu"), SAME, SAME),
        Case("linspace", "creation", "count", lambda m, n, dt: m.linspace(0.0, 1.0, n, dtype=dt, device="cpu"),
             SAME, SAME),
        Case("eye", "creation", "side", lambda m, n, dt: m.eye(n, dtype=dt, device="cpu"), SAME, SAME),
        Case("empty_like", "creation", "x", lambda m, x: m.empty_like(x), SAME, SAME),
        Case("zeros_like", "creation", "x", lambda m, x: m.zeros_like(x), SAME, SAME),
        Case("ones_like", "creation", "x", lambda m, x: m.ones_like(x), SAME, SAME),
        Case("full_like", "creation", "x", lambda m, x: m.full_like(x, 2.0), SAME, SAME),
        Case("tril", "creation", "x", lambda m, x: m.tril(x), SAME, SAME),
        Case("triu", "creation", "x", lambda m, x: m.triu(x), SAME, SAME),
        Case("meshgrid (views)", "creation", "axes", lambda m, a, b: m.meshgrid(a, b),
             lambda m, a, b: np.meshgrid(a, b, copy=False), lambda t, a, b: t.meshgrid(a, b, indexing="xy")),
        Case("asarray (from NumPy)", "creation", "host", lambda m, h: m.asarray(h, copy=True), SAME, SAME),
        Case("asarray copy=False (shared)", "creation", "host", lambda m, h: m.asarray(h, copy=False), SAME, SAME),
        # searching
        Case("where", "searching", "where", lambda m, c, x, y: m.where(c, x, y), SAME, SAME),
        Case("nonzero", "searching", "sparse", lambda m, x: m.nonzero(x), SAME, lambda t, x: t.nonzero(x, as_tuple=True),
             T),
        Case("count_nonzero", "searching", "sparse", lambda m, x: m.count_nonzero(x), SAME, SAME, T),
        Case("searchsorted", "searching", "sorted", lambda m, s, q: m.searchsorted(s, q), SAME, SAME, T),  # bins
        # set (values with about 8 copies each)
        Case("unique_values", "set", "dups", lambda m, v: m.unique_values(v), SAME, lambda t, v: t.unique(v), T,
             goal=SORT_GOAL),
        Case("unique_counts", "set", "dups", lambda m, v: m.unique_counts(v), SAME,
             lambda t, v: t.unique(v, return_counts=True), T, goal=SORT_GOAL),
        Case("unique_inverse", "set", "dups", lambda m, v: m.unique_inverse(v), SAME,
             lambda t, v: t.unique(v, return_inverse=True), T, goal=SORT_GOAL),
        Case("unique_all", "set", "dups", lambda m, v: m.unique_all(v), SAME, None, T, goal=SORT_GOAL),
        # indexing
        Case("take 1-D", "indexing", "flat", lambda m, v, i: m.take(v, i), SAME, SAME, T, goal=SORT_GOAL),
        Case("take axis=0", "indexing", "rows", lambda m, x, i: m.take(x, i, axis=0), SAME,
             lambda t, x, i: t.index_select(x, 0, i), T, goal=SORT_GOAL),
        Case("take_along_axis axis=-1", "indexing", "along", lambda m, x, i: m.take_along_axis(x, i, axis=-1), SAME,
             lambda t, x, i: t.take_along_dim(x, i, dim=-1), T),
        Case("x[int array] 1-D", "indexing", "flat", lambda m, v, i: v[i], SAME, SAME, T, func="Array.__getitem__"),
        Case("x[int array] rows", "indexing", "rows", lambda m, x, i: x[i], SAME, SAME, T, func="Array.__getitem__"),
        Case("x[bool mask]", "indexing", "mask", lambda m, x, k: x[k], SAME, SAME, T, func="Array.__getitem__"),
        Case("x[1:] = y[:-1] (setitem slice)", "indexing", "xy", _set_slice, SAME, SAME, T, func="Array.__setitem__"),
        Case("x[int array] = y (setitem rows)", "indexing", "rows_set", _set_rows, SAME, SAME, T,
             func="Array.__setitem__"),
        Case("x[bool mask] = 0 (setitem)", "indexing", "mask", _set_mask, SAME, SAME, T, func="Array.__setitem__"),
        # linear algebra (O(n^3) ones on n x n, n = Size.mat)
        Case("matmul", "linalg", "mat2", lambda m, a, b: m.matmul(a, b), SAME, SAME),
        Case("tensordot a.T @ b", "linalg", "mat2", lambda m, a, b: m.tensordot(a, b, axes=([0], [0])), SAME,
             lambda t, a, b: t.tensordot(a, b, dims=([0], [0]))),
        Case("vecdot", "linalg", "xy", lambda m, x, y: m.vecdot(x, y), SAME, lambda t, x, y: t.linalg.vecdot(x, y)),
        Case("linalg.matrix_norm fro", "linalg", "x", lambda m, x: m.linalg.matrix_norm(x), SAME, SAME),
        Case("linalg.vector_norm", "linalg", "x", lambda m, x: m.linalg.vector_norm(x), SAME, SAME),
        Case("linalg.solve", "linalg", "solve", lambda m, a, b: m.linalg.solve(a, b), SAME, SAME),
        Case("linalg.inv", "linalg", "spd", lambda m, a: m.linalg.inv(a), SAME, SAME),
        Case("linalg.cholesky", "linalg", "spd", lambda m, a: m.linalg.cholesky(a), SAME, SAME),
        Case("linalg.qr", "linalg", "mat", lambda m, a: m.linalg.qr(a), SAME, SAME),
        Case("linalg.svd", "linalg", "mat", lambda m, a: m.linalg.svd(a, full_matrices=False), SAME, SAME),
        Case("linalg.svdvals", "linalg", "mat", lambda m, a: m.linalg.svdvals(a), SAME, SAME),
        Case("linalg.eigh", "linalg", "spd", lambda m, a: m.linalg.eigh(a), SAME, SAME),
        Case("linalg.eigvalsh", "linalg", "spd", lambda m, a: m.linalg.eigvalsh(a), SAME, SAME),
        Case("linalg.det", "linalg", "spd", lambda m, a: m.linalg.det(a), SAME, SAME),
        Case("linalg.slogdet", "linalg", "spd", lambda m, a: m.linalg.slogdet(a), SAME, SAME),
        Case("linalg.pinv", "linalg", "mat", lambda m, a: m.linalg.pinv(a), SAME, SAME),
        Case("linalg.matrix_rank", "linalg", "mat", lambda m, a: m.linalg.matrix_rank(a), SAME, SAME),
        Case("linalg.matrix_power 3", "linalg", "mat", lambda m, a: m.linalg.matrix_power(a, 3), SAME, SAME),
        Case("linalg.cross", "linalg", "vec3", lambda m, a, b: m.linalg.cross(a, b), SAME, SAME),
        Case("linalg.outer", "linalg", "outer", lambda m, a, b: m.linalg.outer(a, b), SAME, lambda t, a, b: t.outer(a, b)),
        Case("linalg.trace", "linalg", "x", lambda m, x: m.linalg.trace(x), SAME, lambda t, x: t.trace(x)),
        Case("linalg.diagonal (view)", "linalg", "x", lambda m, x: m.linalg.diagonal(x), SAME, SAME),
        # random
        Case("uniform", "random", "gen", lambda m, g, s, dt: g.uniform(0.0, 1.0, s, dtype=dt),
             lambda m, g, s, dt: g.random(s, dtype=dt), lambda t, g, s, dt: t.rand(s, dtype=dt, generator=g),
             func="random.Generator.uniform"),
        Case("normal", "random", "gen", lambda m, g, s, dt: g.normal(0.0, 1.0, s, dtype=dt),
             lambda m, g, s, dt: g.standard_normal(s, dtype=dt),
             lambda t, g, s, dt: t.randn(s, dtype=dt, generator=g), func="random.Generator.normal"),
        Case("integers", "random", "gen", lambda m, g, s, dt: g.integers(0, 1000, s, dtype=dt), SAME,
             lambda t, g, s, dt: t.randint(0, 1000, s, dtype=dt, generator=g), INTS, func="random.Generator.integers"),
        Case("permutation", "random", "gen_n", lambda m, g, n: g.permutation(n), SAME,
             lambda t, g, n: t.randperm(n, generator=g), ("int64",), func="random.Generator.permutation"),
    ]  # fmt: skip


CASES: list[Case] = [*_elementwise(), *_reductions(), *_sorting(), *_tables(), *_fft(), *_nn_cases()]
