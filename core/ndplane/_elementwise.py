"""Elementwise functions (Array API chapter) and the Array operators.

Every native elementwise op is one row, here: the ``@_unary`` / ``@_binary`` decorator
above its ``def`` carries the dtype kinds it accepts and how its result dtype follows
(``rule``), the NumPy reference kernel (what the reference backend and the host fallback
run, and the conformance suite's oracle), the gradient with what it saves, a decomposition
into other ops for backends without the kernel, a patch where NumPy departs from the
standard (``special``), and how the tests judge it (``accuracy``, ``domain``). The decorator
fills every table that needs the op -- dispatch's meta rules and decompositions, the
reference kernels, :data:`OPS` (read by the gradient rules and the tests) -- and returns
the generated fast function, so the ``def`` line is its signature and its docstring.
A backend lists the ops it has in ``Backend.ops``; ``backend/ops.py`` names the protocol's.
"""

# mypy: disable-error-code="empty-body"
# (each row's ``def`` is a declaration -- name, signature, docstring -- that the decorator
# replaces with the generated function)

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import numpy as np

from . import _dispatch, _dtypes, _graph
from ._array import Array, check_array
from ._dtypes import DType
from .backend import reference

# The names this chapter exports, written out so type checkers see them through the namespace's
# star import; a row whose name is missing here fails at import (see _row).
__all__ = [
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and",
    "bitwise_invert", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "ceil", "clip", "conj", "copysign", "cos", "cosh", "divide", "equal", "exp", "expm1", "floor",
    "floor_divide", "greater", "greater_equal", "hypot", "imag", "isfinite", "isinf", "isnan",
    "less", "less_equal", "log", "log10", "log1p", "log2", "logaddexp", "logaddexp2", "logical_and",
    "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "multiply", "negative",
    "nextafter", "not_equal", "positive", "pow", "real", "reciprocal", "remainder", "round", "sign",
    "signbit", "sin", "sinh", "sqrt", "square", "subtract", "tan", "tanh", "trunc",
]  # fmt: skip

# Rows with no Array API name: protocol ops a backend may implement, whose public function lives
# elsewhere (``ndplane.nn.functional.sigmoid``, ``silu``, ``gelu`` and, with reduction "none",
# ``binary_cross_entropy_with_logits``; ``ndplane.special.erf``), so
# the namespace stays the standard's. Each is this module's attribute but not in ``__all__``.
NOT_EXPORTED = frozenset({"bce_with_logits", "erf", "gelu", "sigmoid", "silu"})

Operand = Array | bool | int | float | complex
_F = TypeVar("_F", bound=Callable[..., Any])

_NUM = frozenset({"int", "uint", "float", "complex"})
_REAL = frozenset({"int", "uint", "float"})
_INT = frozenset({"int", "uint"})
_INTB = frozenset({"int", "uint", "bool"})
_BOOL = frozenset({"bool"})
_ANY = frozenset({"bool", "int", "uint", "float", "complex"})
_KIND_WORDS = {
    _NUM: "numeric", _REAL: "real numeric", _INT: "integer", _INTB: "integer or boolean",
    _BOOL: "boolean", _ANY: "any", frozenset({"float"}): "real floating-point",
    frozenset({"float", "complex"}): "floating-point",
}  # fmt: skip


@dataclass(frozen=True)
class Op:
    """One native elementwise op: everything the core knows about it."""

    name: str
    arity: int
    kinds: frozenset[str]
    rule: str
    """same | float (integers computed in the default float) | realfloat | bool | real."""
    reference: Callable[..., Any]
    """The NumPy kernel ``f(*operands, out=out)``."""
    grad: tuple[Callable[..., Any] | None, ...] | None
    """Per input, ``f(nd, g, *operands, out) -> gradient`` (``nd``: the namespace); None in a
    slot: no gradient flows to that input; None: the op is not differentiable."""
    saves: str
    """What the gradient reads: "nothing", "operands" or "operands and out"."""
    decompose: Callable[..., Array] | None
    special: Callable[..., Array] | None
    accuracy: str
    """How the tests judge it: "exact" (bit for bit in the result dtype), "rounded" (a few ULP
    of a float64 reference: arithmetic) or "transcendental" (more ULP: libm-class functions)."""
    domain: tuple[float, float] | tuple[tuple[float, float], ...] | None
    """Float test inputs come from this range (default: -100..100), or one range per operand."""
    summary: str


#: Every native elementwise op by name, in definition order.
OPS: dict[str, Op] = {}


def _meta(op: str, kinds: frozenset[str], rule: str) -> Callable[[DType, dict[str, DType]], tuple[DType, DType]]:
    """The meta rule of one op. ``rule``: same | float (ints computed in the default float) |
    realfloat | bool (result) | real (complex -> its real dtype)."""

    def meta(dtype: DType, defaults: dict[str, DType]) -> tuple[DType, DType]:
        kind = dtype.kind
        if rule in ("float", "realfloat") and kind in ("int", "uint", "bool") and "int" in kinds:
            dtype = defaults["real floating"]
            kind = "float"
        if kind not in kinds or (rule == "realfloat" and kind == "complex"):
            allowed = _KIND_WORDS.get(kinds, "/".join(sorted(kinds)))
            if rule == "realfloat":
                allowed = "real numeric"
            raise TypeError(f"{op}: only {allowed} dtypes are allowed; got {dtype.name}.")
        if rule == "bool":
            return dtype, _dtypes.bool
        if rule == "real":
            return dtype, _dtypes.real_of(dtype)
        return dtype, dtype

    return meta


def _make_unary(op: str, summary: str, special: Callable[..., Array] | None) -> Callable[[Array], Array]:
    unary = special or _dispatch.unary

    def fn(x: Array, /) -> Array:
        if type(x) is not Array:
            check_array(op, x)
        return unary(op, x)

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"{summary}\n\nElementwise Array API function ``{op}(x)``; see docs/api.md."
    return fn


def _make_binary(op: str, summary: str, special: Callable[..., Array] | None) -> Callable[[Operand, Operand], Array]:
    if special is None:
        fn = _dispatch._FAST_BINARY[op] = _dispatch.fast_binary(op)
    else:
        def fn(x1: Operand, x2: Operand, /) -> Array:
            return special(op, x1, x2)

    fn.__name__ = fn.__qualname__ = op
    fn.__module__ = __name__  # NOTE: fast_binary made it in _dispatch; it is this module's function
    fn.__doc__ = (
        f"{summary}\n\nElementwise Array API function ``{op}(x1, x2)`` with broadcasting; either "
        f"operand may be a Python scalar. See docs/api.md."
    )
    return fn


# ---------------------------------------------------------------------------
# Array API special cases where NumPy's (and so the reference kernels') answers differ:
# the core patches the kernel's result, so every backend follows the standard.
# ---------------------------------------------------------------------------


def _may_be_inf(v: Any) -> Any:
    """``isinf(v)`` for a floating operand; None where ``v`` cannot be infinite."""
    if type(v) is Array:
        return _dispatch.unary("isinf", v) if v.dtype.kind == "float" else None
    return math.isinf(v) if isinstance(v, float) else None


def _floor_divide(op: str, a: Any, b: Any) -> Array:
    # NOTE: NumPy gives nan for inf // finite and -1 for finite // inf of the other sign; the
    # standard asks for +-inf and -0 there, which is what true division gives in those cases.
    out = _dispatch.binary(op, a, b)
    if out.dtype.kind != "float":
        return out
    ia, ib = _may_be_inf(a), _may_be_inf(b)
    if (ia is None and ib is None) or (ia is False and ib is False):
        return out
    if type(ia) is Array and type(ib) is Array:
        mixed = _dispatch.binary("not_equal", ia, ib)
    else:
        arr, flag = (ia, ib) if type(ia) is Array else (ib, ia)
        mixed = _dispatch.unary("logical_not", arr) if flag else arr
    return _dispatch.where(mixed, _dispatch.binary("divide", a, b), out)


def _expm1(op: str, x: Array) -> Array:
    # NOTE: for complex x, NumPy's expm1 gives nan+nanj at most infinite inputs and -0 for
    # expm1(-0+0j); exp(x) - 1 has the standard's special values there, expm1 elsewhere.
    out = _dispatch.unary(op, x)
    if x.dtype.kind != "complex":
        return out
    finite = _dispatch.where(_dispatch.binary("equal", x, 0), _dispatch.binary("add", x, 0), out)
    special = _dispatch.binary("subtract", _dispatch.unary("exp", x), 1)
    return _dispatch.where(_dispatch.unary("isfinite", x), finite, special)


