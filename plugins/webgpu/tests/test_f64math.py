"""Accuracy of ``kernels/f64math.wgsl`` (the float64 transcendentals) against NumPy.

Each function runs in a small compute shader on random float64 inputs spread
log-uniformly over its domain (both signs) plus NumPy's special values, and the result
is compared with NumPy's float64 in ulp of NumPy's result. Special values (NaN, inf,
signed zero) must match exactly. Needs an adapter with ``shader-f64`` and
``shader-int64``. ``NDPLANE_HYPOTHESIS_PROFILE=deep`` samples 16x more points.

Run as a script (``python test_f64math.py [op ...]``) to print the max ulp per function.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

LIB = Path(__file__).parents[1] / "ndplane_webgpu" / "kernels" / "f64math.wgsl"
N = 1 << 16 if os.environ.get("NDPLANE_HYPOTHESIS_PROFILE") != "deep" else 1 << 20

# op: (numpy function, arity, max ulp asserted, domains as (lo, hi) magnitude ranges)
BIG = (1e-300, 1e300)
OPS = {
    "exp": (np.exp, 1, 1.5, [(1e-20, 746.0)]),
    "exp2": (np.exp2, 1, 1.5, [(1e-20, 1076.0)]),
    "expm1": (np.expm1, 1, 2.5, [(1e-20, 710.0)]),
    "log": (np.log, 1, 1.5, [(5e-324, 1.79e308), (0.5, 2.0)]),
    "log2": (np.log2, 1, 1.5, [(5e-324, 1.79e308), (0.5, 2.0)]),
    "log10": (np.log10, 1, 1.5, [(5e-324, 1.79e308), (0.5, 2.0)]),
    "log1p": (np.log1p, 1, 1.5, [(1e-20, 1e300), (1e-20, 1.0)]),
    "sin": (np.sin, 1, 2.5, [(1e-10, 1.6e6), (1e-10, 10.0)]),
    "cos": (np.cos, 1, 2.5, [(1e-10, 1.6e6), (1e-10, 10.0)]),
    "tan": (np.tan, 1, 3.5, [(1e-10, 1.6e6), (1e-10, 10.0)]),
    "asin": (np.arcsin, 1, 1.5, [(1e-20, 1.0), (0.4, 1.0)]),
    "acos": (np.arccos, 1, 1.5, [(1e-20, 1.0), (0.4, 1.0)]),
    "atan": (np.arctan, 1, 1.5, [(1e-20, 1e20)]),
    "sinh": (np.sinh, 1, 2.5, [(1e-20, 711.0)]),
    "cosh": (np.cosh, 1, 1.5, [(1e-20, 711.0)]),
    "tanh": (np.tanh, 1, 3.5, [(1e-20, 30.0)]),
    "asinh": (np.arcsinh, 1, 1.5, [BIG]),
    "acosh": (np.arccosh, 1, 2.5, [(1.0, 1e300), (1.0, 3.0)]),
    "atanh": (np.arctanh, 1, 1.5, [(1e-20, 1.0)]),
    "sqrt": (np.sqrt, 1, 0.5, [(5e-324, 1.79e308)]),
    "atan2": (np.arctan2, 2, 1.5, [BIG]),
    "hypot": (np.hypot, 2, 1.5, [BIG]),
    "pow": (np.power, 2, 1.5, [(1e-3, 1e3)]),
    "logaddexp": (np.logaddexp, 2, 2.5, [(1e-3, 1e3)]),
    "logaddexp2": (np.logaddexp2, 2, 2.5, [(1e-3, 1e3)]),
}
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0,
                    5e-324, -5e-324, 2.2250738585072014e-308, 1e-310, 1.7976931348623157e308,
                    -1.7976931348623157e308, 709.782712893384, -745.1332191019411, -745.14, 710.47,
                    0.1, 1e-17, 1e300, 1024.0, -1074.0, -1075.0, 22.0, 0.9999999999999999, 1.0000000000000002,
                    np.pi / 2, np.pi, 1e6])  # fmt: skip

_DEV = []


def device():
    if not _DEV:
        import wgpu

        ad = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        if ad is None:
            pytest.skip("no WebGPU adapter")
        missing = {"shader-f64", "shader-int64"} - set(ad.features)
        if missing:
            pytest.skip(f"adapter lacks {sorted(missing)}")
        _DEV.append(ad.request_device_sync(required_features=["shader-f64", "shader-int64"]))
    return _DEV[0]


def run_op(op: str, *args: np.ndarray) -> np.ndarray:
    import wgpu

    dev = device()
    n = len(args[0])
    decl = "".join(f"@group(0) @binding({i}) var<storage, read> in{i}: array<f64>;\n" for i in range(len(args)))
    call = f"f64_{op}(" + ", ".join(f"in{i}[i]" for i in range(len(args))) + ")"
    src = (LIB.read_text() + "\n" + decl
           + f"@group(0) @binding({len(args)}) var<storage, read_write> out: array<f64>;\n"
           "@compute @workgroup_size(64)\n"
           "fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {\n"
           "  let i = g.x + g.y * nw.x * 64u;\n"
           f"  if (i < arrayLength(&out)) {{ out[i] = {call}; }}\n}}\n")  # fmt: skip
    pipe = dev.create_compute_pipeline(
        layout="auto", compute={"module": dev.create_shader_module(code=src), "entry_point": "main"}
    )
    bufs = [dev.create_buffer_with_data(data=np.ascontiguousarray(a, np.float64).tobytes(),
                                        usage=wgpu.BufferUsage.STORAGE) for a in args]  # fmt: skip
    ob = dev.create_buffer(size=n * 8, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
    bg = dev.create_bind_group(
        layout=pipe.get_bind_group_layout(0),
        entries=[{"binding": i, "resource": {"buffer": b}} for i, b in enumerate([*bufs, ob])],
    )
    enc = dev.create_command_encoder()
    p = enc.begin_compute_pass()
    p.set_pipeline(pipe)
    p.set_bind_group(0, bg)
    ng = (n + 63) // 64
    gx = min(ng, 65535)
    p.dispatch_workgroups(gx, (ng + gx - 1) // gx, 1)
    p.end()
    dev.queue.submit([enc.finish()])
    return np.frombuffer(dev.queue.read_buffer(ob), np.float64).copy()


def sample(rng: np.random.Generator, domains, n: int) -> np.ndarray:
    parts = []
    for lo, hi in domains:
        m = n // len(domains)
        mag = np.exp(rng.uniform(np.log(lo), np.log(hi), m))
        parts.append(np.where(rng.random(m) < 0.5, -mag, mag))
    return np.concatenate(parts)


def ulp_error(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Error in ulp of ref where ref is finite; inf where the kinds differ."""
    err = np.zeros(ref.shape)
    fin = np.isfinite(ref)
    with np.errstate(all="ignore"):
        sp = np.spacing(np.abs(ref[fin]))
        err[fin] = np.abs(got[fin] - ref[fin]) / np.maximum(sp, 5e-324)
    bad_nan = np.isnan(ref) != np.isnan(got)
    bad_inf = ~fin & ~np.isnan(ref) & (got != ref)
    zero = fin & (ref == 0)
    bad_zero = zero & ((got != 0) | (np.signbit(got) != np.signbit(ref)))
    err[bad_nan | bad_inf | bad_zero] = np.inf
    err[fin & ~np.isfinite(got)] = np.inf
    return err


