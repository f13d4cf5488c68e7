"""Properties of every WGSL shader the backend generates, checked on the source.

Some driver freedoms cannot show on lavapipe: WGSL ``%`` on a signed integer becomes SPIR-V
``OpSRem``, undefined for negative operands under Vulkan without VK_KHR_maintenance8, and
NVIDIA's driver returns wrong remainders where lavapipe returns right ones. So the rule is
checked on the generated source instead: the only ``%`` is the one inside ``u_mod`` (and
``u64_mod`` for 64-bit integers), whose unsigned signature the WGSL compiler enforces at every
call. Likewise no shader keeps a ``bool`` in workgroup memory: naga emits it as ``OpTypeBool``,
which a driver may store in one byte written by read-modify-write of its word, so neighbouring
threads lose each other's writes (gfx-rs/wgpu#6570; any/all reductions on an H200). The scan
covers the 64-bit dtypes' shaders (int64.wgsl, float64.wgsl, f64math.wgsl pasted in) where the
adapter has them, and the complex ones (complex.wgsl, and its complex128 twin).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from ndplane_webgpu import _codegen as G
from ndplane_webgpu import _kernels as Kn
from webgpu_helpers import ALL

from ndplane.backend import BINARY_OPS, REDUCE_OPS, SCAN_OPS, UNARY_OPS

U_MOD = "fn u_mod(a: u32, b: u32) -> u32 { return a % b; }"
U64_MOD = "fn u64_mod(a: u64, b: u64) -> u64 { return a % b; }"


def _strip_comments(src: str) -> str:
    return re.sub(r"//[^\n]*", "", src)


@pytest.fixture
def sources(be, monkeypatch):
    """Every shader source a pipeline is asked for while the fixture is active, cached or not."""
    seen: dict[object, str] = {}
    cls = type(be.rt)
    real = cls.pipeline

    def spy(self, key, source, entry, spec):
        if key not in seen:
            seen[key] = source()
        return real(self, key, source, entry, spec)

    monkeypatch.setattr(cls, "pipeline", spy)
    return seen


def _run_every_family(be, host) -> None:
    rng = np.random.default_rng(0)
    have = {d.name for d in be.dtypes}
    for name in ALL:
        if name not in have:
            continue
        dt = np.dtype(name)
        x = host.put(np.arange(12).reshape(3, 4).astype(dt))
        xt = host.view(np.arange(12).reshape(4, 3).astype(dt), np.arange(12).reshape(4, 3).astype(dt).T)
        out = host.empty((3, 4), dt)
        outb = host.empty((3, 4), np.bool_)
        complex_ = dt.kind == "c"
        outr = host.empty((3, 4), dt.type(0).real.dtype) if complex_ else out
        for op in UNARY_OPS:
            if op in G.UNARY and be.supports(op, x.dtype):
                res = outb if op in ("isfinite", "isinf", "isnan", "logical_not", "signbit") else out
                res = outr if complex_ and op in G.REAL_RESULT else res
                be.unary(op, x, res)
                be.unary(op, xt, res)
        for op in BINARY_OPS:
            if op in G.BINARY and be.supports(op, x.dtype):
                res = outb if op in G.BOOL_BINARY else out
                be.binary(op, x, xt, res)
                be.binary(op, x, 3 if name != "bool" else True, res)
        be.where(host.put(rng.random((3, 4)) < 0.5), x, xt, out)
        be.cast(x, host.empty((3, 4), np.float32))
        # The dtypes the core asks for: sums of small integers in the default integer dtype.
        wide = {"b": None, "i": np.int32, "u": np.uint32, "f": dt, "c": dt}[dt.kind] if dt.itemsize < 8 else dt
        for op in REDUCE_OPS:
            if complex_ and op not in ("sum", "prod", "any", "all"):
                continue  # the core orders no complex values
            acc = {"sum": wide, "prod": wide, "any": np.bool_, "all": np.bool_,
                   "argmax": np.int32, "argmin": np.int32}.get(op, dt)  # fmt: skip
            if acc is None:
                continue
            be.reduce(op, x, host.empty((3,), acc))
            be.reduce(op, host.put(np.zeros((2, 70000), dt)), host.empty((2,), acc))  # split rows
        if wide is not None:
            for op in SCAN_OPS:
                be.scan(op, x, host.empty((3, 4), wide))
        be.matmul(host.put(np.ones((1, 3, 4), dt)), host.put(np.ones((1, 4, 2), dt)), host.empty((1, 3, 2), dt))
        idx = host.put(np.array([2, 0, -1], np.int32))
        be.take(x, idx, host.empty((3, 3), dt))
        if name != "bool":
            be.scatter_add(host.empty((3, 4), dt), idx, host.put(np.ones((3, 3), dt)))
        if complex_:
            be.cast(host.put(np.ones((3, 4), np.float32)), x)
            continue
        be.sort(x, host.empty((3, 4), dt), host.empty((3, 4), np.int32), False, True)
        long = (1, Kn.RADIX_MIN_K)  # the radix sort
        be.sort(host.put(np.zeros(long, dt)), host.empty(long, dt), host.empty(long, np.int32), True, True)
    be.random_bits(1, 0, host.empty((16,), np.uint32))
    be.synchronize()


def test_no_percent_on_signed_integers_in_any_generated_shader(be, host, sources):
    _run_every_family(be, host)
    families = {key[0] for key in sources}
    assert {"ew", "reduce", "scan", "matmul", "take", "scatter", "sort", "radix_sort", "philox"} <= families
    for key, src in sources.items():
        code = _strip_comments(src).replace(U_MOD, "").replace(U64_MOD, "")
        assert "%" not in code, f"{key}: '%' outside u_mod / u64_mod (use them on unsigned operands)"
        assert not re.search(r"var<workgroup>[^;]*\bbool\b", code), f"{key}: a bool in workgroup memory (use u32)"
        if not re.search(r"int64|float64|complex128|[iuf]64", repr(key)):
            # a 32-bit shader (complex64's included) must compile on an adapter without
            # shader-int64 / shader-f64
            assert not re.search(r"\b[iuf]64\b", code), f"{key}: a 64-bit type in a 32-bit shader"
    if "int64" in {d.name for d in be.dtypes}:
        assert {"scatter_runs"} <= families
        assert any("i64_remainder" in src for src in sources.values())
    complex_keys = [key for key in sources if "complex" in repr(key)]
    assert complex_keys and any("fn c_mul(" in sources[k] for k in complex_keys)
    if "complex128" in {d.name for d in be.dtypes}:
        assert any("fn z_mul(" in sources[k] for k in complex_keys)


def test_u_mod_is_the_only_remainder_and_is_unsigned():
    common = _strip_comments(G.common())
    assert common.count("%") == 1 and U_MOD in common
    wide = _strip_comments(G.wgsl("int64"))
    assert wide.count("%") == 1 and U64_MOD in wide
    assert "%" not in _strip_comments(G.wgsl("float64"))
    if G._defined("f64math"):
        assert "%" not in _strip_comments(G.wgsl("f64math"))


def test_float64_shaders_use_no_wgsl_transcendental_builtins():
    """exp(f64) and friends compile in naga but become GLSL.std.450 instructions on doubles,
    which SPIR-V does not define: every float64 op expression calls our helpers instead."""
    builtins = re.compile(r"(?<![\w.])(exp|exp2|log|log2|sin|cos|tan|asin|acos|atan|atan2|sinh|cosh|tanh|"
                          r"asinh|acosh|atanh|pow|sqrt|inverseSqrt|fma)\(")
    for table in (G.UNARY, G.BINARY):
        for op in table:
            for dtype in ("float64", "complex128"):
                expr = G.op_expr(table, op, dtype)
                if expr is not None:
                    assert not builtins.search(expr), f"{op} {dtype}: {expr}"
    assert not builtins.search(_strip_comments(G.wgsl("float64")))
    assert not builtins.search(_strip_comments(G.complex_lib("f64")))


def test_complex128_helpers_are_the_widened_complex64_ones():
    """complex.wgsl is written once: its f64 twin defines z_X for every c_X, in f64 only, and
    calls float64 helpers that exist (d_X in float64.wgsl, else f64_X in f64math.wgsl)."""
    c = set(re.findall(r"\bfn (c_\w+)\(", G.complex_lib("f32")))
    z = set(re.findall(r"\bfn (z_\w+)\(", G.complex_lib("f64")))
    assert c and {"z_" + n[2:] for n in c} == z
    code = _strip_comments(G.complex_lib("f64"))
    assert not re.search(r"\bf32\b|\bc_\w+\(|\bf_\w+\(", code)
    have = G._defined("float64") | G._defined("f64math") | z
    called = set(re.findall(r"\b((?:d|f64|z)_\w+)\(", code))
    assert called <= have, called - have
    assert "$" not in G.complex_lib("f32") + G.complex_lib("f64")


def test_signed_remainder_and_floor_divide_match_numpy(be, host):
    """Every sign combination, zero divisors and the INT_MIN / -1 overflow, in each signed dtype."""
    for name in ("int8", "int16", "int32", "int64"):
        if name not in {d.name for d in be.dtypes}:
            continue
        info = np.iinfo(name)
        vals = np.array([info.min, info.min + 1, -7, -3, -1, 0, 1, 3, 7, info.max], dtype=name)
        a = np.repeat(vals, vals.size)
        b = np.tile(vals, vals.size)
        ra, rb = host.put(a), host.put(b)
        for op, fn in (("remainder", np.remainder), ("floor_divide", np.floor_divide)):
            out = host.empty(a.shape, name)
            be.binary(op, ra, rb, out)
            with np.errstate(all="ignore"):
                want = fn(a, b)
            np.testing.assert_array_equal(host.get(out), want, err_msg=f"{op} {name}")


def test_sinh_cosh_finite_up_to_the_float32_limit(be, host):
    """exp(|x|) / 2 is finite up to |x| = 89.4159 although exp(|x|) overflows past 88.7228."""
    x = np.concatenate([np.linspace(87.5, 89.5, 4001, dtype=np.float32),
                        np.nextafter(np.float32(89.4159862), np.float32([0, 100]))])  # fmt: skip
    x = np.concatenate([x, -x])
    rx = host.put(x)
    for op in ("sinh", "cosh"):
        out = host.empty(x.shape, np.float32)
        be.unary(op, rx, out)
        got = host.get(out)
        want = getattr(np, op)(x.astype(np.float64))
        with np.errstate(over="ignore"):
            want32 = want.astype(np.float32)
        assert np.array_equal(np.isinf(got), np.isinf(want32)), op
        fin = np.isfinite(want32)
        np.testing.assert_allclose(got[fin], want[fin], rtol=4 * 2.0**-23, err_msg=op)

