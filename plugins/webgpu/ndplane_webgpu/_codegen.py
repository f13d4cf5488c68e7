"""WGSL generation: one template per op family (``kernels/*.wgsl``), specialised by
substituting snippets from the tables below (dtype loads/stores, op expressions).

Nothing here touches the GPU; it turns (op, dtypes, layout flags) into WGSL source.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from string import Template
from typing import NamedTuple

_KERNELS = Path(__file__).parent / "kernels"


class DT(NamedTuple):
    bits: int  # storage width: 8 and 16 are packed in u32 words, 64 and 128 span 2 and 4 of them
    ct: str  # compute type: f32, i32, u32, bool, (64-bit dtypes) f64, i64, u64, (complex) vec2<f32|f64>
    dec: str  # raw bits $w (zero-extended; a u64 for 64-bit dtypes; complex: words of type `raw`) -> compute type
    enc: str  # compute type $v -> raw bits (masked to the width)
    raw: str = ""  # the raw bits' type where they are words, not one integer: complex


DTYPES: dict[str, DT] = {
    "bool": DT(8, "bool", "($w != 0u)", "select(0u, 1u, $v)"),
    "int8": DT(8, "i32", "(bitcast<i32>($w << 24u) >> 24u)", "(bitcast<u32>($v) & 0xffu)"),
    "uint8": DT(8, "u32", "$w", "($v & 0xffu)"),
    "int16": DT(16, "i32", "(bitcast<i32>($w << 16u) >> 16u)", "(bitcast<u32>($v) & 0xffffu)"),
    "uint16": DT(16, "u32", "$w", "($v & 0xffffu)"),
    "int32": DT(32, "i32", "bitcast<i32>($w)", "bitcast<u32>($v)"),
    "uint32": DT(32, "u32", "$w", "$v"),
    "float16": DT(16, "f32", "f16_to_f32($w)", "f32_to_f16($v)"),
    "float32": DT(32, "f32", "bitcast<f32>($w)", "bitcast<u32>($v)"),
    # With the adapter features "shader-int64" (and "shader-f64" for float64): see backend.py.
    "int64": DT(64, "i64", "bitcast<i64>($w)", "bitcast<u64>($v)"),
    "uint64": DT(64, "u64", "$w", "$v"),
    "float64": DT(64, "f64", "bitcast<f64>($w)", "bitcast<u64>($v)"),
    # Pairs of floats (real, imaginary). NOTE: complex64 moves as two u32 words, so it needs no
    # adapter feature; complex128 as two u64 (float64's features).
    "complex64": DT(64, "vec2<f32>", "bitcast<vec2<f32>>($w)", "bitcast<vec2<u32>>($v)", "vec2<u32>"),
    "complex128": DT(128, "vec2<f64>",
                     "vec2<f64>(bitcast<f64>(u64_join(($w).xy)), bitcast<f64>(u64_join(($w).zw)))",
                     "vec4<u32>(u64_split(bitcast<u64>(($v).x)), u64_split(bitcast<u64>(($v).y)))", "vec4<u32>"),
}

KIND = {"f32": "f", "i32": "i", "u32": "u", "bool": "b", "f64": "f", "i64": "i", "u64": "u",
        "vec2<f32>": "c", "vec2<f64>": "c"}  # fmt: skip
WIDE = frozenset({"f64", "i64", "u64", "vec2<f64>"})
#: The real compute type of each complex one (the type of its parts, of abs, real and imag).
PART = {"vec2<f32>": "f32", "vec2<f64>": "f64"}

# Conversions between compute types, NumPy ``astype`` semantics.
_CONV = {
    ("f32", "i32"): "f_to_i32($x)", ("f32", "u32"): "f_to_u32($x)", ("f32", "bool"): "f_nonzero($x)",
    ("i32", "f32"): "f32($x)", ("u32", "f32"): "f32($x)", ("bool", "f32"): "select(0.0, 1.0, $x)",
    ("i32", "u32"): "bitcast<u32>($x)", ("u32", "i32"): "bitcast<i32>($x)",
    ("i32", "bool"): "($x != 0)", ("u32", "bool"): "($x != 0u)",
    ("bool", "i32"): "select(0, 1, $x)", ("bool", "u32"): "select(0u, 1u, $x)",
    # 64-bit compute types. NOTE: naga's i64(i32) sign-extends, u64(u32) zero-extends and the
    # narrowing conversions keep the low bits, as NumPy's astype does.
    ("f64", "bool"): "d_nonzero($x)", ("i64", "bool"): "($x != 0li)", ("u64", "bool"): "($x != 0lu)",
    ("bool", "f64"): "f64(select(0.0, 1.0, $x))", ("bool", "i64"): "select(0li, 1li, $x)",
    ("bool", "u64"): "select(0lu, 1lu, $x)",
    ("i32", "i64"): "i64($x)", ("i32", "u64"): "bitcast<u64>(i64($x))", ("u32", "i64"): "bitcast<i64>(u64($x))",
    ("u32", "u64"): "u64($x)", ("i64", "i32"): "i32($x)", ("i64", "u32"): "u32($x)",
    ("u64", "i32"): "bitcast<i32>(u32($x))", ("u64", "u32"): "u32($x)",
    ("i64", "u64"): "bitcast<u64>($x)", ("u64", "i64"): "bitcast<i64>($x)",
    ("f32", "i64"): "f_to_i64($x)", ("f32", "u64"): "f_to_u64($x)", ("f64", "i32"): "d_to_i32($x)",
    ("f64", "u32"): "d_to_u32($x)", ("f64", "i64"): "d_to_i64($x)", ("f64", "u64"): "d_to_u64($x)",
    ("f32", "f64"): "f64($x)", ("f64", "f32"): "f32($x)",
    **{(s, "f64"): "f64($x)" for s in ("i32", "u32", "i64", "u64")},
    **{(s, "f32"): "f32($x)" for s in ("i64", "u64")},
}  # fmt: skip

# Casts where converting through the compute types would round twice: float64 -> float16.
CAST_OVERRIDES = {("float64", "float16"): "d_to_f16_exact($x)", ("complex128", "float16"): "d_to_f16_exact(($x).x)"}


def cast_expr(src: str, dst: str, expr: str) -> str:
    over = CAST_OVERRIDES.get((src, dst))
    if over is not None:
        return over.replace("$x", expr)
    return conv(DTYPES[src].ct, DTYPES[dst].ct, expr)


def conv(src: str, dst: str, expr: str) -> str:
    if src == dst:
        return expr
    # Complex, NumPy's astype: a real value is the real part; complex -> real drops the imaginary
    # part (NumPy warns), complex -> bool tests both.
    if src in PART and dst in PART:
        return f"{dst}({expr})"
    if src in PART:
        return widen("c_nonzero($x)", src).replace("$x", expr) if dst == "bool" else conv(PART[src], dst, f"({expr}).x")
    if dst in PART:
        return f"{dst}({conv(src, PART[dst], expr)}, 0.0)"
    return _CONV[src, dst].replace("$x", expr)


def truth(ct: str, expr: str) -> str:
    return conv(ct, "bool", expr)


_F = "f"
_INT = ("i", "u")

# Unary ops: {op: {kind: expression of $x}}; the result has the out dtype's compute type.
UNARY: dict[str, dict[str, str]] = {
    "abs": {"f": "f_abs($x)", "i": "abs($x)", "u": "$x"},
    "bitwise_invert": {"i": "~$x", "u": "~$x", "b": "!$x"},
    "conj": {"f": "$x", "i": "$x", "u": "$x"},
    "real": {"f": "$x", "i": "$x", "u": "$x"},
    "imag": {"f": "0.0", "i": "0", "u": "0u"},
    "isfinite": {"f": "f_isfinite($x)", "i": "true", "u": "true", "b": "true"},
    "isinf": {"f": "f_isinf($x)", "i": "false", "u": "false", "b": "false"},
    "isnan": {"f": "f_isnan($x)", "i": "false", "u": "false", "b": "false"},
    "logical_not": {"f": "!f_nonzero($x)", "i": "($x == 0)", "u": "($x == 0u)", "b": "!$x"},
    "negative": {"f": "f_neg($x)", "i": "-$x", "u": "(0u - $x)"},
    "reciprocal": {"f": "(1.0 / $x)"},
    "sign": {"f": "f_sign($x)", "i": "i_sign($x)", "u": "select(0u, 1u, $x != 0u)"},
    "signbit": {"f": "f_signbit($x)", "i": "($x < 0)", "u": "false", "b": "false"},
    "square": {"f": "($x * $x)", "i": "($x * $x)", "u": "($x * $x)"},
}  # fmt: skip
for _op, _fn in {
    "acos": "f_acos", "acosh": "f_acosh", "asin": "f_asin", "asinh": "f_asinh", "atan": "f_atan",
    "atanh": "f_atanh", "cos": "f_cos", "cosh": "f_cosh", "erf": "f_erf", "exp": "f_exp", "expm1": "f_expm1",
    "gelu": "f_gelu", "log": "f_log", "log1p": "f_log1p", "log2": "f_log2", "log10": "f_log10",
    "sin": "f_sin", "sigmoid": "f_sigmoid", "silu": "f_silu", "sinh": "f_sinh", "sqrt": "f_sqrt",
    "tan": "f_tan", "tanh": "f_tanh",
}.items():  # fmt: skip
    UNARY[_op] = {"f": f"{_fn}($x)"}
for _op in ("ceil", "floor", "trunc", "round"):
    # NOTE: trunc and round are ours (common.wgsl says why); round rounds half to even, as NumPy.
    UNARY[_op] = {"f": f"f_{_op}($x)" if _op in ("trunc", "round") else f"{_op}($x)", "i": "$x", "u": "$x"}


def _same(expr: str, kinds: str = "iuf") -> dict[str, str]:
    return {k: expr for k in kinds}


# Binary ops: {op: {kind: expression of $a, $b}} (kind of the inputs).
BINARY: dict[str, dict[str, str]] = {
    "add": {**_same("($a + $b)"), "b": "($a || $b)"},
    "subtract": _same("($a - $b)"),
    "multiply": {**_same("($a * $b)"), "b": "($a && $b)"},
    "divide": {"f": "($a / $b)"},
    "atan2": {"f": "f_atan2($a, $b)"},
    "copysign": {"f": "f_copysign($a, $b)"},
    "hypot": {"f": "f_hypot($a, $b)"},
    "bce_with_logits": {"f": "f_bce_with_logits($a, $b)"},
    "logaddexp": {"f": "f_logaddexp($a, $b)"},
    "logaddexp2": {"f": "f_logaddexp2($a, $b)"},
    "nextafter": {"f": "f_nextafter($a, $b)"},
    "bitwise_and": {"i": "($a & $b)", "u": "($a & $b)", "b": "($a && $b)"},
    "bitwise_or": {"i": "($a | $b)", "u": "($a | $b)", "b": "($a || $b)"},
    "bitwise_xor": {"i": "($a ^ $b)", "u": "($a ^ $b)", "b": "($a != $b)"},
    "bitwise_left_shift": {"i": "i_shl($a, $b)", "u": "u_shl($a, $b)"},
    "bitwise_right_shift": {"i": "i_shr($a, $b)", "u": "u_shr($a, $b)"},
    "equal": {"f": "f_eq($a, $b)", "i": "($a == $b)", "u": "($a == $b)", "b": "($a == $b)"},
    "not_equal": {"f": "!f_eq($a, $b)", "i": "($a != $b)", "u": "($a != $b)", "b": "($a != $b)"},
    "less": {"f": "f_lt($a, $b)", "i": "($a < $b)", "u": "($a < $b)", "b": "(!$a && $b)"},
    "less_equal": {"f": "f_le($a, $b)", "i": "($a <= $b)", "u": "($a <= $b)", "b": "(!$a || $b)"},
    "greater": {"f": "f_lt($b, $a)", "i": "($a > $b)", "u": "($a > $b)", "b": "($a && !$b)"},
    "greater_equal": {"f": "f_le($b, $a)", "i": "($a >= $b)", "u": "($a >= $b)", "b": "($a || !$b)"},
    "floor_divide": {"f": "f_floor_divide($a, $b)", "i": "i_floor_divide($a, $b)",
                     "u": "u_floor_divide($a, $b)"},
    "remainder": {"f": "f_remainder($a, $b)", "i": "i_remainder($a, $b)", "u": "u_remainder($a, $b)"},
    "maximum": {"f": "f_maximum($a, $b)", "i": "max($a, $b)", "u": "max($a, $b)", "b": "($a || $b)"},
    "minimum": {"f": "f_minimum($a, $b)", "i": "min($a, $b)", "u": "min($a, $b)", "b": "($a && $b)"},
    "pow": {"f": "f_pow($a, $b)", "i": "i_pow($a, $b)", "u": "u_pow($a, $b)"},
}  # fmt: skip
_TRUTH = {"f": "f_nonzero($)", "i": "($ != 0)", "u": "($ != 0u)", "b": "$"}
for _op, _join in (("logical_and", "&&"), ("logical_or", "||"), ("logical_xor", "!=")):
    BINARY[_op] = {
        k: f"({t.replace('$', '$a')} {_join} {t.replace('$', '$b')})" for k, t in _TRUTH.items()
    }

# Complex ("c": vec2<f32>; widen() names the vec2<f64> twins): kernels/complex.wgsl, whose functions
# are C99 Annex G's (NumPy's), with NumPy's arithmetic and lexicographic order.
for _op in ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "expm1", "log", "log1p",
            "log2", "log10", "sin", "sinh", "sqrt", "tan", "tanh", "abs", "conj", "isfinite", "isinf", "isnan",
            "reciprocal", "sign", "square"):  # fmt: skip
    UNARY[_op]["c"] = f"c_{_op}($x)"
UNARY["real"]["c"] = "($x).x"
UNARY["imag"]["c"] = "($x).y"
UNARY["negative"]["c"] = "c_neg($x)"
UNARY["logical_not"]["c"] = "!c_nonzero($x)"
UNARY["round"]["c"] = "c_round($x)"  # componentwise, half to even, as NumPy
for _op, _e in {"add": "($a + $b)", "subtract": "($a - $b)", "multiply": "c_mul($a, $b)",
                "divide": "c_div($a, $b)", "pow": "c_pow($a, $b)", "equal": "c_eq($a, $b)",
                "not_equal": "!c_eq($a, $b)", "less": "c_lt($a, $b)", "less_equal": "c_le($a, $b)",
                "greater": "c_lt($b, $a)", "greater_equal": "c_le($b, $a)", "maximum": "c_maximum($a, $b)",
                "minimum": "c_minimum($a, $b)"}.items():  # fmt: skip
    BINARY[_op]["c"] = _e
for _op, _join in (("logical_and", "&&"), ("logical_or", "||"), ("logical_xor", "!=")):
    BINARY[_op]["c"] = f"(c_nonzero($a) {_join} c_nonzero($b))"

#: Unary ops whose result on a complex operand is real: the compute type PART[ct].
REAL_RESULT = frozenset({"abs", "real", "imag"})

BOOL_BINARY = frozenset({
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_xor",
})  # fmt: skip

# Order-preserving sort keys of $x by compute type (u32; u64 for the 64-bit types).
SORT_KEY = {"f32": "f_sortkey($x)", "i32": "(bitcast<u32>($x) ^ 0x80000000u)", "u32": "$x",
            "bool": "select(0u, 1u, $x)", "f64": "d_sortkey($x)",
            "i64": "(bitcast<u64>($x) ^ 0x8000000000000000lu)", "u64": "$x"}  # fmt: skip

# Per-dtype overrides where computing in the wider compute type would be wrong.
OVERRIDES: dict[tuple[str, str], str] = {
    ("nextafter", "float16"): "h_nextafter($a, $b)",
}

H_NEXTAFTER = """
fn h_nextafter(a: f32, b: f32) -> f32 {
  if (f_isnan(a) || f_isnan(b)) { return f_nan(); }
  if (a == b) { return b; }
  let h = f32_to_f16(a);
  if ((h & 0x7fffu) == 0u) { return f16_to_f32((f32_to_f16(b) & 0x8000u) | 1u); }
  if ((a < b) == (a > 0.0)) { return f16_to_f32(h + 1u); }
  return f16_to_f32(h - 1u);
}
"""


def op_expr(table: dict[str, dict[str, str]], op: str, dtype: str) -> str | None:
    over = OVERRIDES.get((op, dtype))
    if over is not None:
        return over
    ct = DTYPES[dtype].ct
    expr = table.get(op, {}).get(KIND[ct])
    return None if expr is None else widen(expr, ct)


# ---------------------------------------------------------------------------
# 64-bit compute types: the op tables are written once, for the 32-bit types; widen() renames an
# expression's helpers to their 64-bit twins (int64.wgsl, float64.wgsl, f64math.wgsl).
# ---------------------------------------------------------------------------

_HELPER = re.compile(r"\b([fiuc])_(\w+)\(")
_U32_LITERAL = re.compile(r"\b(0x[0-9a-fA-F]+|[0-9]+)u\b")


@functools.cache
def _defined(name: str) -> frozenset[str]:
    """The functions a kernels/ file defines (empty when the file is absent)."""
    path = _KERNELS / f"{name}.wgsl"
    return frozenset(re.findall(r"\bfn\s+(\w+)", path.read_text())) if path.exists() else frozenset()


def _twin(m: re.Match[str]) -> str:
    kind, fn = m.group(1), m.group(2)
    if kind == "f":
        # NOTE: float64 helpers are d_* where float64.wgsl has them, else f64math.wgsl's f64_*
        # (the bit tests, sign, fmod/remainder/floor_divide, the transcendental ones): each is
        # defined once, never a WGSL built-in (no double exp/log/sin in Vulkan).
        return f"d_{fn}(" if f"d_{fn}" in _defined("float64") else f"f64_{fn}("
    if kind == "c":
        return f"z_{fn}("  # complex128: complex_lib("f64")
    return f"{kind}64_{fn}("


def widen(expr: str, ct: str) -> str:
    """``expr``, written for a 32-bit compute type, for its 64-bit twin ``ct`` (else unchanged)."""
    if ct not in WIDE:
        return expr
    expr = _HELPER.sub(_twin, expr)
    if ct == "u64":
        expr = _U32_LITERAL.sub(r"\1lu", expr)
    return expr


# The limits complex.wgsl's algorithms take per part type (its $-placeholders).
COMPLEX_LIMITS = {
    # c_sqrt scales |z| >= SQRT_BIG down by 4 and |z| < SQRT_SMALL up by SQRT_UP (the root by
    # SQRT_DOWN); c_tanh takes tanh(x) = +-1 from TANH_BIG; asinh/acos/atanh take their
    # large-|z| forms from ASIN_BIG (where the terms they drop are below an ulp).
    "f32": dict(SQRT_BIG="0x1p125", SQRT_SMALL="0x1p-60", SQRT_UP="0x1p64", SQRT_DOWN="0x1p-32",
                TANH_BIG="9.0", ASIN_BIG="0x1p26"),
    "f64": dict(SQRT_BIG="0x1p1021", SQRT_SMALL="0x1p-500", SQRT_UP="0x1p600", SQRT_DOWN="0x1p-300",
                TANH_BIG="22.0", ASIN_BIG="0x1p54"),
}  # fmt: skip


def widen_source(text: str) -> str:
    """A kernels/ file written for f32 (complex.wgsl) as its f64 twin: the types and every helper,
    definitions included, renamed as widen() renames an expression's."""
    return re.sub(r"\bf32\b", "f64", _HELPER.sub(_twin, text))