def measure(op: str, n: int = N, seed: int = 0):
    fn, arity, _, domains = OPS[op]
    rng = np.random.default_rng(seed)
    if arity == 1:
        x = np.concatenate([sample(rng, domains, n), SPECIAL])
        args = (x,)
    else:
        a = np.concatenate([sample(rng, domains, n), np.repeat(SPECIAL, len(SPECIAL))])
        b = np.concatenate([sample(rng, domains, n), np.tile(SPECIAL, len(SPECIAL))])
        if op == "pow":  # integer and half-integer exponents too
            k = rng.random(n) < 0.25
            b[:n][k] = np.round(b[:n][k] * 2) / 2
        args = (a, b)
    with np.errstate(all="ignore"):
        ref = fn(*args)
    got = run_op(op, *args)
    err = ulp_error(got, ref)
    if op in ("logaddexp", "logaddexp2"):  # cancels near 0 (NumPy's too): ulp of the larger input
        big = np.maximum(np.abs(args[0]), np.abs(args[1]))
        fin = np.isfinite(err) & np.isfinite(big) & (big > np.abs(ref))
        with np.errstate(all="ignore"):
            err[fin] = np.abs(got[fin] - ref[fin]) / np.spacing(big[fin])
    if op in ("sin", "cos", "tan"):  # accurate only for |x| < 2^20 pi/2: finite beyond
        far = np.isfinite(args[0]) & (np.abs(args[0]) > 1.6e6)
        err[far] = np.where(np.isfinite(got[far]) & (np.abs(got[far]) <= (1 if op != "tan" else np.inf)), 0, np.inf)
    return err, args, got, ref


@pytest.mark.parametrize("op", sorted(OPS))
def test_f64math_accuracy(op):
    err, args, got, ref = measure(op)
    bound = OPS[op][2]
    i = int(np.argmax(err))
    assert err[i] <= bound, (op, [a[i] for a in args], got[i], ref[i], err[i])


if __name__ == "__main__":
    for op in sys.argv[1:] or sorted(OPS):
        err, args, got, ref = measure(op)
        i = int(np.argmax(err))
        print(f"{op:12s} max {err[i]:.3f} ulp at {[float(a[i]) for a in args]} got {got[i]!r} ref {ref[i]!r}",
              flush=True)
