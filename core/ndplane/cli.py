"""The ``ndplane`` command: ``backends``, ``info BACKEND``, ``demo`` (checks and trains an MLP),
``new-backend NAME`` (writes a backend package to start from).

``backends`` and ``info`` print a table, or with ``--json`` one JSON object whose keys are
stable (docs/api.md, "The command line", lists them):

>>> from ndplane.cli import main
>>> main(["backends"])  # doctest: +ELLIPSIS
name ...
0
>>> main(["info", "numpy", "--json"])  # doctest: +ELLIPSIS
{"backend": "numpy", "device": "numpy:0", "protocol_version": 1, ...}
0
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import ndplane as nd

from . import _dispatch, _dtypes, _scaffold
from ._devices import Device, backends, devices
from ._errors import NdplaneError
from .backend import ops as _ops
from .backend import plugins
from .examples import digits_mlp

_ABBREV = {
    "bool": "b", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
    "uint16": "u16", "uint32": "u32", "uint64": "u64", "float16": "f16", "float32": "f32",
    "float64": "f64", "complex64": "c64", "complex128": "c128",
}  # fmt: skip
_CELL = {_dispatch.NATIVE: "N", _dispatch.DECOMPOSE: "D", _dispatch.HOST: "H", None: "."}


def _table(rows: list[list[str]], out: Any) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip(), file=out)


#: The keys of each backend in ``ndplane backends --json`` (None where unavailable).
BACKEND_KEYS = (
    "name", "distribution", "version", "available", "reason", "test_only", "description", "devices",
    "dtypes", "capabilities",
)  # fmt: skip
#: The path of an (op, dtype) in ``ndplane info --json``; None: not defined or dtype unsupported.
_PATH_NAME = {"N": "native", "D": "decomposition", "H": "host", ".": None}


def _json(obj: Any, out: Any) -> None:
    print(json.dumps(obj, ensure_ascii=False), file=out)


def cmd_backends(args: argparse.Namespace, out: Any) -> int:
    rows = [["name", "distribution", "version", "status", "dtypes / reason"]]
    found = backends()
    if getattr(args, "json", False):  # NOTE: demo calls this with its own arguments
        _json({"backends": [{k: b.get(k) for k in BACKEND_KEYS} for b in found]}, out)
        return 0 if found else 1
    for b in found:
        status = "available" if b["available"] else "unavailable"
        if b["test_only"]:
            status += " (test device)"
        detail = ", ".join(b.get("dtypes", [])) if b["available"] else b["reason"]
        rows.append([b["name"], b["distribution"] or "-", b["version"] or "-", status, detail])
    if len(rows) == 1:
        print("no backends installed; try `pip install ndplane-numpy`", file=out)
        return 1
    _table(rows, out)
    return 0


def _kernel_cell(dev: Device, op: str, dt: _dtypes.DType) -> str:
    backend = dev.backend
    if dt not in backend.dtypes:
        return "."
    return _CELL[_dispatch._kernel_path(dev, op, dt)]


def _elementwise_cell(dev: Device, op: str, dt: _dtypes.DType) -> str:
    if dt not in dev.backend.dtypes:
        return "."
    try:
        return _CELL[_dispatch.path_of(dev, op, dt)]
    except NdplaneError:
        return "."


def _extension_cell(dev: Device, op: str, dt: _dtypes.DType) -> str:
    if dt not in dev.backend.dtypes or dt.kind not in ("float", "complex") or dt is _dtypes.float16:
        return "."
    return _CELL[_dispatch._kernel_path(dev, op, dt)]


def op_cell(dev: Device, op: str, dt: _dtypes.DType) -> str:
    """The path ``op`` takes on ``dt`` on ``dev``, as ``ndplane info`` prints it: N native, D core
    decomposition, H host fallback, ``.`` not defined or dtype unsupported. The API reference's
    device tables (tools/api_reference.py) read it too."""
    if op in _ops.UNARY_OPS or op in _ops.BINARY_OPS:
        return _elementwise_cell(dev, op, dt)
    if op in _ops.LINALG_OPS or op in _ops.FFT_OPS:
        return _extension_cell(dev, op, dt)
    return _kernel_cell(dev, op, dt)


def cmd_info(args: argparse.Namespace, out: Any) -> int:
    dev = Device(args.backend)
    backend = dev.backend
    dts = list(_dtypes.ALL_DTYPES)
    groups = [_ops.UNARY_OPS, _ops.BINARY_OPS, _ops.REDUCE_OPS | _ops.SCAN_OPS | _ops.KERNEL_OPS,
              _ops.LINALG_OPS | _ops.FFT_OPS]  # fmt: skip
    if args.json:
        ops = [op for names in groups for op in sorted(names)]
        paths = {op: {d.name: _PATH_NAME[op_cell(dev, op, d)] for d in dts} for op in ops}
        _json({
            "backend": backend.name, "device": str(dev), "protocol_version": backend.protocol_version,
            "capabilities": sorted(backend.capabilities),
            "default_dtypes": {k: v.name for k, v in backend.default_dtypes.items()},
            "dtypes": [d.name for d in dts if d in backend.dtypes], "notes": list(backend.notes), "ops": paths,
        }, out)  # fmt: skip
        return 0
    print(f"backend {backend.name!r} (device {dev}): protocol {backend.protocol_version}", file=out)
    print(f"  capabilities: {', '.join(sorted(backend.capabilities)) or 'none'}", file=out)
    print("  default dtypes: " + ", ".join(f"{k}={v.name}" for k, v in backend.default_dtypes.items()), file=out)
    for note in backend.notes:
        print(f"  {note}", file=out)
    print("  N native, D core decomposition, H host fallback, . not defined or dtype unsupported\n", file=out)
    rows = [["op"] + [_ABBREV[d.name] for d in dts]]
    for names in groups:
        for op in sorted(names):
            rows.append([op] + [op_cell(dev, op, d) for d in dts])
    _table(rows, out)
    return 0


def cmd_new_backend(args: argparse.Namespace, out: Any) -> int:
    try:
        root = _scaffold.new_backend(args.name, args.dir)
    except (ValueError, OSError) as exc:
        print(exc, file=sys.stderr)
        return 2
    shown = str(root) if root.is_absolute() else os.path.join(".", root)  # NOTE: pip -e needs a path
    print(f"wrote the {args.name} backend to {shown}. Next:", file=out)
    print(f"  pip install -e '{shown}[test]'", file=out)
    print(f"  pytest {os.path.join(shown, 'tests')}    # its tests, then the conformance suite", file=out)
    return 0


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    fn()  # warm up (kernel caches, pipelines)
    t0 = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - t0


def cmd_demo(args: argparse.Namespace, out: Any) -> int:
    cmd_backends(args, out)
    targets = [Device(args.device)] if args.device else [
        d for d in devices() if d.index == 0 and not _is_test(d)
        and {_dtypes.float32, _dtypes.uint32} <= d.backend.dtypes
    ]  # fmt: skip
    print("\nA short computation on each device, checked against NumPy (float32, 512x512):", file=out)
    rows = [["device", "step", "ndplane ms", "numpy ms", "max |error|"]]
    for dev in targets:
        rng = nd.random.default_rng(0, device=dev)
        x = rng.normal(0.0, 1.0, (512, 512), dtype=nd.float32)
        xh = x.to_numpy()
        steps: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
            ("gram = x.T @ x", lambda: x.T @ x, lambda: xh.T @ xh),  # noqa: B023
            ("softmax rows", lambda: _softmax(nd, x), lambda: _softmax(np, xh)),  # noqa: B023
            ("sort rows", lambda: nd.sort(x, axis=1), lambda: np.sort(xh, axis=1)),  # noqa: B023
            ("std of columns", lambda: nd.std(x, axis=0), lambda: np.std(xh, axis=0)),  # noqa: B023
        ]
        for name, f, g in steps:
            got, t_nd = _timed(lambda: _sync(f()))  # noqa: B023 - _timed calls it at once
            want, t_np = _timed(g)
            err = float(np.max(np.abs(got.to_numpy().astype(np.float64) - want)))
            rows.append([str(dev), name, f"{t_nd * 1e3:.2f}", f"{t_np * 1e3:.2f}", f"{err:.2e}"])
    _table(rows, out)
    if args.epochs:
        train_on = Device(args.device) if args.device else nd.get_default_device()
        print(f"\nTraining a 64-128-10 MLP on scikit-learn's digits on {train_on} (Adam, batch 64):", file=out)
        digits_mlp.main(["--device", str(train_on), "--epochs", str(args.epochs)])
    return 0


def _sync(a: Any) -> Any:
    a.device.backend.synchronize()
    return a


def _softmax(xp: Any, x: Any) -> Any:
    z = x - xp.max(x, axis=1, keepdims=True)
    e = xp.exp(z)
    return e / xp.sum(e, axis=1, keepdims=True)


def _is_test(dev: Device) -> bool:
    spec = plugins.backend_specs()[dev.kind]
    priority = spec.priority() if callable(spec.priority) else spec.priority
    return spec.test_only or priority < 0  # examples rank themselves below every real device


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ndplane", description="ndplane: backends, capabilities, demo")
    sub = parser.add_subparsers(dest="command", required=True)
    listing = sub.add_parser("backends", help="list installed backends and whether they are available")
    listing.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    info = sub.add_parser("info", help="op x dtype matrix of a backend: native / decomposition / host fallback")
    info.add_argument("backend", help="backend or device name, e.g. numpy or cpu:0")
    info.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    new = sub.add_parser("new-backend", help="write a ready package for a new backend, to start from")
    new.add_argument("name", help="the device name: a lower-case Python identifier, e.g. mydev")
    new.add_argument("--dir", default=None, help="where to write it (default: ./ndplane-NAME)")
    demo = sub.add_parser("demo", help="run a short computation on each device and compare with NumPy")
    demo.add_argument("--device", default=None, help="run on this device only")
    demo.add_argument("--epochs", type=int, default=20, help="epochs of MLP training (0 skips it)")
    args = parser.parse_args(argv)
    handlers = {"backends": cmd_backends, "info": cmd_info, "demo": cmd_demo, "new-backend": cmd_new_backend}
    handler = handlers[args.command]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            return handler(args, sys.stdout)
    except NdplaneError as exc:
        print(f"ndplane {args.command}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `ndplane info numpy | head`: the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
