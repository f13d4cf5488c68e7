#!/usr/bin/env python3
"""Run the official Array API conformance suite (data-apis/array-api-tests) against ndplane.

The suite is never copied into this repository: pass the path to a checkout of
https://github.com/data-apis/array-api-tests whose ``array-api`` submodule (the spec)
is present (``git submodule update --init``). The run is reproducible: a fixed
hypothesis seed, ``--max-examples=20`` and the committed xfails file ``tools/array-api-xfails.txt``
(``tools/array-api-xfails-VERSION.txt`` where one exists), plus ``tools/array-api-xfails-DEVICE.txt``
where the device has one (what only that device fails, such as webgpu's DLPack export); every id
says why it fails.

    python tools/run_array_api_tests.py /path/to/array-api-tests
    python tools/run_array_api_tests.py /path/to/array-api-tests --device cpu --version 2025.12
    python tools/run_array_api_tests.py /path/to/array-api-tests -- array_api_tests/test_linalg.py -x
    python tools/run_array_api_tests.py build/array-api-tests --clone --device cpu   # what .ci/run does

``--clone`` makes the checkout first when the path holds none (the suite and its spec submodule
at the commits pinned below, the ones the xfails files were written against), and installs the
suite's own requirements into this environment.

Prints passed / failed / total and the pass percentage, where total counts every
collected test (passed, failed, errored, skipped, xfailed, xpassed) and only
passed + xpassed count as passing. Exits with 1 when any test failed or errored (an xfail
that fails is not a failure), so CI fails on anything the xfails file does not list.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_XFAILS = HERE / "array-api-xfails.txt"
SUITE_URL = "https://github.com/data-apis/array-api-tests"
SUITE_COMMIT = "55fcc60179efa2680ddd6cd926ddf17b83530e2b"  # main of 2026-04-03: tests 2024.12 and 2025.12
SPEC_COMMIT = "5f847a3858875c682ae901aa22b0413bf24be9da"  # its array-api submodule


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkout", type=Path, help="path to a checkout of data-apis/array-api-tests")
    p.add_argument("--clone", action="store_true",
                   help=f"clone {SUITE_URL} at {SUITE_COMMIT} into CHECKOUT if it holds none; "
                        "install its requirements")  # fmt: skip
    p.add_argument("--device", default="numpy", help="NDPLANE_DEVICE for the run (default: numpy)")
    p.add_argument("--version", default="2024.12", help="ARRAY_API_TESTS_VERSION (default: 2024.12)")
    p.add_argument("--max-examples", type=int, default=20, help="hypothesis examples per test (default: 20)")
    p.add_argument("--seed", type=int, default=20241212, help="hypothesis seed (default: 20241212)")
    p.add_argument("--xfails", type=Path, default=None,
                   help="xfails file (default: tools/array-api-xfails-VERSION.txt if it exists, "
                        "else tools/array-api-xfails.txt; with tools/array-api-xfails-DEVICE.txt "
                        "added where it exists)")  # fmt: skip
    p.add_argument("--no-xfails", action="store_true", help="run without the xfails file")
    p.add_argument("--junit", type=Path, help="also keep the JUnit XML report here")
    p.epilog = "Arguments after -- go to pytest (test files, -k, -x, ...)."
    if "--" in argv:
        cut = argv.index("--")
        args = p.parse_args(argv[:cut])
        args.pytest_args = argv[cut + 1 :]
    else:
        args = p.parse_args(argv)
        args.pytest_args = []
    return args


def _default_xfails(version: str) -> Path:
    specific = HERE / f"array-api-xfails-{version}.txt"
    return specific if specific.exists() else DEFAULT_XFAILS


def _device_xfails(device: str) -> Path | None:
    """tools/array-api-xfails-DEVICE.txt ("webgpu" for "webgpu:1"), if there is one."""
    path = HERE / f"array-api-xfails-{device.partition(':')[0]}.txt"
    return path if path.exists() else None


def _xfails_file(args: argparse.Namespace, tmp: Path) -> Path:
    """The file given to --xfails-file: the general list, with the device's appended."""
    general = args.xfails or _default_xfails(args.version)
    device = _device_xfails(args.device)
    if device is None:
        return general.resolve()
    merged = tmp / "xfails.txt"
    merged.write_text(general.read_text() + "\n" + device.read_text())
    return merged


