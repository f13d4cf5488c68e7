"""A differential fuzzer: random programs on the device under test and on the reference device.

A hypothesis state machine keeps a pool of arrays, each a pair: the array on the device under
test and the same array on the reference device (``numpy``, whose kernels are the semantics
every backend is held to). Every rule applies one operation to both sides -- creation, views,
in-place operators, ``__setitem__``, elementwise functions, reductions and scans, casts,
gathers, matmul, device moves -- and then every array that shares storage with what the step
wrote, and the step's result, must hold the same values on both sides; a view must be a view on
both. A step that raises must raise the same exception type with the same message (device
names aside) on both. So a wrong kernel, a write lost through a view, an alias the core
mishandled or a fast path that judges differently shows up at the step that caused it, with
the program that led there.

Inputs whose result the standard leaves undefined are never applied: integer overflow,
integer division by zero, shifts outside the width, negative integer powers, casts of values
the target dtype cannot hold, writes through broadcast (stride-0) views. Float results that are
not exactly rounded the same everywhere (division, transcendental functions, sums) compare
within a tolerance, after which the device side takes the reference's bits, so rounding never
accumulates into a false alarm.

The ci profile runs a few short programs per backend; ``NDPLANE_HYPOTHESIS_PROFILE=deep``
runs more than 10 000 steps per backend.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import note, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

import ndplane as nd
from ndplane.conformance import _helpers as h

REFERENCE = "numpy"
STEPS_PER_PROGRAM = 40
POOL = 16
#: Steps run per device in this process (the deep profile's goal is >= 10 000 per backend).
STEPS: dict[str, int] = {}

_INPLACE: dict[str, tuple[str, Callable[[Any, Any], Any]]] = {
    "+=": ("add", operator.iadd), "-=": ("subtract", operator.isub), "*=": ("multiply", operator.imul),
    "/=": ("divide", operator.itruediv), "//=": ("floor_divide", operator.ifloordiv),
    "%=": ("remainder", operator.imod), "**=": ("pow", operator.ipow), "&=": ("bitwise_and", operator.iand),
    "|=": ("bitwise_or", operator.ior), "^=": ("bitwise_xor", operator.ixor),
    "<<=": ("bitwise_left_shift", operator.ilshift), ">>=": ("bitwise_right_shift", operator.irshift),
}  # fmt: skip
_BINARY = ("add", "subtract", "multiply", "divide", "floor_divide", "remainder", "pow", "maximum",
           "minimum", "equal", "not_equal", "less", "greater_equal", "logical_and", "bitwise_xor",
           "bitwise_left_shift", "atan2", "hypot", "copysign")  # fmt: skip
_UNARY = ("negative", "abs", "square", "sqrt", "exp", "log1p", "tanh", "sin", "floor", "round", "sign",
          "isnan", "isfinite", "logical_not", "bitwise_invert", "positive")  # fmt: skip
_REDUCE = ("sum", "prod", "max", "min", "mean", "any", "all", "argmax", "argmin", "cumulative_sum")
#: Results that every backend rounds exactly as NumPy does (IEEE-754 operations, no formula).
_EXACT_FLOAT = frozenset({
    "add", "subtract", "multiply", "maximum", "minimum", "negative", "abs", "floor", "round",
    "positive", "sqrt", "copysign", "square", "max", "min", "sign",
})  # fmt: skip
#: Exact integer arithmetic of each op, on Python ints, for the range checks.
_EXACT_INT: dict[str, Callable[[int, int], int]] = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
    "floor_divide": operator.floordiv, "remainder": operator.mod, "pow": operator.pow,
    "bitwise_left_shift": operator.lshift, "bitwise_right_shift": operator.rshift,
    "bitwise_and": operator.and_, "bitwise_or": operator.or_, "bitwise_xor": operator.xor, "negative": lambda a, _: -a, "abs": lambda a, _: abs(a),
    "square": lambda a, _: a * a,
}  # fmt: skip


class Pair:
    """One array of the program: on the device under test (``x``) and on the reference (``r``)."""

    __slots__ = ("r", "x")

    def __init__(self, x: nd.Array, r: nd.Array) -> None:
        self.x, self.r = x, r

    @property
    def writable(self) -> bool:
        # NOTE: a write through a broadcast view stores several values in one element: undefined.
        return all(s != 0 or n <= 1 for n, s in zip(self.r.shape, self.r.strides))

    def __repr__(self) -> str:
        return f"Pair({self.r.dtype.name}{list(self.r.shape)}, strides={self.r.strides})"


def _values(dtype: nd.DType, shape: tuple[int, ...], seed: int) -> np.ndarray:
    lo = 0 if dtype.kind == "uint" else -8
    return h.Values(lo, 8).sample(np.random.default_rng(seed), dtype, shape)


def _fits(exact: np.ndarray, dtype: nd.DType) -> bool:
    """Whether exact integer results (an object array of Python ints) fit ``dtype``."""
    if dtype.kind == "bool":
        return True
    info = np.iinfo(h.np_dtype(dtype))
    return all(info.min <= int(v) <= info.max for v in exact.flat)


def _as_int_objects(v: Any) -> np.ndarray:
    """Integer or bool values as an object array of Python ints (exact arithmetic)."""
    v = np.asarray(v)
    return (v if v.dtype == np.uint64 else v.astype(np.int64)).astype(object)


def _exact(op: str, *dtypes: nd.DType) -> bool:
    """Whether every backend rounds ``op`` on these dtypes exactly as the reference does."""
    return op in _EXACT_FLOAT and all(d.kind != "complex" for d in dtypes)


def _int_result_defined(op: str, a: np.ndarray, b: Any, result: nd.DType) -> bool:
    """For integer results: no overflow, no division by zero, shifts inside the width, no
    negative powers (each left undefined by the standard)."""
    if result.kind not in ("int", "uint"):
        return True
    ea, eb = _as_int_objects(a), _as_int_objects(b)
    bits = result.itemsize * 8
    if op in ("floor_divide", "remainder") and (eb == 0).any():
        return False
    if op in ("bitwise_left_shift", "bitwise_right_shift") and ((eb < 0) | (eb >= bits)).any():
        return False
    if op == "pow" and (eb < 0).any():
        return False
    fn = _EXACT_INT.get(op)
    if fn is None:
        return True
    with np.errstate(all="ignore"):
        exact = np.frompyfunc(fn, 2, 1)(ea, eb)
    return _fits(np.asarray(exact, dtype=object), result)


def _same_message(a: BaseException, b: BaseException, devices: tuple[str, ...],
                  twin: dict[nd.DType, nd.DType]) -> bool:  # fmt: skip
    def norm(e: BaseException) -> str:
        s = str(e)
        for name in devices:
            s = s.replace(name, "<device>")
        for r, d in twin.items():
            s = re.sub(rf"\b({r.name}|{d.name})\b", f"<default {r.kind}>", s)
        return re.sub(r"backend '[^']*'", "backend <b>", s)

    return norm(a) == norm(b)


def _basic_key(draw: Any, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """A basic index for ``shape``: ints, slices with any step, None, one Ellipsis."""
    parts: list[Any] = []
    for n in shape:
        kind = draw(st.sampled_from(["all", "slice", "int"] if n else ["all", "slice"]))
        if kind == "int":
            parts.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
            step = draw(st.sampled_from([1, 2, 3, -1, -2, 2**62]))
            parts.append(slice(draw(bound), draw(bound), step))
        else:
            parts.append(slice(None))
    if parts and draw(st.booleans()):
        cut = draw(st.integers(0, len(parts) - 1))
        parts = parts[:cut] + [Ellipsis] + parts[cut + 1 :]
    if draw(st.integers(0, 3)) == 0:
        parts.insert(draw(st.integers(0, len(parts))), None)
    return tuple(parts)


def make_machine(device: nd.Device, ref: nd.Device) -> type[RuleBasedStateMachine]:
    dtypes = [d for d in h.supported(device) if d in ref.backend.dtypes]
    names = (str(device), str(ref), device.kind, ref.kind)
    # NOTE: where the devices' default dtypes differ (float32 where the reference has float64),
    # results of a default dtype are compared in the device's: the ref dtype -> the device's.
    rd, dd = ref.backend.default_dtypes, device.backend.default_dtypes
    twin = {rd[k]: dd[k] for k in rd if k in dd and rd[k] is not dd[k]}
    if rd.get("integral") in twin:  # and the unsigned integers of those widths
        twin[h.BY_NAME["u" + rd["integral"].name]] = h.BY_NAME["u" + dd["integral"].name]

    class Program(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.pool: list[Pair] = []
            self.refused = False  # whether the last both() was refused by the device alone

        # -- running one operation on both sides --------------------------------

        # NOTE: both() returns Any, so mypy cannot rule out that ``*r`` also fills add()'s ``exact``:
        # the add(*r, ...) calls ignore that [misc] rather than annotate both() -- hypothesis seeds
        # this derandomized machine from Program's source (comments aside), so any edit to it
        # replays other programs than the ones the suite has been passing.
        def both(self, what: str, fn: Callable[..., Any], *pairs: Any) -> Any:
            """``fn`` on the reference operands, then on the device's; the same outcome or a
            failure. Returns (device result, reference result), or None if both raised."""
            STEPS[str(device)] = STEPS.get(str(device), 0) + 1
            note(what)
            self.refused = False
            side = [p.r if isinstance(p, (Pair, _Side)) else p for p in pairs]
            try:
                want = fn(*side)
            except (TypeError, ValueError, IndexError) as e:
                expected: BaseException | None = e
            else:
                expected = None
            side = [p.x if isinstance(p, (Pair, _Side)) else p for p in pairs]
            if expected is not None:
                with pytest.raises(type(expected)) as info:
                    fn(*side)
                assert _same_message(info.value, expected, names, twin), (
                    f"{what}: another message than the reference's:\n  {info.value}\n  {expected}"
                )
                return None
            try:
                return fn(*side), want
            except nd.UnsupportedDTypeError as e:
                # The reference computes in a dtype the device lacks (int64 for int32 with
                # uint32, say): the device must say so, naming that dtype.
                lacks = re.search(r"dtype (\w+) is not supported", str(e))
                assert lacks and h.BY_NAME[lacks[1]] not in device.backend.dtypes, f"{what}: {e}"
                self.refused = True
                return None

        def add(self, got: nd.Array, want: nd.Array, exact: bool) -> Pair:
            p = Pair(got, want)
            self.compare(p, exact)
            if got.dtype is not want.dtype:
                return p  # NOTE: a default dtype that differs: checked, but not a step's operand
            self.pool.append(p)
            if len(self.pool) > POOL:
                self.pool.pop(0)
            return p

        def compare(self, p: Pair, exact: bool) -> None:
            """The two sides hold the same values (within the dtype's tolerance unless
            ``exact``); a float difference is then erased by writing the reference's values."""
            assert p.x.device == device and p.r.device == ref
            assert p.x.dtype is twin.get(p.r.dtype, p.r.dtype), (
                f"dtype {p.x.dtype.name} != reference {p.r.dtype.name}"
            )
            got, want = p.x.to_numpy(), p.r.to_numpy()
            if p.x.dtype is not p.r.dtype:
                with np.errstate(all="ignore"):
                    want = want.astype(got.dtype)
                exact = False
            assert got.shape == want.shape, f"shape {got.shape} != reference {want.shape}"
            if p.x.dtype.kind not in ("float", "complex"):
                np.testing.assert_array_equal(got, want, err_msg=f"{p}")
                return
            if np.array_equal(got, want, equal_nan=True):
                return
            rtol = 0.0 if exact else h.TOLERANCE[p.x.dtype][0] * 4
            finite = np.isfinite(want)
            scale = float(np.abs(want[finite]).max()) if finite.any() else 1.0
            np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * max(1.0, scale), equal_nan=True,
                                       err_msg=f"{p}")  # fmt: skip
            if p.writable:
                p.x[...] = nd.asarray(want, device=device)

        def shared(self, p: Pair) -> list[Pair]:
            """Every pair over ``p``'s storage -- on both sides alike."""
            if p.x.dtype is not p.r.dtype:
                return []  # NOTE: astype to a twin dtype copies on one side only
            out = []
            for q in self.pool:
                on_device, on_ref = q.x._storage is p.x._storage, q.r._storage is p.r._storage
                assert on_device == on_ref, f"{q} shares storage with {p} on one side only"
                if on_device:
                    out.append(q)
            return out

        def pick(self, data: st.DataObject, ok: Callable[[Pair], bool] = lambda p: True) -> Pair | None:
            cands = [p for p in self.pool if ok(p)]
            return data.draw(st.sampled_from(cands), label="array") if cands else None

        # -- rules -------------------------------------------------------------

        @rule(data=st.data())
        def create(self, data: st.DataObject) -> None:
            dtype = data.draw(st.sampled_from(dtypes), label="dtype")
            shape = data.draw(h.shapes(max_dims=3), label="shape")
            how = data.draw(st.sampled_from(["asarray", "full", "arange", "empty-filled"]), label="how")
            if how == "asarray" or (how == "arange" and dtype.kind not in ("int", "uint", "float")):
                v = _values(dtype, shape, data.draw(st.integers(0, 2**32 - 1), label="seed"))
                r = self.both(f"asarray({v!r})", lambda d: nd.asarray(v, device=d), _Side(device, ref))
            elif how == "full":
                fill = _values(dtype, (), data.draw(st.integers(0, 2**32 - 1), label="seed")).item()
                r = self.both(f"full({shape}, {fill!r}, {dtype.name})",
                              lambda d: nd.full(shape, fill, dtype=dtype, device=d), _Side(device, ref))  # fmt: skip
            elif how == "arange":
                n = int(np.prod(shape))
                r = self.both(f"arange({n}, {dtype.name}).reshape({shape})",
                              lambda d: nd.reshape(nd.arange(n, dtype=dtype, device=d), shape), _Side(device, ref))  # fmt: skip
            else:
                def filled(d: nd.Device) -> nd.Array:
                    a = nd.empty(shape, dtype=dtype, device=d)
                    a[...] = nd.zeros_like(a)
                    return a

                r = self.both(f"empty({shape}, {dtype.name})[...] = 0", filled, _Side(device, ref))
            assert r is not None
            self.add(*r, exact=True)  # type: ignore[misc]  # see both()

        @rule(data=st.data())
        def view(self, data: st.DataObject) -> None:
            p = self.pick(data)
            if p is None:
                return
            shape, nd_ = p.r.shape, len(p.r.shape)
            kind = data.draw(st.sampled_from(["index", "permute", "flip", "reshape", "expand", "squeeze",
                                              "broadcast", "mT"]), label="view")  # fmt: skip
            fn: Callable[[nd.Array], nd.Array]
            if kind == "index":
                key = _basic_key(data.draw, shape)
                fn, what = (lambda a: a[key]), f"x[{key}]"
            elif kind == "permute" and nd_:
                perm = tuple(data.draw(st.permutations(range(nd_))))
                fn, what = (lambda a: nd.permute_dims(a, perm)), f"permute_dims(x, {perm})"
            elif kind == "flip":
                axis = data.draw(st.none() | st.integers(-nd_, nd_ - 1)) if nd_ else None
                fn, what = (lambda a: nd.flip(a, axis=axis)), f"flip(x, axis={axis})"
            elif kind == "reshape":
                target = data.draw(st.sampled_from([(-1,), (1, -1), (-1, 1)] + ([(shape[0], -1)] if nd_ > 1 else [])))
                fn, what = (lambda a: nd.reshape(a, target)), f"reshape(x, {target})"
            elif kind == "expand":
                axis = data.draw(st.integers(-nd_ - 1, nd_))
                fn, what = (lambda a: nd.expand_dims(a, axis=axis)), f"expand_dims(x, axis={axis})"
            elif kind == "squeeze":
                ones = tuple(i for i, n in enumerate(shape) if n == 1)
                fn, what = (lambda a: nd.squeeze(a, axis=ones)), f"squeeze(x, axis={ones})"
            elif kind == "broadcast":
                to = tuple(data.draw(st.sampled_from([n, 2]) if n == 1 else st.just(n)) for n in shape)
                to = (2, *to) if data.draw(st.booleans()) else to
                fn, what = (lambda a: nd.broadcast_to(a, to)), f"broadcast_to(x, {to})"
            elif kind == "mT" and nd_ >= 2:
                fn, what = (lambda a: a.mT), "x.mT"
            else:
                return
            r = self.both(what, fn, p)
            if r is not None:
                q = self.add(*r, exact=True)  # type: ignore[misc]  # see both()
                self.shared(q)

        @rule(data=st.data())
        def inplace(self, data: st.DataObject) -> None:
            t = self.pick(data, lambda p: p.writable)
            if t is None:
                return
            sym = data.draw(st.sampled_from(sorted(_INPLACE)), label="operator")
            op, fn = _INPLACE[sym]
            other = self.pick(data, lambda p: _broadcasts_to(p.r.shape, t.r.shape)) if data.draw(
                st.booleans(), label="array operand") else None  # fmt: skip
            b: Any = _scalar(data, t.r.dtype) if other is None else other
            bdt = t.r.dtype if other is None else other.r.dtype
            if not _defined(op, t, b):
                return
            exact = _exact(op, t.r.dtype, bdt)
            r = self.both(f"x {sym} {b!r}", lambda a, c: fn(a, c), t, b)
            if r is None and self.refused:
                # NOTE: the reference ran the in-place op that the device refused (it lacks the
                # dtype the op computes in): from here on the two sides differ, so every pair
                # over t's storage leaves the pool.
                self.pool = [q for q in self.pool if q.r._storage is not t.r._storage]
                return
            if r is not None:
                for q in self.shared(t) or [t]:
                    self.compare(q, exact)

        @rule(data=st.data())
        def setitem(self, data: st.DataObject) -> None:
            t = self.pick(data, lambda p: p.writable and p.r.ndim > 0)
            if t is None:
                return
            shape = t.r.shape
            how = data.draw(st.sampled_from(["basic", "mask", "integers"]), label="key kind")
            if how == "basic":
                key: Any = _basic_key(data.draw, shape)
                kshape = np.empty(shape, np.int8)[key].shape
                kdesc = repr(key)
            elif how == "mask":
                m = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).random(shape) < 0.5
                key, kshape, kdesc = m, (int(m.sum()),), f"mask{m.tolist()}"
            else:
                if shape[0] == 0:
                    return
                idx = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).permutation(shape[0])
                idx = idx[: data.draw(st.integers(1, shape[0]))]  # unique: the write order is undefined
                key, kshape, kdesc = idx, (len(idx), *shape[1:]), f"{idx.tolist()}"
            src = self.pick(data, lambda p: p.r.dtype is t.r.dtype and _broadcasts_to(p.r.shape, kshape))
            value: Any = _scalar(data, t.r.dtype) if src is None else src

            def write(a: nd.Array, v: Any, on: nd.Device) -> nd.Array:
                k = (nd.asarray(key, device=on) if key.dtype == bool else _index(key, on)) if isinstance(
                    key, np.ndarray) else key  # fmt: skip
                a[k] = v
                return a

            r = self.both(f"x[{kdesc}] = {value!r}", lambda a, v, d: write(a, v, d),
                          t, value, _Side(device, ref))  # fmt: skip
            if r is not None:
                for q in self.shared(t):
                    self.compare(q, True)

        @rule(data=st.data())
        def binary(self, data: st.DataObject) -> None:
            a = self.pick(data)
            if a is None:
                return
            op = data.draw(st.sampled_from(_BINARY), label="op")
            other = self.pick(data, lambda p: _broadcast_ok(p.r.shape, a.r.shape))
            if other is None or data.draw(st.booleans(), label="scalar operand"):
                b: Any = _scalar(data, a.r.dtype)
            else:
                b = other
            bdt = b.r.dtype if isinstance(b, Pair) else a.r.dtype
            if not _defined(op, a, b, inplace=False):
                return
            reflected = data.draw(st.booleans(), label="reflected")
            fn = getattr(nd, op)
            r = self.both(f"{op}({'b, x' if reflected else 'x, b'}) with b = {b!r}",
                          (lambda x, y: fn(y, x)) if reflected else fn, a, b)  # fmt: skip
            if r is not None:
                self.add(*r, exact=_exact(op, a.r.dtype, bdt))  # type: ignore[misc]  # see both()

        @rule(data=st.data())
        def unary(self, data: st.DataObject) -> None:
            a = self.pick(data)
            if a is None:
                return
            op = data.draw(st.sampled_from(_UNARY), label="op")
            if op in ("negative", "abs", "square") and not _defined(op, a, None, inplace=False):
                return
            r = self.both(f"{op}(x)", getattr(nd, op), a)
            if r is not None:
                self.add(*r, exact=_exact(op, a.r.dtype))  # type: ignore[misc]  # see both()

        @rule(data=st.data())
        def reduce(self, data: st.DataObject) -> None:
            a = self.pick(data)
            if a is None:
                return
            op = data.draw(st.sampled_from(_REDUCE), label="op")
            nd_ = a.r.ndim
            if op == "cumulative_sum":
                axis: Any = data.draw(st.integers(-nd_, nd_ - 1)) if nd_ else None
                kw: dict[str, Any] = {"axis": axis} if nd_ > 1 else {}
            elif op in ("argmax", "argmin"):
                kw = {"axis": data.draw(st.none() | st.integers(-nd_, nd_ - 1)) if nd_ else None,
                      "keepdims": data.draw(st.booleans())}  # fmt: skip
                if a.r.dtype.kind in ("float", "complex") and np.isnan(a.r.to_numpy()).any():
                    return  # NOTE: which index a NaN gives is not specified
            else:
                axes = data.draw(st.none() | st.sets(st.integers(0, max(nd_ - 1, 0)), max_size=nd_).map(tuple))
                kw = {"axis": axes, "keepdims": data.draw(st.booleans())}
            if op in ("sum", "prod", "cumulative_sum") and a.r.dtype.kind in ("int", "uint", "bool"):
                exact = _reduce_exact(op, a.r.to_numpy(), kw)
                try:
                    kinds = [getattr(nd, op)(x, **kw).dtype for x in (a.r, a.x)]
                except (TypeError, ValueError):
                    kinds = []  # both sides must raise
                if exact is not None and not all(_fits(exact, k) for k in kinds):
                    return
            fn = getattr(nd, op)
            r = self.both(f"{op}(x, {kw})", lambda x: fn(x, **kw), a)
            if r is not None:
                self.add(*r, exact=_exact(op, a.r.dtype))  # type: ignore[misc]  # see both()

        @rule(data=st.data())
        def astype(self, data: st.DataObject) -> None:
            a = self.pick(data)
            if a is None:
                return
            to = data.draw(st.sampled_from(dtypes), label="to")
            v = a.r.to_numpy()
            if to.kind in ("int", "uint") and a.r.dtype.kind != "bool":
                if a.r.dtype.kind in ("float", "complex"):
                    v = np.real(v)
                    if not np.isfinite(v).all():
                        return
                    v = np.trunc(v)
                info = np.iinfo(h.np_dtype(to))
                if v.size and (float(v.min()) < info.min or float(v.max()) > info.max):
                    return  # NOTE: a value the target cannot hold: undefined
            copy = data.draw(st.booleans(), label="copy")
            r = self.both(f"astype(x, {to.name}, copy={copy})", lambda x: nd.astype(x, to, copy=copy), a)
            if r is not None:
                q = self.add(*r, exact=True)  # type: ignore[misc]  # see both()
                self.shared(q)

        @rule(data=st.data())
        def gather(self, data: st.DataObject) -> None:
            a = self.pick(data, lambda p: p.r.ndim > 0)
            if a is None:
                return
            how = data.draw(st.sampled_from(["take", "getitem ints", "getitem mask", "where"]), label="how")
            shape = a.r.shape
            rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
            if how in ("take", "getitem ints"):
                axis = data.draw(st.integers(0, len(shape) - 1)) if how == "take" else 0
                n = shape[axis]
                if not n:
                    return
                idx = rng.integers(-n if how == "getitem ints" else 0, n, size=rng.integers(0, 6))
                fn = ((lambda x, i: nd.take(x, i, axis=axis)) if how == "take"
                      else (lambda x, i: x[i]))  # fmt: skip
                r = self.both(f"{how}(x, {idx.tolist()}, axis={axis})",
                              lambda x, d: fn(x, _index(idx, d)), a, _Side(device, ref))  # fmt: skip
            elif how == "getitem mask":
                m = rng.random(shape) < 0.5
                r = self.both(f"x[mask {m.tolist()}]", lambda x, d: x[nd.asarray(m, device=d)],
                              a, _Side(device, ref))  # fmt: skip
            else:
                m = rng.random(shape) < 0.5
                other = self.pick(data, lambda p: _broadcast_ok(p.r.shape, shape))
                b: Any = _scalar(data, a.r.dtype) if other is None else other
                r = self.both(f"where(mask, x, {b!r})",
                              lambda x, y, d: nd.where(nd.asarray(m, device=d), x, y), a, b, _Side(device, ref))  # fmt: skip
            if r is not None:
                self.add(*r, exact=True)  # type: ignore[misc]  # see both()

        @rule(data=st.data())
        def composite(self, data: st.DataObject) -> None:
            # The roads that fused ops and decompositions take (var/std and norms by sums of
            # squares, clip in one pass, sort, softmax and its kin, ...), on any layout the pool
            # holds: a backend's fused kernel must agree with the reference's composite.
            a = self.pick(data)
            if a is None:
                return
            name = data.draw(st.sampled_from(sorted(_COMPOSITE)), label="composite")
            kinds, draw_kw = _COMPOSITE[name]
            if a.r.dtype.kind not in kinds:
                return
            kw = draw_kw(data, a.r)
            if kw is None:
                return
            fn, exact = _composite_fn(name, kw)
            r = self.both(f"{name}(x, {kw})", fn, a)
            if r is not None:
                self.add(*r, exact=exact)  # type: ignore[misc]  # see both()

        @rule(data=st.data())
        def matmul(self, data: st.DataObject) -> None:
            a = self.pick(data, lambda p: p.r.ndim >= 1 and p.r.dtype.kind in ("float", "complex"))
            if a is None:
                return
            b = self.pick(data, lambda p: p.r.dtype is a.r.dtype and p.r.ndim >= 1 and p.r.shape[0 if p.r.ndim == 1 else -2] == a.r.shape[-1])
            right: Any = Pair(a.x.mT, a.r.mT) if b is None and a.r.ndim >= 2 else b
            if right is None:
                return
            r = self.both(f"x @ {right!r}", operator.matmul, a, right)
            if r is not None:
                self.add(*r, exact=False)  # type: ignore[misc]  # see both()

        @rule(data=st.data())
        def move(self, data: st.DataObject) -> None:
            a = self.pick(data)
            if a is None:
                return
            how = data.draw(st.sampled_from(["round trip", "asarray copy", "from numpy"]), label="how")
            if how == "round trip":  # through the other side's device and back
                fn: Callable[..., nd.Array] = lambda x, d: x.to_device(d).to_device(x.device)  # noqa: E731
            elif how == "asarray copy":
                fn = lambda x, d: nd.asarray(x, copy=True)  # noqa: E731
            else:
                fn = lambda x, d: nd.asarray(x.to_numpy(), device=x.device)  # noqa: E731
            r = self.both(how, fn, a, _Side(ref, device))
            if r is not None:
                q = self.add(*r, exact=True)  # type: ignore[misc]  # see both()
                assert q.x._storage is not a.x._storage, f"{how}: the result shares the source's storage"

        @invariant()
        def pool_is_bounded(self) -> None:
            assert len(self.pool) <= POOL

    return Program