@functools.cache
def complex_lib(part: str) -> str:
    """complex.wgsl for parts of type ``part`` (f32: the c_* functions, f64: the z_* twins)."""
    text = Template(wgsl("complex")).substitute(COMPLEX_LIMITS[part])
    return widen_source(text) if part == "f64" else text


def missing_math(expr: str) -> list[str]:
    """The f64math.wgsl functions ``expr`` calls that the file (absent or unfinished) lacks."""
    return [f for f in re.findall(r"\b(f64_\w+)\(", expr) if f not in _defined("f64math")]


# ---------------------------------------------------------------------------
# Templates and per-operand snippets
# ---------------------------------------------------------------------------


@functools.cache
def template(name: str) -> Template:
    return Template((_KERNELS / f"{name}.wgsl").read_text())


@functools.cache
def common() -> str:
    return (_KERNELS / "common.wgsl").read_text() + H_NEXTAFTER


def decl(name: str, binding: int, dtype: str | None, write: bool, atomic: bool = False) -> str:
    if not write:
        return f"@group(0) @binding({binding}) var<storage, read> {name}: array<u32>;"
    packed = dtype is not None and DTYPES[dtype].bits < 32
    elem = "atomic<u32>" if atomic or packed else "u32"
    return f"@group(0) @binding({binding}) var<storage, read_write> {name}: array<{elem}>;"