def _sign(op: str, x: Array) -> Array:
    # NOTE: sign(+-0 +- 0j) is +0 + 0j in the standard (x / |x| would keep the zeros' signs).
    out = _dispatch.unary(op, x)
    if x.dtype.kind != "complex":
        return out
    return _dispatch.where(_dispatch.binary("equal", x, 0), _dispatch.binary("subtract", out, out), out)


def _tanh(op: str, x: Array) -> Array:
    # NOTE: tanh(+-inf + yj) for finite y is +-1 + 0j in the standard; C99 (and NumPy) give the
    # zero the sign of sin(2y).
    out = _dispatch.unary(op, x)
    if x.dtype.kind != "complex":
        return out
    re, im = _dispatch.unary("real", x), _dispatch.unary("imag", x)
    edge = _dispatch.binary("logical_and", _dispatch.unary("isinf", re), _dispatch.unary("isfinite", im))
    return _dispatch.where(edge, _dispatch.cast(_dispatch.unary("sign", re), x.dtype), out)


def _row(arity: int, kinds: frozenset[str], rule: str, reference_kernel: Callable[..., Any], *,
         grad: tuple[Callable[..., Any] | None, ...] | None = None, saves: str = "operands",
         decompose: Callable[..., Array] | None = None, special: Callable[..., Array] | None = None,
         accuracy: str = "rounded", domain: tuple[Any, ...] | None = None) -> Callable[[_F], _F]:
    """Register the op the decorated ``def`` names; return its generated function."""
    assert saves in ("nothing", "operands", "operands and out"), saves
    assert accuracy in ("exact", "rounded", "transcendental"), accuracy

    def register(fn: _F) -> _F:
        name = fn.__name__
        summary, _, example = inspect.cleandoc(fn.__doc__ or "").partition("\n\n")
        if name not in __all__ and name not in NOT_EXPORTED:
            raise AssertionError(f"elementwise row {name!r} is missing from ndplane._elementwise.__all__")
        op = Op(name, arity, kinds, rule, reference_kernel, grad, saves, decompose, special, accuracy, domain, summary)
        OPS[name] = op
        _dispatch.META[name] = _meta(name, kinds, rule)
        (reference.UNARY if arity == 1 else reference.BINARY)[name] = reference_kernel
        if decompose is not None:
            _dispatch.DECOMPOSITIONS[name] = decompose
        make = _make_unary if arity == 1 else _make_binary
        made: Any = make(name, summary, special)
        if example:  # the row's example, as the def wrote it
            made.__doc__ = f"{made.__doc__}\n\n{example}"
        made.__signature__ = inspect.signature(fn)  # the def's, not fast_binary's (a, b)
        return cast(_F, made)  # same signature as the row's def, which documents it

    return register


def _unary(kinds: frozenset[str], rule: str, reference_kernel: Callable[..., Any], **row: Any) -> Callable[[_F], _F]:
    return _row(1, kinds, rule, reference_kernel, **row)


def _binary(kinds: frozenset[str], rule: str, reference_kernel: Callable[..., Any], **row: Any) -> Callable[[_F], _F]:
    return _row(2, kinds, rule, reference_kernel, **row)


def _c(nd: Any, x: Any) -> Any:
    """For gradients: the complex conjugate of a complex array or Python scalar (else ``x``)."""
    if type(x) is Array:
        return nd.conj(x) if x.dtype.kind == "complex" else x
    return x.conjugate() if type(x) is complex else x


def _maxmin_a(nd: Any, g: Any, a: Any, b: Any, o: Any) -> Any:
    # NOTE: ties split the gradient evenly, as PyTorch does for maximum/minimum.
    return g * nd.where(a == b, 0.5, nd.where(a == o, 1.0, 0.0))


def _maxmin_b(nd: Any, g: Any, a: Any, b: Any, o: Any) -> Any:
    return g * nd.where(a == b, 0.5, nd.where(b == o, 1.0, 0.0))


def _pow_a(nd: Any, g: Any, a: Any, b: Any, o: Any) -> Any:
    if type(b) is Array:
        return g * _c(nd, b * nd.where(b == 0, 1, a) ** nd.where(b == 0, 1, b - 1))
    return g * _c(nd, b * a ** (b - 1) if b != 0 else a * 0)


def _pow_b(nd: Any, g: Any, a: Any, b: Any, o: Any) -> Any:
    safe = nd.where(a == 0, 1, a) if type(a) is Array else (a if a != 0 else 1)
    return g * _c(nd, o * nd.log(safe) if type(safe) is Array else o * math.log(safe))


def _copysign_a(nd: Any, g: Any, a: Any, b: Any, o: Any) -> Any:
    return g * nd.where(nd.signbit(a) == nd.signbit(o), 1.0, -1.0)



def _sign_kernel(x: np.ndarray, out: np.ndarray) -> Any:
    if x.dtype.kind == "c":  # x / |x|, and 0 for 0 (NumPy >= 2 agrees; be explicit)
        mag = np.abs(x)
        return np.divide(x, np.where(mag == 0, 1, mag), out=out)
    return np.sign(x, out=out)


def _imag_kernel(x: np.ndarray, out: np.ndarray) -> Any:
    return np.copyto(out, np.imag(x))


def _real_kernel(x: np.ndarray, out: np.ndarray) -> Any:
    return np.copyto(out, np.real(x))


_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


def _sigmoid_kernel(x: np.ndarray, out: np.ndarray | None = None) -> Any:
    # NOTE: exp(-|x|) lies in [0, 1], so nothing overflows at large |x|; float16 is computed in
    # float32 and rounded once, as the native kernels do (float16 loops would round e, 1 + e too).
    if x.dtype.kind != "f":  # as a ufunc without the loop (the core casts integers first)
        raise TypeError(f"sigmoid: no loop for {x.dtype}")
    w = x.astype(np.float32) if x.dtype == np.float16 else x
    e = np.exp(-np.abs(w))
    r = np.where(w >= 0, 1.0, e) / (1.0 + e)
    if out is None:
        return r.astype(x.dtype)
    np.copyto(out, r, casting="unsafe")
    return out


def _sigmoid(x: Array) -> Array:
    # The decomposition for backends without the kernel: the same stable formula in seven kernels.
    # NOTE: recorded as one sigmoid node, so the gradient is the row's o * (1 - o) on every
    # backend; differentiated through the formula it was 0 at x = 0 (|x|'s gradient there).
    with _graph.no_grad():
        e = exp(negative(abs(x)))
        d = add(e, 1)
        out = _dispatch.where(greater_equal(x, 0), divide(1, d), divide(e, d))
    return _graph.record_elementwise("sigmoid", out, (x,)) if x.requires_grad else out


def _silu_wide(x: np.ndarray) -> np.ndarray:
    # NOTE: x / (1 + exp(-x)); below -43, where exp(-x) nears overflow further left, x * exp(x + 86)
    # times e^-86 (the backends' kernels do the same; see the cpu backend's ops.h).
    tiny = x < -43
    with np.errstate(invalid="ignore"):  # -inf * 0 at x = -inf: NaN, as x * sigmoid(x) gives
        e = np.exp(np.where(tiny, x + 86, -x))
        return np.where(tiny, x * e * math.exp(-86), x / (1.0 + e))


def _silu(x: Array) -> Array:
    # The decomposition for backends without the kernel: x times the sigmoid (native where the
    # backend has it), recorded as one silu node.
    with _graph.no_grad():
        out = multiply(x, sigmoid(x))
    return _graph.record_elementwise("silu", out, (x,)) if x.requires_grad else out


def _silu_grad(nd: Any, g: Any, x: Any, o: Any) -> Any:
    # d/dx x s(x) = s + x s (1 - s), s the sigmoid
    s = sigmoid(x)
    return g * (s * (x * (1 - s) + 1))


_ERF_SCALAR = np.frompyfunc(math.erf, 1, 1)
_ERFC_SCALAR = np.frompyfunc(math.erfc, 1, 1)
_SQRT_HALF = math.sqrt(0.5)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _float64_kernel(name: str, fn: Callable[[np.ndarray], np.ndarray], wider: bool = False) -> Callable[..., Any]:
    """A reference kernel computed in float64 and rounded once to the result dtype; with
    ``wider``, long double inputs stay long double (``fn`` is written for any float dtype)."""

    def kernel(x: np.ndarray, out: np.ndarray | None = None) -> Any:
        if x.dtype.kind != "f":  # as a ufunc without the loop (the core casts integers first)
            raise TypeError(f"{name}: no loop for {x.dtype}")
        r = fn(x.astype(np.promote_types(x.dtype, np.float64) if wider else np.float64))
        if out is None:
            return r.astype(x.dtype)
        np.copyto(out, r, casting="unsafe")
        return out

    return kernel