class _Side:
    """An operand that is the device on the device side and the reference on the other."""

    __slots__ = ("x", "r")

    def __init__(self, x: nd.Device, r: nd.Device) -> None:
        self.x, self.r = x, r

    def __repr__(self) -> str:
        return "device"


def _axis(data: st.DataObject, x: nd.Array) -> int | None:
    return data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis") if x.ndim else None


def _axes(data: st.DataObject, x: nd.Array) -> tuple[int, ...] | None:
    return data.draw(st.none() | st.sets(st.integers(0, max(x.ndim - 1, 0)), max_size=x.ndim).map(tuple), label="axes")


def _kw_moments(data: st.DataObject, x: nd.Array) -> dict[str, Any] | None:
    return {"axis": _axes(data, x), "correction": data.draw(st.sampled_from([0, 1]), label="correction"),
            "keepdims": data.draw(st.booleans(), label="keepdims")}  # fmt: skip


def _kw_norm(data: st.DataObject, x: nd.Array) -> dict[str, Any] | None:
    return {"axis": _axes(data, x), "ord": data.draw(st.sampled_from([2, 1, 3, 0, float("inf"), -float("inf")])),
            "keepdims": data.draw(st.booleans(), label="keepdims")}  # fmt: skip


def _kw_clip(data: st.DataObject, x: nd.Array) -> dict[str, Any] | None:
    lo: float | None = data.draw(st.none() | st.integers(-8, 8), label="min")
    hi: float | None = data.draw(st.none() | st.integers(-8, 8), label="max")
    if x.dtype.kind == "uint":
        lo, hi = (None if v is None else abs(v) for v in (lo, hi))
    if x.dtype.kind == "float" and data.draw(st.booleans(), label="float bounds"):
        lo, hi = (None if v is None else v + 0.5 for v in (lo, hi))
    return {"min": lo, "max": hi}


