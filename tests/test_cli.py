from __future__ import annotations

import json
import subprocess
import sys

import pytest

import ndplane as nd
from ndplane.cli import BACKEND_KEYS, main


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


def test_backends_json(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["backends", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert list(listing) == ["backends"]
    rows = {row["name"]: row for row in listing["backends"]}
    assert all(list(row) == list(BACKEND_KEYS) for row in rows.values()), "every row has every key, in order"
    numpy_row = rows["numpy"]
    assert numpy_row["distribution"] == "ndplane-numpy" and numpy_row["available"] is True
    assert numpy_row["dtypes"] == [d.name for d in nd.ALL_DTYPES] and "host" in numpy_row["capabilities"]
    assert numpy_row["devices"] == 2 and numpy_row["test_only"] is False and numpy_row["reason"] == ""
    assert rows["numpy-nof64"]["test_only"] is True and "float64" not in rows["numpy-nof64"]["dtypes"]
    for row in rows.values():
        if not row["available"]:
            assert row["reason"] and row["dtypes"] is None and row["capabilities"] is None


def test_info_json(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["info", "numpy-nof64", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    keys = ["backend", "device", "protocol_version", "capabilities", "default_dtypes", "dtypes", "notes", "ops"]
    assert list(info) == keys
    assert info["notes"] == []  # Backend.notes: lines about the device (webgpu: features -> dtypes)
    assert info["backend"] == "numpy-nof64" and info["device"] == "numpy-nof64:0"
    assert info["protocol_version"] == 1
    assert "host" in info["capabilities"] and info["default_dtypes"]["real floating"] == "float32"
    assert "float64" not in info["dtypes"] and "float32" in info["dtypes"]
    assert info["ops"]["add"]["float32"] == "native" and info["ops"]["add"]["float64"] is None
    assert info["ops"]["add"]["bool"] is None  # add is not defined for bool
    assert all(list(cells) == [d.name for d in nd.ALL_DTYPES] for cells in info["ops"].values())
    assert set(info["ops"]) >= {"exp", "sum", "matmul", "sort", "cholesky", "fft"}
    paths = {c for cells in info["ops"].values() for c in cells.values()}
    assert paths <= {"native", "decomposition", "host", None}


def test_info_json_names_every_path(capsys) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("ndplane_pylist")
    assert main(["info", "pylist", "--json"]) == 0
    ops = json.loads(capsys.readouterr().out)["ops"]
    assert ops["add"]["float64"] == "native" and ops["greater"]["float64"] == "decomposition"
    assert ops["sin"]["float64"] == "host" and ops["sin"]["float32"] is None


def test_json_errors_are_the_same_clean_errors(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["info", "nosuch", "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "no backend named 'nosuch'" in captured.err
