"""Every function of the ndplane namespace, ``linalg``, ``fft`` and ``nn.functional`` on the cpu
device beside NumPy and PyTorch (CPU), all timed in one run (issue 17).

    python benchmarks/bench_api.py [--quick] [--sizes small,medium,large] [--dtypes float32,...]
                                   [--filter SUBSTRING[,...]] [--worst N] [--json PATH]
                                   [--alone] [--recheck EARLIER.json]

The rows come from the tables of ``_api_cases.py``: the elementwise functions from
``ndplane._elementwise.OPS``, reductions over axis None, 0 and -1, manipulation, creation,
searching, set, sorting, indexing, linear algebra, fft, nn.functional and random, at a small
(~10^3 elements), medium (~10^6) and large (~10^7) size (matrices of O(n^3) linear algebra:
32, 128, 512; the fft's square operand: 32/30, 256/250, 1024/1000), in float32 and float64,
and in int32 and int64 where integers matter (sort, unique, cumsum, indexing, searching).
A function ndplane lacks is skipped with a note; a row that ndplane runs through its host
fallback (``ndplane.fallback_mode``) is marked ``host``.

Each row times the three libraries in interleaved rounds (``_harness.side_by_side``) on the
very same input memory (NumPy and PyTorch view ndplane's buffers), PyTorch at the cpu
backend's thread count. It prints ndplane's best time, the ratios ndplane/NumPy and
ndplane/PyTorch (medians of per-round ratios) and the ratio to the faster peer of that row
with a bootstrap 95 % interval; rows at the medium and large sizes above the goal (1.2x the
faster peer; 1.0x for sort, argsort, unique_* and take) are flagged with ``!``. ``-`` is a
peer without that function. A full run took 18-24 minutes on a 2-core machine shared with
other jobs (docs/performance.md); ``--quick`` runs every row at tiny sizes in about 10 s, to
check that the script works.

``--alone`` times each library's calls back to back instead (``_harness.back_to_back``: blocks
of single calls, the libraries in turn and then in reverse), which no other library's spinning
threads disturb; ``--recheck EARLIER.json`` runs only the rows that the earlier run flagged, that
way, and prints each row's earlier ratio beside the new one. A row that stays above its goal
alone is ndplane's own gap; one that falls under it was the interleaved run's order.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings
from typing import Any

import ndplane_cpu._native as native
import numpy as np
from _api_cases import CASES, QUICK_SIZES, SIZES, Case, Dt, Gen, Host, Size, make_inputs
from _harness import (
    add_json_argument,
    back_to_back,
    interval,
    load_average,
    print_table,
    ratio,
    ratio_result,
    side_by_side,
    try_import_torch,
    write_json,
)

import ndplane as nd

DTYPE_ORDER = ("float32", "float64", "int32", "int64", "bool", "complex64", "complex128")
PEERS = {"numpy": "NumPy", "torch": "PyTorch"}


def resolve(path: str) -> Any:
    """The ndplane object at ``path`` below the namespace ("linalg.svd"), or None."""
    obj: Any = nd
    for part in path.split("."):
        obj = getattr(obj, part, None)
    return obj


def convert(host: tuple[Any, ...], lib: str, mods: dict[str, Any], arrays: list[Any]) -> list[Any]:
    """The operands as ``lib`` takes them; ``arrays`` holds ndplane's arrays, which the others view."""
    out = []
    for k, a in enumerate(host):
        if isinstance(a, np.ndarray):
            a = arrays[k] if lib == "ndplane" else np.from_dlpack(arrays[k])
            a = mods["torch"].from_dlpack(a) if lib == "torch" else a
        elif isinstance(a, Dt):
            a = getattr(mods[lib], a.name)
        elif isinstance(a, Gen):
            a = generator(lib, a.seed, mods)
        elif isinstance(a, Host):
            a = a.array
        out.append(a)
    return out