def _kw_sort(data: st.DataObject, x: nd.Array) -> dict[str, Any] | None:
    if not x.ndim:
        return None
    return {"axis": _axis(data, x), "descending": data.draw(st.booleans(), label="descending")}


def _kw_softmax(data: st.DataObject, x: nd.Array) -> dict[str, Any] | None:
    return {"axis": _axis(data, x)} if x.ndim else None


def _kw_cumulative(data: st.DataObject, x: nd.Array) -> dict[str, Any] | None:
    return {"axis": _axis(data, x) if x.ndim > 1 else None,
            "include_initial": data.draw(st.booleans(), label="include_initial")}  # fmt: skip


def _kw_tri(data: st.DataObject, x: nd.Array) -> dict[str, Any] | None:
    return {"k": data.draw(st.integers(-2, 2), label="k")} if x.ndim >= 2 else None


def _kw_roll(data: st.DataObject, x: nd.Array) -> dict[str, Any] | None:
    return {"shift": data.draw(st.integers(-5, 5), label="shift"), "axis": _axis(data, x) if x.ndim else None}


def _kw_repeat(data: st.DataObject, x: nd.Array) -> dict[str, Any] | None:
    return {"repeats": data.draw(st.integers(0, 3), label="repeats"),
            "axis": data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1), label="axis") if x.ndim else None}  # fmt: skip


