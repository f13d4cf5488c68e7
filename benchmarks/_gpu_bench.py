"""The GPU cases of bench_cuda.py and bench_webgpu.py: one table of ndplane calls, the same
calls in PyTorch (CUDA), their timers, and the printed table.

Every case runs on each library's own stream: back-to-back calls between two
synchronisations, timed ``rounds`` times (median reported). PyTorch is timed with CUDA
events on its stream; ndplane exposes no events, so its rounds are wall clock between
``synchronize()`` calls, which adds the launch of the first call and the wait itself: on
webgpu that wait (a submit, a copy and a buffer map) costs hundreds of microseconds, which two
calls a round would count as half a large copy's time. So a round makes at least ``repeat``
calls and doubles them, up to ``MAX_CALLS``, until it lasts ``MIN_ROUND`` seconds; both
libraries then make that many calls a round. The sizes are a
parameter: ``FULL`` are larger than the H100's 50 MB L2 except where the case is about
latency or small data. A case whose dtype the device lacks (float64, float16 on webgpu) is
skipped with a note; one that runs through the host fallback is marked.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from _harness import ratio_result

import ndplane as nd
from ndplane import _dispatch
from ndplane.composite import softmax

MATMUL_DTYPES = ("float16", "float32", "float64")


@dataclass(frozen=True)
class Sizes:
    n: int  # elements of the bandwidth cases
    s: int  # side of the 2-D cases
    m: int  # side of the matmul
    chain: int = 100  # dependent 4-element adds of the latency case
    mlp: tuple[int, int, int, int] = (16384, 1024, 2048, 512)  # MLP epoch: samples, features, hidden, batch

    @property
    def take(self) -> int:
        return min(1 << 20, 16 * self.s)

    @property
    def sort(self) -> int:
        return self.n // 4

    @property
    def bins(self) -> int:  # targets of the scatter_add case (its values: ``sort`` of them)
        return self.n // 16


FULL = Sizes(1 << 26, 8192, 4096)  # the sizes (256 MiB of float32 per bandwidth operand)
QUICK = Sizes(1 << 12, 64, 32, mlp=(256, 16, 32, 64))  # tiny: checks the script on any device


@dataclass(frozen=True)
class Spec:
    label: str
    work: float  # bytes moved (GB/s) or flops (TFLOP/s) per call; 0 for the latency case
    unit: str
    dtype: str = "float32"


def _pow2(k: int) -> str:
    return f"2^{k.bit_length() - 1}" if k & (k - 1) == 0 else str(k)


def specs(sz: Sizes) -> dict[str, Spec]:
    """case key (size-free: what goals are keyed by) -> its printed name and work."""
    n, s, m = _pow2(sz.n), sz.s, sz.m
    mn, mf, mh, mb = sz.mlp
    gb = "GB/s"
    return {
        "copy": Spec(f"copy {n} f32", 8.0 * sz.n, gb),
        "add": Spec(f"add {n} f32", 12.0 * sz.n, gb),
        "mul": Spec(f"mul {n} f32", 12.0 * sz.n, gb),
        "add f64": Spec(f"add {_pow2(sz.n // 2)} f64", 12.0 * sz.n, gb, "float64"),
        "relu": Spec(f"relu {n} f32", 8.0 * sz.n, gb),
        "broadcast add": Spec(f"broadcast add {s}^2", 8.0 * s * s, gb),
        "transpose copy": Spec(f"transpose copy {s}^2", 8.0 * s * s, gb),
        "row sum": Spec(f"row sum {s}^2", 4.0 * s * s, gb),
        "column sum": Spec(f"column sum {s}^2", 4.0 * s * s, gb),
        "softmax": Spec(f"softmax rows {s}^2", 8.0 * s * s, gb),
        "cumsum": Spec(f"cumsum rows {s}^2", 8.0 * s * s, gb),
        "argmax": Spec(f"argmax rows {s}^2", 4.0 * s * s, gb),
        **{f"matmul {dt}": Spec(f"matmul {m}^3 {dt}", 2.0 * m**3, "TFLOP/s", dt) for dt in MATMUL_DTYPES},
        "sort": Spec(f"sort {_pow2(sz.sort)} f32", 8.0 * sz.sort, gb),
        "take": Spec(f"take {_pow2(sz.take)} rows of {s}^2", 8.0 * sz.take * s, gb),
        # values and indices read, targets read and written once (the least any method moves)
        "scatter add": Spec(f"scatter_add {_pow2(sz.sort)} into {_pow2(sz.bins)} f32",
                            12.0 * sz.sort + 8.0 * sz.bins, gb),
        "chain": Spec(f"a + b on 4 elements x{sz.chain} (latency)", 0.0, "us/op"),
        "mlp epoch": Spec(f"MLP epoch {mn}: {mf}-{mh}-{mh}-10 b{mb}", _mlp_flops(sz), "TFLOP/s"),
    }


def _mlp_flops(sz: Sizes) -> float:
    """Matmul flops of one MLP epoch: forward, and both gradients of every layer (3x forward)."""
    samples, features, hidden, _ = sz.mlp
    return 3 * 2.0 * samples * (features * hidden + hidden * hidden + hidden * 10)


def _mlp_data(sz: Sizes) -> tuple[np.ndarray, np.ndarray]:
    """The MLP epoch's inputs and integer labels, the same for both libraries."""
    samples, features, _, _ = sz.mlp
    gen = np.random.default_rng(2)
    return gen.standard_normal((samples, features), dtype=np.float32), gen.integers(0, 10, samples)