def generator(lib: str, seed: int, mods: dict[str, Any]) -> Any:
    if lib == "ndplane":
        return nd.random.default_rng(seed, device="cpu")
    return np.random.default_rng(seed) if lib == "numpy" else mods["torch"].Generator().manual_seed(seed)


def first_call(lib: str, fn: Any) -> tuple[float, str | None, bool]:
    """Call ``fn`` twice: (seconds of the second call, error, ran through the host fallback).
    ndplane's first call runs under ``fallback_mode("error")``, so a host fallback shows as a
    FallbackError. The first call is not the one timed: it may plan or cache (the cpu backend's
    FFT plans and measures its engines once per layout, PyTorch's MKL makes its descriptors),
    and a row sized by it ran as a slow one, a few cold single calls."""
    host = False
    try:
        if lib == "ndplane" and hasattr(nd, "fallback_mode"):
            try:
                with nd.fallback_mode("error"):
                    fn()
            except nd.FallbackError:
                host = True
                fn()
        else:
            fn()
        start = time.perf_counter()
        fn()
    except Exception as exc:  # noqa: BLE001 - a row that fails is reported, not fatal
        return 0.0, f"{type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}", host
    return time.perf_counter() - start, None, host


def shape_of(host: tuple[Any, ...]) -> tuple[int, ...]:
    """What the size column shows: the first array's shape, else the shape or count operand."""
    for a in host:
        if isinstance(a, np.ndarray | Host):
            return tuple(a.array.shape if isinstance(a, Host) else a.shape)
    return next((a if isinstance(a, tuple) else (a,) for a in host if isinstance(a, tuple | int)), ())


def calls(case: Case, host: tuple[Any, ...], mods: dict[str, Any], row: dict[str, Any]) -> tuple[dict, float]:
    """Each library's call of the case, tried (first_call): ({lib: call}, the slowest second call's seconds).
    A failing call is left out and noted in ``row`` (ndplane's: no calls at all)."""
    arrays = [nd.asarray(a, device="cpu") if isinstance(a, np.ndarray) else None for a in host]
    fns, slowest = {}, 0.0
    for lib, mod in mods.items():
        call = case.call(lib)
        if mod is None or call is None:
            continue
        ops = convert(host, lib, mods, arrays)
        fn = lambda call=call, mod=mod, ops=ops: call(mod, *ops)  # noqa: E731
        seconds, error, on_host = first_call(lib, fn)
        if error and lib == "ndplane":
            row["error"] = error
            return {}, 0.0
        if error:
            row["notes"].append(f"{PEERS[lib]}: {error}")
            continue
        row["host"] |= on_host
        fns[lib], slowest = fn, max(slowest, seconds)
    return fns, slowest