def count(junit: Path) -> dict[str, int]:
    """passed/failed/error/skipped/xfailed/xpassed counts from a pytest JUnit XML report."""
    tally = dict.fromkeys(("passed", "failed", "error", "skipped", "xfailed"), 0)
    for case in ET.parse(junit).getroot().iter("testcase"):
        tags = {child.tag: child for child in case}
        if "failure" in tags:
            tally["failed"] += 1
        elif "error" in tags:
            tally["error"] += 1
        elif "skipped" in tags:
            kind = tags["skipped"].get("type", "")
            tally["xfailed" if kind == "pytest.xfail" else "skipped"] += 1
        else:
            tally["passed"] += 1  # NOTE: JUnit reports an XPASS (non-strict) as a pass
    return tally


def clone(checkout: Path) -> None:
    """The suite at SUITE_COMMIT with its spec submodule."""
    def git(*argv: str) -> None:
        subprocess.run(["git", *argv], check=True, timeout=600)

    git("clone", "--quiet", SUITE_URL, str(checkout))
    git("-C", str(checkout), "checkout", "--quiet", SUITE_COMMIT)
    git("-C", str(checkout), "submodule", "update", "--init", "--quiet")
    git("-C", str(checkout / "array-api"), "checkout", "--quiet", SPEC_COMMIT)


def install_requirements(checkout: Path) -> None:
    """The suite's own requirements (pytest-json-report, ndindex, ...) into this environment."""
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "-r", str(checkout / "requirements.txt")],
                   check=True)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    checkout = args.checkout.resolve()
    if args.clone:
        if not (checkout / "array_api_tests").is_dir():
            clone(checkout)
        install_requirements(checkout)
    spec = checkout / "array-api" / "spec" / args.version
    if not (checkout / "array_api_tests").is_dir():
        sys.exit(f"{checkout}: not a checkout of data-apis/array-api-tests (no array_api_tests/).")
    if not spec.is_dir():
        sys.exit(f"{spec}: the spec submodule is missing; run `git submodule update --init` in {checkout}.")
    env = dict(os.environ)
    env.update(
        ARRAY_API_TESTS_MODULE="ndplane",
        ARRAY_API_TESTS_VERSION=args.version,
        NDPLANE_DEVICE=args.device,
        NDPLANE_FALLBACK=env.get("NDPLANE_FALLBACK", "allow"),
        PYTHONHASHSEED="0",
    )
    with tempfile.TemporaryDirectory() as tmp:
        # NOTE: a fresh hypothesis database, so failures saved by earlier runs are not replayed.
        env["HYPOTHESIS_STORAGE_DIRECTORY"] = str(Path(tmp) / "hypothesis")
        junit = args.junit or Path(tmp) / "junit.xml"
        cmd = [
            sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--tb=line", "-rf",
            f"--max-examples={args.max_examples}", f"--hypothesis-seed={args.seed}",
            "--disable-deadline", f"--junitxml={junit}", "-o", "junit_family=xunit1",
        ]  # fmt: skip
        if not args.no_xfails:
            cmd.append(f"--xfails-file={_xfails_file(args, Path(tmp))}")
        cmd += args.pytest_args or ["array_api_tests/"]
        print("$", " ".join(cmd), f"  (in {checkout}, device {args.device}, version {args.version})", flush=True)
        rc = subprocess.call(cmd, cwd=checkout, env=env)
        if not junit.exists():
            print(f"pytest exited with {rc} and wrote no report.", file=sys.stderr)
            return rc or 1
        t = count(junit)
    total = sum(t.values())
    passed = t["passed"]
    pct = 100.0 * passed / total if total else 0.0
    print(
        f"\narray-api-tests {args.version} on ndplane device '{args.device}': "
        f"passed {passed}, failed {t['failed'] + t['error']}, xfailed {t['xfailed']}, "
        f"skipped {t['skipped']}, total {total}: {pct:.2f}% passed"
    )
    if rc not in (0, 1):
        return rc  # interrupted, an internal error, a usage error: pytest's own status
    return 1 if t["failed"] or t["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