def nd_cases(dev: nd.Device, sz: Sizes, dtypes: tuple[str, ...]) -> dict[str, Callable[[], Any]]:
    """case key -> the ndplane call, for the matmul dtypes given."""
    rng = nd.random.default_rng(0, device=dev)
    a, b = rng.random((sz.n,), dtype=nd.float32), rng.random((sz.n,), dtype=nd.float32)
    x = rng.random((sz.s, sz.s), dtype=nd.float32)
    row = rng.random((sz.s,), dtype=nd.float32)
    small_a, small_b = nd.ones(4, dtype=nd.float32, device=dev), nd.ones(4, dtype=nd.float32, device=dev)
    index = nd.__array_namespace_info__().default_dtypes(device=dev)["indexing"]
    idx = nd.asarray(np.random.default_rng(1).integers(0, sz.s, sz.take), dtype=index, device=dev)
    mats = {dt: (rng.random((sz.m, sz.m), dtype=nd.float32).astype(getattr(nd, dt)),
                 rng.random((sz.m, sz.m), dtype=nd.float32).astype(getattr(nd, dt)))
            for dt in dtypes}  # fmt: skip
    keys = rng.random((sz.sort,), dtype=nd.float32)
    # scatter_add is reached through gradients (of take, embedding, cross entropy): the primitive
    # is timed through the core's one entry to it, into a (1, bins) target.
    bins = nd.zeros((1, sz.bins), dtype=nd.float32, device=dev)
    to_bin = nd.asarray(np.random.default_rng(4).integers(0, sz.bins, sz.sort), dtype=index, device=dev)
    scattered = nd.reshape(keys, (1, -1))
    # NOTE: the float64 add (the same bytes as the float32 one) only where the device has float64
    wide = {}
    if "float64" in dtypes:
        a64, b64 = a[: sz.n // 2].astype(nd.float64), b[: sz.n // 2].astype(nd.float64)
        wide["add f64"] = lambda: a64 + b64

    def chain() -> Any:
        c = small_a
        for _ in range(sz.chain):
            c = c + small_b
        return c

    return {
        "copy": lambda: nd.astype(a, nd.float32, copy=True),
        "add": lambda: a + b,
        "mul": lambda: a * b,
        **wide,
        "relu": lambda: nd.maximum(a, 0.0),
        "broadcast add": lambda: x + row,
        "transpose copy": lambda: nd.astype(x.T, nd.float32, copy=True),
        "row sum": lambda: nd.sum(x, axis=1),
        "column sum": lambda: nd.sum(x, axis=0),
        "softmax": lambda: softmax(x, axis=1),
        "cumsum": lambda: nd.cumulative_sum(x, axis=1),
        "argmax": lambda: nd.argmax(x, axis=1),
        **{f"matmul {dt}": (lambda p=p: p[0] @ p[1]) for dt, p in mats.items()},
        "sort": lambda: nd.sort(keys),
        "take": lambda: nd.take(x, idx, axis=0),
        "scatter add": lambda: _dispatch.scatter_add_last(bins, to_bin, scattered),
        "chain": chain,
        "mlp epoch": _nd_mlp_epoch(dev, sz),
    }


def _nd_mlp_epoch(dev: nd.Device, sz: Sizes) -> Callable[[], Any]:
    """One epoch of minibatch Adam on a ReLU MLP, on ``dev``."""
    from ndplane import nn
    from ndplane.nn import functional as F

    _, features, hidden, batch = sz.mlp
    xs, ys = (nd.asarray(v, device=dev) for v in _mlp_data(sz))
    gen = nd.random.default_rng(3, device=dev)
    layers = [nn.Linear(features, hidden, device=dev, dtype=nd.float32, generator=gen), nn.ReLU(),
              nn.Linear(hidden, hidden, device=dev, dtype=nd.float32, generator=gen), nn.ReLU(),
              nn.Linear(hidden, 10, device=dev, dtype=nd.float32, generator=gen)]  # fmt: skip
    model = nn.Sequential(*layers)
    opt = nd.optim.Adam(model.parameters(), lr=1e-4)

    def epoch() -> Any:
        for i in range(0, xs.shape[0], batch):
            loss = F.cross_entropy(model(xs[i : i + batch]), ys[i : i + batch])
            opt.zero_grad()
            loss.backward()
            opt.step()
        return loss

    return epoch


def torch_cases(torch: Any, sz: Sizes, dtypes: tuple[str, ...]) -> dict[str, Callable[[], Any]]:
    """case key -> the same call in PyTorch on its current CUDA device."""
    g = torch.Generator(device="cuda").manual_seed(0)
    a, b = torch.rand(sz.n, device="cuda", generator=g), torch.rand(sz.n, device="cuda", generator=g)
    x, row = torch.rand(sz.s, sz.s, device="cuda", generator=g), torch.rand(sz.s, device="cuda", generator=g)
    small_a, small_b = torch.ones(4, device="cuda"), torch.ones(4, device="cuda")
    idx = torch.randint(0, sz.s, (sz.take,), device="cuda", generator=g)
    mats = {dt: (torch.rand(sz.m, sz.m, device="cuda", generator=g).to(getattr(torch, dt)),
                 torch.rand(sz.m, sz.m, device="cuda", generator=g).to(getattr(torch, dt)))
            for dt in dtypes}  # fmt: skip
    keys = torch.rand(sz.sort, device="cuda", generator=g)
    bins = torch.zeros(1, sz.bins, device="cuda")
    to_bin = torch.randint(0, sz.bins, (sz.sort,), device="cuda", generator=g)
    scattered = keys.reshape(1, -1)
    a64, b64 = a[: sz.n // 2].double(), b[: sz.n // 2].double()

    def chain() -> Any:
        c = small_a
        for _ in range(sz.chain):
            c = c + small_b
        return c

    return {
        "copy": lambda: a.clone(),
        "add": lambda: a + b,
        "mul": lambda: a * b,
        "add f64": lambda: a64 + b64,
        "relu": lambda: torch.relu(a),
        "broadcast add": lambda: x + row,
        "transpose copy": lambda: x.t().contiguous(),
        "row sum": lambda: x.sum(dim=1),
        "column sum": lambda: x.sum(dim=0),
        "softmax": lambda: torch.softmax(x, dim=1),
        "cumsum": lambda: torch.cumsum(x, dim=1),
        "argmax": lambda: torch.argmax(x, dim=1),
        **{f"matmul {dt}": (lambda p=p: p[0] @ p[1]) for dt, p in mats.items()},
        "sort": lambda: torch.sort(keys, stable=True),
        "take": lambda: x.index_select(0, idx),
        # NOTE: atomics on the GPU (its order, and so a float sum's bits, vary run to run);
        # ndplane's is deterministic (the indices stably sorted, then each target in order)
        "scatter add": lambda: bins.index_add_(1, to_bin, scattered),
        "chain": chain,
        "mlp epoch": _torch_mlp_epoch(torch, sz),
    }


def _torch_mlp_epoch(torch: Any, sz: Sizes) -> Callable[[], Any]:
    """The same epoch in PyTorch (TF32 off, as ndplane's cuBLAS calls)."""
    _, features, hidden, batch = sz.mlp
    torch.backends.cuda.matmul.allow_tf32 = False
    xs, ys = (torch.as_tensor(v, device="cuda") for v in _mlp_data(sz))
    torch.manual_seed(3)
    nn = torch.nn
    model = nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                          nn.Linear(hidden, 10)).cuda()  # fmt: skip
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)

    def epoch() -> Any:
        for i in range(0, xs.shape[0], batch):
            loss = nn.functional.cross_entropy(model(xs[i : i + batch]), ys[i : i + batch])
            opt.zero_grad()
            loss.backward()
            opt.step()
        return loss

    return epoch