def _extract(name: str, bits: int, raw: str = "") -> str:
    if raw:
        n = bits // 32
        return f"{raw}({', '.join(f'{name}[{n}u * u32(e) + {j}u]' for j in range(n))})"
    if bits == 64:
        return f"u64_join(vec2<u32>({name}[2u * u32(e)], {name}[2u * u32(e) + 1u]))"
    if bits == 32:
        return f"{name}[u32(e)]"
    per, mask = 32 // bits, (1 << bits) - 1
    return (f"(({name}[u32(e) >> {per.bit_length() - 1}u] >> ((u32(e) & {per - 1}u) * {bits}u))"
            f" & {mask:#x}u)")  # fmt: skip


def load_fn(name: str, dtype: str) -> str:
    """``fn ld_NAME(e: i32) -> ct``: element ``e`` of buffer NAME, decoded."""
    d = DTYPES[dtype]
    body = d.dec.replace("$w", _extract(name, d.bits, d.raw))
    return f"fn ld_{name}(e: i32) -> {d.ct} {{ return {body}; }}"


def scalar_fn(name: str, dtype: str, word: int) -> str:
    """A Python-scalar operand: its bits sit in P[word] (and P[word + 1], the high word)."""
    d = DTYPES[dtype]
    if d.raw:
        raw = f"{d.raw}({', '.join(f'P[{word + j}]' for j in range(d.bits // 32))})"
    else:
        raw = f"u64_join(vec2<u32>(P[{word}], P[{word + 1}]))" if d.bits == 64 else f"P[{word}]"
    return f"fn ld_{name}(e: i32) -> {d.ct} {{ return {d.dec.replace('$w', raw)}; }}"