# NOTE: NumPy has no erf; the reference kernels call the C library's erf/erfc (correctly rounded
# in float64 but for an ulp) once per element: slow (~60 ns an element), but an oracle that
# shares nothing with the decomposition below or the backends' kernels. GELU is x * Phi(x) with
# Phi(x) = erfc(-x / sqrt 2) / 2, which keeps its relative accuracy in the left tail, where
# 1 + erf(x / sqrt 2) cancels.
_erf_kernel = _float64_kernel("erf", lambda x: np.asarray(_ERF_SCALAR(x), dtype=np.float64))


def _product_error(a: Any, b: Any, p: Any) -> Any:
    """``a * b - p`` exactly, for ``p = a * b`` rounded: Dekker's product of Veltkamp's halves
    (float64 scalars or arrays; overflows past 2^996)."""

    def split(v: Any) -> tuple[Any, Any]:
        c = 134217729.0 * v
        h = c - (c - v)
        return h, v - h

    (ah, al), (bh, bl) = split(a), split(b)
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _gelu_float64(x: np.ndarray) -> np.ndarray:
    # NOTE: z = -x / sqrt 2 rounds; erfc(z + zl) = erfc(z) (1 - D zl) to first order, with
    # D = 2 exp(-z^2) / (sqrt pi erfc(z)) ~ 2z: without it, float64 inputs at x = -37 lose
    # 5 ulp to z's rounding (float32 and float16 inputs, computed in float64, lose nothing).
    z = x * -_SQRT_HALF  # -_SQRT_HALF is float64(-1 / sqrt 2); 4.83e-17 its error
    zl = _product_error(x, -_SQRT_HALF, z) + x * 4.833646656726457e-17
    erfc = np.asarray(_ERFC_SCALAR(z), dtype=np.float64)
    d = np.where(erfc > 0, _TWO_OVER_SQRT_PI * np.exp(-z * z) / np.where(erfc > 0, erfc, 1), 0)
    fix = np.where(np.abs(z) < 30, 1 - d * zl, 1)  # erfc is 0 or 2 past 27 (and zl may overflow)
    return 0.5 * x * erfc * fix


_gelu_kernel = _float64_kernel("gelu", _gelu_float64)
_silu_kernel = _float64_kernel("silu", _silu_wide, wider=True)

# The decomposition of erf: |x| < _ERF_SPLIT: erf(x) = x * p(x^2); above: erf(x) = 1 - erfc(|x|)
# (sign restored) with erfc(z) = exp(-z^2) / z * q(1 / z), where erfc(z) exp(z^2) z is smooth
# in 1 / z. p and q are Chebyshev series interpolated from the C library's erf and erfc at first
# use, cut where their coefficients fall below the dtype's precision. Past _ERF_TOP erfc is below
# float64's half ulp of 1, so 1 - erfc is 1 whatever q gives there.
_ERF_SPLIT = 1.5
_ERF_TOP = 6.0


def _chebyshev_fit(f: Callable[[float], float], tol: float, n: int = 40) -> tuple[float, ...]:
    """The Chebyshev series of ``f`` on [-1, 1] interpolated at ``n`` points, cut after the last
    coefficient above ``tol``. Each ``T_k`` at each point is one ``cos`` of a reduced angle and
    each coefficient one exact sum, so the coefficients are as accurate as ``f``'s values
    (NumPy's ``chebinterpolate`` builds ``T_k`` by recurrence: ~1e-15 of noise past degree 12)."""
    values = [f(math.cos(math.pi * (2 * j + 1) / (2 * n))) for j in range(n)]
    coefficients = [
        math.fsum(v * math.cos(math.pi * (k * (2 * j + 1) % (4 * n)) / (2 * n)) for j, v in enumerate(values)) * (2 / n)
        for k in range(n)
    ]  # fmt: skip
    coefficients[0] /= 2
    last = max(k for k, c in enumerate(coefficients) if math.fabs(c) > tol)
    return tuple(coefficients[: last + 1])


@functools.cache
def _erf_series(tol: float) -> tuple[tuple[float, ...], tuple[float, ...]]:
    def small(u: float) -> float:  # erf(r) / r, r = sqrt(s), s in [0, SPLIT^2]
        r = math.sqrt((u + 1) * (0.5 * _ERF_SPLIT * _ERF_SPLIT))
        return math.erf(r) / r if r else _TWO_OVER_SQRT_PI

    def large(u: float) -> float:  # erfc(z) exp(z^2) z, 1 / z in [1 / TOP, 1 / SPLIT]
        z = 1 / (1 / _ERF_TOP + (u + 1) * (0.5 * (1 / _ERF_SPLIT - 1 / _ERF_TOP)))
        # exp(z^2) with z^2 = zz + err exactly: exp(zz) alone would carry zz's rounding times
        # z^2, up to 36 ulp.
        zz = z * z
        return math.erfc(z) * math.exp(zz) * (1 + _product_error(z, z, zz)) * z

    return _chebyshev_fit(small, tol), _chebyshev_fit(large, tol)


def _clenshaw(u: Array, coefficients: Sequence[float]) -> Array:
    """The Chebyshev series ``sum c_k T_k(u)`` by Clenshaw's recurrence (stable on [-1, 1])."""
    u2 = add(u, u)
    b1: Any = coefficients[-1]
    b2: Any = 0.0
    for c in coefficients[-2:0:-1]:
        b1, b2 = add(subtract(multiply(u2, b1), b2), c), b1
    return add(subtract(multiply(u, b1), b2), coefficients[0])


def _erf(x: Array) -> Array:
    # The decomposition for backends without the kernel (about 3 kernels per coefficient).
    with _graph.no_grad():
        p, q = _erf_series(2.0**-53 if x.dtype.itemsize >= 8 else 2.0**-26)
        s = multiply(x, x)
        small = multiply(x, _clenshaw(subtract(multiply(s, 2 / (_ERF_SPLIT * _ERF_SPLIT)), 1), p))
        a = abs(x)
        v = divide(1, clip(a, _ERF_SPLIT, _ERF_TOP))
        u = subtract(multiply(subtract(v, 1 / _ERF_TOP), 2 / (1 / _ERF_SPLIT - 1 / _ERF_TOP)), 1)
        erfc = multiply(multiply(exp(negative(s)), v), _clenshaw(u, q))
        large = copysign(subtract(1, erfc), x)
        out = _dispatch.where(less(a, _ERF_SPLIT), small, large)
    return _graph.record_elementwise("erf", out, (x,)) if x.requires_grad else out


def _gelu(x: Array) -> Array:
    # The decomposition for backends without the kernel: x / 2 * (1 + erf(x / sqrt 2)), with
    # erf native where the backend has it.
    with _graph.no_grad():
        out = multiply(multiply(x, 0.5), add(erf(multiply(x, _SQRT_HALF)), 1))
    return _graph.record_elementwise("gelu", out, (x,)) if x.requires_grad else out


def _gelu_grad(nd: Any, g: Any, x: Any, o: Any) -> Any:
    # d/dx x Phi(x) = Phi(x) + x phi(x)
    phi = nd.exp(x * x * -0.5) * _INV_SQRT_2PI
    return g * ((erf(x * _SQRT_HALF) + 1) * 0.5 + x * phi)


def _bce_with_logits_kernel(x: np.ndarray, t: np.ndarray, out: np.ndarray | None = None) -> Any:
    # NOTE: max(x, 0) - x t + log1p(exp(-|x|)) written per sign of x: (1 - t) x + log1p(exp(-x))
    # for x >= 0, -t x + log1p(exp(x)) below, so that for targets in [0, 1] no two terms cancel
    # (x - x t loses x's ulp when t nears 1; 1 - t is exact there). Computed in float64 (or
    # wider) and rounded once; x = +-inf with t = 1 or 0 gives 0 * inf = NaN, as the formula does.
    if x.dtype.kind != "f" or t.dtype.kind != "f":  # as a ufunc without the loop
        raise TypeError(f"bce_with_logits: no loop for {x.dtype}, {t.dtype}")
    wide = np.promote_types(np.result_type(x, t), np.float64)  # long double stays (accuracy tests)
    x64, t64 = x.astype(wide), t.astype(wide)
    with np.errstate(invalid="ignore", over="ignore"):
        r = np.where(x64 >= 0, 1 - t64, -t64) * x64 + np.log1p(np.exp(-np.abs(x64)))
    if out is None:
        return r.astype(np.result_type(x, t))
    np.copyto(out, r, casting="unsafe")
    return out


