"""Launchers: turn Refs into kernel parameters, pick (or build) the pipeline, record dispatches.

Each function records work on the Runtime without waiting; the Runtime submits in batches
(see ``Runtime.flush``). Pipelines are cached by a key naming everything the WGSL source depends on.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

import ndplane
from ndplane.backend import Ref

from . import _codegen as G

_NAMES = "ABC"
_THREADS = 1 << 18  # threads a reduction by thread aims to run at least (a GPU keeps ~2^18 resident)
_VEC4_MIN = 1024  # elements from which contiguous 32-bit elementwise work goes four to a thread


def _ct(ref: Ref) -> str:
    return G.DTYPES[ref.dtype.name].ct


def _bits(value: Any, dtype: str) -> list[int]:
    """The raw bits of a Python scalar as a ``dtype`` element: (low word, high word), or the
    2 or 4 words of a complex one."""
    arr = np.array(value).astype(np.dtype(dtype))
    if arr.dtype.kind == "c":
        return [int(w) for w in arr.reshape(1).view(np.uint32)]
    bits = int(arr.view(f"u{arr.itemsize}"))
    return [bits & 0xFFFFFFFF, bits >> 32]


def _coalesce(shape: tuple[int, ...], strides: list[tuple[int, ...]]) -> tuple[list[int], list[list[int]]]:
    dims: list[int] = []
    st: list[list[int]] = [[] for _ in strides]
    for d, n in enumerate(shape):
        if n == 1:
            continue
        if dims and all(s[-1] == t[d] * n for s, t in zip(st, strides)):
            dims[-1] *= n
            for s, t in zip(st, strides):
                s[-1] = t[d]
            continue
        dims.append(n)
        for s, t in zip(st, strides):
            s.append(t[d])
    return dims, st


def _unalias(rt: Any, x: Ref, written: Ref, temps: list[Any]) -> Ref:
    # NOTE: WebGPU forbids binding one buffer as writable and readable in one dispatch.
    if x.buffer is not written.buffer:
        return x
    tmp = rt.alloc(x.buffer.cap)
    temps.append(tmp)
    copy_bytes(rt, x.buffer, 0, tmp, 0, x.buffer.cap)
    return Ref(tmp, x.dtype, x.shape, x.strides, x.offset, x.size, x.contiguous)


def _free(rt: Any, temps: list[Any]) -> None:
    for t in temps:
        rt.free(t)


def _grid1(rt: Any, threads: int) -> tuple[int, int, int]:
    return rt.groups(-(-threads // 256))


# ---------------------------------------------------------------------------
# elementwise: unary, binary, where, cast, copy, fill
# ---------------------------------------------------------------------------


def elementwise(rt: Any, expr: str, out: Ref, inputs: list[Any]) -> None:
    """out = expr over inputs ($a, $b, $c: Refs of out's shape, or Python scalars)."""
    sdt = next((x.dtype.name for x in inputs if type(x) is Ref), out.dtype.name)
    temps: list[Any] = []
    refs, kinds, scalars, binds = [out], [], [], [(1, out.buffer, True)]
    for j, x in enumerate(inputs):
        if type(x) is Ref:
            x = _unalias(rt, x, out, temps)
            refs.append(x)
            binds.append((2 + j, x.buffer, False))
            kinds.append(x.dtype.name)
        else:
            scalars += _bits(x, sdt)
            kinds.append(None)
    dims, st = _coalesce(out.shape, [r.strides for r in refs])
    contig = len(dims) <= 1 and all(s == [1] or s == [] for s in st)
    params = [out.size, len(dims)] + (scalars + [0, 0, 0, 0])[:4] + dims
    for r, s in zip(refs, st):
        params += [r.offset] + s
    if contig and len(dims) == 1 and out.size >= _VEC4_MIN and all(_vec4_operand(r) for r in refs):
        key = ("ew4", expr, out.dtype.name, tuple(kinds), sdt)
        rt.run(key, lambda: _elementwise4_source(*key[1:]), params, binds, _grid1(rt, -(-out.size // 4)))
    else:
        key = ("ew", expr, out.dtype.name, tuple(kinds), sdt, contig)
        rt.run(key, lambda: _elementwise_source(*key[1:]), params, binds, _grid1(rt, out.size))
    _free(rt, temps)


# NOTE: None picks by adapter (see copy_bytes); True or False forces a road (tests, benchmarks).
COMPUTE_COPY: bool | None = None


def copy_bytes(rt: Any, src: Any, src_off: int, dst: Any, dst_off: int, n: int) -> None:
    """n bytes from src to another buffer dst (offsets and n multiples of 4): on a GPU, as u32
    words through the elementwise kernel (four a thread from 16-byte aligned offsets)."""
    # NOTE: NVIDIA's copy_buffer_to_buffer, between our compute passes, ran at 0.73 TB/s on the
    # H100 where the compute path's add moved 1.82; it also ends the open compute pass, the
    # compute copy does not. On a software adapter the transfer is a memcpy, far faster than a
    # shader: lavapipe copied 2^22 float32 in 1.1-1.2 ms that way, 7-10 ms through the kernel
    # (5 us and 28-33 us for 4 elements), so software adapters keep copy_buffer_to_buffer.
    compute = not rt.software if COMPUTE_COPY is None else COMPUTE_COPY
    if not compute:
        rt.copy_bytes(src, src_off, dst, dst_off, n)
        return
    w = n // 4
    elementwise(rt, "$a", _words(dst, dst_off, w), [_words(src, src_off, w)])


def _words(buf: Any, off: int, n: int) -> Ref:
    return Ref(buf, ndplane.uint32, (n,), (1,), off // 4, n, True)


def _vec4_operand(r: Ref) -> bool:
    """Whether r's elements 4q .. 4q+3 are whole vec4<u32> words: 32- or 64-bit elements from a
    multiple of 4, in a buffer that ends on such a group (not complex: pairs of words)."""
    d = G.DTYPES[r.dtype.name]
    return d.bits >= 32 and not d.raw and r.offset % 4 == 0 and r.buffer.cap % (d.bits // 2) == 0


# Stores of elementwise4.wgsl's results r (4 elements from OUT's vec4 word o; the tail lane by lane).
_EW4_STORE = {32: "  let o = P[7] / 4u + q;\n  if (4u * q + 4u <= n) {\n    OUT[o] = r;\n    return;\n  }\n"
            "  for (var l = 0u; 4u * q + l < n; l = l + 1u) { OUT[o][l] = r[l]; }",
        64: "  let o = P[7] / 2u + 2u * q;\n  if (4u * q + 4u <= n) {\n    OUT[o] = vec4<u32>(r[0], r[1]);\n"
            "    OUT[o + 1u] = vec4<u32>(r[2], r[3]);\n    return;\n  }\n"
            "  for (var l = 0u; 4u * q + l < n; l = l + 1u) {\n"
            "    OUT[o + (l >> 1u)][2u * (l & 1u)] = r[l].x;\n    OUT[o + (l >> 1u)][2u * (l & 1u) + 1u] = r[l].y;\n  }"}  # fmt: skip


def _elementwise4_source(expr: str, od: str, kinds: tuple[str | None, ...], sdt: str) -> str:
    """The WGSL of ``elementwise`` for contiguous 32- and 64-bit operands, as vec4 words (16-byte
    loads and stores; two a thread for a 64-bit operand); the operands' parameter slots are those
    of elementwise.wgsl with ndim 1."""
    decls = ["@group(0) @binding(1) var<storage, read_write> OUT: array<vec4<u32>>;"]
    funcs, loads = [], []
    nref, nscalar = 1, 0
    for j, kind in enumerate(kinds):
        name = _NAMES[j]
        if kind is not None:
            decls.append(f"@group(0) @binding({2 + j}) var<storage, read> {name}: array<vec4<u32>>;")
            if G.DTYPES[kind].bits == 64:
                loads.append(f"  let b{name} = P[{7 + 2 * nref}] / 2u + 2u * q;")
                loads.append(f"  var w{name} = array<vec2<u32>, 4>({name}[b{name}].xy, {name}[b{name}].zw, "
                             f"{name}[b{name} + 1u].xy, {name}[b{name} + 1u].zw);")  # fmt: skip
                word = f"u64_join(w{name}[l])"
            else:
                loads.append(f"  let w{name} = {name}[P[{7 + 2 * nref}] / 4u + q];")
                word = f"w{name}[l]"
            expr = expr.replace(f"${name.lower()}", G.DTYPES[kind].dec.replace("$w", word))
            nref += 1
        else:
            funcs.append(G.scalar_fn(name, sdt, 2 + 2 * nscalar))
            expr = expr.replace(f"${name.lower()}", f"ld_{name}(0)")
            nscalar += 1
    wide = G.DTYPES[od].bits == 64
    # NOTE: typed, as st_OUT's parameter types it in elementwise.wgsl: an abstract literal
    # (imag's 0) would become a 32-bit value, which bitcast<u64> refuses.
    result = G.DTYPES[od].enc.replace("$v", f"{G.DTYPES[od].ct}({expr})" if wide else expr)
    return G.fill("elementwise4", DECLS="\n".join(decls), FUNCS="\n".join(funcs), LOADS="\n".join(loads),
                  EXPR=f"u64_split({result})" if wide else result, STORE=_EW4_STORE[64 if wide else 32],
                  R_T="array<vec2<u32>, 4>" if wide else "vec4<u32>")  # fmt: skip


def _elementwise_source(expr: str, od: str, kinds: tuple[str | None, ...], sdt: str, contig: bool) -> str:
    """The WGSL of ``elementwise``: operand j is a buffer of dtype kinds[j] or (None) a scalar."""
    decls = [G.decl("OUT", 1, od, True)]
    funcs = [G.store_fn("OUT", od)]
    nref, nscalar = 1, 0
    for j, kind in enumerate(kinds):
        name = _NAMES[j]
        if kind is not None:
            expr = expr.replace(f"${name.lower()}", f"ld_{name}(e{nref})")
            decls.append(G.decl(name, 2 + j, None, False))
            funcs.append(G.load_fn(name, kind))
            nref += 1
        else:
            expr = expr.replace(f"${name.lower()}", f"ld_{name}(0)")
            funcs.append(G.scalar_fn(name, sdt, 2 + 2 * nscalar))
            nscalar += 1
    return G.fill("elementwise", DECLS="\n".join(decls), FUNCS="\n".join(funcs),
                  INDEX=G.index_code(nref, contig), EXPR=expr)  # fmt: skip


# ---------------------------------------------------------------------------
# reduce and scan over the last axis
# ---------------------------------------------------------------------------

_ZERO = {"f32": "0.0", "i32": "0", "u32": "0u", "bool": "false", "f64": "0.0", "i64": "0li", "u64": "0lu",
         "vec2<f32>": "vec2<f32>(0.0)", "vec2<f64>": "vec2<f64>(0.0)"}  # fmt: skip
_ONE = {"f32": "1.0", "i32": "1", "u32": "1u", "bool": "true", "f64": "1.0", "i64": "1li", "u64": "1lu",
        "vec2<f32>": "vec2<f32>(1.0, 0.0)", "vec2<f64>": "vec2<f64>(1.0, 0.0)"}  # fmt: skip


def _product(acc: str, a: str, b: str) -> str:
    """``a * b`` in compute type ``acc`` (complex: kernels/complex.wgsl's multiply)."""
    if G.KIND[acc] == "c":
        return G.widen(f"c_mul({a}, {b})", acc)
    return f"{a} * {b}"


def _better(op: str, acc: str) -> str:
    cmp = ">" if op in ("max", "argmax") else "<"
    plain = f"  return v2 {cmp} v1 || (v2 == v1 && i2 < i1);"
    if G.KIND[acc] == "c":  # NumPy's lexicographic order, NaN first (as for floats)
        first, second = ("v1", "v2") if cmp == ">" else ("v2", "v1")
        return G.widen("  if (c_isnan(v1)) { return c_isnan(v2) && i2 < i1; }\n"
                       "  if (c_isnan(v2)) { return true; }\n"
                       f"  return c_lt({first}, {second}) || (c_eq(v2, v1) && i2 < i1);", acc)  # fmt: skip
    if G.KIND[acc] != "f":
        return plain
    return G.widen("  if (f_isnan(v1)) { return f_isnan(v2) && i2 < i1; }\n"
                   "  if (f_isnan(v2)) { return true; }\n", acc) + plain  # fmt: skip


_LD = "ld_A(base + i32(k) * s1)"  # element k of the row, in reduce.wgsl's loops


def _reduce_parts(op: str, xct: str, oct_: str) -> dict[str, str]:
    ld = _LD
    if op in ("sum", "prod"):
        fold, merge = (("acc + v", "sv[t] + sv[t + s]") if op == "sum"
                       else (_product(oct_, "acc", "v"), _product(oct_, "sv[t]", "sv[t + s]")))  # fmt: skip
        return dict(ACC=oct_, LOAD=G.conv(xct, oct_, ld), IDENTITY=(_ZERO if op == "sum" else _ONE)[oct_],
                    IDENTITY_INDEX="0u", FOLD=f"acc = {fold};", MERGE=f"sv[t] = {merge};",
                    RESULT="rv", BETTER="  return false;")  # fmt: skip
    if op in ("any", "all"):
        # NOTE: truth values as u32 0/1, never bool: reduce.wgsl keeps its partials in workgroup
        # memory, where naga emits a bool as OpTypeBool that a driver may store in one byte and
        # write by read-modify-write of its word (gfx-rs/wgpu#6570, open): on an H200 the tree's
        # neighbouring threads then lost each other's updates (any of bool, all of float16 wrong;
        # lavapipe right).
        sym = "|" if op == "any" else "&"
        return dict(ACC="u32", LOAD=f"select(0u, 1u, {G.truth(xct, ld)})", IDENTITY="0u" if op == "any" else "1u",
                    IDENTITY_INDEX="0u", FOLD=f"acc = acc {sym} v;", MERGE=f"sv[t] = sv[t] {sym} sv[t + s];",
                    RESULT=G.conv("bool", oct_, "(rv != 0u)"), BETTER="  return false;")  # fmt: skip
    acc = "u32" if xct == "bool" else xct
    result = G.conv(acc, oct_, "rv") if op in ("max", "min") else G.conv("u32", oct_, "ri")
    return dict(ACC=acc, LOAD=G.conv(xct, acc, ld), IDENTITY=_ZERO[acc], IDENTITY_INDEX="EMPTY",
                FOLD="if (better(acc, idx, v, k)) { acc = v; idx = k; }",
                MERGE="if (better(sv[t], si[t], sv[t + s], si[t + s])) { sv[t] = sv[t + s]; si[t] = si[t + s]; }",
                RESULT=result, BETTER=_better(op, acc))  # fmt: skip


def _short_rows(M: int, K: int) -> bool:
    # NOTE: a workgroup per row wastes 256 threads on a short row; many rows keep a GPU busy
    # with one thread each.
    return K <= 64 or M >= 16384


# A partial's value as four scratch words (to_bits) and back (from_bits, of w: vec4<u32>).
_BITS = {"f32": ("vec4<u32>(bitcast<u32>(v), 0u, 0u, 0u)", "bitcast<f32>(w.x)"),
         "i32": ("vec4<u32>(bitcast<u32>(v), 0u, 0u, 0u)", "bitcast<i32>(w.x)"),
         "u32": ("vec4<u32>(v, 0u, 0u, 0u)", "w.x"),
         "bool": ("vec4<u32>(select(0u, 1u, v), 0u, 0u, 0u)", "(w.x != 0u)"),
         "f64": ("vec4<u32>(u64_split(bitcast<u64>(v)), 0u, 0u)", "bitcast<f64>(u64_join(w.xy))"),
         "i64": ("vec4<u32>(u64_split(bitcast<u64>(v)), 0u, 0u)", "bitcast<i64>(u64_join(w.xy))"),
         "u64": ("vec4<u32>(u64_split(v), 0u, 0u)", "u64_join(w.xy)"),
         "vec2<f32>": ("vec4<u32>(bitcast<vec2<u32>>(v), 0u, 0u)", "bitcast<vec2<f32>>(w.xy)"),
         "vec2<f64>": (G.DTYPES["complex128"].enc.replace("$v", "v"), G.DTYPES["complex128"].dec.replace("$w", "w"))}  # fmt: skip


def reduce(rt: Any, op: str, x: Ref, out: Ref) -> None:
    xd, od = x.dtype.name, out.dtype.name
    parts = _reduce_parts(op, G.DTYPES[xd].ct, G.DTYPES[od].ct)
    to_bits, from_bits = _BITS[parts["ACC"]]
    # NOTE: reduce_cols4 compiles with every module; only its dtypes get a real lane load.
    lane = parts["LOAD"].replace(_LD, G.DTYPES[xd].dec.replace("$w", "w"))
    parts["LANE"] = lane if _word_dtype(xd) else parts["IDENTITY"]
    src = lambda: G.fill("reduce", DECLS=G.decl("OUT", 1, od, True) + "\n" + G.decl("A", 2, None, False),  # noqa: E731
                         FUNCS=G.store_fn("OUT", od) + "\n" + G.load_fn("A", xd), TO_BITS=to_bits,
                         FROM_BITS=from_bits, **parts)  # fmt: skip
    key = ("reduce", op, xd, od)
    M, K = x.shape
    binds = [(1, out.buffer, True), (2, x.buffer, False)]
    params = [M, K, x.offset, x.strides[0], x.strides[1], out.offset, out.strides[0], 1, K]
    if _short_rows(M, K) or (abs(x.strides[0]) == 1 and M > 1):
        _reduce_by_thread(rt, key, src, params, binds, x)
        return
    vec = _rows4(rt, x)
    params.append(int(vec))
    binds.append((5, x.buffer, False))  # NOTE: read by main only when vec (rt.dummy is bound writable)
    # NOTE: few long rows would leave most of a GPU idle: split each row into G chunks of C
    # elements (a workgroup each), then combine the partials in a second pass.
    G_ = min(1024, -(-K // 4096)) if M < 256 else 1
    if G_ == 1:
        rt.run(key, src, params, [*binds, (3, rt.dummy, True), (4, rt.dummy, True)], rt.groups(M))
        return
    C = -(-K // G_)
    if vec:
        C = -(-C // 4) * 4  # chunks start on the 16-byte grid too
        G_ = -(-K // C)
    scratch = [rt.alloc(M * G_ * 16), rt.alloc(M * G_ * 4)]
    try:
        partials = [(3, scratch[0], True), (4, scratch[1], True)]
        params[7:9] = [G_, C]
        rt.run(key, src, params, binds + partials, rt.groups(M * G_))
        rt.run(key, src, params, [binds[0], *partials], rt.groups(M), "reduce_final")
    finally:
        for s in scratch:
            rt.free(s)


# NOTE: None picks by kernel and adapter (see _vec4_loads); True or False forces every kernel
# (tests, benchmarks).
VEC4_LOADS: bool | None = None


def _vec4_loads(rt: Any, columns: bool = False) -> bool:
    """Whether a kernel reads 32-bit elements as 16-byte words where the layout allows (columns:
    reduce_cols4, else the row kernels)."""
    # NOTE: a GPU keeps more bytes in flight with 16-byte loads (the H100 ran the row and column
    # sums at 0.9 and 0.4 TB/s with a word a load). lavapipe runs a thread a SIMD lane: there
    # reduce_cols4 took 1.1-1.4x reduce_rows' time for a column max of 2048^2 float32 (sum
    # 0.94-1.2x), while the row kernels' word loads were level or faster (row sum 0.96x,
    # softmax 0.8x), so software adapters only leave reduce_cols4 out.
    if VEC4_LOADS is not None:
        return VEC4_LOADS
    return not (columns and rt.software)


def _word_dtype(dtype: str) -> bool:
    d = G.DTYPES[dtype]
    return d.bits == 32 and not d.raw


def _cols4(rt: Any, x: Ref) -> bool:
    """Whether reduce_cols4 reads x: rows adjacent in memory, each row start on the 16-byte grid
    when the first is, in a buffer of whole vec4 words."""
    fits = (_word_dtype(x.dtype.name) and abs(x.strides[0]) == 1 and x.strides[1] % 4 == 0
            and x.buffer.cap % 16 == 0)  # fmt: skip
    return fits and _vec4_loads(rt, columns=True)


def _rows4(rt: Any, x: Ref) -> bool:
    """Whether reduce's main reads x's rows as 16-byte words: unit stride, every row start on
    the 16-byte grid, in a buffer of whole vec4 words."""
    s0 = x.strides[0] if x.shape[0] > 1 else 0
    fits = (_word_dtype(x.dtype.name) and x.strides[1] == 1 and x.offset % 4 == 0 and s0 % 4 == 0
            and x.buffer.cap % 16 == 0)  # fmt: skip
    return fits and _vec4_loads(rt)


def _reduce_by_thread(rt: Any, key: Any, src: Any, params: list[int], binds: list[Any], x: Ref) -> None:
    """A thread per row, each folding its row sequentially: for many short rows, and for rows
    adjacent in memory (a column sum of a C-ordered matrix), where threads next to each other
    read words next to each other (four rows a thread, from 16-byte loads, where _cols4 says).
    Long rows are cut into G chunks so at least _THREADS threads run, their partials folded
    by a second pass in chunk order (deterministic)."""
    M, K = x.shape
    entry, T = "reduce_rows", M
    if _cols4(rt, x):
        lo = x.offset - (M - 1 if x.strides[0] < 0 else 0)
        shift = lo % 4
        entry, T = "reduce_cols4", -(-(shift + M) // 4)
        params += [(lo - shift) // 4, x.strides[1] // 4, shift, int(x.strides[0] < 0), T]
        binds = [binds[0], (5, x.buffer, False)]
    G_ = 1 if K <= 64 or T >= _THREADS else min(-(-_THREADS // T), -(-K // 64))
    if G_ == 1:
        rt.run(key, src, params, [*binds, (3, rt.dummy, True), (4, rt.dummy, True)], _grid1(rt, T), entry)
        return
    C = -(-K // G_)
    G_ = -(-K // C)
    scratch = [rt.alloc(M * G_ * 16), rt.alloc(M * G_ * 4)]
    try:
        params[7:9] = [G_, C]
        partials = [(3, scratch[0], True), (4, scratch[1], True)]
        rt.run(key, src, params, binds + partials, _grid1(rt, T * G_), entry)
        rt.run(key, src, params, [binds[0], *partials], _grid1(rt, M), "reduce_rows_final")
    finally:
        for s in scratch:
            rt.free(s)


_ROWS_OUT = ("  for (var k = V * t; k < K; k = k + V * 256u) {\n"
             "    let x = ld_X(base + k);\n    st_X(P[3] + row * K + k, $EACH);\n  }")
# (code after the max, code after the sum, the result of an element $x where one is stored).
_ROWS = {
    "softmax": ("", _ROWS_OUT, "f_exp($x - m) / s"),
    "log_softmax": ("", "  let l = f_log(s);\n" + _ROWS_OUT, "($x - m) - l"),
    "logsumexp": ("  if (!f_isfinite(m)) { m = 0.0; }",
                  "  if (t == 0u && live) { st_OUT(i32(P[3] + row), f_log(s) + m); }", ""),
}  # fmt: skip
# rows.wgsl's access to V elements at a time: their load (ld_X), max and sum of exp(x - m)
# (lanes_*), and (V = 1) the store of results (st_X; V = 4 adds its own, logsumexp uses st_OUT).
_ROWS_V = {
    1: "fn ld_X(e: u32) -> $ACC { return ld_A(i32(e)); }\n"
       "fn lanes_max(x: $ACC) -> $ACC { return x; }\n"
       "fn lanes_sum_exp(x: $ACC, m: $ACC) -> $ACC { return f_exp(x - m); }\n"
       "fn st_X(e: u32, v: $ACC) { st_OUT(i32(e), v); }",
    4: "fn ld_X(e: u32) -> vec4<f32> { return bitcast<vec4<f32>>(A[e >> 2u]); }\n"
       "fn lanes_max(x: vec4<f32>) -> f32 { return f_maximum(f_maximum(x.x, x.y), f_maximum(x.z, x.w)); }\n"
       "fn lanes_sum_exp(x: vec4<f32>, m: f32) -> f32 {\n"
       "  return ((f_exp(x.x - m) + f_exp(x.y - m)) + f_exp(x.z - m)) + f_exp(x.w - m);\n}",
}  # fmt: skip


def _each(expr: str, v: int) -> str:
    """The results of ``expr`` (of an element $x) for the V elements of x."""
    if v == 1:
        return expr.replace("$x", "x")
    return f"vec4<f32>({', '.join(expr.replace('$x', f'x.{c}') for c in 'xyzw')})"


def rows(rt: Any, op: str, x: Ref, out: Ref) -> None:
    """softmax, log_softmax or logsumexp along the last axis of the C-contiguous x (M, K)."""
    xd, od = x.dtype.name, out.dtype.name
    ct = G.DTYPES[xd].ct
    M, K = x.shape
    v = 4 if _rows_words(rt, x, out, op) else 1
    shift, result, each = _ROWS[op]
    shift, result = G.widen(shift, ct), G.widen(result.replace("$EACH", _each(each, v)), ct)
    decls, funcs = [], [G.widen(_ROWS_V[v].replace("$ACC", ct), ct)]
    if v == 1 or op == "logsumexp":
        decls.append(G.decl("OUT", 1, od, True))
        funcs.append(G.store_fn("OUT", od))
    else:
        decls.append("@group(0) @binding(1) var<storage, read_write> OUT: array<vec4<u32>>;")
        funcs.append("fn st_X(e: u32, v: vec4<f32>) { OUT[e >> 2u] = bitcast<vec4<u32>>(v); }")
    if v == 1:
        decls.append(G.decl("A", 2, None, False))
        funcs.append(G.load_fn("A", xd))
    else:
        decls.append("@group(0) @binding(2) var<storage, read> A: array<vec4<u32>>;")
    src = lambda: G.fill("rows", ct, DECLS="\n".join(decls), FUNCS="\n".join(funcs), SHIFT=shift,  # noqa: E731
                         RESULT=result, ACC=ct, V=f"{v}u")  # fmt: skip
    rt.run(("rows", op, xd, od, v), src, [M, K, x.offset, out.offset],
           [(1, out.buffer, True), (2, x.buffer, False)], rt.groups(M))  # fmt: skip


def _rows_words(rt: Any, x: Ref, out: Ref, op: str) -> bool:
    """Whether rows reads float32 x as 16-byte words (and writes softmax's and log_softmax's
    out so): every row start on the 16-byte grid, in buffers of whole vec4 words."""
    K = x.shape[1]
    fits = (x.dtype.name == "float32" and K % 4 == 0 and x.offset % 4 == 0 and x.buffer.cap % 16 == 0
            and (op == "logsumexp" or (out.dtype.name == "float32" and out.offset % 4 == 0
                                       and out.buffer.cap % 16 == 0)))  # fmt: skip
    return fits and _vec4_loads(rt)


def scan(rt: Any, op: str, x: Ref, out: Ref) -> None:
    xd, od = x.dtype.name, out.dtype.name
    acc = G.DTYPES[od].ct
    parts = dict(ACC=acc, LOAD=G.conv(G.DTYPES[xd].ct, acc, "ld_A(xb + i32(k) * xs)"),
                 IDENTITY=(_ZERO if op == "cumulative_sum" else _ONE)[acc],
                 OP="a + b" if op == "cumulative_sum" else _product(acc, "a", "b"), RESULT="op(carry, sv[t])")  # fmt: skip
    src = lambda: G.fill("scan", DECLS=G.decl("OUT", 1, od, True) + "\n" + G.decl("A", 2, None, False),  # noqa: E731
                         FUNCS=G.store_fn("OUT", od) + "\n" + G.load_fn("A", xd), **parts)  # fmt: skip
    M, K = x.shape
    params = [M, K, x.offset, x.strides[0], x.strides[1], out.offset, out.strides[0], out.strides[1]]
    binds = [(1, out.buffer, True), (2, x.buffer, False)]
    if _short_rows(M, K):
        rt.run(("scan", op, xd, od), src, params, binds, _grid1(rt, M), "scan_rows")
    else:
        rt.run(("scan", op, xd, od), src, params, binds, rt.groups(M))


# ---------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------


# NOTE: a switch for benchmarks only (False: the floating dtypes take the generic kernel too).
TILED = True


class _Words(NamedTuple):
    """How the tiled matmul moves 4 consecutive elements of one floating dtype as one word."""

    ct: str  # compute type
    word: str  # the binding's element type
    nbytes: int  # its size: a binding ends at the last whole word of the buffer
    load: str  # body of ld4_X(e, s) reading elements e..e+3 (e a multiple of 4) from {X}
    store: str  # statements storing v (vec4 of ct) to elements e..e+3 of OUT


def _f16_pair(w: str) -> str:
    return f"f16_to_f32({w} & 0xffffu), f16_to_f32({w} >> 16u)"


def _f64_of(w: str) -> str:
    return f"bitcast<f64>(u64_join({w}))"


_WORDS = {
    "float16": _Words("f32", "vec2<u32>", 8,
                      "let w = {X}[u32(e) >> 2u]; return vec4<f32>(" + _f16_pair("w.x") + ", " + _f16_pair("w.y") + ");",
                      "  OUT[u32(e) >> 2u] = vec2<u32>(f32_to_f16(v.x) | (f32_to_f16(v.y) << 16u), "
                      "f32_to_f16(v.z) | (f32_to_f16(v.w) << 16u));"),
    "float32": _Words("f32", "vec4<f32>", 16, "return {X}[u32(e) >> 2u];", "  OUT[u32(e) >> 2u] = v;"),
    "float64": _Words("f64", "vec4<u32>", 16,
                      "let p = {X}[u32(e) >> 1u]; let q = {X}[(u32(e) >> 1u) + 1u]; return vec4<f64>("
                      + ", ".join(_f64_of(w) for w in ("p.xy", "p.zw", "q.xy", "q.zw")) + ");",
                      "  let p = u64_split(bitcast<u64>(v.x));\n  let q = u64_split(bitcast<u64>(v.y));\n"
                      "  let r = u64_split(bitcast<u64>(v.z));\n  let t = u64_split(bitcast<u64>(v.w));\n"
                      "  OUT[u32(e) >> 1u] = vec4<u32>(p, q);\n  OUT[(u32(e) >> 1u) + 1u] = vec4<u32>(r, t);"),
}  # fmt: skip


def matmul(rt: Any, a: Ref, b: Ref, out: Ref) -> None:
    d, od = a.dtype.name, out.dtype.name
    if TILED and d in _WORDS and b.dtype.name == od == d:
        size = 8 if _WORDS[d].ct in G.WIDE else 4  # the compute type's bytes (workgroup tiles)
        tile = _mm_tile(rt.adapter.limits, a.shape[1], b.shape[2], size)
        _matmul_tiled(rt, d, tile, a, b, out)
        return
    ct = G.DTYPES[d].ct
    acc = "u32" if ct == "bool" else ct
    parts = dict(ACC=acc, ZERO=_ZERO[acc], RESULT=G.conv(acc, G.DTYPES[od].ct, "v"),
                 LOAD_A=G.conv(ct, acc, "ld_A(abase + i32(am) * si(5u) + i32(ak) * si(6u))"),
                 LOAD_B=G.conv(ct, acc, "ld_B(bbase + i32(bk) * si(9u) + i32(bn) * si(10u))"),
                 PRODUCT=_product(acc, "ar[i]", "br[j]"))  # fmt: skip
    decls = "\n".join([G.decl("OUT", 1, od, True), G.decl("A", 2, None, False), G.decl("B", 3, None, False)])
    funcs = "\n".join([G.store_fn("OUT", od), G.load_fn("A", d), G.load_fn("B", d)])
    src = lambda: G.fill("matmul", DECLS=decls, FUNCS=funcs, **parts)  # noqa: E731
    _mm_dispatch(rt, ("matmul", d, od), src, (64, 64), a, b, out)


def _mm_dispatch(rt: Any, key: Any, src: Any, tile: tuple[int, int], a: Ref, b: Ref, out: Ref,
                 strides: tuple[tuple[int, ...], ...] | None = None) -> None:  # fmt: skip
    B, M, K = a.shape
    N = b.shape[2]
    gx, gy = -(-N // tile[1]), -(-M // tile[0])
    if gx > rt.max_groups or gy > rt.max_groups:
        raise ValueError(f"webgpu matmul: {M}x{N} output exceeds the dispatch limits")
    sa, sb, so = strides or (a.strides, b.strides, out.strides)
    binds = [(1, out.buffer, True), (2, a.buffer, False), (3, b.buffer, False)]
    for b0 in range(0, B, rt.max_groups):
        params = [M, N, K, a.offset, *sa, b.offset, *sb, out.offset, *so, b0]
        rt.run(key, src, params, binds, (gx, gy, min(B - b0, rt.max_groups)))


def _mm_tile(limits: Any, M: int, N: int, size: int) -> tuple[int, int, int]:
    """(BM, BN, BK) of the tiled kernel, which takes BM * BN / 64 threads and size * BK * (BM + BN)
    bytes of workgroup memory (size: the compute type's bytes): 128x128 fits WebGPU's guaranteed
    256 threads and 16 KiB in f64, 64x64 compat mode's 128 threads. A thin output (M or N <= 64)
    takes 64x64 tiles, which waste less work on it."""
    threads = limits["max-compute-invocations-per-workgroup"]
    storage = limits["max-compute-workgroup-storage-size"]
    big = threads >= 256 and storage >= size * 8 * 256 and min(M, N) > 64
    return (128, 128, 8) if big else (64, 64, 8)


def _mm_layout(x: Ref, sb: int, so: int, sk: int, unit: int) -> tuple[bool, bool]:
    """(along_k, word) of an operand: read 4 elements along its unit-stride axis (else along the
    shorter stride), as one word when that stride is 1 and the others keep the 4 elements aligned
    (the word being ``unit`` bytes)."""
    along_k = sk == 1 or (so != 1 and abs(sk) <= abs(so))
    one, other = (sk, so) if along_k else (so, sk)
    return along_k, one == 1 and x.offset % 4 == sb % 4 == other % 4 == 0 and x.buffer.cap % unit == 0


def _matmul_tiled(rt: Any, d: str, tile: tuple[int, int, int], a: Ref, b: Ref, out: Ref) -> None:
    # NOTE: the stride of a length-1 axis is never used: zeroed, it keeps M = 1 or K = 1 aligned.
    sa, sb, so = ([0 if n == 1 else s for n, s in zip(r.shape, r.strides)] for r in (a, b, out))
    unit = _WORDS[d].nbytes
    a_k, a_vec = _mm_layout(a, sa[0], sa[1], sa[2], unit)
    b_k, b_vec = _mm_layout(b, sb[0], sb[2], sb[1], unit)
    o_vec = (so[2] == 1 and out.shape[2] % 4 == 0 and out.offset % 4 == so[0] % 4 == so[1] % 4 == 0
             and out.buffer.cap % unit == 0)  # fmt: skip
    key = ("matmul_tiled", d, tile, a_k, a_vec, b_k, b_vec, o_vec)
    _mm_dispatch(rt, key, lambda: _matmul_tiled_source(*key[1:]), tile[:2], a, b, out, (sa, sb, so))


def _matmul_tiled_source(d: str, tile: tuple[int, int, int], a_k: bool, a_vec: bool, b_k: bool, b_vec: bool,
                         o_vec: bool) -> str:  # fmt: skip
    bm, bn, bk = tile
    w = _WORDS[d]
    slots = [("A", "m0", 16 * bk // bn), ("B", "n0", 16 * bk // bm)]  # a tile's vec4s / BM * BN / 64
    fetch = [(f"r{x}{q}", f"fetch_{x}(t + {q}u * WG, {x.lower()}base, {o0}", f"put_{x}(t + {q}u * WG")
             for x, o0, n in slots for q in range(n)]  # fmt: skip
    acc = [(r, j) for r in range(8) for j in range(2)]
    store = [f"  st4(obase, m0 + {'BM / 2u + ' if r >= 4 else ''}4u * ar + {r % 4}u, "
             f"n0 + {'BN / 2u + ' if j else ''}4u * bc, c{r}{j});" for r, j in acc]  # fmt: skip

    def operand(x: str, binding: int, vec: bool) -> tuple[str, str, str]:
        if vec:
            return (f"@group(0) @binding({binding}) var<storage, read> {x}: array<{w.word}>;", "",
                    w.load.format(X=x))  # fmt: skip
        load = f"return vec4<{w.ct}>(" + ", ".join(f"ld_{x}(e{f' + {c} * s' if c else ''})" for c in range(4)) + ");"
        return G.decl(x, binding, None, False), G.load_fn(x, d), load

    (da, fa, la), (db, fb, lb) = operand("A", 2, a_vec), operand("B", 3, b_vec)
    if o_vec:
        do, fo, st4 = f"@group(0) @binding(1) var<storage, read_write> OUT: array<{w.word}>;", "", w.store
    else:
        do, fo = G.decl("OUT", 1, d, True), G.store_fn("OUT", d)
        st4 = "\n".join(["  let s = si(14u);", "  st_OUT(e, v.x);"]
                        + [f"  if (n + {c}u < P[1]) {{ st_OUT(e + {c} * s, v.{'xyzw'[c]}); }}" for c in (1, 2, 3)])
    return G.fill(
        "matmul_tiled", T=w.ct, DECLS="\n".join([do, da, db]), FUNCS="\n".join(f for f in (fo, fa, fb) if f),
        BM=bm, BN=bn, BK=bk, AS=bk * bm // 4, BS=bk * bn // 4, A_ALONG_K=str(a_k).lower(),
        B_ALONG_K=str(b_k).lower(), LD4_A=la, LD4_B=lb, ST4=st4,
        ZERO="\n".join(f"  var c{r}{j} = vec4<{w.ct}>(0.0);" for r, j in acc),
        FIRST="\n".join(f"  var {r} = {f}, 0u);" for r, f, _ in fetch),
        PUT="\n".join(f"    {p}, {r});" for r, _, p in fetch),
        NEXT="\n".join(f"      {r} = {f}, k0 + BK);" for r, f, _ in fetch),
        FMA="\n".join(_mm_step(kk) for kk in range(bk)), STORE="\n".join(store))  # fmt: skip


def _mm_step(kk: int) -> str:
    """One k of the unrolled inner loop: 2 + 2 vec4 reads from the tiles, 16 vec4 multiply-adds."""
    lines = [f"      let a0 = As[{kk}u * (BM / 4u) + ar];",
             f"      let a1 = As[{kk}u * (BM / 4u) + ar + BM / 8u];",
             f"      let b0 = Bs[{kk}u * (BN / 4u) + bc];",
             f"      let b1 = Bs[{kk}u * (BN / 4u) + bc + BN / 8u];"]  # fmt: skip
    lines += [f"      c{r}{j} = c{r}{j} + a{r // 4}.{'xyzw'[r % 4]} * b{j};"
              for r in range(8) for j in range(2)]  # fmt: skip
    return "    {\n" + "\n".join(lines) + "\n    }"


# ---------------------------------------------------------------------------
# take and scatter_add
# ---------------------------------------------------------------------------


def _index_kernel(rt: Any, mode: str, out: Ref, x: Ref, idx: Ref) -> None:
    xd, id_, od = x.dtype.name, idx.dtype.name, out.dtype.name
    index = G.conv(G.DTYPES[id_].ct, "i32", "ld_I(si(5u) + k * si(6u))")
    if mode == "take":
        body = "  st_OUT(si(7u) + m * si(8u) + k * si(9u), ld_X(si(2u) + m * si(3u) + j * si(4u)));"
        fn = G.store_fn("OUT", od)
    else:
        body = "  rmw_OUT(si(7u) + m * si(8u) + j * si(9u), ld_X(si(2u) + m * si(3u) + k * si(4u)));"
        fn = G.rmw_fn("OUT", od, "($a || $b)" if od == "bool" else "($a + $b)")
    decls = "\n".join([G.decl("OUT", 1, od, True, atomic=mode != "take"), G.decl("X", 2, None, False),
                       G.decl("I", 3, None, False)])  # fmt: skip
    funcs = "\n".join([fn, G.load_fn("X", xd), G.load_fn("I", id_)])
    src = lambda: G.fill("index", DECLS=decls, FUNCS=funcs, INDEX=index, BODY=body)  # noqa: E731
    M = out.shape[0]
    K = idx.shape[0]
    params = [M * K, K, x.offset, *x.strides, idx.offset, idx.strides[0], out.offset, *out.strides]
    binds = [(1, out.buffer, True), (2, x.buffer, False), (3, idx.buffer, False)]
    rt.run((mode, xd, id_, od), src, params, binds, _grid1(rt, M * K))


def take(rt: Any, x: Ref, indices: Ref, out: Ref) -> None:
    _index_kernel(rt, "take", out, x, indices)


def scatter_add(rt: Any, out: Ref, indices: Ref, values: Ref) -> None:
    temps: list[Any] = []
    values = _unalias(rt, values, out, temps)
    indices = _unalias(rt, indices, out, temps)
    try:
        if G.DTYPES[out.dtype.name].bits >= 64:
            _scatter_runs(rt, out, indices, values, temps)
        else:
            _index_kernel(rt, "scatter", out, values, indices)
    finally:
        _free(rt, temps)


def _scatter_runs(rt: Any, out: Ref, idx: Ref, values: Ref, temps: list[Any]) -> None:
    """scatter_add of 64- and 128-bit elements, which WGSL cannot add atomically (its atomics are 32-bit):
    a stable argsort of the indices, then a thread per (row, run of equal indices) adds the run's
    values in their order, so the sums are deterministic."""
    K = idx.shape[0]
    perm = rt.alloc(4 * K)
    temps.append(perm)
    keys = Ref(idx.buffer, idx.dtype, (1, K), (0, idx.strides[0]), idx.offset, K, K == 1)
    sort(rt, keys, None, Ref(perm, ndplane.int32, (1, K), (K, 1), 0, K, True), False)
    xd, id_, od = values.dtype.name, idx.dtype.name, out.dtype.name
    at = G.conv(G.DTYPES[id_].ct, "i32", "ld_I(si(5u) + i32(Q[u32(r)]) * si(6u))")
    decls = "\n".join([G.decl("OUT", 1, od, True), G.decl("X", 2, None, False), G.decl("I", 3, None, False),
                       G.decl("Q", 4, None, False)])  # fmt: skip
    funcs = "\n".join([G.store_fn("OUT", od), G.load_fn("OUT", od), G.load_fn("X", xd), G.load_fn("I", id_),
                       f"fn idx_at(r: i32) -> i32 {{ return {at}; }}"])  # fmt: skip
    src = lambda: G.fill("index", DECLS=decls, FUNCS=funcs, INDEX="idx_at(k)", BODY=_RUNS)  # noqa: E731
    M = out.shape[0]
    params = [M * K, K, values.offset, *values.strides, idx.offset, idx.strides[0], out.offset, *out.strides]
    binds = [(1, out.buffer, True), (2, values.buffer, False), (3, idx.buffer, False), (4, perm, False)]
    rt.run(("scatter_runs", xd, id_, od), src, params, binds, _grid1(rt, M * K))


_RUNS = """  if (k > 0 && idx_at(k - 1) == j) { return; }
  let o = si(7u) + m * si(8u) + j * si(9u);
  var acc = ld_OUT(o);
  for (var r = k; r < i32(K) && idx_at(r) == j; r = r + 1) {
    acc = acc + ld_X(si(2u) + m * si(3u) + i32(Q[u32(r)]) * si(4u));
  }
  st_OUT(o, acc);"""


# ---------------------------------------------------------------------------
# sort
# ---------------------------------------------------------------------------

# NOTE: rows from this length take the radix sort (module-level so tests can force either path).
# On lavapipe (float32) radix was level with bitonic at 1024 keys a row, 1.5-2.5x faster at 2048
# and 2.6-4x at 4096. Bitonic keeps shorter rows anyway: up to 2048 keys it sorts a row in one
# workgroup-memory dispatch (five dispatches up to 4096) where radix takes 3 a pass, 4 passes for
# 32-bit keys, whose latency on a GPU likely outweighs the work saved (an estimate, not measured).
RADIX_MIN_K = 4096
RADIX_ITEMS: int | None = None  # keys per thread of a radix tile (None: the most that fit, 16 or 8)


def _sort_io(xd: str, vd: str | None, id_: str | None, px: int, pv: int, pi: int) -> tuple[str, str, str, str]:
    """(declarations, functions, gather code, key load) of the sort templates, whose params hold
    x's (offset, s0, s1) at P[px..], the values' at P[pv..] and the indices' at P[pi..]."""
    decls = [G.decl("X", 2, None, False)]
    funcs = [G.load_fn("X", xd)]
    gather = []
    if vd is not None:
        decls.append(G.decl("V", 3, vd, True))
        funcs.append(G.store_fn("V", vd))
        gather.append(f"  st_V(si({pv}u) + i32(m) * si({pv + 1}u) + i32(i) * si({pv + 2}u), "
                      f"ld_X(si({px}u) + i32(m) * si({px + 1}u) + i32(idx) * si({px + 2}u)));")  # fmt: skip
    if id_ is not None:
        decls.append(G.decl("I", 4, id_, True))
        funcs.append(G.store_fn("I", id_))
        gather.append(f"  st_I(si({pi}u) + i32(m) * si({pi + 1}u) + i32(i) * si({pi + 2}u), "
                      f"{G.conv('u32', G.DTYPES[id_].ct, 'idx')});")  # fmt: skip
    load = f"ld_X(si({px}u) + i32(m) * si({px + 1}u) + i32(i) * si({px + 2}u))"
    return "\n".join(decls), "\n".join(funcs), "\n".join(gather), load


# The bitonic sort's key type, (key, index) pair in KV and workgroup block by key width: a 64-bit
# key takes 3 words a pair and blocks of 1024 (16 KB of workgroup memory, WebGPU's minimum).
_BITONIC = {False: dict(KEY_T="u32", KEY_MAX="0xffffffffu", KW="2u", LMAX="2048", KV_KEY="KV[2u * g]",
                        KV_PUT="KV[2u * g] = k;"),
            True: dict(KEY_T="u64", KEY_MAX="0xfffffffffffffffflu", KW="3u", LMAX="1024",
                       KV_KEY="u64_join(vec2<u32>(KV[3u * g], KV[3u * g + 1u]))",
                       KV_PUT="let w = u64_split(k);\n  KV[3u * g] = w.x;\n  KV[3u * g + 1u] = w.y;")}  # fmt: skip


def _sort_source(xd: str, vd: str | None, id_: str | None) -> str:
    decls, funcs, gather, load = _sort_io(xd, vd, id_, 3, 8, 11)
    key = G.SORT_KEY[G.DTYPES[xd].ct].replace("$x", load)
    return G.fill("sort", DECLS=decls, FUNCS=funcs, KEY=key, GATHER=gather, **_BITONIC[G.DTYPES[xd].bits == 64])


def sort(rt: Any, x: Ref, vout: Ref | None, iout: Ref | None, descending: bool) -> None:
    if x.shape[1] >= RADIX_MIN_K:
        _sort_radix(rt, x, vout, iout, descending)
    else:
        _sort_bitonic(rt, x, vout, iout, descending)


def _sort_bitonic(rt: Any, x: Ref, vout: Ref | None, iout: Ref | None, descending: bool) -> None:
    xd = x.dtype.name
    vd = vout.dtype.name if vout is not None else None
    id_ = iout.dtype.name if iout is not None else None
    key = ("sort", xd, vd, id_)
    src = lambda: _sort_source(xd, vd, id_)  # noqa: E731
    M, K = x.shape
    wide = G.DTYPES[xd].bits == 64
    P = max(2, 1 << (K - 1).bit_length())
    L = min(P, 1024 if wide else 2048)
    kv = rt.alloc(M * P * (12 if wide else 8))
    try:
        base = [M, P, K, x.offset, *x.strides, 0, 0, *_out_params(vout), *_out_params(iout),
                L, int(descending), 0]  # fmt: skip
        scratch = [(1, kv, True)]
        rt.run(key, src, base, [*scratch, (2, x.buffer, False)], _grid1(rt, M * P), "sort_keys")
        rt.run(key, src, base, scratch, rt.groups(M * P // L), "sort_local")
        k = 2 * L
        while k <= P:
            j = k // 2
            while j >= L:
                rt.run(key, src, base[:6] + [k, j] + base[8:], scratch, _grid1(rt, M * P // 2), "sort_global")
                j //= 2
            rt.run(key, src, base[:6] + [k, 0] + base[8:16] + [1], scratch, rt.groups(M * P // L), "sort_local")
            k *= 2
        rt.run(key, src, base, [*scratch, *_out_binds(x, vout, iout)], _grid1(rt, M * K), "sort_gather")
    finally:
        rt.free(kv)


def _out_params(r: Ref | None) -> list[int]:
    return [0, 0, 0] if r is None else [r.offset, *r.strides]


def _out_binds(x: Ref, vout: Ref | None, iout: Ref | None) -> list[tuple[int, Any, bool]]:
    binds = [(2, x.buffer, False)]
    if vout is not None:
        binds.append((3, vout.buffer, True))
    if iout is not None:
        binds.append((4, iout.buffer, True))
    return binds


# Radix keys by dtype: (expression of $x, bits). Narrow dtypes take narrow keys, so fewer passes.
_RADIX_KEY = {"bool": ("select(0u, 1u, $x)", 8), "int8": ("((bitcast<u32>($x) ^ 0x80u) & 0xffu)", 8),
              "uint8": ("$x", 8), "int16": ("((bitcast<u32>($x) ^ 0x8000u) & 0xffffu)", 16),
              "uint16": ("$x", 16), "float16": ("h_sortkey($x)", 16),
              "int32": ("(bitcast<u32>($x) ^ 0x80000000u)", 32), "uint32": ("$x", 32),
              "float32": ("f_sortkey($x)", 32),
              **{d: (G.SORT_KEY[G.DTYPES[d].ct], 64) for d in ("int64", "uint64", "float64")}}  # fmt: skip
# The key type and its KI / KO access (words i, or 2i and 2i + 1) by key width.
_KEY_IO = {False: dict(KEY_T="u32", KEY_XOR="P[13]", LD_KEY="KI[i]", ST_KEY="KO[i] = k;"),
           True: dict(KEY_T="u64", KEY_XOR="u64_join(vec2<u32>(P[13], P[13]))",
                      LD_KEY="u64_join(vec2<u32>(KI[2u * i], KI[2u * i + 1u]))",
                      ST_KEY="let w = u64_split(k); KO[2u * i] = w.x; KO[2u * i + 1u] = w.y;")}  # fmt: skip


def _radix_source(xd: str, vd: str | None, id_: str | None, items: int, first: bool, last: bool) -> str:
    decls, funcs, gather, load = _sort_io(xd, vd, id_, 4, 7, 10)
    key, bits = _RADIX_KEY[xd]
    return G.fill("radix_sort", DECLS=decls, FUNCS=funcs, GATHER=gather, KEY=key.replace("$x", load),
                  ITEMS=str(items), TILE=str(256 * items), SMEM=str(_radix_words(items)),
                  FIRST=str(first).lower(), LAST=str(last).lower(), **_KEY_IO[bits == 64])  # fmt: skip


def _radix_words(items: int) -> int:
    """Words of radix_scatter's shared array: 2048 counters or the tile, with a pad word per 32."""
    return max(2048, 256 * items) * 33 // 32


def _radix_items(limits: Any) -> int:
    """Keys per thread: 16 (a 4096-key tile, 21 KB of workgroup memory with the scan's and the
    digit tables' 4 KB) where the adapter allows, else 8 (12.5 KB; WebGPU guarantees 16 KB).
    Bigger tiles cost fewer barriers per key."""
    fits = limits["max-compute-workgroup-storage-size"] >= 4 * (_radix_words(16) + 1024)
    return 16 if fits else 8


def _scan_levels(n: int) -> list[tuple[int, int]]:
    """(length, offset) of each level of the blocked scan of n counts, laid end to end."""
    levels, off = [(n, 0)], n
    while n > 1024:
        n = -(-n // 1024)
        levels.append((n, off))
        off += n
    return levels


def _sort_radix(rt: Any, x: Ref, vout: Ref | None, iout: Ref | None, descending: bool) -> None:
    """A stable LSD radix sort of each row, 8 bits a pass (see radix_sort.wgsl)."""
    xd = x.dtype.name
    vd = vout.dtype.name if vout is not None else None
    id_ = iout.dtype.name if iout is not None else None
    items = RADIX_ITEMS or _radix_items(rt.adapter.limits)
    M, K = x.shape
    T = -(-K // (256 * items))
    passes = _RADIX_KEY[xd][1] // 8
    levels = _scan_levels(M * 256 * T)
    offs = ([o for _, o in levels] + [0, 0, 0])[:4]
    base = [M, K, T, 0, x.offset, *x.strides, *_out_params(vout), *_out_params(iout),
            (1 << 8 * passes) - 1 if descending else 0, 0, 0, 0, 0, len(levels), *offs]  # fmt: skip
    # NOTE: pass s writes keys and positions to pair s % 2 and reads pair (s - 1) % 2; the first
    # pass reads x and the last writes the outputs, so the bindings they leave unused get
    # stand-ins: rt.dummy for the reads, `spare` for the writes (WebGPU forbids one buffer
    # bound as both in a dispatch).
    spare = rt.alloc(4)
    key_bytes = 8 if passes == 8 else 4
    bufs = [rt.alloc(M * K * (key_bytes if j % 2 == 0 else 4)) for j in range(2 * min(2, passes - 1))]
    pairs = [tuple(bufs[2 * j : 2 * j + 2]) for j in range(len(bufs) // 2)]
    cnt = rt.alloc(4 * (levels[-1][0] + levels[-1][1]))
    try:
        for s in range(passes):
            kin, iin = pairs[(s - 1) % 2] if s else (rt.dummy, rt.dummy)
            kout, iout_ = pairs[s % 2] if s < passes - 1 else (spare, spare)
            p = base[:3] + [8 * s] + base[4:]
            key = ("radix_sort", xd, vd, id_, items, s == 0, s == passes - 1)
            src = lambda key=key: _radix_source(*key[1:])  # noqa: E731
            reads = [(2, x.buffer, False), (5, kin, False)]
            rt.run(key, src, p, [(1, cnt, True), *reads], rt.groups(M * T), "radix_hist")
            for (ln, off), nxt in zip(levels, levels[1:] + [(0, 0)]):
                sp = p[:14] + [ln, off, nxt[1], int(nxt[0] > 0)] + p[18:]
                rt.run(key, src, sp, [(1, cnt, True)], rt.groups(-(-ln // 1024)), "radix_scan")
            binds = [(1, cnt, True), *_out_binds(x, vout, iout), (5, kin, False), (6, iin, False),
                     (7, kout, True), (8, iout_, True)]  # fmt: skip
            rt.run(key, src, p, binds, rt.groups(M * T), "radix_scatter")
    finally:
        for b in [spare, *bufs, cnt]:
            rt.free(b)


# ---------------------------------------------------------------------------
# random_bits
# ---------------------------------------------------------------------------


def random_bits(rt: Any, key: int, counter: int, out: Ref) -> None:
    n = out.shape[0]
    m32 = 0xFFFFFFFF
    params = [n, out.offset, key & m32, (key >> 32) & m32] + [(counter >> s) & m32 for s in (0, 32, 64, 96)]
    rt.run(("philox",), lambda: G.template("philox").template, params, [(1, out.buffer, True)],
           _grid1(rt, -(-n // 4)))
