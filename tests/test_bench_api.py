"""benchmarks/bench_api.py: every public function has a row, rows are measured and reported
as the script prints and writes them, and a quick run of a few rows works end to end."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

pytest.importorskip("ndplane_cpu._native", reason="bench_api.py times the cpu backend")
BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH))
    import bench_api

    return bench_api


def test_every_public_function_has_a_case(bench: ModuleType) -> None:
    assert bench.untimed(bench.CASES) == [], "add a row to benchmarks/_api_cases.py (or to NOT_TIMED)"


def test_cases_have_unique_names_and_known_inputs(bench: ModuleType) -> None:
    import _api_cases

    names = [c.name for c in bench.CASES]
    assert len(names) == len(set(names))
    assert {c.inputs.partition(":")[0] for c in bench.CASES} <= set(_api_cases.INPUTS)


def test_measure_times_three_libraries_and_notes_what_it_cannot(bench: ModuleType) -> None:
    import _api_cases as cases

    size, rng = cases.QUICK_SIZES["medium"], np.random.default_rng(0)
    mods = {"ndplane": bench.nd, "numpy": np, "torch": None}
    timing = {"min_time": 0.0, "repeat": 2, "warmup": 0.0, "slow": 1.0}
    case = next(c for c in bench.CASES if c.name == "take 1-D")
    row = bench.measure(case, size, "int32", cases.make_inputs(case, size, "int32", rng), mods, timing)
    assert set(row["seconds"]) == {"ndplane", "numpy"} and row["faster"] == "numpy" and row["goal"] == 1.0
    assert row["flag"] == (row["ratio"] > 1.0) and not row["host"]
    missing = cases.Case("no such function", "elementwise", "x", lambda m, x: m.no_such_function(x))
    row = bench.measure(missing, size, "float32", cases.make_inputs(missing, size, "float32", rng), mods, timing)
    assert row["error"] == "not in ndplane: no" and "seconds" not in row
    failing = cases.Case("sum of a tuple", "reduction", "x", lambda m, x: m.sum((x,)), func="sum")
    row = bench.measure(failing, size, "float32", cases.make_inputs(failing, size, "float32", rng), mods, timing)
    assert row["error"].startswith("TypeError")


def test_quick_run_writes_the_rows(tmp_path: Path) -> None:
    out = tmp_path / "api.json"
    cmd = [sys.executable, str(BENCH / "bench_api.py"), "--quick", "--sizes", "small,medium", "--json", str(out),
           "--filter", "mean axis=0,linalg.inv,fft.rfft pow2,unique_values"]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=True)
    doc = json.loads(out.read_text())
    assert doc["benchmark"] == "bench_api" and doc["threads"] >= 1
    rows = {(r["case"], r["size"], r["dtype"]) for r in doc["rows"]}
    assert len(rows) == 4 * 2 * 2 + 2 * 2  # unique_values also in int32 and int64
    assert all("seconds" in r for r in doc["rows"]), [r.get("error") for r in doc["rows"]]
    assert "load average" in proc.stdout and "threads" in proc.stdout


def test_recheck_times_only_the_flagged_rows_alone(tmp_path: Path) -> None:
    earlier = tmp_path / "earlier.json"
    flagged = {"case": "mean axis=0", "size": "medium", "dtype": "float32", "flag": True, "ratio": 3.0,
               "faster": "numpy"}  # fmt: skip
    earlier.write_text(json.dumps({"rows": [flagged, {**flagged, "dtype": "float64", "flag": False}]}))
    out = tmp_path / "again.json"
    cmd = [sys.executable, str(BENCH / "bench_api.py"), "--quick", "--recheck", str(earlier), "--json", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=True)
    doc = json.loads(out.read_text())
    assert [(r["case"], r["size"], r["dtype"]) for r in doc["rows"]] == [("mean axis=0", "medium", "float32")]
    assert "--recheck" in doc["title"] and "3.00x" in proc.stdout
    assert "rechecked rows stay above the goal" in proc.stdout


def test_back_to_back_times_each_library_in_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCH))
    import _harness

    log: list[str] = []
    t = _harness.back_to_back({"a": lambda: log.append("a"), "b": lambda: log.append("b")}, calls=5, blocks=3,
                              warmup=0.0)  # fmt: skip
    assert {lib: len(r) for lib, r in t.rounds.items()} == {"a": 3, "b": 3}
    # one untimed call (the sizing) each, then blocks a b, b a, a b: each a warm call and 5 timed
    runs = [k for k, _ in itertools.groupby(log)]
    assert runs == ["a", "b", "a", "b", "a", "b"] and log.count("a") == 1 + 3 * 6
