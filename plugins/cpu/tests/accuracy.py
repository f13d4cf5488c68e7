"""Accuracy of the cpu backend's transcendental functions, in ulp, against a wider reference.

float32 results are compared with NumPy's float64 function of the same input, float64
results with NumPy's long double (x87 80-bit on x86-64) function. The error of one
result is ``|got - ref| / spacing(ref)`` in the result's dtype, where ``spacing`` is the
distance between the two representable numbers around ``ref`` (the subnormal spacing
below the normal range): a correctly rounded result scores at most 0.5. Inputs whose
reference is not finite in the result's dtype must match that reference exactly, NaN
for NaN, as must NumPy's own result on the special values (see ``SPECIAL``).

Run as a script to measure every function on one ISA build (the kernels are picked at
import, so each ISA needs its own process; ``NDPLANE_CPU_ISA`` forces one)::

    NDPLANE_CPU_ISA=v3 python plugins/cpu/tests/accuracy.py [--all] [--json FILE]

``--all`` sweeps every one of the 2^32 float32 bit patterns (tens of minutes per ISA;
the deep test profile does it); without it, a strided sample of about 2^20 patterns.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

from ndplane._elementwise import OPS  # each op's NumPy ufunc (the conformance suite's oracle)

UNARY = ["acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "erf", "exp", "expm1", "gelu",
         "log", "log10", "log1p", "log2", "sigmoid", "silu", "sin", "sinh", "tan", "tanh"]  # fmt: skip
# Functions with no libmvec variant of their own: sigmoid and silu (libmvec's exp), gelu (float32:
# the backend's own erfc; float64: libmvec's erfc).
COMPOSED = {"gelu", "sigmoid", "silu"}
# Rows with no Array API name, by their public function.
# (bce_with_logits by the row itself: its public function reduces by default.)
PUBLIC = {"erf": "special.erf", "gelu": "nn.functional.gelu", "sigmoid": "nn.functional.sigmoid",
          "silu": "nn.functional.silu", "bce_with_logits": "_elementwise.bce_with_logits"}  # fmt: skip
BINARY = ["atan2", "hypot", "pow", "logaddexp", "logaddexp2", "bce_with_logits"]
# Binary functions with no libmvec variant of their own (libmvec's exp and log1p).
COMPOSED_BINARY = {"logaddexp", "logaddexp2", "bce_with_logits"}
# Results that cancel near 0, where the error is relative to the inputs (measure_binary).
CANCELLING = {"logaddexp", "logaddexp2"}

# NumPy's own float32 tolerances (its SIMD loops are tested to them); 4 ulp elsewhere. gelu is
# x / 2 * erfc(z) * (1 - D zl) (ops.h): erfc's error (float32: the backend's own, t S within
# 1.9 ulp) plus four roundings, and results that cross into the subnormals from a subnormal
# erfc in float64 (5 ulp of the subnormal spacing at x = -37.6, where x erfc / 2 rounds twice).
# silu's left tail (x < -30.5 in float32, -43 in float64) is x * exp(x + K) * e^-K, one rounding
# more than x / (1 + exp(-x)) elsewhere (3.9 ulp at most over every float32 input x < 0 on the v4
# build): 4.35 ulp there on v3/v4, 4.55 on the baseline build, 4.21 in float64; PyTorch's formula
# gives -0.0 from x = -88.7 in float32 (ops.h says why).
TOLERANCE_F32 = {"exp": 3.0, "log": 4.0, "sin": 2.0, "cos": 2.0, "tanh": 2.0, "gelu": 6.0, "silu": 5.0}
TOLERANCE_F64 = {"gelu": 6.0, "silu": 5.0}


def tolerance(fn: str, dtype: str) -> float:
    return (TOLERANCE_F32 if dtype == "float32" else TOLERANCE_F64).get(fn, 4.0)


def special(dtype: str) -> np.ndarray:
    """±0, the smallest and largest subnormals and normals, ±inf, NaN, ±1, and the edges
    where exp, expm1, sinh, cosh and pow overflow or underflow."""
    f = np.finfo(dtype)
    edges = [88.72, 88.73, 89.41, 89.42, -87.33, -103.97, -104.0, 709.78, 709.79, 710.47, 710.48, -745.13,
             -745.14, 0.5, 1 - f.eps, 1 + f.eps, np.pi, np.pi / 2, 1e4, 1e8, 1e30]  # fmt: skip
    base = [0.0, f.smallest_subnormal, f.smallest_normal - f.smallest_subnormal, f.smallest_normal, 1.0,
            f.max, np.inf, *edges]  # fmt: skip
    vals = np.array(base, dtype=np.float64)
    return np.concatenate([vals, -vals, [np.nan]]).astype(dtype)


def float32_patterns(step: int) -> Iterator[np.ndarray]:
    """Every ``step``-th float32 bit pattern, in chunks of 2^24 patterns."""
    chunk = 1 << 24
    for start in range(0, 1 << 32, chunk * step):
        bits = np.arange(start, min(start + chunk * step, 1 << 32), step, dtype=np.uint64)
        yield bits.astype(np.uint32).view(np.float32)


def reference(fn: str, *args: np.ndarray) -> np.ndarray:
    """``fn`` in the next wider dtype: float64 for float32, long double for float64."""
    wide = np.float64 if args[0].dtype == np.float32 else np.longdouble
    with np.errstate(all="ignore"):
        return OPS[fn].reference(*(a.astype(wide) for a in args))


def ulp_error(got: np.ndarray, ref: np.ndarray, scale: np.ndarray | None = None) -> tuple[float, int, int]:
    """(max ulp error over finite references, how many results are not the reference
    where it is not finite (NaN matching NaN), the input index of the worst error).

    ``scale``: the magnitude whose spacing is one ulp, where it is not ``ref``'s own.
    """
    dt = got.dtype
    with np.errstate(all="ignore"):
        ref_rounded = ref.astype(dt)
    finite = np.isfinite(ref_rounded)
    mismatch = int(np.count_nonzero(~finite & ~((got == ref_rounded) | (np.isnan(got) & np.isnan(ref_rounded)))))
    if not finite.any():
        return 0.0, mismatch, -1
    r = ref[finite]
    mag = np.abs(r if scale is None else np.maximum(np.abs(r), np.abs(scale[finite])))
    mag = np.maximum(mag.astype(dt), np.finfo(dt).smallest_normal)
    with np.errstate(over="ignore"):  # the spacing above the largest finite number is inf
        spacing = np.spacing(mag).astype(r.dtype)
    err = np.abs(got[finite].astype(r.dtype) - r) / spacing
    err = np.where(np.isnan(err), np.inf, err)  # a NaN where the reference is finite
    worst = int(np.argmax(err))
    return float(err[worst]), mismatch, int(np.flatnonzero(finite)[worst])


def ndplane_fn(fn: str):
    import ndplane as nd

    f: Any = nd
    for name in PUBLIC.get(fn, fn).split("."):
        f = getattr(f, name)

    def run(*args: np.ndarray) -> np.ndarray:
        return np.asarray(f(*(nd.asarray(a, device="cpu") for a in args)).to_device("numpy"))

    return run


def measure_unary(fn: str, dtype: str, *, all_patterns: bool = False, samples: int = 1 << 20,
                  progress: Any = None) -> dict[str, Any]:  # fmt: skip
    """The worst error of ``fn`` on ``dtype``: float32 over bit patterns (all of them, or a
    strided sample), float64 over ``samples`` random bit patterns; special values always."""
    run = ndplane_fn(fn)
    if dtype == "float32":
        step = 1 if all_patterns else (1 << 32) // samples + 1  # odd: the sample hits every exponent
        chunks: Iterator[np.ndarray] = float32_patterns(step)
    else:
        bits = np.random.default_rng(0).integers(0, 1 << 64, samples, dtype=np.uint64, endpoint=False)
        chunks = iter([bits.view(np.float64)])
    worst, mismatches, at = 0.0, 0, 0.0
    for x in (special(dtype), *chunks):
        err, bad, i = ulp_error(run(x), reference(fn, x))
        mismatches += bad
        if err > worst:
            worst, at = err, float(x[i])
        if progress is not None:
            progress.update(1)
    return {"function": fn, "dtype": dtype, "max_ulp": worst, "worst_input": at,
            "special_mismatches": mismatches + special_mismatches(fn, dtype)}  # fmt: skip


def measure_binary(fn: str, dtype: str, samples: int = 1 << 20) -> dict[str, Any]:
    """The worst error of ``fn`` on random pairs (magnitudes over the whole range and
    around 1, where pow and atan2 are hardest) and on every pair of special values."""
    rng = np.random.default_rng(1)
    run = ndplane_fn(fn)
    span = np.float32(88.0) if dtype == "float32" else 700.0
    exps = rng.uniform(-span, span, (2, samples)) / (1 if fn in ("logaddexp", "logaddexp2") else span / 8)
    pairs = np.sign(rng.uniform(-1, 1, (2, samples))) * np.exp2(exps) if fn != "logaddexp" else exps
    if fn == "pow":
        pairs[0] = np.abs(pairs[0])  # a negative base with a non-integer power is NaN
    if fn == "bce_with_logits":
        pairs[1] = rng.uniform(0, 1, samples)  # logits over the whole range, targets in [0, 1]
    a, b = pairs.astype(dtype)
    # NOTE: logaddexp(a, b) = max + log1p(exp(-|a - b|)) cancels where the result is near 0
    # (NumPy's loop too: ~1e2 ulp of the result there); it is conditioned by the inputs,
    # so its ulp is the larger input's.
    scale = np.maximum(np.abs(a), np.abs(b)) if fn in CANCELLING else None
    err, bad, i = ulp_error(run(a, b), reference(fn, a, b), scale)
    return {"function": fn, "dtype": dtype, "max_ulp": err, "worst_input": [float(a[i]), float(b[i])],
            "special_mismatches": bad + special_mismatches(fn, dtype)}  # fmt: skip


def special_mismatches(fn: str, dtype: str, show: bool = False) -> int:
    """How many results on special values are not of NumPy's kind: NaN where NumPy's is
    NaN, the same infinity or signed zero where NumPy's is one, a finite non-zero number
    of the same sign where NumPy's is one (its error is measured in ulp elsewhere)."""
    s = special(dtype)
    args = (s,) if fn in UNARY else tuple(np.meshgrid(s, s))
    args = tuple(np.ascontiguousarray(a).ravel() for a in args)
    with np.errstate(all="ignore"):
        want = OPS[fn].reference(*args)
    got = ndplane_fn(fn)(*args)
    exact = ~np.isfinite(want) | (want == 0)
    same_kind = np.where(exact, got == want, np.isfinite(got) & (got != 0))
    if fn in CANCELLING:  # a finite result near 0 may be either sign or 0 (measured in ulp)
        exact = ~np.isfinite(want)
        same_kind = np.where(exact, got == want, np.isfinite(got))
        want = np.where(exact, want, np.abs(want))
        got = np.where(exact, got, np.abs(got))
    # a NaN's sign bit means nothing; every other result carries NumPy's sign
    same = (np.isnan(got) & np.isnan(want)) | (same_kind & (np.signbit(got) == np.signbit(want)))
    if show:
        for i in np.flatnonzero(~same)[:20]:
            print(f"  {fn}{tuple(float(a[i]) for a in args)}: ndplane {got[i]!r}, numpy {want[i]!r}")
    return int(np.count_nonzero(~same))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--all", action="store_true", help="every float32 bit pattern (slow)")
    parser.add_argument("--json", metavar="FILE", help="write the rows to FILE")
    args = parser.parse_args(argv)
    import ndplane_cpu._native as native

    rows = []
    bar: Any = None
    if args.all:  # tens of minutes: a progress bar (tqdm comes with ndplane[demo], as in the README)
        from tqdm import tqdm

        # per function: float32 = the special values + 256 chunks, float64 = specials + 1 sample
        bar = tqdm(total=len(UNARY) * ((1 + (1 << 32) // (1 << 24)) + 2), unit="chunk",
                   desc=f"accuracy ({native.isa()})", disable=not sys.stderr.isatty())  # fmt: skip
    with bar if bar is not None else contextlib.nullcontext():
        for fn in UNARY:
            for dtype in ("float32", "float64"):
                rows.append(measure_unary(fn, dtype, all_patterns=args.all, progress=bar))
    rows += [measure_binary(fn, dtype) for fn in BINARY for dtype in ("float32", "float64")]
    print(f"isa: {native.isa()}, vector math: {native.vector_math()}")
    for r in rows:
        flag = "" if r["max_ulp"] <= tolerance(r["function"], r["dtype"]) and not r["special_mismatches"] else "  FAIL"
        print(f"{r['function']:>10} {r['dtype']}: max {r['max_ulp']:.2f} ulp at {r['worst_input']}, "
              f"special-value mismatches {r['special_mismatches']}{flag}")  # fmt: skip
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"isa": native.isa(), "vector_math": native.vector_math(), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))
    sys.exit(main())
