"""Data types, categories and the promotion table.

A :class:`DType` is a small immutable singleton that carries the matching
NumPy dtype as ``.dtype``, so ``numpy.dtype(ndplane.float32)`` works (as
scikit-learn, xarray and Dask expect).  Promotion follows the Array API table
within a kind; across kinds (bool < integer < floating < complex) the higher
kind's dtype wins, as in PyTorch and JAX.  There is no value-based casting.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._errors import UnsupportedDTypeError

__all__ = [
    "DType",
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "ALL_DTYPES",
    "result_type",
    "isdtype",
]

_builtin_bool = bool


class DType:
    """An ndplane data type.

    >>> import ndplane as nd, numpy
    >>> nd.float32.name, nd.float32.itemsize, numpy.dtype(nd.float32)
    ('float32', 4, dtype('float32'))
    """

    __slots__ = ("name", "kind", "itemsize", "dtype", "_rank")

    def __init__(self, name: str, kind: str, rank: int) -> None:
        self.name = name
        self.kind = kind  # "bool" | "int" | "uint" | "float" | "complex"
        self.dtype = np.dtype(name)
        self.itemsize = self.dtype.itemsize
        self._rank = rank

    def __repr__(self) -> str:
        return f"ndplane.{self.name}"

    def __reduce__(self) -> str:
        return self.name  # pickles as the module-level singleton

    def __copy__(self) -> DType:
        return self

    def __deepcopy__(self, memo: Any) -> DType:
        return self

    @property
    def is_floating(self) -> _builtin_bool:
        """Whether this is a real or complex floating-point dtype (the ones gradients flow through).

        >>> import ndplane as nd
        >>> nd.float32.is_floating, nd.complex64.is_floating, nd.int64.is_floating
        (True, True, False)
        """
        return self.kind == "float" or self.kind == "complex"

    @property
    def type(self) -> type:
        """The NumPy scalar type, as on a NumPy dtype (Dask reads ``x.dtype.type`` of its chunks).

        >>> import ndplane as nd
        >>> nd.float32.type
        <class 'numpy.float32'>
        """
        # NOTE: ``kind`` stays ndplane's ("float", not NumPy's "f"): the core reads it everywhere.
        return self.dtype.type


bool = DType("bool", "bool", 0)
int8 = DType("int8", "int", 1)
int16 = DType("int16", "int", 2)
int32 = DType("int32", "int", 3)
int64 = DType("int64", "int", 4)
uint8 = DType("uint8", "uint", 1)
uint16 = DType("uint16", "uint", 2)
uint32 = DType("uint32", "uint", 3)
uint64 = DType("uint64", "uint", 4)
float16 = DType("float16", "float", 1)
float32 = DType("float32", "float", 2)
float64 = DType("float64", "float", 3)
complex64 = DType("complex64", "complex", 2)
complex128 = DType("complex128", "complex", 3)

ALL_DTYPES: tuple[DType, ...] = (
    bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    float16, float32, float64, complex64, complex128,
)  # fmt: skip
BY_NAME: dict[str, DType] = {d.name: d for d in ALL_DTYPES}
FROM_NUMPY: dict[np.dtype, DType] = {d.dtype: d for d in ALL_DTYPES}

# ---------------------------------------------------------------------------
# Promotion. Within a kind: the Array API table. Mixed signed/unsigned: the
# smallest signed type holding both (uint64 with a signed type is an error, as
# in the standard). Across kinds the higher kind wins and keeps its own dtype
# (int8 + float32 -> float32); float + complex keeps the wider precision.
# ---------------------------------------------------------------------------
_SIGNED = (int8, int16, int32, int64)
_UNSIGNED = (uint8, uint16, uint32, uint64)
_FLOATS = (float16, float32, float64)
_COMPLEX = (complex64, complex128)
_KIND_ORDER = {"bool": 0, "int": 1, "uint": 1, "float": 2, "complex": 3}
_COMPLEX_OF = {float16: complex64, float32: complex64, float64: complex128}
_REAL_OF = {complex64: float32, complex128: float64}


def _build_promotion_table() -> dict[tuple[DType, DType], DType]:
    table: dict[tuple[DType, DType], DType] = {(bool, bool): bool}
    for group in (_SIGNED, _UNSIGNED, _FLOATS, _COMPLEX):
        for a in group:
            for b in group:
                table[a, b] = a if a._rank >= b._rank else b
    for u in _UNSIGNED[:3]:
        for s in _SIGNED:
            rank = max(s._rank, u._rank + 1)
            table[u, s] = table[s, u] = _SIGNED[rank - 1]
    for f in _FLOATS:
        for c in _COMPLEX:
            wide = c if c._rank >= f._rank else _COMPLEX_OF[f]
            table[f, c] = table[c, f] = wide
    for lo in ALL_DTYPES:
        for hi in ALL_DTYPES:
            if _KIND_ORDER[lo.kind] < _KIND_ORDER[hi.kind] and (lo, hi) not in table:
                table[lo, hi] = table[hi, lo] = hi
    return table


PROMOTION_TABLE: dict[tuple[DType, DType], DType] = _build_promotion_table()


def promote(a: DType, b: DType, name: str = "result_type") -> DType:
    """The one promotion lookup; raises a TypeError naming both dtypes."""
    try:
        return PROMOTION_TABLE[a, b]
    except KeyError:
        raise TypeError(
            f"{name}: no promotion rule for {a.name} and {b.name} "
            f"(uint64 and signed integers have no common integer type); "
            f"cast one operand with astype() first."
        ) from None


def complex_of(d: DType) -> DType:
    return _COMPLEX_OF.get(d, d)


def real_of(d: DType) -> DType:
    return _REAL_OF.get(d, d)


_CATEGORIES: dict[str, frozenset[DType]] = {
    "bool": frozenset({bool}),
    "signed integer": frozenset(_SIGNED),
    "unsigned integer": frozenset(_UNSIGNED),
    "integral": frozenset(_SIGNED + _UNSIGNED),
    "real floating": frozenset(_FLOATS),
    "complex floating": frozenset(_COMPLEX),
    "numeric": frozenset(_SIGNED + _UNSIGNED + _FLOATS + _COMPLEX),
}


def isdtype(dtype: DType, kind: DType | str | tuple[DType | str, ...]) -> _builtin_bool:
    """Whether ``dtype`` is of the given kind (Array API ``isdtype``).

    >>> import ndplane as nd
    >>> nd.isdtype(nd.int8, "integral"), nd.isdtype(nd.float32, ("bool", nd.float64))
    (True, False)
    """
    if not isinstance(dtype, DType):
        raise TypeError(f"isdtype: expected an ndplane dtype; got {dtype!r}.")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, DType):
        return dtype is kind
    if isinstance(kind, str):
        try:
            return dtype in _CATEGORIES[kind]
        except KeyError:
            raise ValueError(
                f"isdtype: unknown kind {kind!r}; expected one of {sorted(_CATEGORIES)}."
            ) from None
    raise TypeError(f"isdtype: kind must be a dtype, a category string or a tuple; got {kind!r}.")


def as_dtype(obj: Any, name: str = "dtype") -> DType:
    """Convert a dtype-like (DType, NumPy dtype or its name) to a DType."""
    if isinstance(obj, DType):
        return obj
    try:
        return FROM_NUMPY[np.dtype(obj)]
    except (TypeError, KeyError):
        raise TypeError(
            f"{name}: expected an ndplane dtype such as ndplane.float32; got {obj!r}."
        ) from None


def result_type(*arrays_and_dtypes: Any) -> DType:
    """The dtype that results from promoting the arguments (Array API).

    Python scalars take part with the "weak" scalar rules.

    >>> import ndplane as nd
    >>> nd.result_type(nd.int8, nd.uint8), nd.result_type(nd.float32, 1.0)
    (ndplane.int16, ndplane.float32)
    """
    dtypes = [a if isinstance(a, DType) else a.dtype for a in arrays_and_dtypes
              if not isinstance(a, (_builtin_bool, int, float, complex))]
    scalars = [a for a in arrays_and_dtypes if isinstance(a, (_builtin_bool, int, float, complex))]
    if not dtypes:
        raise ValueError("result_type: at least one array or dtype is required.")
    out = as_dtype(dtypes[0], "result_type")
    for d in dtypes[1:]:
        out = promote(out, as_dtype(d, "result_type"))
    for s in scalars:
        out = scalar_result_dtype(out, s, None)
    return out


def scalar_kind(value: Any) -> str:
    t = type(value)
    if t is _builtin_bool:
        return "bool"
    if t is int:
        return "int"
    if t is float:
        return "float"
    if t is complex:
        return "complex"
    if isinstance(value, (np.bool_, _builtin_bool)):
        return "bool"
    if isinstance(value, (int, np.integer)):
        return "int"
    if isinstance(value, (float, np.floating)):
        return "float"
    if isinstance(value, (complex, np.complexfloating)):
        return "complex"
    raise TypeError(f"expected an array or a Python scalar; got {type(value).__name__}.")


def scalar_result_dtype(dtype: DType, value: Any, defaults: dict[str, DType] | None) -> DType:
    """Dtype of ``array <op> scalar``: the array's dtype unless the scalar's kind is higher."""
    kind = scalar_kind(value)
    if _KIND_ORDER[kind] <= _KIND_ORDER[dtype.kind]:
        return dtype
    if kind == "complex" and dtype.kind == "float":
        return _COMPLEX_OF[dtype]
    category = {"complex": "complex floating", "float": "real floating", "int": "integral"}[kind]
    if defaults is None:
        return {"complex floating": complex128, "real floating": float64, "integral": int64}[category]
    return default_of(defaults, category, f"a Python {kind} with an array of {dtype.name}")


def default_of(defaults: dict[str, DType], category: str, what: str) -> DType:
    """The device default for ``category``; a clear error where the device has none."""
    try:
        return defaults[category]
    except KeyError:
        raise UnsupportedDTypeError(
            f"{what} needs a {category} dtype, and this device has none "
            f"(its defaults: {', '.join(f'{k}={v.name}' for k, v in defaults.items())})."
        ) from None


_INT_RANGE = {d: (int(np.iinfo(d.dtype).min), int(np.iinfo(d.dtype).max)) for d in (
    int8, int16, int32, int64, uint8, uint16, uint32, uint64)}  # fmt: skip


def python_scalar(value: Any, dtype: DType, name: str) -> Any:
    """Convert a Python scalar to the Python type that represents ``dtype``'s values.

    Integers out of the dtype's range raise OverflowError (no silent wrap-around).
    """
    kind = dtype.kind
    if kind == "bool":
        return _builtin_bool(value)
    if kind == "int" or kind == "uint":
        v = int(value)
        lo, hi = _INT_RANGE[dtype]
        if not lo <= v <= hi:
            raise OverflowError(f"{name}: the Python integer {v} is out of bounds for {dtype.name} [{lo}, {hi}].")
        return v
    if kind == "float":
        return float(value)
    return complex(value)
