"""Launchers: turn Refs into kernel parameters, pick (or build) the pipeline, record dispatches.

Each function records work on the Runtime without waiting; the backend flushes after
every op. Pipelines are cached by a key naming everything the WGSL source depends on.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ndplane.backend import Ref

from . import _codegen as G

_NAMES = "ABC"


def _ct(ref: Ref) -> str:
    return G.DTYPES[ref.dtype.name].ct


def _bits(value: Any, dtype: str) -> int:
    """The raw bits of a Python scalar as a ``dtype`` element, zero-extended to 32 bits."""
    arr = np.array(value).astype(np.dtype(dtype))
    return int(arr.view(f"u{arr.itemsize}"))


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
    rt.copy_bytes(x.buffer, 0, tmp, 0, x.buffer.cap)
    return Ref(tmp, x.dtype, x.shape, x.strides, x.offset, x.size, x.contiguous)


def _free(rt: Any, temps: list[Any]) -> None:
    if temps:
        rt.flush()
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
    refs, key, scalars, binds = [out], [], [], [(1, out.buffer, True)]
    decls = [G.decl("OUT", 1, out.dtype.name, True)]
    funcs = [G.store_fn("OUT", out.dtype.name)]
    for j, x in enumerate(inputs):
        name = _NAMES[j]
        if type(x) is Ref:
            x = _unalias(rt, x, out, temps)
            expr = expr.replace(f"${name.lower()}", f"ld_{name}(e{len(refs)})")
            refs.append(x)
            decls.append(G.decl(name, 2 + j, None, False))
            funcs.append(G.load_fn(name, x.dtype.name))
            binds.append((2 + j, x.buffer, False))
            key.append(x.dtype.name)
        else:
            expr = expr.replace(f"${name.lower()}", f"ld_{name}(0)")
            funcs.append(G.scalar_fn(name, sdt, 2 + len(scalars)))
            scalars.append(_bits(x, sdt))
            key.append("scalar:" + sdt)
    dims, st = _coalesce(out.shape, [r.strides for r in refs])
    contig = len(dims) <= 1 and all(s == [1] or s == [] for s in st)
    params = [out.size, len(dims)] + (scalars + [0, 0])[:2] + dims
    for r, s in zip(refs, st):
        params += [r.offset] + s
    src = lambda: G.fill("elementwise", DECLS="\n".join(decls), FUNCS="\n".join(funcs),  # noqa: E731
                         INDEX=G.index_code(len(refs), contig), EXPR=expr)  # fmt: skip
    rt.run(("ew", expr, out.dtype.name, tuple(key), contig), src, params, binds, _grid1(rt, out.size))
    _free(rt, temps)


# ---------------------------------------------------------------------------
# reduce and scan over the last axis
# ---------------------------------------------------------------------------

_ZERO = {"f32": "0.0", "i32": "0", "u32": "0u", "bool": "false"}
_ONE = {"f32": "1.0", "i32": "1", "u32": "1u", "bool": "true"}


def _better(op: str, acc: str) -> str:
    cmp = ">" if op in ("max", "argmax") else "<"
    plain = f"  return v2 {cmp} v1 || (v2 == v1 && i2 < i1);"
    if acc != "f32":
        return plain
    return ("  if (f_isnan(v1)) { return f_isnan(v2) && i2 < i1; }\n"
            "  if (f_isnan(v2)) { return true; }\n" + plain)  # fmt: skip


def _reduce_parts(op: str, xct: str, oct_: str) -> dict[str, str]:
    ld = "ld_A(base + i32(k) * s1)"
    if op in ("sum", "prod"):
        sym = "+" if op == "sum" else "*"
        return dict(ACC=oct_, LOAD=G.conv(xct, oct_, ld), IDENTITY=(_ZERO if op == "sum" else _ONE)[oct_],
                    IDENTITY_INDEX="0u", FOLD=f"acc = acc {sym} v;", MERGE=f"sv[t] = sv[t] {sym} sv[t + s];",
                    RESULT="rv", BETTER="  return false;")  # fmt: skip
    if op in ("any", "all"):
        sym = "||" if op == "any" else "&&"
        return dict(ACC="bool", LOAD=G.truth(xct, ld), IDENTITY="false" if op == "any" else "true",
                    IDENTITY_INDEX="0u", FOLD=f"acc = acc {sym} v;", MERGE=f"sv[t] = sv[t] {sym} sv[t + s];",
                    RESULT=G.conv("bool", oct_, "rv"), BETTER="  return false;")  # fmt: skip
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


_BITS = {"f32": ("bitcast<u32>(v)", "bitcast<f32>(w)"), "i32": ("bitcast<u32>(v)", "bitcast<i32>(w)"),
         "u32": ("v", "w"), "bool": ("select(0u, 1u, v)", "(w != 0u)")}  # fmt: skip


def reduce(rt: Any, op: str, x: Ref, out: Ref) -> None:
    xd, od = x.dtype.name, out.dtype.name
    parts = _reduce_parts(op, G.DTYPES[xd].ct, G.DTYPES[od].ct)
    to_bits, from_bits = _BITS[parts["ACC"]]
    src = lambda: G.fill("reduce", DECLS=G.decl("OUT", 1, od, True) + "\n" + G.decl("A", 2, None, False),  # noqa: E731
                         FUNCS=G.store_fn("OUT", od) + "\n" + G.load_fn("A", xd), TO_BITS=to_bits,
                         FROM_BITS=from_bits, **parts)  # fmt: skip
    key = ("reduce", op, xd, od)
    M, K = x.shape
    binds = [(1, out.buffer, True), (2, x.buffer, False)]
    params = [M, K, x.offset, x.strides[0], x.strides[1], out.offset, out.strides[0], 1, K]
    if _short_rows(M, K):
        rt.run(key, src, params, binds, _grid1(rt, M), "reduce_rows")  # S, SI unused
        return
    # NOTE: few long rows would leave most of a GPU idle: split each row into G chunks of C
    # elements (a workgroup each), then combine the partials in a second pass.
    G_ = min(1024, -(-K // 4096)) if M < 256 else 1
    if G_ == 1:
        rt.run(key, src, params, [*binds, (3, rt.dummy, True), (4, rt.dummy, True)], rt.groups(M))
        return
    C = -(-K // G_)
    scratch = [rt.alloc(M * G_ * 4), rt.alloc(M * G_ * 4)]
    try:
        binds += [(3, scratch[0], True), (4, scratch[1], True)]
        params[7:] = [G_, C]
        rt.run(key, src, params, binds, rt.groups(M * G_))
        rt.run(key, src, params, [binds[0], binds[2], binds[3]], rt.groups(M), "reduce_final")
    finally:
        rt.flush()
        for s in scratch:
            rt.free(s)


def scan(rt: Any, op: str, x: Ref, out: Ref) -> None:
    xd, od = x.dtype.name, out.dtype.name
    acc = G.DTYPES[od].ct
    parts = dict(ACC=acc, LOAD=G.conv(G.DTYPES[xd].ct, acc, "ld_A(xb + i32(k) * xs)"),
                 IDENTITY=(_ZERO if op == "cumulative_sum" else _ONE)[acc],
                 OP="a + b" if op == "cumulative_sum" else "a * b", RESULT="op(carry, sv[t])")  # fmt: skip
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


def matmul(rt: Any, a: Ref, b: Ref, out: Ref) -> None:
    d, od = a.dtype.name, out.dtype.name
    ct = G.DTYPES[d].ct
    acc = "u32" if ct == "bool" else ct
    parts = dict(ACC=acc, ZERO=_ZERO[acc], RESULT=G.conv(acc, G.DTYPES[od].ct, "v"),
                 LOAD_A=G.conv(ct, acc, "ld_A(abase + i32(am) * si(5u) + i32(ak) * si(6u))"),
                 LOAD_B=G.conv(ct, acc, "ld_B(bbase + i32(bk) * si(9u) + i32(bn) * si(10u))"))  # fmt: skip
    decls = "\n".join([G.decl("OUT", 1, od, True), G.decl("A", 2, None, False), G.decl("B", 3, None, False)])
    funcs = "\n".join([G.store_fn("OUT", od), G.load_fn("A", d), G.load_fn("B", d)])
    src = lambda: G.fill("matmul", DECLS=decls, FUNCS=funcs, **parts)  # noqa: E731
    B, M, K = a.shape
    N = b.shape[2]
    gx, gy = -(-N // 64), -(-M // 64)
    if gx > rt.max_groups or gy > rt.max_groups:
        raise ValueError(f"webgpu matmul: {M}x{N} output exceeds the dispatch limits")
    binds = [(1, out.buffer, True), (2, a.buffer, False), (3, b.buffer, False)]
    for b0 in range(0, B, rt.max_groups):
        params = [M, N, K, a.offset, *a.strides, b.offset, *b.strides, out.offset, *out.strides, b0]
        rt.run(("matmul", d, od), src, params, binds, (gx, gy, min(B - b0, rt.max_groups)))


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
    _index_kernel(rt, "scatter", out, values, indices)
    _free(rt, temps)


# ---------------------------------------------------------------------------
# sort
# ---------------------------------------------------------------------------


def _sort_source(xd: str, vd: str | None, id_: str | None) -> str:
    xct = G.DTYPES[xd].ct
    decls = [G.decl("X", 2, None, False)]
    funcs = [G.load_fn("X", xd)]
    gather = []
    if vd is not None:
        decls.append(G.decl("V", 3, vd, True))
        funcs.append(G.store_fn("V", vd))
        gather.append("  st_V(si(8u) + i32(m) * si(9u) + i32(i) * si(10u), "
                      "ld_X(si(3u) + i32(m) * si(4u) + i32(idx) * si(5u)));")  # fmt: skip
    if id_ is not None:
        decls.append(G.decl("I", 4, id_, True))
        funcs.append(G.store_fn("I", id_))
        gather.append(f"  st_I(si(11u) + i32(m) * si(12u) + i32(i) * si(13u), "
                      f"{G.conv('u32', G.DTYPES[id_].ct, 'idx')});")  # fmt: skip
    key = G.SORT_KEY[xct].replace("$x", "ld_X(si(3u) + i32(m) * si(4u) + i32(i) * si(5u))")
    return G.fill("sort", DECLS="\n".join(decls), FUNCS="\n".join(funcs), KEY=key,
                  GATHER="\n".join(gather))  # fmt: skip


def sort(rt: Any, x: Ref, vout: Ref | None, iout: Ref | None, descending: bool) -> None:
    xd = x.dtype.name
    vd = vout.dtype.name if vout is not None else None
    id_ = iout.dtype.name if iout is not None else None
    key = ("sort", xd, vd, id_)
    src = lambda: _sort_source(xd, vd, id_)  # noqa: E731
    M, K = x.shape
    P = max(2, 1 << (K - 1).bit_length())
    L = min(P, 2048)
    kv = rt.alloc(M * P * 8)
    try:
        v = vout or Ref(None, x.dtype, x.shape, (0, 0), 0, 0, False)
        i = iout or Ref(None, x.dtype, x.shape, (0, 0), 0, 0, False)
        base = [M, P, K, x.offset, *x.strides, 0, 0, v.offset, *v.strides, i.offset, *i.strides,
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
        binds = [*scratch, (2, x.buffer, False)]
        if vout is not None:
            binds.append((3, vout.buffer, True))
        if iout is not None:
            binds.append((4, iout.buffer, True))
        rt.run(key, src, base, binds, _grid1(rt, M * K), "sort_gather")
    finally:
        rt.flush()
        rt.free(kv)


# ---------------------------------------------------------------------------
# random_bits
# ---------------------------------------------------------------------------


def random_bits(rt: Any, key: int, counter: int, out: Ref) -> None:
    n = out.shape[0]
    m32 = 0xFFFFFFFF
    params = [n, out.offset, key & m32, (key >> 32) & m32] + [(counter >> s) & m32 for s in (0, 32, 64, 96)]
    rt.run(("philox",), lambda: G.template("philox").template, params, [(1, out.buffer, True)],
           _grid1(rt, -(-n // 4)))