def store_fn(name: str, dtype: str) -> str:
    """``fn st_NAME(e: i32, v: ct)``; 8/16-bit elements are merged into their word atomically."""
    d = DTYPES[dtype]
    bits = d.enc.replace("$v", "v")
    if d.raw:
        n = d.bits // 32
        lines = "".join(f"  {name}[{n}u * u32(e) + {j}u] = b[{j}];\n" for j in range(n))
        return f"fn st_{name}(e: i32, v: {d.ct}) {{\n  let b = {bits};\n{lines}}}"
    if d.bits == 64:
        return (f"fn st_{name}(e: i32, v: {d.ct}) {{\n  let b = u64_split({bits});\n"
                f"  {name}[2u * u32(e)] = b.x;\n  {name}[2u * u32(e) + 1u] = b.y;\n}}")  # fmt: skip
    if d.bits == 32:
        return f"fn st_{name}(e: i32, v: {d.ct}) {{ {name}[u32(e)] = {bits}; }}"
    per, mask = 32 // d.bits, (1 << d.bits) - 1
    return (
        f"fn st_{name}(e: i32, v: {d.ct}) {{\n"
        f"  let w = u32(e) >> {per.bit_length() - 1}u;\n"
        f"  let sh = (u32(e) & {per - 1}u) * {d.bits}u;\n"
        f"  atomicAnd(&{name}[w], ~({mask:#x}u << sh));\n"
        f"  atomicOr(&{name}[w], ({bits}) << sh);\n"
        f"}}"
    )