def _bce_with_logits(x: Any, t: Any) -> Array:
    # The decomposition for backends without the kernel: the same formula in nine kernels,
    # recorded as one node (its gradient sigmoid(x) - t, where the chain through |x| gave
    # -t at x = 0).
    tail: Array | float
    with _graph.no_grad():
        if type(x) is Array:
            # c = (x >= 0) - t: 1 - t or -t, t an array or a Python scalar
            c = subtract(_dispatch.cast(greater_equal(x, 0), x.dtype), t)
            tail = log1p(exp(negative(abs(x))))
        else:  # a Python logit (t is then an array): its step and tail in Python's float64
            c = subtract(1.0 if x >= 0 else 0.0, t)
            tail = math.log1p(math.exp(-math.fabs(x)))
        out = add(multiply(c, x), tail)
    track = any(type(v) is Array and v.requires_grad for v in (x, t))
    return _graph.record_elementwise("bce_with_logits", out, (x, t)) if track else out


def _logaddexp(a: Any, b: Any) -> Array:
    hi = maximum(a, b)
    stable = add(hi, log1p(exp(negative(abs(subtract(a, b))))))
    # NOTE: equal infinities give inf - inf = nan above; a + log(2) is exact for them.
    return _dispatch.where(equal(a, b), add(a if type(a) is Array else hi, _LN2), stable)


def _logaddexp2(a: Any, b: Any) -> Array:
    hi = maximum(a, b)
    stable = add(hi, multiply(log1p(exp(multiply(negative(abs(subtract(a, b))), _LN2))), 1 / _LN2))
    return _dispatch.where(equal(a, b), add(a if type(a) is Array else hi, 1), stable)


# ---------------------------------------------------------------------------
# the ops, one row each
# ---------------------------------------------------------------------------


@_unary(_NUM, "real", np.abs, grad=(lambda nd, g, x, o: g * nd.where(o == 0, 0, x / nd.where(o == 0, 1, o)) if x.dtype.kind == "complex"
    else g * nd.sign(x),), saves="operands and out", accuracy="exact")
def abs(x: Array, /) -> Array:
    """Absolute value (the magnitude for complex numbers).

    >>> import ndplane as nd
    >>> nd.abs(nd.asarray([-1.5, 0.0, 2.0])).tolist()
    [1.5, 0.0, 2.0]
    """


@_unary(_NUM, "float", np.arccos, grad=(lambda nd, g, x, o: -g / _c(nd, nd.sqrt(1 - x * x)),), domain=(-1.5, 1.5), accuracy="transcendental")
def acos(x: Array, /) -> Array:
    """Inverse cosine.

    >>> import ndplane as nd
    >>> nd.acos(nd.asarray([1.0, -1.0])).tolist()
    [0.0, 3.141592653589793]
    """


@_unary(_NUM, "float", np.arccosh, grad=(lambda nd, g, x, o: g / _c(nd, nd.sqrt(x * x - 1)),), domain=(0, 20), accuracy="transcendental")
def acosh(x: Array, /) -> Array:
    """Inverse hyperbolic cosine.

    >>> import ndplane as nd
    >>> nd.acosh(nd.asarray([1.0])).tolist()
    [0.0]
    """


@_unary(_NUM, "float", np.arcsin, grad=(lambda nd, g, x, o: g / _c(nd, nd.sqrt(1 - x * x)),), domain=(-1.5, 1.5), accuracy="transcendental")
def asin(x: Array, /) -> Array:
    """Inverse sine.

    >>> import ndplane as nd
    >>> nd.asin(nd.asarray([0.0, 1.0])).tolist()
    [0.0, 1.5707963267948966]
    """


@_unary(_NUM, "float", np.arcsinh, grad=(lambda nd, g, x, o: g / _c(nd, nd.sqrt(x * x + 1)),), accuracy="transcendental")
def asinh(x: Array, /) -> Array:
    """Inverse hyperbolic sine.

    >>> import ndplane as nd
    >>> nd.asinh(nd.asarray([0.0, 1.0])).tolist()
    [0.0, 0.881373587019543]
    """


@_unary(_NUM, "float", np.arctan, grad=(lambda nd, g, x, o: g / _c(nd, 1 + x * x),), accuracy="transcendental")
def atan(x: Array, /) -> Array:
    """Inverse tangent.

    >>> import ndplane as nd
    >>> nd.atan(nd.asarray([0.0, 1.0])).tolist()
    [0.0, 0.7853981633974483]
    """


@_unary(_NUM, "float", np.arctanh, grad=(lambda nd, g, x, o: g / _c(nd, 1 - x * x),), domain=(-1.5, 1.5), accuracy="transcendental")
def atanh(x: Array, /) -> Array:
    """Inverse hyperbolic tangent.

    >>> import ndplane as nd
    >>> [float(f"{v:.12g}") for v in nd.atanh(nd.asarray([0.0, 0.5])).tolist()]  # the last bit differs by CPU
    [0.0, 0.549306144334]
    """


@_unary(_INTB, "same", np.invert, accuracy="exact")
def bitwise_invert(x: Array, /) -> Array:
    """Bitwise NOT (logical NOT for booleans).

    >>> import ndplane as nd
    >>> nd.bitwise_invert(nd.asarray([0, 5])).tolist(), nd.bitwise_invert(nd.asarray([True])).tolist()
    ([-1, -6], [False])
    """


@_unary(_REAL, "same", np.ceil, grad=(None,), saves="nothing", accuracy="exact")
def ceil(x: Array, /) -> Array:
    """Smallest integer-valued number >= x.

    >>> import ndplane as nd
    >>> nd.ceil(nd.asarray([-1.5, 1.2])).tolist()
    [-1.0, 2.0]
    """


@_unary(_NUM, "same", np.conjugate, grad=(lambda nd, g, x, o: nd.conj(g),), saves="nothing", accuracy="exact")
def conj(x: Array, /) -> Array:
    """Complex conjugate (identity for real numbers).

    >>> import ndplane as nd
    >>> nd.conj(nd.asarray([1 + 2j])).tolist()
    [(1-2j)]
    """


@_unary(_NUM, "float", np.cos, grad=(lambda nd, g, x, o: -g * _c(nd, nd.sin(x)),), accuracy="transcendental")
def cos(x: Array, /) -> Array:
    """Cosine.

    >>> import ndplane as nd
    >>> nd.cos(nd.asarray([0.0, nd.pi])).tolist()
    [1.0, -1.0]
    """


@_unary(_NUM, "float", np.cosh, grad=(lambda nd, g, x, o: g * _c(nd, nd.sinh(x)),), domain=(-10, 10), accuracy="transcendental")
def cosh(x: Array, /) -> Array:
    """Hyperbolic cosine.

    >>> import ndplane as nd
    >>> nd.cosh(nd.asarray([0.0])).tolist()
    [1.0]
    """


@_unary(_REAL, "float", _erf_kernel, grad=(lambda nd, g, x, o: g * (nd.exp(-(x * x)) * _TWO_OVER_SQRT_PI),), decompose=_erf, accuracy="transcendental", domain=(-7, 7))
def erf(x: Array, /) -> Array:
    """The error function, 2 / sqrt(pi) times the integral of exp(-t^2) from 0 to x; public as ``special.erf``.

    >>> import ndplane as nd
    >>> nd.special.erf(nd.asarray([0.0, -0.0, float("inf"), -float("inf")])).tolist()
    [0.0, -0.0, 1.0, -1.0]
    >>> bool(abs(nd.special.erf(nd.asarray(0.5)) - 0.5204998778) < 1e-9)
    True
    """


@_unary(_NUM, "float", np.exp, grad=(lambda nd, g, x, o: g * _c(nd, o),), saves="operands and out", domain=(-10, 10), accuracy="transcendental")
def exp(x: Array, /) -> Array:
    """Exponential, e**x.

    >>> import ndplane as nd
    >>> nd.exp(nd.asarray([0.0, 1.0])).tolist()
    [1.0, 2.718281828459045]
    """


@_unary(_NUM, "float", np.expm1, special=_expm1, grad=(lambda nd, g, x, o: g * _c(nd, o + 1),), saves="operands and out", domain=(-10, 10), accuracy="transcendental")
def expm1(x: Array, /) -> Array:
    """exp(x) - 1, accurate for small x.

    >>> import ndplane as nd
    >>> nd.expm1(nd.asarray([0.0, 1e-10])).tolist()
    [0.0, 1.00000000005e-10]
    """


