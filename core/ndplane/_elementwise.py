"""Elementwise functions (Array API chapter) and the Array operators.

Each function is one row of a table: its op name (also the backend op name),
the dtype kinds it accepts and how its result dtype follows from the input
dtype.  The rows fill ``_dispatch.META``; a few ops also get a decomposition
into other ops for backends that lack the kernel.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from . import _dispatch, _dtypes, _graph
from ._array import Array
from ._dtypes import DType

__all__: list[str] = []

Operand = Array | bool | int | float | complex

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


# name: (kinds, rule, summary)
_UNARY: dict[str, tuple[frozenset[str], str, str]] = {
    "abs": (_NUM, "real", "Absolute value (the magnitude for complex numbers)."),
    "acos": (_NUM, "float", "Inverse cosine."),
    "acosh": (_NUM, "float", "Inverse hyperbolic cosine."),
    "asin": (_NUM, "float", "Inverse sine."),
    "asinh": (_NUM, "float", "Inverse hyperbolic sine."),
    "atan": (_NUM, "float", "Inverse tangent."),
    "atanh": (_NUM, "float", "Inverse hyperbolic tangent."),
    "bitwise_invert": (_INTB, "same", "Bitwise NOT (logical NOT for booleans)."),
    "ceil": (_REAL, "same", "Smallest integer-valued number >= x."),
    "conj": (_NUM, "same", "Complex conjugate (identity for real numbers)."),
    "cos": (_NUM, "float", "Cosine."),
    "cosh": (_NUM, "float", "Hyperbolic cosine."),
    "exp": (_NUM, "float", "Exponential, e**x."),
    "expm1": (_NUM, "float", "exp(x) - 1, accurate for small x."),
    "floor": (_REAL, "same", "Largest integer-valued number <= x."),
    "imag": (_NUM, "real", "Imaginary part (zeros for real numbers)."),
    "isfinite": (_NUM, "bool", "Whether x is finite."),
    "isinf": (_NUM, "bool", "Whether x is +-infinity."),
    "isnan": (_NUM, "bool", "Whether x is NaN."),
    "log": (_NUM, "float", "Natural logarithm."),
    "log1p": (_NUM, "float", "log(1 + x), accurate for small x."),
    "log2": (_NUM, "float", "Base-2 logarithm."),
    "log10": (_NUM, "float", "Base-10 logarithm."),
    "logical_not": (_BOOL, "same", "Logical NOT."),
    "negative": (_NUM, "same", "Numerical negative, -x."),
    "real": (_NUM, "real", "Real part."),
    "reciprocal": (_NUM, "float", "1 / x."),
    "round": (_NUM, "same", "Round to the nearest integer, halves to even."),
    "sign": (_NUM, "same", "Sign: -1, 0 or 1 (x / |x| for complex numbers)."),
    "signbit": (_REAL, "bool", "Whether the sign bit is set (True for -0.0)."),
    "sin": (_NUM, "float", "Sine."),
    "sinh": (_NUM, "float", "Hyperbolic sine."),
    "sqrt": (_NUM, "float", "Square root."),
    "square": (_NUM, "same", "x * x."),
    "tan": (_NUM, "float", "Tangent."),
    "tanh": (_NUM, "float", "Hyperbolic tangent."),
    "trunc": (_REAL, "same", "Round toward zero."),
}

_BINARY: dict[str, tuple[frozenset[str], str, str]] = {
    "add": (_NUM, "same", "x1 + x2."),
    "atan2": (_REAL, "realfloat", "Inverse tangent of x1 / x2, in the quadrant of (x2, x1)."),
    "bitwise_and": (_INTB, "same", "Bitwise AND."),
    "bitwise_left_shift": (_INT, "same", "x1 << x2."),
    "bitwise_or": (_INTB, "same", "Bitwise OR."),
    "bitwise_right_shift": (_INT, "same", "x1 >> x2 (arithmetic for signed integers)."),
    "bitwise_xor": (_INTB, "same", "Bitwise XOR."),
    "copysign": (_REAL, "realfloat", "x1 with the sign of x2."),
    "divide": (_NUM, "float", "True division x1 / x2."),
    "equal": (_ANY, "bool", "x1 == x2."),
    "floor_divide": (_REAL, "same", "Floor division x1 // x2."),
    "greater": (_REAL, "bool", "x1 > x2."),
    "greater_equal": (_REAL, "bool", "x1 >= x2."),
    "hypot": (_REAL, "realfloat", "sqrt(x1**2 + x2**2) without undue overflow."),
    "less": (_REAL, "bool", "x1 < x2."),
    "less_equal": (_REAL, "bool", "x1 <= x2."),
    "logaddexp": (_REAL, "realfloat", "log(exp(x1) + exp(x2)) without overflow."),
    "logical_and": (_BOOL, "same", "Logical AND."),
    "logical_or": (_BOOL, "same", "Logical OR."),
    "logical_xor": (_BOOL, "same", "Logical XOR."),
    "maximum": (_REAL, "same", "Elementwise maximum (NaN propagates)."),
    "minimum": (_REAL, "same", "Elementwise minimum (NaN propagates)."),
    "multiply": (_NUM, "same", "x1 * x2."),
    "nextafter": (_REAL, "realfloat", "The next representable value after x1 toward x2."),
    "not_equal": (_ANY, "bool", "x1 != x2."),
    "pow": (_NUM, "same", "x1 ** x2."),
    "remainder": (_REAL, "same", "x1 % x2, with the sign of x2 (as Python)."),
    "subtract": (_NUM, "same", "x1 - x2."),
}


def _check_array(name: str, x: Any) -> Array:
    if type(x) is not Array:
        raise TypeError(f"{name}: expected an ndplane array; got {type(x).__name__}.")
    return x


def _make_unary(op: str, summary: str) -> Callable[[Array], Array]:
    unary = _SPECIAL_UNARY.get(op, _dispatch.unary)

    def fn(x: Array, /) -> Array:
        if type(x) is not Array:
            _check_array(op, x)
        return unary(op, x)

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"{summary}\n\nElementwise Array API function ``{op}(x)``; see docs/api.md."
    return fn


def _make_binary(op: str, summary: str) -> Callable[[Operand, Operand], Array]:
    special = _SPECIAL_BINARY.get(op)
    if special is None:
        fn = _dispatch._FAST_BINARY[op] = _dispatch.fast_binary(op)
    else:
        def fn(x1: Operand, x2: Operand, /) -> Array:
            return special(op, x1, x2)

    fn.__name__ = fn.__qualname__ = op
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


_SPECIAL_UNARY: dict[str, Callable[[str, Array], Array]] = {"expm1": _expm1, "sign": _sign, "tanh": _tanh}
_SPECIAL_BINARY: dict[str, Callable[[str, Any, Any], Array]] = {"floor_divide": _floor_divide}

_g = globals()
for _name, (_kinds, _rule, _summary) in _UNARY.items():
    _dispatch.META[_name] = _meta(_name, _kinds, _rule)
    _g[_name] = _make_unary(_name, _summary)
    __all__.append(_name)
for _name, (_kinds, _rule, _summary) in _BINARY.items():
    _dispatch.META[_name] = _meta(_name, _kinds, _rule)
    _g[_name] = _make_binary(_name, _summary)
    __all__.append(_name)

# Names bound above, spelled out for readers and type checkers.
abs: Callable[[Array], Array]
add: Callable[[Operand, Operand], Array]
divide: Callable[[Operand, Operand], Array]
equal: Callable[[Operand, Operand], Array]
exp: Callable[[Array], Array]
log: Callable[[Array], Array]
log1p: Callable[[Array], Array]
maximum: Callable[[Operand, Operand], Array]
minimum: Callable[[Operand, Operand], Array]
multiply: Callable[[Operand, Operand], Array]
negative: Callable[[Array], Array]
subtract: Callable[[Operand, Operand], Array]


def positive(x: Array, /) -> Array:
    """+x: a copy of ``x``.

    >>> import ndplane as nd
    >>> nd.positive(nd.asarray([-1, 2]))
    Array([-1,  2], dtype=int64, device='numpy:0')
    """
    _check_array("positive", x)
    _dispatch.META["positive"](x.dtype, {})
    return _dispatch.copy_of(x)


_dispatch.META["positive"] = _meta("positive", _NUM, "same")
__all__.append("positive")


def clip(x: Array, /, min: Operand | None = None, max: Operand | None = None) -> Array:
    """Clamp ``x`` to ``[min, max]`` (either bound may be None); the result keeps ``x``'s dtype.

    >>> import ndplane as nd
    >>> nd.clip(nd.asarray([-2.0, 0.5, 3.0]), -1.0, 1.0)
    Array([-1. ,  0.5,  1. ], dtype=float64, device='numpy:0')
    """
    _check_array("clip", x)
    if x.dtype.kind not in _REAL:
        raise TypeError(f"clip: only real numeric dtypes are allowed; got {x.dtype.name}.")
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
        out = _dispatch.binary(op, out, bound)
        if out.dtype is not x.dtype:
            out = _dispatch.cast(out, x.dtype)
    return _dispatch.copy_of(out) if out is x else out


__all__.append("clip")

# ---------------------------------------------------------------------------
# decompositions, used only when a backend lacks the kernel
# ---------------------------------------------------------------------------
_LN2 = math.log(2.0)
_DECOMPOSITIONS: dict[str, Callable[..., Array]] = {
    "square": lambda x: multiply(x, x),
    "reciprocal": lambda x: divide(1, x),
    "log2": lambda x: multiply(log(x), 1 / _LN2),
    "log10": lambda x: multiply(log(x), 1 / math.log(10.0)),
    "subtract": lambda a, b: add(a, negative(b)) if type(b) is Array else add(a, -b),
    "greater": lambda a, b: _dispatch.binary("less", b, a),
    "greater_equal": lambda a, b: _dispatch.binary("less_equal", b, a),
    "not_equal": lambda a, b: _dispatch.unary("logical_not", equal(a, b)),
    "logical_not": lambda x: equal(x, False),
    "logical_and": lambda a, b: _dispatch.binary("bitwise_and", a, b),
    "logical_or": lambda a, b: _dispatch.binary("bitwise_or", a, b),
    "logical_xor": lambda a, b: _dispatch.binary("not_equal", a, b),
    "logaddexp": lambda a, b: _logaddexp(a, b),
}


def _logaddexp(a: Any, b: Any) -> Array:
    hi = maximum(a, b)
    stable = add(hi, log1p(exp(negative(abs(subtract(a, b))))))
    # NOTE: equal infinities give inf - inf = nan above; a + log(2) is exact for them.
    return _dispatch.where(equal(a, b), add(a if type(a) is Array else hi, _LN2), stable)


_dispatch.DECOMPOSITIONS.update(_DECOMPOSITIONS)

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
    if op not in _SPECIAL_BINARY:
        return _dispatch.fast_binary(op, operator=True)
    binary = _SPECIAL_BINARY[op]

    def method(self: Array, other: Any) -> Any:
        if type(other) is not Array and not _operand_ok(other):
            return NotImplemented
        return binary(op, self, other)

    return method


def _reflected(op: str) -> Callable[[Array, Any], Any]:
    binary = _SPECIAL_BINARY.get(op, _dispatch.binary)

    def method(self: Array, other: Any) -> Any:
        if not _operand_ok(other):
            return NotImplemented
        return binary(op, other, self)

    return method


def _inplace(op: str, dunder: str) -> Callable[[Array, Any], Array]:
    binary = _SPECIAL_BINARY.get(op, _dispatch.binary)

    def method(self: Array, other: Any) -> Array:
        if not _operand_ok(other):
            raise TypeError(f"{dunder}: unsupported operand type {type(other).__name__}.")
        _graph.check_inplace(self, dunder)
        track = self.requires_grad and _graph.is_grad_enabled()
        if not track and binary is _dispatch.binary and _dispatch.binary_inplace(op, self, other):
            return self
        result = binary(op, _graph.alias(self) if track else self, other)
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

    return method


_KIND_RANK = {"bool": 0, "int": 1, "uint": 1, "float": 2, "complex": 3}


def operators() -> dict[str, Callable[..., Any]]:
    """The Array's arithmetic, bitwise and comparison operators by dunder name (bound in ``_methods``)."""
    table: dict[str, Callable[..., Any]] = {}
    for short, op in _OPERATORS.items():
        table[f"__{short}__"] = _forward(op)
        table[f"__r{short}__"] = _reflected(op)
        table[f"__i{short}__"] = _inplace(op, f"__i{short}__")
    for short, op in _COMPARISONS.items():
        table[f"__{short}__"] = _forward(op)
    for short, op in _UNARY_OPERATORS.items():
        table[f"__{short}__"] = globals()[op]
    table["__pos__"] = positive
    return table