MIN_ROUND = 0.02  # seconds a round lasts at least (unless MAX_CALLS calls are less)
# NOTE: at most one webgpu batch (64 dispatches by default): a buffer freed inside an open batch is
# reused only after its submit, so more calls a round would hold that many outputs at once.
MAX_CALLS = 64


def calls_per_round(dev: nd.Device, fn: Callable[[], Any], repeat: int) -> int:
    """The calls a round makes: ``repeat``, doubled (up to MAX_CALLS) until a round of them and
    one ``synchronize()`` lasts MIN_ROUND seconds, so that the wait weighs little."""
    fn()
    dev.backend.synchronize()
    n = max(1, repeat)
    while n < MAX_CALLS:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dev.backend.synchronize()
        if time.perf_counter() - t0 >= MIN_ROUND:
            break
        n = min(MAX_CALLS, 2 * n)
    return n


def time_nd(dev: nd.Device, fn: Callable[[], Any], repeat: int, rounds: int) -> float:
    """Median per-call seconds: ``repeat`` calls between two ``synchronize()``, ``rounds`` times."""
    fn()
    dev.backend.synchronize()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn()
        dev.backend.synchronize()
        times.append((time.perf_counter() - t0) / repeat)
    return statistics.median(times)


def time_events(torch: Any, fn: Callable[[], Any], repeat: int, rounds: int) -> float:
    """Median per-call seconds between two CUDA events on PyTorch's current stream."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(repeat):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3 / repeat)
    return statistics.median(times)


def cuda_torch() -> Any:
    """PyTorch when it sees a CUDA GPU (printing which), else None (printing why)."""
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed: ndplane's times only.")
        return None
    if not torch.cuda.is_available():
        print(f"PyTorch {torch.__version__} sees no CUDA GPU: ndplane's times only.")
        return None
    print(f"PyTorch {torch.__version__} on {torch.cuda.get_device_name()}")
    return torch


def _probe(fn: Callable[[], Any]) -> str:
    """'' when the call runs on the device, else why it is not timed or what it runs through."""
    try:
        with nd.fallback_mode("error"):
            fn()
    except nd.FallbackError:
        return "host fallback"
    except (nd.NdplaneError, NotImplementedError) as exc:
        return f"error: {type(exc).__name__}: {exc}"
    return ""


def measure(dev: nd.Device, sz: Sizes, torch: Any, *, repeat: int, rounds: int) -> list[dict[str, Any]]:
    """One row per case (``torch`` is a CUDA-capable PyTorch or None): times, ratio, rate, note."""
    have = {dt.name for dt in dev.backend.dtypes}
    dtypes = tuple(dt for dt in MATMUL_DTYPES if dt in have)
    ours = nd_cases(dev, sz, dtypes)
    theirs = torch_cases(torch, sz, dtypes) if torch is not None else {}
    rows = []
    for key, spec in specs(sz).items():
        row: dict[str, Any] = {"key": key, "case": spec.label, "ndplane_s": None, "torch_s": None,
                               "ratio_to_torch": None, "rate": None, "unit": spec.unit, "note": ""}  # fmt: skip
        rows.append(row)
        if key not in ours:
            row["note"] = f"skipped: {dev} has no {spec.dtype}"
            continue
        row["note"] = _probe(ours[key])
        if row["note"]:
            # NOTE: an error, or the host fallback: timing NumPy through two copies says nothing
            # about the device (and a 2^24 sort that way takes minutes over all the rounds).
            continue
        calls = row["calls_per_round"] = calls_per_round(dev, ours[key], repeat)
        t = row["ndplane_s"] = time_nd(dev, ours[key], calls, rounds)
        if key in theirs:
            row["torch_s"] = p = time_events(torch, theirs[key], calls, rounds)
            row["ratio_to_torch"] = t / p
        if spec.unit == "us/op":
            row["rate"] = t / sz.chain * 1e6
        else:
            row["rate"] = spec.work / t / (1e12 if spec.unit == "TFLOP/s" else 1e9)
        # One line per case as it finishes: a run cut off by a time limit still says something.
        print(f"  {spec.label}: {_us(t).strip()}" + (f", PyTorch {_us(row['torch_s']).strip()}" if row["torch_s"] else ""),
              flush=True)
    return rows


def _us(t: float | None) -> str:
    return f"{t * 1e6:10.1f}us" if t is not None else f"{'-':>12s}"


def _rate(rate: float | None, unit: str) -> str:
    if rate is None:
        return f"{'-':>8s}"
    return f"{rate:8.{2 if rate >= 0.1 else 4}f} {unit}"  # 4 places: software adapters, --quick


def print_rows(rows: list[dict[str, Any]], goals: bool = False) -> None:
    """The table; bandwidth rows also give their fraction of the measured copy bandwidth, and
    with ``goals`` each row its ``goal`` and whether this run ``met`` it (True/False/None)."""
    copy = next((r for r in rows if r["key"] == "copy" and r["rate"]), None)
    head = f"{'case':40s} {'ndplane':>12s} {'PyTorch':>12s} {'ratio':>7s} {'rate':>14s}"
    print("\n" + (f"{head:102s} {'goal':>30s} {'met':>4s}" if goals else head))
    for r in rows:
        ratio = f"{r['ratio_to_torch']:7.2f}" if r["ratio_to_torch"] else f"{'-':>7s}"
        rate = _rate(r["rate"], r["unit"])
        if copy and r["unit"] == "GB/s" and r["rate"] is not None:
            rate += f" ({r['rate'] / copy['rate']:.0%} copy)"
        line = f"{r['case']:40s} {_us(r['ndplane_s'])} {_us(r['torch_s'])} {ratio} {rate}"
        if goals:
            met = {True: "yes", False: "NO", None: "-"}[r.get("met")]
            line = f"{line:102s} {r.get('goal', ''):>30s} {met:>4s}"
        print(line + (f"  [{r['note'][:120]}]" if r["note"] else ""))


def ratio_results(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The JSON ``results`` of _harness.write_json: ndplane's time over PyTorch's, per case."""
    return [res for r in rows for res in ratio_result(r["case"], "PyTorch", r["ratio_to_torch"])]