@_unary(_REAL, "same", np.floor, grad=(None,), saves="nothing", accuracy="exact")
def floor(x: Array, /) -> Array:
    """Largest integer-valued number <= x.

    >>> import ndplane as nd
    >>> nd.floor(nd.asarray([-1.5, 1.2])).tolist()
    [-2.0, 1.0]
    """


@_unary(_NUM, "real", _imag_kernel, grad=(lambda nd, g, x, o: nd.astype(g, x.dtype) * 1j if x.dtype.kind == "complex" else g * 0,), accuracy="exact")
def imag(x: Array, /) -> Array:
    """Imaginary part (zeros for real numbers).

    >>> import ndplane as nd
    >>> nd.imag(nd.asarray([1 + 2j, 3 - 4j])).tolist()
    [2.0, -4.0]
    """


@_unary(_NUM, "bool", np.isfinite, accuracy="exact")
def isfinite(x: Array, /) -> Array:
    """Whether x is finite.

    >>> import ndplane as nd
    >>> nd.isfinite(nd.asarray([1.0, nd.inf, nd.nan])).tolist()
    [True, False, False]
    """


@_unary(_NUM, "bool", np.isinf, accuracy="exact")
def isinf(x: Array, /) -> Array:
    """Whether x is +-infinity.

    >>> import ndplane as nd
    >>> nd.isinf(nd.asarray([1.0, -nd.inf, nd.nan])).tolist()
    [False, True, False]
    """


@_unary(_NUM, "bool", np.isnan, accuracy="exact")
def isnan(x: Array, /) -> Array:
    """Whether x is NaN.

    >>> import ndplane as nd
    >>> nd.isnan(nd.asarray([1.0, nd.inf, nd.nan])).tolist()
    [False, False, True]
    """


@_unary(_NUM, "float", np.log, grad=(lambda nd, g, x, o: g / _c(nd, x),), accuracy="transcendental")
def log(x: Array, /) -> Array:
    """Natural logarithm.

    >>> import ndplane as nd
    >>> nd.log(nd.asarray([1.0, nd.e])).tolist()
    [0.0, 1.0]
    """


@_unary(_NUM, "float", np.log1p, grad=(lambda nd, g, x, o: g / _c(nd, x + 1),), accuracy="transcendental")
def log1p(x: Array, /) -> Array:
    """log(1 + x), accurate for small x.

    >>> import ndplane as nd
    >>> nd.log1p(nd.asarray([0.0, 1e-10])).tolist()
    [0.0, 9.999999999500001e-11]
    """


@_unary(_NUM, "float", np.log2, grad=(lambda nd, g, x, o: g / (_c(nd, x) * _LN2),), decompose=lambda x: _dispatch.binary("multiply", _dispatch.unary("log", x), 1 / _LN2), accuracy="transcendental")
def log2(x: Array, /) -> Array:
    """Base-2 logarithm.

    >>> import ndplane as nd
    >>> nd.log2(nd.asarray([1.0, 8.0])).tolist()
    [0.0, 3.0]
    """


@_unary(_NUM, "float", np.log10, grad=(lambda nd, g, x, o: g / (_c(nd, x) * _LN10),), decompose=lambda x: _dispatch.binary("multiply", _dispatch.unary("log", x), 1 / _LN10), accuracy="transcendental")
def log10(x: Array, /) -> Array:
    """Base-10 logarithm.

    >>> import ndplane as nd
    >>> nd.log10(nd.asarray([1.0, 1000.0])).tolist()
    [0.0, 3.0]
    """


@_unary(_BOOL, "same", np.logical_not, accuracy="exact", decompose=lambda x: _dispatch.binary("equal", x, False))
def logical_not(x: Array, /) -> Array:
    """Logical NOT.

    >>> import ndplane as nd
    >>> nd.logical_not(nd.asarray([True, False])).tolist()
    [False, True]
    """


@_unary(_NUM, "same", np.negative, grad=(lambda nd, g, x, o: -g,), saves="nothing", accuracy="exact")
def negative(x: Array, /) -> Array:
    """Numerical negative, -x.

    >>> import ndplane as nd
    >>> nd.negative(nd.asarray([1, -2])).tolist()
    [-1, 2]
    """


@_unary(_NUM, "real", _real_kernel, grad=(lambda nd, g, x, o: nd.astype(g, x.dtype) if x.dtype.kind == "complex" else g,), accuracy="exact")
def real(x: Array, /) -> Array:
    """Real part.

    >>> import ndplane as nd
    >>> nd.real(nd.asarray([1 + 2j, 3 - 4j])).tolist()
    [1.0, 3.0]
    """


@_unary(_NUM, "float", lambda x, out: np.divide(1, x, out=out), grad=(lambda nd, g, x, o: -g * _c(nd, o * o),), saves="operands and out", decompose=lambda x: _dispatch.binary("divide", 1, x))
def reciprocal(x: Array, /) -> Array:
    """1 / x.

    >>> import ndplane as nd
    >>> nd.reciprocal(nd.asarray([2.0, 4.0])).tolist()
    [0.5, 0.25]
    """


@_unary(_NUM, "same", lambda x, out: np.round(x, out=out), grad=(None,), saves="nothing", accuracy="exact")
def round(x: Array, /) -> Array:
    """Round to the nearest integer, halves to even.

    >>> import ndplane as nd
    >>> nd.round(nd.asarray([0.5, 1.5, 2.6])).tolist()
    [0.0, 2.0, 3.0]
    """


@_unary(_REAL, "float", _sigmoid_kernel, grad=(lambda nd, g, x, o: g * (o * (1 - o)),), saves="operands and out", decompose=_sigmoid, accuracy="transcendental")
def sigmoid(x: Array, /) -> Array:
    """Logistic sigmoid, 1 / (1 + exp(-x)), stable for large |x|; public as ``nn.functional.sigmoid``.

    >>> import ndplane as nd
    >>> nd.nn.functional.sigmoid(nd.asarray([0.0, 800.0, -800.0])).tolist()
    [0.5, 1.0, 0.0]
    """


@_unary(_REAL, "float", _silu_kernel, grad=(_silu_grad,), decompose=_silu, accuracy="transcendental")
def silu(x: Array, /) -> Array:
    """Sigmoid linear unit (swish), x * sigmoid(x); public as ``nn.functional.silu``.

    >>> import ndplane as nd
    >>> nd.nn.functional.silu(nd.asarray([0.0, 800.0, -800.0])).tolist()
    [0.0, 800.0, -0.0]
    """


@_unary(_NUM, "same", _sign_kernel, special=_sign, grad=(None,), saves="nothing", accuracy="exact")
def sign(x: Array, /) -> Array:
    """Sign: -1, 0 or 1 (x / |x| for complex numbers).

    >>> import ndplane as nd
    >>> nd.sign(nd.asarray([-2.0, 0.0, 3.0])).tolist()
    [-1.0, 0.0, 1.0]
    """


@_unary(_REAL, "bool", np.signbit, accuracy="exact")
def signbit(x: Array, /) -> Array:
    """Whether the sign bit is set (True for -0.0).

    >>> import ndplane as nd
    >>> nd.signbit(nd.asarray([-0.0, 0.0, -1.0])).tolist()
    [True, False, True]
    """


@_unary(_NUM, "float", np.sin, grad=(lambda nd, g, x, o: g * _c(nd, nd.cos(x)),), accuracy="transcendental")
def sin(x: Array, /) -> Array:
    """Sine.

    >>> import ndplane as nd
    >>> nd.sin(nd.asarray([0.0, nd.pi / 2])).tolist()
    [0.0, 1.0]
    """


@_unary(_NUM, "float", np.sinh, grad=(lambda nd, g, x, o: g * _c(nd, nd.cosh(x)),), domain=(-10, 10), accuracy="transcendental")
def sinh(x: Array, /) -> Array:
    """Hyperbolic sine.

    >>> import ndplane as nd
    >>> nd.sinh(nd.asarray([0.0])).tolist()
    [0.0]
    """


@_unary(_NUM, "float", np.sqrt, grad=(lambda nd, g, x, o: g / (2 * _c(nd, o)),), saves="operands and out")
def sqrt(x: Array, /) -> Array:
    """Square root.

    >>> import ndplane as nd
    >>> nd.sqrt(nd.asarray([4.0, 2.0])).tolist()
    [2.0, 1.4142135623730951]
    """