def _kw_tile(data: st.DataObject, x: nd.Array) -> dict[str, Any] | None:
    return {"repetitions": tuple(data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=3), label="reps"))}


def _kw_count(data: st.DataObject, x: nd.Array) -> dict[str, Any] | None:
    return {"axis": _axes(data, x), "keepdims": data.draw(st.booleans(), label="keepdims")}


def _kw_none(data: st.DataObject, x: nd.Array) -> dict[str, Any] | None:
    return {}


def _kw_diff(data: st.DataObject, x: nd.Array) -> dict[str, Any] | None:
    return {"axis": _axis(data, x), "n": data.draw(st.integers(1, 2), label="n")} if x.ndim else None


def _kw_join(data: st.DataObject, x: nd.Array) -> dict[str, Any] | None:
    return {"axis": data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")} if x.ndim else None


def _kw_search(data: st.DataObject, x: nd.Array) -> dict[str, Any] | None:
    return {"side": data.draw(st.sampled_from(["left", "right"]), label="side")}


#: The composite rule's functions: name -> (the dtype kinds it takes, a drawer of its keywords).
_ALL_KINDS = ("bool", "int", "uint", "float", "complex")
_COMPOSITE: dict[str, tuple[tuple[str, ...], Callable[[st.DataObject, nd.Array], dict[str, Any] | None]]] = {
    "var": (("float",), _kw_moments),
    "std": (("float",), _kw_moments),
    "vector_norm": (("float", "complex"), _kw_norm),
    "clip": (("int", "uint", "float"), _kw_clip),
    "sort": (("int", "uint", "float", "bool"), _kw_sort),
    "argsort": (("int", "uint", "float", "bool"), _kw_sort),
    "softmax": (("float",), _kw_softmax),
    "log_softmax": (("float",), _kw_softmax),
    "logsumexp": (("float",), _kw_softmax),
    "cumulative_prod": (("float",), _kw_cumulative),
    "tril": (_ALL_KINDS, _kw_tri),
    "triu": (_ALL_KINDS, _kw_tri),
    "roll": (_ALL_KINDS, _kw_roll),
    "repeat": (_ALL_KINDS, _kw_repeat),
    "tile": (_ALL_KINDS, _kw_tile),
    "count_nonzero": (_ALL_KINDS, _kw_count),
    "unique_values": (("bool", "int", "uint", "float"), _kw_none),
    "diff": (("int", "float", "complex"), _kw_diff),
    "concat": (_ALL_KINDS, _kw_join),
    "stack": (_ALL_KINDS, _kw_join),
    "searchsorted": (("int", "uint", "float"), _kw_search),
}


def _composite_fn(name: str, kw: dict[str, Any]) -> tuple[Callable[[nd.Array], nd.Array], bool]:
    """The function the composite rule applies, and whether its results compare exactly."""
    if name == "vector_norm":
        return (lambda x: nd.linalg.vector_norm(x, **kw)), False
    if name in ("softmax", "log_softmax", "logsumexp"):
        f = getattr(nd.nn.functional, name)
        return (lambda x: f(x, axis=kw["axis"])), False
    if name in ("sort", "argsort"):  # stable: ties keep their order, NaN last, as NumPy's
        f = getattr(nd, name)
        return (lambda x: f(x, **kw, stable=True)), True
    if name in ("concat", "stack"):  # x with itself, then a reversed copy of it
        f = getattr(nd, name)
        return (lambda x: f([x, x, nd.flip(x)], **kw)), True
    if name == "searchsorted":  # x's values (flattened) in x's values sorted
        return (lambda x: nd.searchsorted(nd.sort(nd.reshape(x, (-1,))), x, **kw)), True
    f = getattr(nd, name)
    return (lambda x: f(x, **kw)), name not in ("var", "std", "cumulative_prod")


def _index(idx: np.ndarray, device: nd.Device) -> nd.Array:
    return nd.asarray(idx, dtype=device.backend.default_dtypes["indexing"], device=device)


def _broadcasts_to(small: tuple[int, ...], shape: tuple[int, ...]) -> bool:
    try:
        return np.broadcast_shapes(small, shape) == shape
    except ValueError:
        return False


def _broadcast_ok(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


def _scalar(data: st.DataObject, dtype: nd.DType) -> Any:
    kind = dtype.kind
    if kind == "bool":
        return data.draw(st.booleans(), label="scalar")
    if kind in ("int", "uint"):
        return data.draw(st.integers(0 if kind == "uint" else -8, 8), label="scalar")
    if kind == "complex":
        return complex(data.draw(st.integers(-4, 4)), data.draw(st.integers(-4, 4)))
    return data.draw(st.sampled_from([0.0, -0.0, 0.5, 1.0, -2.0, 3.25, float("nan"), float("inf")]), label="scalar")


def _defined(op: str, a: Pair, b: Any, inplace: bool = True) -> bool:
    """Whether ``op(a, b)`` (stored into ``a`` when ``inplace``) is defined by the standard, in
    the dtypes of either side (``b`` a Pair or a Python scalar of ``a``'s kind; None: unary)."""
    av = a.r.to_numpy()
    bv = np.zeros_like(av) if b is None else b.r.to_numpy() if isinstance(b, Pair) else np.asarray(b)
    try:
        bv = np.broadcast_to(bv, np.broadcast_shapes(av.shape, bv.shape))
    except ValueError:
        return True  # both sides must raise
    for side in ("r", "x"):
        x = getattr(a, side)
        try:
            result = nd.result_type(x.dtype, getattr(b, side).dtype) if isinstance(b, Pair) else x.dtype
        except TypeError:
            return True  # both sides must raise
        if not _int_result_defined(op, av, bv, result):
            return False
        if inplace and result is not x.dtype and x.dtype.kind in ("int", "uint"):
            if h.KIND_RANK[result.kind] <= h.KIND_RANK[x.dtype.kind] and not _int_result_defined(op, av, bv, x.dtype):
                return False
    return True


def _reduce_exact(op: str, v: np.ndarray, kw: dict[str, Any]) -> np.ndarray | None:
    """Exact integer sums/products/prefix sums (Python ints), for the range check."""
    o = _as_int_objects(v)
    axis = kw.get("axis")
    try:
        if op == "cumulative_sum":
            return np.cumsum(o.reshape(-1) if axis is None else o, axis=0 if axis is None else axis)
        fn = np.sum if op == "sum" else np.prod
        return np.asarray(fn(o, axis=axis), dtype=object)
    except (ValueError, TypeError):
        return None


def test_differential_fuzz(device: nd.Device) -> None:
    """Random programs on ``device`` and on the reference device agree at every step."""
    try:
        ref = nd.Device(REFERENCE)
        ref.backend  # noqa: B018 - start it
    except Exception as e:  # noqa: BLE001 - the reference plugin is not installed or broken
        pytest.skip(f"the reference device '{REFERENCE}' is not available: {e}")
    if device == ref:
        pytest.skip("the reference device is the device under test")
    machine = make_machine(device, ref)
    run_state_machine_as_test(machine, settings=settings(h.hyp(scale=4), stateful_step_count=STEPS_PER_PROGRAM))
