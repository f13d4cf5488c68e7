from __future__ import annotations

import subprocess
import sys

from ndplane.cli import main


def test_backends_table(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["backends"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:3] == ["name", "distribution", "version"]
    numpy_row = next(line for line in out if line.startswith("numpy "))
    assert "ndplane-numpy" in numpy_row and "available" in numpy_row and "float64" in numpy_row
    assert any(line.startswith("numpy-nof64") and "test device" in line for line in out)


def test_info_matrix(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["info", "numpy-nof64"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("op "))
    cols = header.split()
    add = next(line for line in out.splitlines() if line.startswith("add ")).split()
    assert add[cols.index("f32")] == "N" and add[cols.index("f64")] == "." and add[cols.index("b")] == "."
    caps = next(line for line in out.splitlines() if "capabilities:" in line)
    assert "host" in caps and "strided" in caps


def test_unknown_backend_is_a_clean_error(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["info", "nosuch"]) == 2
    assert "no backend named 'nosuch'" in capsys.readouterr().err


def test_demo_runs_and_checks_against_numpy() -> None:
    r = subprocess.run([sys.executable, "-m", "ndplane", "demo", "--device", "numpy", "--epochs", "20"],
                       capture_output=True, text=True, timeout=600)  # fmt: skip
    assert r.returncode == 0, r.stderr
    rows = [line.split() for line in r.stdout.splitlines() if line.startswith("numpy:0 ")]
    assert len(rows) == 4
    assert all(float(row[-1]) < 1e-3 for row in rows)
    result = next(line for line in r.stdout.splitlines() if line.startswith("digits MLP on numpy:0"))
    accuracy = float(result.split("test accuracy ")[1].split("%")[0])
    assert accuracy >= 95.0, result