@_unary(_NUM, "same", np.square, grad=(lambda nd, g, x, o: g * 2 * _c(nd, x),), domain=(-100, 100), decompose=lambda x: _dispatch.binary("multiply", x, x))
def square(x: Array, /) -> Array:
    """x * x.

    >>> import ndplane as nd
    >>> nd.square(nd.asarray([-3, 2])).tolist()
    [9, 4]
    """


@_unary(_NUM, "float", np.tan, grad=(lambda nd, g, x, o: g * _c(nd, 1 + o * o),), saves="operands and out", domain=(-1.5, 1.5), accuracy="transcendental")
def tan(x: Array, /) -> Array:
    """Tangent.

    >>> import ndplane as nd
    >>> nd.tan(nd.asarray([0.0, nd.pi / 4])).tolist()
    [0.0, 0.9999999999999999]
    """


@_unary(_NUM, "float", np.tanh, special=_tanh, grad=(lambda nd, g, x, o: g * _c(nd, 1 - o * o),), saves="operands and out", accuracy="transcendental")
def tanh(x: Array, /) -> Array:
    """Hyperbolic tangent.

    >>> import ndplane as nd
    >>> nd.tanh(nd.asarray([0.0, nd.inf])).tolist()
    [0.0, 1.0]
    """


@_unary(_REAL, "same", np.trunc, grad=(None,), saves="nothing", accuracy="exact")
def trunc(x: Array, /) -> Array:
    """Round toward zero.

    >>> import ndplane as nd
    >>> nd.trunc(nd.asarray([-1.7, 1.7])).tolist()
    [-1.0, 1.0]
    """


@_binary(_NUM, "same", np.add, grad=(lambda nd, g, a, b, o: g, lambda nd, g, a, b, o: g), saves="nothing")
def add(x1: Operand, x2: Operand, /) -> Array:
    """x1 + x2.

    >>> import ndplane as nd
    >>> nd.add(nd.asarray([[1], [2]]), nd.asarray([10, 20])).tolist()
    [[11, 21], [12, 22]]
    """


@_binary(_REAL, "realfloat", np.arctan2, grad=(lambda nd, g, a, b, o: g * b / (a * a + b * b), lambda nd, g, a, b, o: -g * a / (a * a + b * b)), accuracy="transcendental")
def atan2(x1: Operand, x2: Operand, /) -> Array:
    """Inverse tangent of x1 / x2, in the quadrant of (x2, x1).

    >>> import ndplane as nd
    >>> nd.atan2(nd.asarray([1.0, -1.0]), 0.0).tolist()
    [1.5707963267948966, -1.5707963267948966]
    """


@_binary(_REAL, "realfloat", _bce_with_logits_kernel, grad=(lambda nd, g, x, t, o: g * (sigmoid(x) - t), lambda nd, g, x, t, o: g * -x), decompose=_bce_with_logits, accuracy="transcendental", domain=((-100.0, 100.0), (0.0, 1.0)))
def bce_with_logits(x1: Operand, x2: Operand, /) -> Array:
    """Binary cross entropy of targets ``x2`` given logits ``x1``, elementwise; public as ``nn.functional.binary_cross_entropy_with_logits``.

    ``max(x1, 0) - x1 * x2 + log1p(exp(-|x1|))``, computed per sign of ``x1`` so that no two
    terms cancel for targets in [0, 1]: one kernel where the backend has it.

    >>> import ndplane as nd
    >>> F = nd.nn.functional
    >>> F.binary_cross_entropy_with_logits(nd.asarray([0.0, 800.0]), nd.asarray([1.0, 1.0]), reduction="none").tolist()
    [0.6931471805599453, 0.0]
    """


@_binary(_INTB, "same", np.bitwise_and, accuracy="exact")
def bitwise_and(x1: Operand, x2: Operand, /) -> Array:
    """Bitwise AND.

    >>> import ndplane as nd
    >>> nd.bitwise_and(nd.asarray([12, 10]), 6).tolist()
    [4, 2]
    """


@_binary(_INT, "same", np.left_shift, accuracy="exact")
def bitwise_left_shift(x1: Operand, x2: Operand, /) -> Array:
    """x1 << x2.

    >>> import ndplane as nd
    >>> nd.bitwise_left_shift(nd.asarray([1, 3]), 2).tolist()
    [4, 12]
    """


@_binary(_INTB, "same", np.bitwise_or, accuracy="exact")
def bitwise_or(x1: Operand, x2: Operand, /) -> Array:
    """Bitwise OR.

    >>> import ndplane as nd
    >>> nd.bitwise_or(nd.asarray([12, 10]), 6).tolist()
    [14, 14]
    """


@_binary(_INT, "same", np.right_shift, accuracy="exact")
def bitwise_right_shift(x1: Operand, x2: Operand, /) -> Array:
    """x1 >> x2 (arithmetic for signed integers).

    >>> import ndplane as nd
    >>> nd.bitwise_right_shift(nd.asarray([-8, 8]), 2).tolist()
    [-2, 2]
    """


@_binary(_INTB, "same", np.bitwise_xor, accuracy="exact")
def bitwise_xor(x1: Operand, x2: Operand, /) -> Array:
    """Bitwise XOR.

    >>> import ndplane as nd
    >>> nd.bitwise_xor(nd.asarray([12, 10]), 6).tolist()
    [10, 12]
    """


@_binary(_REAL, "realfloat", np.copysign, grad=(_copysign_a, None), saves="operands and out", accuracy="exact")
def copysign(x1: Operand, x2: Operand, /) -> Array:
    """x1 with the sign of x2.

    >>> import ndplane as nd
    >>> nd.copysign(nd.asarray([1.0, -2.0]), -0.0).tolist()
    [-1.0, -2.0]
    """


@_binary(_NUM, "float", np.divide, grad=(lambda nd, g, a, b, o: g / _c(nd, b), lambda nd, g, a, b, o: -g * _c(nd, o / b)), saves="operands and out")
def divide(x1: Operand, x2: Operand, /) -> Array:
    """True division x1 / x2.

    >>> import ndplane as nd
    >>> nd.divide(nd.asarray([1, 3]), 2).tolist()
    [0.5, 1.5]
    """


@_binary(_ANY, "bool", np.equal, accuracy="exact")
def equal(x1: Operand, x2: Operand, /) -> Array:
    """x1 == x2.

    >>> import ndplane as nd
    >>> nd.equal(nd.asarray([1, 2]), nd.asarray([1, 3])).tolist()
    [True, False]
    """


@_binary(_REAL, "same", np.floor_divide, special=_floor_divide, grad=(None, None), saves="nothing")
def floor_divide(x1: Operand, x2: Operand, /) -> Array:
    """Floor division x1 // x2.

    >>> import ndplane as nd
    >>> nd.floor_divide(nd.asarray([7, -7]), 2).tolist()
    [3, -4]
    """


@_unary(_REAL, "float", _gelu_kernel, grad=(_gelu_grad,), decompose=_gelu, accuracy="transcendental", domain=(-12, 12))
def gelu(x: Array, /) -> Array:
    """Gaussian error linear unit, x * Phi(x) (Phi: the standard normal CDF); public as ``nn.functional.gelu``.

    >>> import ndplane as nd
    >>> nd.nn.functional.gelu(nd.asarray([0.0, float("inf")])).tolist()
    [0.0, inf]
    >>> bool(abs(nd.nn.functional.gelu(nd.asarray(1.0)) - 0.8413447461) < 1e-9)
    True
    """


@_binary(_REAL, "bool", np.greater, accuracy="exact", decompose=lambda a, b: _dispatch.binary("less", b, a))
def greater(x1: Operand, x2: Operand, /) -> Array:
    """x1 > x2.

    >>> import ndplane as nd
    >>> nd.greater(nd.asarray([1, 3]), 2).tolist()
    [False, True]
    """


@_binary(_REAL, "bool", np.greater_equal, accuracy="exact", decompose=lambda a, b: _dispatch.binary("less_equal", b, a))
def greater_equal(x1: Operand, x2: Operand, /) -> Array:
    """x1 >= x2.

    >>> import ndplane as nd
    >>> nd.greater_equal(nd.asarray([1, 2]), 2).tolist()
    [False, True]
    """


@_binary(_REAL, "realfloat", np.hypot, grad=(lambda nd, g, a, b, o: g * a / o, lambda nd, g, a, b, o: g * b / o), saves="operands and out", accuracy="transcendental")
def hypot(x1: Operand, x2: Operand, /) -> Array:
    """sqrt(x1**2 + x2**2) without undue overflow.

    >>> import ndplane as nd
    >>> nd.hypot(nd.asarray([3.0]), nd.asarray([4.0])).tolist()
    [5.0]
    """