def measure(case: Case, size: Size, dtype: str, host: tuple[Any, ...], mods: dict[str, Any],
            timing: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """One row: the case at this size and dtype, timed in all three libraries."""
    row: dict[str, Any] = {"case": case.name, "group": case.group, "size": size.label, "shape": list(shape_of(host)),
                           "dtype": dtype, "goal": case.goal if size.label != "small" else None, "host": False,
                           "notes": []}  # fmt: skip
    if resolve(case.path()) is None:
        row["error"] = f"not in ndplane: {case.path()}"
        return row
    fns, slowest = calls(case, host, mods, row)
    if not fns:
        return row
    if timing.get("alone"):
        t = back_to_back(fns)
    elif slowest < timing["slow"] / 10:
        t = side_by_side(fns, min_time=timing["min_time"], repeat=timing["repeat"], pause=0.0,
                         warmup=timing["warmup"], autorange=False)  # fmt: skip
    else:  # rounds of one call each: three, after one untimed call, or two of calls over 5 x slow
        warmup = 0.0 if slowest < timing["slow"] else None
        t = side_by_side(fns, min_time=0.0, repeat=3 if slowest < 5 * timing["slow"] else 2, pause=0.0,
                         warmup=warmup, autorange=False)  # fmt: skip
    row["seconds"] = {lib: t.best(lib) for lib in t.rounds}
    for lib in PEERS:
        row[f"ratio_{lib}"] = t.ratio("ndplane", lib)
    if peers := [lib for lib in PEERS if lib in t]:
        faster = min(peers, key=t.best)
        row.update(faster=faster, ratio=t.ratio("ndplane", faster), interval=t.interval("ndplane", faster))
    row["flag"] = bool(row["goal"] and row.get("ratio") and row["ratio"] > row["goal"])
    return row


def selected(filters: list[str]) -> list[Case]:
    return [c for c in CASES if not filters or any(f in f"{c.group} {c.name} {c.path()}" for f in filters)]


def run(cases: list[Case], sizes: dict[str, Size], dtypes: list[str], mods: dict[str, Any],
        timing: dict[str, Any], only: set[tuple[str, str, str]] | None = None) -> list[dict]:  # fmt: skip
    """Every row, size by size and dtype by dtype (so that one set of host operands is alive at
    once); with ``only``, the rows whose (case, size, dtype) it holds."""
    jobs = [(s, dt, c) for s in sizes.values() for dt in DTYPE_ORDER if dt in dtypes for c in cases if dt in c.dtypes
            and (only is None or (c.name, s.label, dt) in only)]  # fmt: skip
    rows, start, rng = [], time.perf_counter(), np.random.default_rng(0)
    cache: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for k, (size, dtype, case) in enumerate(jobs):
        if cache and next(iter(cache))[:2] != (size.label, dtype):
            cache.clear()
        key = (size.label, dtype, case.inputs, case.domain)
        if key not in cache:
            cache[key] = make_inputs(case, size, dtype, rng)
        rows.append(measure(case, size, dtype, cache[key], mods, timing))
        if (k + 1) % 50 == 0 or k + 1 == len(jobs):
            print(f"  {k + 1}/{len(jobs)} rows, {time.perf_counter() - start:.0f} s, load average {load_average()}",
                  file=sys.stderr, flush=True)  # fmt: skip
    order = {c.name: i for i, c in enumerate(cases)}
    labels = list(sizes)
    return sorted(rows, key=lambda r: (order[r["case"]], labels.index(r["size"]), DTYPE_ORDER.index(r["dtype"])))


def seconds(t: float) -> str:
    return f"{t * 1e6:.1f} us" if t < 1e-3 else f"{t * 1e3:.2f} ms" if t < 1 else f"{t:.2f} s"


def table_row(r: dict[str, Any]) -> list[str]:
    size = f"{r['size']} {'x'.join(map(str, r['shape']))}"
    if "error" in r:
        return [r["case"], size, r["dtype"], r["error"], "", "", "", "", ""]
    best = f"{ratio(r.get('ratio'))} [{interval(r.get('interval'))}] {PEERS.get(r.get('faster', ''), '')}"
    return [r["case"] + (" (host)" if r["host"] else ""), size, r["dtype"], seconds(r["seconds"]["ndplane"]),
            ratio(r["ratio_numpy"]), ratio(r["ratio_torch"]), best if r.get("ratio") else "-",
            f"{r['goal']}x" if r["goal"] else "-", "!" if r["flag"] else ""]  # fmt: skip


HEADER = ["case", "size", "dtype", "ndplane", "nd/NumPy", "nd/PyTorch", "nd/faster [95%] faster", "goal", ""]


def report(rows: list[dict[str, Any]], worst: int, earlier: dict[tuple[str, str, str], dict] | None = None) -> None:
    if earlier is not None:
        print_recheck(rows, earlier)
        return
    print_table([HEADER, *(table_row(r) for r in rows)])
    goal_rows = [r for r in rows if r.get("goal") and r.get("ratio")]
    flagged = sorted((r for r in goal_rows if r["flag"]), key=lambda r: -r["ratio"])
    hosts = sum(r["host"] for r in rows)
    print(f"\n! = above the goal (at the medium and large sizes: {len(flagged)} of {len(goal_rows)} rows with a goal);"
          f" (host) = ran through ndplane's host fallback ({hosts} rows)")  # fmt: skip
    if flagged:
        print(f"\nthe worst {min(worst, len(flagged))} rows above the goal:")
        print_table([HEADER, *(table_row(r) for r in flagged[:worst])])
    notes = [f"{r['case']} {r['size']} {r['dtype']}: {n}" for r in rows for n in r["notes"]]
    errors = sorted({f"{r['case']}: {r['error']}" for r in rows if "error" in r})
    for title, lines in (("rows ndplane did not run", errors), ("peers that failed", notes)):
        if lines:
            print(f"\n{title}:\n  " + "\n  ".join(lines))


def print_recheck(rows: list[dict[str, Any]], earlier: dict[tuple[str, str, str], dict]) -> None:
    """The rechecked rows: the earlier (interleaved) ratio beside the one timed alone."""
    table = [["case", "size", "dtype", "ndplane", "earlier nd/faster", "alone nd/faster [95%] faster", "goal", ""]]
    stays = 0
    for r in sorted(rows, key=lambda r: -(r.get("ratio") or 0)):
        before = earlier[(r["case"], r["size"], r["dtype"])]
        if "error" in r:
            table.append([r["case"], r["size"], r["dtype"], r["error"], "", "", "", ""])
            continue
        stays += r["flag"]
        table.append([r["case"], f"{r['size']} {'x'.join(map(str, r['shape']))}", r["dtype"],
                      seconds(r["seconds"]["ndplane"]), f"{ratio(before.get('ratio'))} {PEERS.get(before.get('faster', ''), '')}",
                      f"{ratio(r.get('ratio'))} [{interval(r.get('interval'))}] {PEERS.get(r.get('faster', ''), '')}",
                      f"{r['goal']}x" if r["goal"] else "-", "!" if r["flag"] else ""])  # fmt: skip
    print_table(table)
    print(f"\n{stays} of {len(rows)} rechecked rows stay above the goal when each library is timed alone")


def flagged_rows(path: str) -> dict[tuple[str, str, str], dict]:
    """The rows an earlier ``--json`` run flagged, by (case, size, dtype)."""
    import json

    with open(path) as f:
        doc = json.load(f)
    return {(r["case"], r["size"], r["dtype"]): r for r in doc.get("rows", []) if r.get("flag")}


# Public functions that do no array work worth a row: dtype and device queries, contexts, files.
NOT_TIMED = frozenset({
    "__array_namespace_info__", "backends", "can_cast", "default_device", "devices", "enable_grad",
    "fallback_mode", "finfo", "from_dlpack", "get_default_device", "iinfo", "isdtype", "load",
    "load_metadata", "no_grad", "result_type", "save",
})  # fmt: skip


def untimed(cases: list[Case]) -> list[str]:
    """Public functions of the namespace, linalg, fft and nn.functional that no case times
    (and ``NOT_TIMED`` does not name)."""
    timed = {resolve(c.path()) for c in cases} - {None}
    out = []
    for prefix, mod in (("", nd), ("linalg.", nd.linalg), ("fft.", nd.fft), ("nn.functional.", nd.nn.functional)):
        names = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]
        for n in names:
            obj = getattr(mod, n, None)
            if callable(obj) and not isinstance(obj, type) and getattr(obj, "__module__", "").startswith("ndplane"):
                if obj not in timed and prefix + n not in NOT_TIMED:
                    out.append(prefix + n)
    return sorted(set(out))


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes and two rounds: checks the script runs")
    parser.add_argument("--sizes", default="small,medium,large", help="comma-separated: small,medium,large")
    parser.add_argument("--dtypes", default=",".join(DTYPE_ORDER),
                        help="comma-separated: only these of each row's dtypes (default: all)")  # fmt: skip
    parser.add_argument("--filter", default="", metavar="SUBSTRING",
                        help="only rows whose group, name or function holds one of these comma-separated strings")  # fmt: skip
    parser.add_argument("--worst", type=int, default=20, help="how many rows the summary lists")
    parser.add_argument("--alone", action="store_true",
                        help="time each library's calls back to back, not in interleaved rounds")  # fmt: skip
    parser.add_argument("--recheck", metavar="EARLIER.json",
                        help="only the rows an earlier --json run flagged, timed --alone, beside their earlier ratio")  # fmt: skip
    add_json_argument(parser)
    args = parser.parse_args()
    all_sizes = QUICK_SIZES if args.quick else SIZES
    labels = [s.strip() for s in args.sizes.split(",") if s.strip()]
    if unknown := [s for s in labels if s not in all_sizes]:
        parser.error(f"--sizes: unknown {unknown}; choose from {list(all_sizes)}")
    args.sizes = {s: all_sizes[s] for s in labels}
    args.filter = [f.strip() for f in args.filter.split(",") if f.strip()]
    args.dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    if args.recheck:
        args.alone = True
    if unknown := [d for d in args.dtypes if d not in DTYPE_ORDER]:
        parser.error(f"--dtypes: unknown {unknown}; choose from {list(DTYPE_ORDER)}")
    return args


