"""The transcendental functions, vectorised (src/vmath.h), are as accurate as NumPy's.

Each ISA build the machine can run is measured in its own process (the kernels are
picked at import) by accuracy.py: float32 on a strided sample of its bit patterns (every
one of the 2^32 with ``NDPLANE_HYPOTHESIS_PROFILE=deep``), float64 on 2^20 random bit
patterns, the binary functions on random pairs, and the special values of both against
NumPy's own results. The published table in docs/api.md comes from the same script.
"""

from __future__ import annotations

import functools
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import ndplane_cpu._native as native
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from accuracy import BINARY, COMPOSED, COMPOSED_BINARY, UNARY, tolerance  # noqa: E402

DEEP = os.environ.get("NDPLANE_HYPOTHESIS_PROFILE", "ci").strip() == "deep"


def _isa_levels() -> list[str]:
    levels = ["baseline"]
    if native.isa() == "x86-64-v3":
        levels.append("v3")
    if native.isa() == "x86-64-v4":
        levels += ["v3", "v4"]
    return levels


@functools.cache
def _undefined_symbols() -> str | None:
    """``nm -D --undefined-only`` of the extension, or None without binutils."""
    nm = shutil.which("nm")
    if nm is None:
        return None
    return subprocess.run([nm, "-D", "--undefined-only", native.__file__], check=True,
                          capture_output=True, text=True).stdout  # fmt: skip


def _skip_sanitizer_build() -> None:
    # NOTE: AddressSanitizer's instrumentation keeps these loops scalar, so such a build measures
    # glibc's scalar functions, not what ships (their float32 tanh is 2.1 ulp: see issue 21's note).
    if "__asan_init" in (_undefined_symbols() or ""):
        pytest.skip("an AddressSanitizer build: the instrumented loops are not vectorised")


@pytest.mark.parametrize("isa", _isa_levels())
def test_ulp_error_within_numpy_tolerance(isa: str, tmp_path: Path) -> None:
    _skip_sanitizer_build()
    out = tmp_path / "accuracy.json"
    cmd = [sys.executable, str(HERE / "accuracy.py"), "--json", str(out), *(["--all"] if DEEP else [])]
    env = {**os.environ, "NDPLANE_CPU_ISA": isa}
    subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    result = json.loads(out.read_text())
    assert result["isa"].endswith(isa) or isa == "baseline"
    rows = {(r["function"], r["dtype"]): r for r in result["rows"]}
    assert set(rows) == {(f, d) for f in UNARY + BINARY for d in ("float32", "float64")}
    bad = [f"{f} {d}: {r['max_ulp']:.2f} ulp at {r['worst_input']}, {r['special_mismatches']} special"
           for (f, d), r in rows.items()
           if r["max_ulp"] > tolerance(f, d) or r["special_mismatches"]]  # fmt: skip
    assert not bad, f"isa {isa}: " + "; ".join(bad)


@pytest.mark.skipif(platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64")
                    or platform.libc_ver()[0] != "glibc", reason="libmvec is glibc's, on x86-64")  # fmt: skip
def test_vectorised_with_libmvec_on_glibc() -> None:
    """Every function vmath.h declares calls its libmvec variants, in float and double, in
    every ISA build: a compiler or glibc change that leaves a loop scalar fails here."""
    major, minor = (int(p) for p in platform.libc_ver()[1].split(".")[:2])
    if (major, minor) < (2, 35):
        pytest.skip(f"glibc {major}.{minor} has no libmvec variants of most functions (2.35 added them)")
    assert native.vector_math() == "libmvec", "CMake found no libmvec: the transcendental loops are scalar"
    symbols = _undefined_symbols()
    if symbols is None:
        pytest.skip("nm (binutils) is not installed")
    _skip_sanitizer_build()
    names = [f for f in UNARY if f not in COMPOSED] + ["exp2"] + [f for f in BINARY if f not in COMPOSED_BINARY]
    prefixes = {"b": ("N2", "N4")}  # SSE: 2 doubles, 4 floats (the baseline build)
    if native.isa() != "baseline":
        prefixes["d"] = ("N4", "N8")  # AVX2: 4 doubles, 8 floats (x86-64-v3 and v4)
    missing = []
    for fn in names:
        args = "vv" if fn in BINARY else "v"
        for isa, (nd_, nf) in prefixes.items():
            for want in (f"_ZGV{isa}{nd_}{args}_{fn}", f"_ZGV{isa}{nf}{args}_{fn}f"):
                if f"{want}@" not in symbols and f" {want}\n" not in symbols:
                    missing.append(want)
    assert not missing, f"scalar loops (no libmvec call): {missing}"