@_binary(_REAL, "bool", np.less, accuracy="exact")
def less(x1: Operand, x2: Operand, /) -> Array:
    """x1 < x2.

    >>> import ndplane as nd
    >>> nd.less(nd.asarray([1, 3]), 2).tolist()
    [True, False]
    """


@_binary(_REAL, "bool", np.less_equal, accuracy="exact")
def less_equal(x1: Operand, x2: Operand, /) -> Array:
    """x1 <= x2.

    >>> import ndplane as nd
    >>> nd.less_equal(nd.asarray([2, 3]), 2).tolist()
    [True, False]
    """


@_binary(_REAL, "realfloat", np.logaddexp, grad=(lambda nd, g, a, b, o: g * nd.exp(a - o), lambda nd, g, a, b, o: g * nd.exp(b - o)), saves="operands and out", domain=(-20, 20), decompose=_logaddexp, accuracy="transcendental")
def logaddexp(x1: Operand, x2: Operand, /) -> Array:
    """log(exp(x1) + exp(x2)) without overflow.

    >>> import ndplane as nd
    >>> nd.logaddexp(nd.asarray([0.0, 1000.0]), nd.asarray([0.0, 1000.0])).tolist()
    [0.6931471805599453, 1000.6931471805599]
    """


@_binary(_REAL, "realfloat", np.logaddexp2, grad=(lambda nd, g, a, b, o: g * 2.0 ** (a - o), lambda nd, g, a, b, o: g * 2.0 ** (b - o)), saves="operands and out", decompose=_logaddexp2, accuracy="transcendental", domain=(-20, 20))
def logaddexp2(x1: Operand, x2: Operand, /) -> Array:
    """log2(2**x1 + 2**x2) without overflow (the log-sum of base-2 log-probabilities).

    >>> import ndplane as nd
    >>> nd.logaddexp2(nd.asarray([1.0, 1000.0]), nd.asarray([1.0, 1000.0])).tolist()
    [2.0, 1001.0]
    """


@_binary(_BOOL, "same", np.logical_and, accuracy="exact", decompose=lambda a, b: _dispatch.binary("bitwise_and", a, b))
def logical_and(x1: Operand, x2: Operand, /) -> Array:
    """Logical AND.

    >>> import ndplane as nd
    >>> nd.logical_and(nd.asarray([True, False]), nd.asarray([True, True])).tolist()
    [True, False]
    """


@_binary(_BOOL, "same", np.logical_or, accuracy="exact", decompose=lambda a, b: _dispatch.binary("bitwise_or", a, b))
def logical_or(x1: Operand, x2: Operand, /) -> Array:
    """Logical OR.

    >>> import ndplane as nd
    >>> nd.logical_or(nd.asarray([True, False]), nd.asarray([False, False])).tolist()
    [True, False]
    """


@_binary(_BOOL, "same", np.logical_xor, accuracy="exact", decompose=lambda a, b: _dispatch.binary("not_equal", a, b))
def logical_xor(x1: Operand, x2: Operand, /) -> Array:
    """Logical XOR.

    >>> import ndplane as nd
    >>> nd.logical_xor(nd.asarray([True, False]), nd.asarray([True, True])).tolist()
    [False, True]
    """


@_binary(_REAL, "same", np.maximum, grad=(_maxmin_a, _maxmin_b), saves="operands and out", accuracy="exact")
def maximum(x1: Operand, x2: Operand, /) -> Array:
    """Elementwise maximum (NaN propagates).

    >>> import ndplane as nd
    >>> nd.maximum(nd.asarray([1.0, nd.nan]), nd.asarray([2.0, 0.0])).tolist()
    [2.0, nan]
    """


@_binary(_REAL, "same", np.minimum, grad=(_maxmin_a, _maxmin_b), saves="operands and out", accuracy="exact")
def minimum(x1: Operand, x2: Operand, /) -> Array:
    """Elementwise minimum (NaN propagates).

    >>> import ndplane as nd
    >>> nd.minimum(nd.asarray([1.0, 3.0]), 2.0).tolist()
    [1.0, 2.0]
    """


@_binary(_NUM, "same", np.multiply, grad=(lambda nd, g, a, b, o: g * _c(nd, b), lambda nd, g, a, b, o: g * _c(nd, a)))
def multiply(x1: Operand, x2: Operand, /) -> Array:
    """x1 * x2.

    >>> import ndplane as nd
    >>> nd.multiply(nd.asarray([1, 2]), 3).tolist()
    [3, 6]
    """


@_binary(_REAL, "realfloat", np.nextafter, grad=(None, None), saves="nothing", accuracy="exact")
def nextafter(x1: Operand, x2: Operand, /) -> Array:
    """The next representable value after x1 toward x2.

    >>> import ndplane as nd
    >>> nd.nextafter(nd.asarray([1.0]), 2.0).tolist()
    [1.0000000000000002]
    """


@_binary(_ANY, "bool", np.not_equal, accuracy="exact", decompose=lambda a, b: _dispatch.unary("logical_not", _dispatch.binary("equal", a, b)))
def not_equal(x1: Operand, x2: Operand, /) -> Array:
    """x1 != x2.

    >>> import ndplane as nd
    >>> nd.not_equal(nd.asarray([1, 2]), nd.asarray([1, 3])).tolist()
    [False, True]
    """


@_binary(_NUM, "same", np.power, grad=(_pow_a, _pow_b), saves="operands and out", domain=(-8, 8), accuracy="transcendental")
def pow(x1: Operand, x2: Operand, /) -> Array:
    """x1 ** x2.

    >>> import ndplane as nd
    >>> nd.pow(nd.asarray([2, 3]), 2).tolist()
    [4, 9]
    """


@_binary(_REAL, "same", np.remainder, grad=(lambda nd, g, a, b, o: g, lambda nd, g, a, b, o: -g * nd.floor_divide(a, b)))
def remainder(x1: Operand, x2: Operand, /) -> Array:
    """x1 % x2, with the sign of x2 (as Python).

    >>> import ndplane as nd
    >>> nd.remainder(nd.asarray([7, -7]), 3).tolist()
    [1, 2]
    """


def _minus(value: Any, dtype: DType) -> Any:
    """``-value`` for a Python scalar of ``dtype`` (subtract's decomposition): integers wrap
    around as ``x - value`` does (``-1`` is 255 in uint8, ``-(-128)`` is -128 in int8)."""
    if dtype.kind in ("int", "uint"):
        return np.negative(np.asarray(value, dtype.dtype)).item()
    return -value


@_binary(_NUM, "same", np.subtract, grad=(lambda nd, g, a, b, o: g, lambda nd, g, a, b, o: -g), saves="nothing", decompose=lambda a, b: _dispatch.binary("add", a, _dispatch.unary("negative", b) if type(b) is Array else _minus(b, a.dtype)))
def subtract(x1: Operand, x2: Operand, /) -> Array:
    """x1 - x2.

    >>> import ndplane as nd
    >>> nd.subtract(nd.asarray([5, 3]), 1).tolist()
    [4, 2]
    """


def positive(x: Array, /) -> Array:
    """+x: a copy of ``x``.

    >>> import ndplane as nd
    >>> nd.positive(nd.asarray([-1, 2]))
    Array([-1,  2], dtype=int64, device='numpy:0')
    """
    check_array("positive", x)
    _dispatch.META["positive"](x.dtype, {})
    return _dispatch.copy_of(x)


_dispatch.META["positive"] = _meta("positive", _NUM, "same")


def _scalar_bound(b: Any) -> bool:
    """A bound ``fused:clip`` takes: None, a Python float that is not NaN, or an int a float holds."""
    if b is None:
        return True
    return (type(b) is float and not math.isnan(b)) or (type(b) is int and -(2**1000) < b < 2**1000)