def main() -> None:
    args = parse()
    torch = try_import_torch()
    threads = native.num_threads()
    if torch is not None:
        torch.set_num_threads(threads)
    machine = (f"{platform.machine()}, {os.cpu_count()} cpus, python {platform.python_version()}, numpy "
               f"{np.__version__} (1 thread; its BLAS/LAPACK its own)"
               + (f", torch {torch.__version__} ({torch.get_num_threads()} threads)" if torch else ", torch absent")
               + f"; ndplane-cpu: {nd.Device('cpu').backend!r}, {threads} threads")  # fmt: skip
    print(f"machine: {machine}; load average {load_average()}")
    cases = selected(args.filter)
    timing = ({"min_time": 0.0, "repeat": 2, "warmup": 0.0, "slow": 1.0} if args.quick
              else {"min_time": 0.01, "repeat": 5, "warmup": 0.01, "slow": 0.05})  # fmt: skip
    timing["alone"] = args.alone
    earlier = flagged_rows(args.recheck) if args.recheck else None
    mods = {"ndplane": nd, "numpy": np, "torch": torch}
    start, load_start = time.perf_counter(), load_average()
    with np.errstate(all="ignore"), warnings.catch_warnings(), nd.default_device("cpu"):
        warnings.simplefilter("ignore")  # NumPy's and PyTorch's about values; ndplane's FallbackWarning
        rows = run(cases, args.sizes, args.dtypes, mods, timing, only=None if earlier is None else set(earlier))
    elapsed = time.perf_counter() - start
    report(rows, args.worst, earlier)
    if missing := untimed(CASES):
        print("\nfunctions no case times: " + ", ".join(missing))
    print(f"\n{len(rows)} rows in {elapsed:.0f} s; load average {load_start} at the start, {load_average()} at the end;"
          f" ndplane-cpu and PyTorch at {threads} threads")  # fmt: skip
    results = []
    for r in rows:
        label = f"{r['case']} {r['size']} {r['dtype']}"
        results += ratio_result(label, "PyTorch", r.get("ratio_torch"), r.get("interval") if r.get("faster") == "torch" else None)
        results += ratio_result(label, "NumPy", r.get("ratio_numpy"), r.get("interval") if r.get("faster") == "numpy" else None)
    how = "".join(f" --{k}" for k in ("quick", "recheck") if getattr(args, k)) or (" --alone" if args.alone else "")
    write_json(args.json, "bench_api", f"The whole namespace (bench_api.py{how})",
               machine, results, {"threads": threads, "seconds": round(elapsed, 1), "rows": rows})  # fmt: skip


if __name__ == "__main__":
    main()