def rmw_fn(name: str, dtype: str, combine: str) -> str:
    """``fn rmw_NAME(e: i32, v: ct)``: element e = combine(element e, v), atomically (CAS loop)."""
    d = DTYPES[dtype]
    if d.bits == 32:
        word, sh, mask = "u32(e)", "0u", "0xffffffffu"
    else:
        per = 32 // d.bits
        word = f"u32(e) >> {per.bit_length() - 1}u"
        sh = f"(u32(e) & {per - 1}u) * {d.bits}u"
        mask = f"{(1 << d.bits) - 1:#x}u"
    cur = d.dec.replace("$w", "((old >> sh) & mask)")
    new = d.enc.replace("$v", combine.replace("$a", "cur").replace("$b", "v"))
    return (
        f"fn rmw_{name}(e: i32, v: {d.ct}) {{\n"
        f"  let w = {word};\n  let sh = {sh};\n  let mask = {mask};\n"
        f"  var old = atomicLoad(&{name}[w]);\n"
        f"  loop {{\n"
        f"    let cur = {cur};\n"
        f"    let nw = (old & ~(mask << sh)) | ((({new}) & mask) << sh);\n"
        f"    let r = atomicCompareExchangeWeak(&{name}[w], old, nw);\n"
        f"    if (r.exchanged) {{ break; }}\n"
        f"    old = r.old_value;\n"
        f"  }}\n}}"
    )