def clip(x: Array, /, min: Operand | None = None, max: Operand | None = None) -> Array:
    """Clamp ``x`` to ``[min, max]`` (either bound may be None); the result keeps ``x``'s dtype.

    >>> import ndplane as nd
    >>> nd.clip(nd.asarray([-2.0, 0.5, 3.0]), -1.0, 1.0)
    Array([-1. ,  0.5,  1. ], dtype=float64, device='numpy:0')
    """
    check_array("clip", x)
    if x.dtype.kind not in _REAL:
        raise TypeError(f"clip: only real numeric dtypes are allowed; got {x.dtype.name}.")
    if (
        x.dtype.kind == "float" and (min is not None or max is not None) and _scalar_bound(min)
        and _scalar_bound(max) and not x.requires_grad and "fused:clip" in x._storage.backend.capabilities
    ):  # fmt: skip
        bounds = {"min": None if min is None else float(cast(float, min)),
                  "max": None if max is None else float(cast(float, max))}  # fmt: skip
        return _dispatch.fused_map("clip", x, bounds)
    out = x
    for bound, op in ((min, "maximum"), (max, "minimum")):
        if bound is None:
            continue
        if type(bound) is Array:
            _dispatch.same_device("clip", x, bound)
            bound = bound if bound.dtype is x.dtype else _dispatch.cast(bound, x.dtype)
        elif x.dtype.kind in _INT and isinstance(bound, float):
            if math.isnan(bound):
                raise ValueError("clip: a NaN bound is not allowed for integer arrays.")
            bound = math.floor(bound) if op == "minimum" else math.ceil(bound)
        if out is not x and not out.requires_grad and _dispatch.binary_inplace(op, out, bound):
            continue  # the second bound into the first's fresh result: one array, not two
        out = _dispatch.binary(op, out, bound)
        if out.dtype is not x.dtype:
            out = _dispatch.cast(out, x.dtype)
    return _dispatch.copy_of(out) if out is x else out



# ---------------------------------------------------------------------------
# operators
# ---------------------------------------------------------------------------
_OPERATORS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "pow", "and": "bitwise_and",
    "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "bitwise_left_shift",
    "rshift": "bitwise_right_shift",
}  # fmt: skip
_COMPARISONS = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
                "ge": "greater_equal"}  # fmt: skip
_UNARY_OPERATORS = {"neg": "negative", "abs": "abs", "invert": "bitwise_invert"}


def _operand_ok(other: Any) -> bool:
    return type(other) is Array or isinstance(other, (bool, int, float, complex))


def _forward(op: str) -> Callable[[Array, Any], Any]:
    special = OPS[op].special
    if special is None:
        return _dispatch.fast_binary(op, operator=True)
    binary = special

    def method(self: Array, other: Any) -> Any:
        if type(other) is not Array and not _operand_ok(other):
            return NotImplemented
        return binary(op, self, other)

    return method


def _reflected(op: str) -> Callable[[Array, Any], Any]:
    binary = OPS[op].special or _dispatch.binary

    def method(self: Array, other: Any) -> Any:
        if not _operand_ok(other):
            return NotImplemented
        return binary(op, other, self)

    return method


def _inplace(op: str, dunder: str) -> Callable[[Array, Any], Array]:
    binary = OPS[op].special or _dispatch.binary

    def method(self: Array, other: Any) -> Array:
        if not _operand_ok(other):
            raise TypeError(f"{dunder}: unsupported operand type {type(other).__name__}.")
        _graph.check_inplace(self, dunder)
        track = self.requires_grad and _graph.is_grad_enabled()
        if not track and binary is _dispatch.binary and _dispatch.binary_inplace(op, self, other):
            return self
        return store_inplace(self, binary(op, _graph.alias(self) if track else self, other), dunder, op)

    return method


def store_inplace(self: Array, result: Array, dunder: str, op: str) -> Array:
    """The end of ``self OP= other`` (``dunder``), ``result`` being ``self OP other`` computed
    from ``_graph.alias(self)`` where the graph records: writes it into ``self``, which keeps
    its shape and dtype, and records the write for autograd. Returns ``self``."""
    if result.shape != self.shape:
        raise ValueError(
            f"{dunder}: the result shape {result.shape} differs from the array's shape {self.shape}; "
            f"an in-place operation cannot broadcast its target."
        )
    if result.dtype is not self.dtype and _KIND_RANK[result.dtype.kind] > _KIND_RANK[self.dtype.kind]:
        raise TypeError(
            f"{dunder}: the result dtype {result.dtype.name} cannot be stored in the {self.dtype.name} "
            f"array in place; use x = x {op} y instead."
        )
    _dispatch.assign(self, result, dunder)
    if result.requires_grad:
        _graph.record("identity", self, (result,))
    return self


_KIND_RANK = {"bool": 0, "int": 1, "uint": 1, "float": 2, "complex": 3}

# Each operator's docstring example, with x = asarray([4, 1]): op -> (symbol, scalar, the list of
# ``x OP scalar`` (also of ``x OP= scalar``), the list of ``scalar OP x``).
_OPERATOR_EXAMPLES: dict[str, tuple[str, int, str, str | None]] = {
    "add": ("+", 2, "[6, 3]", "[6, 3]"),
    "subtract": ("-", 2, "[2, -1]", "[-2, 1]"),
    "multiply": ("*", 2, "[8, 2]", "[8, 2]"),
    "divide": ("/", 2, "[2.0, 0.5]", "[0.5, 2.0]"),
    "floor_divide": ("//", 2, "[2, 0]", "[0, 2]"),
    "remainder": ("%", 3, "[1, 1]", "[3, 0]"),
    "pow": ("**", 2, "[16, 1]", "[16, 2]"),
    "bitwise_and": ("&", 5, "[4, 1]", "[4, 1]"),
    "bitwise_or": ("|", 5, "[5, 5]", "[5, 5]"),
    "bitwise_xor": ("^", 5, "[1, 4]", "[1, 4]"),
    "bitwise_left_shift": ("<<", 2, "[16, 4]", "[32, 4]"),
    "bitwise_right_shift": (">>", 2, "[1, 0]", "[0, 1]"),
    "equal": ("==", 1, "[False, True]", None),
    "not_equal": ("!=", 1, "[True, False]", None),
    "less": ("<", 1, "[False, False]", None),
    "less_equal": ("<=", 1, "[False, True]", None),
    "greater": (">", 1, "[True, False]", None),
    "greater_equal": (">=", 1, "[True, True]", None),
}


def _operator_doc(op: str, form: str) -> str:
    """The docstring of ``Array.__op__`` (form ""), ``__rop__`` ("r") or ``__iop__`` ("i")."""
    sym, s, forward, reflected = _OPERATOR_EXAMPLES[op]
    x = "[4.0, 1.0]" if form == "i" and op == "divide" else "[4, 1]"
    head = f">>> import ndplane as nd\n>>> x = nd.asarray({x})\n"
    if form == "r":
        return (f"``other {sym} self`` for a Python scalar ``other``: :func:`ndplane.{op}` with the operands "
                f"swapped.\n\n{head}>>> ({s} {sym} x).tolist()\n{reflected}")
    if form == "i":
        return (f"``self {sym}= other``: :func:`ndplane.{op}` written into ``self``, which keeps its shape and "
                f"dtype (a result dtype it cannot hold raises).\n\n{head}>>> x {sym}= {s}\n>>> x.tolist()\n{forward}")
    return (f"``self {sym} other``: :func:`ndplane.{op}` as an operator; ``other`` is an array or a Python "
            f"scalar.\n\n{head}>>> (x {sym} {s}).tolist()\n{forward}")


_OPERATOR_SIGNATURE = inspect.Signature(
    [inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY, annotation="Array"),
     inspect.Parameter("other", inspect.Parameter.POSITIONAL_ONLY, annotation="Array | bool | int | float | complex")],
    return_annotation="Array",
)  # fmt: skip


def _method(fn: Callable[..., Any], dunder: str, op: str, form: str) -> Callable[..., Any]:
    # NOTE: named as Array's own method (help(), the API reference): the function is built here.
    fn.__name__, fn.__qualname__, fn.__module__ = dunder, f"Array.{dunder}", Array.__module__
    fn.__doc__ = _operator_doc(op, form)
    fn.__signature__ = _OPERATOR_SIGNATURE  # type: ignore[attr-defined]  # not fast_binary's (a, b)
    return fn


def operators() -> dict[str, Callable[..., Any]]:
    """The Array's arithmetic, bitwise and comparison operators by dunder name (bound in ``_methods``)."""
    table: dict[str, Callable[..., Any]] = {}
    for short, op in _OPERATORS.items():
        table[f"__{short}__"] = _method(_forward(op), f"__{short}__", op, "")
        table[f"__r{short}__"] = _method(_reflected(op), f"__r{short}__", op, "r")
        table[f"__i{short}__"] = _method(_inplace(op, f"__i{short}__"), f"__i{short}__", op, "i")
    for short, op in _COMPARISONS.items():
        table[f"__{short}__"] = _method(_forward(op), f"__{short}__", op, "")
    for short, op in _UNARY_OPERATORS.items():
        table[f"__{short}__"] = globals()[op]
    table["__pos__"] = positive
    return table
