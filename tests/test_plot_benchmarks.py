"""tools/plot_benchmarks.py: the committed performance charts' JSON matches docs/performance.md's
tables, and the charts are drawn from it."""

from __future__ import annotations

import json
from pathlib import Path

import plot_benchmarks  # tools/, on sys.path through conftest.py
import pytest

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "docs" / "assets" / "benchmarks"




def test_committed_json_matches_the_published_tables() -> None:
    derived = plot_benchmarks.tables_to_json((ROOT / "docs" / "performance.md").read_text())
    assert set(derived) == {"bench_overhead", "bench_cpu", "bench_autograd", "bench_cuda"}
    for script, doc in derived.items():
        committed = json.loads((ASSETS / f"{script}.json").read_text())
        assert committed == doc, (f"docs/performance.md's {script} table changed: run "
                                  "python tools/plot_benchmarks.py --from-tables docs/performance.md -d docs/assets/benchmarks")  # fmt: skip
        assert (ASSETS / f"{script}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"assets/benchmarks/{script}.png" in (ROOT / "docs" / "performance.md").read_text()


def test_table_cells_become_runs() -> None:
    cell = plot_benchmarks._cell_results
    assert cell("add", "PyTorch", "0.92\u00d7 [0.91\u20130.93], 1.02\u00d7 [0.99\u20131.04]") == [
        {"case": "add", "baseline": "PyTorch", "ratio": 0.92, "interval": [0.91, 0.93]},
        {"case": "add", "baseline": "PyTorch", "ratio": 1.02, "interval": [0.99, 1.04]},
    ]
    assert [r["ratio"] for r in cell("mul", "NumPy", "0.48\u20130.51\u00d7")] == [0.48, 0.51]
    assert cell("matmul", "PyTorch", "199\u2013209 GFLOP/s vs NumPy's 187\u2013193 (1.06\u20131.08\u00d7)") == []


def test_a_section_ends_at_the_next_heading() -> None:
    page = ("## A (`bench_a.py`)\n\n| case | ndplane / PyTorch |\n|---|---|\n| add | 0.9\u00d7 |\n\n"
            "```bash\n# a comment, not a heading\n```\n\n### More (`bench_b.py`)\n\n"
            "| case | ndplane / PyTorch |\n|---|---|\n| mul | 2.0\u00d7 |\n\n## WebGPU\n\n"
            "| case | ndplane / NumPy |\n|---|---|\n| exp | 3.0\u00d7 |\n")  # fmt: skip
    derived = plot_benchmarks.tables_to_json(page)
    assert list(derived) == ["bench_a"]
    assert [(r["case"], r["ratio"]) for r in derived["bench_a"]["results"]] == [("add", 0.9)]


def test_plot_writes_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    doc = {"benchmark": "bench_x", "title": "t", "machine": "m", "results": [
        {"case": "a", "baseline": "PyTorch", "ratio": 0.5, "interval": [0.4, 0.6]},
        {"case": "a", "baseline": "NumPy", "ratio": 2.0, "interval": None},
        {"case": "b", "baseline": "PyTorch", "ratio": 1.1, "interval": None},
    ]}  # fmt: skip
    (tmp_path / "x.json").write_text(json.dumps(doc))
    assert plot_benchmarks.main([str(tmp_path / "x.json"), "-o", str(tmp_path / "x.png")]) == 0
    assert (tmp_path / "x.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