def index_code(nbuf: int, contig: bool) -> str:
    """WGSL computing e0..e{nbuf-1} (element offsets of the buffer operands) from ``i``.

    P layout: [n, ndim, s0, s0_hi, s1, s1_hi, shape[ndim], then per operand: offset, strides[ndim]].
    """
    lines = []
    if contig:
        for r in range(nbuf):
            lines.append(f"  let e{r} = i32(P[6u + nd + {r}u * (nd + 1u)]) + i32(i);")
        return "\n".join(lines)
    for r in range(nbuf):
        lines.append(f"  let b{r} = 6u + nd + {r}u * (nd + 1u);")
        lines.append(f"  var e{r} = i32(P[b{r}]);")
    lines.append("  var rem = i;")
    lines.append("  for (var d = i32(nd) - 1; d >= 0; d = d - 1) {")
    lines.append("    let s = P[6u + u32(d)];")
    lines.append("    let c = i32(u_mod(rem, s));")
    lines.append("    rem = rem / s;")
    for r in range(nbuf):
        lines.append(f"    e{r} = e{r} + c * bitcast<i32>(P[b{r} + 1u + u32(d)]);")
    lines.append("  }")
    return "\n".join(lines)


_PRELUDE = "\x00COMMON\x00"


def fill(name: str, ct: str | None = None, **subs: str) -> str:
    """Template ``name`` with ``subs`` (its own text widened to ``ct`` first, when given) and the
    helpers it uses: common.wgsl, plus int64.wgsl where it names 64-bit types, and float64.wgsl
    with f64math.wgsl where it names f64 (only there: they need adapter features)."""
    text = template(name).template
    body = Template(widen(text, ct) if ct else text).substitute(COMMON=_PRELUDE, **subs)
    return body.replace(_PRELUDE, prelude(body))


def prelude(body: str) -> str:
    # NOTE: on the code only: a comment naming u64 must not pull int64.wgsl into a 32-bit
    # shader, which an adapter without shader-int64 would then refuse to compile.
    code = re.sub(r"//[^\n]*", "", body)
    parts = [common()]
    if re.search(r"\b[iuf]64\b|\b[iu]64_\w+\(", code):
        parts.append(wgsl("int64"))
    if re.search(r"\bf64\b|\bf64_\w+\(", code):
        # float64.wgsl calls f64math.wgsl's bit tests (one definition of each float64 function):
        # the two travel together; the functions a shader does not call cost compile time only.
        parts.append(wgsl("float64"))
        parts.append(wgsl("f64math"))
    # The complex functions, only where called (c_* for complex64, z_* for complex128).
    if re.search(r"\bc_\w+\(", code):
        parts.append(complex_lib("f32"))
    if re.search(r"\bz_\w+\(", code):
        parts.append(complex_lib("f64"))
    return "\n".join(parts)


@functools.cache
def wgsl(name: str) -> str:
    return (_KERNELS / f"{name}.wgsl").read_text()
