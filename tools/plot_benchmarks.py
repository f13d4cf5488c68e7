"""Bar charts of ndplane's time ratios from benchmark JSON (the docs' performance plots).

    python tools/plot_benchmarks.py RESULTS.json [...] -o OUT.png   # one chart per JSON, stacked
    python tools/plot_benchmarks.py --from-tables docs/performance.md -d DIR
        # the JSON of each table published on that page (DIR/bench_*.json), then its chart

The JSON is what ``benchmarks/bench_cpu.py``, ``bench_overhead.py`` and ``bench_autograd.py``
write with ``--json PATH``::

    {"benchmark": "bench_cpu", "title": "...", "machine": "...",
     "results": [{"case": "add 1000²", "baseline": "PyTorch", "ratio": 0.92, "interval": [0.91, 0.93]}, ...]}

``ratio`` is ndplane's time divided by the baseline's (lower is better for ndplane); several
results for one case and baseline are several runs. Each bar is the median run, its whisker
spans every run and bootstrap interval given. The x axis is logarithmic, so 0.5x and 2x sit
equally far from the line at 1 (as fast as the baseline).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any

_NUMBER = r"(\d+(?:\.\d+)?)"
_TIMES, _DASH = "\u00d7", "\\s*[\u2013-]\\s*"  # the tables' multiplication sign and en dash (or a hyphen)
# "0.92x [0.91-0.93]", "0.48-0.51x", "1.1x" (with those signs): a run value or a range of them, an interval.
_VALUE = _NUMBER + "(?:" + _DASH + _NUMBER + ")?" + _TIMES
_RATIO = re.compile(_VALUE + r"(?:\s*\[" + _NUMBER + _DASH + _NUMBER + r"\])?")
_HEADING = re.compile(r"^##\s+(?P<title>.*?\(`(?P<script>bench_\w+)\.py`[^)]*\))\s*$", re.MULTILINE)
_BASELINE = re.compile(r"ndplane\s*/\s*(PyTorch|NumPy)", re.IGNORECASE)
# NOTE: from "##" up, so that a "# comment" line in a code block does not end a section.
_SUBHEADING = re.compile(r"^#{2,6}\s+\S", re.MULTILINE)


def _cell_results(case: str, baseline: str, cell: str) -> list[dict[str, Any]]:
    """The runs in one table cell; none when the cell is not a time ratio (GFLOP/s, µs)."""
    if not re.match(r"\s*" + _VALUE, cell):
        return []
    out = []
    for m in _RATIO.finditer(cell):
        lo, hi, i_lo, i_hi = (float(g) if g else None for g in m.groups())
        interval = [i_lo, i_hi] if i_lo is not None else None
        for value in (lo, hi) if hi is not None else (lo,):
            out.append({"case": case, "baseline": baseline, "ratio": value, "interval": interval})
    return out


def tables_to_json(markdown: str, page: str = "docs/performance.md") -> dict[str, dict[str, Any]]:
    """The ratio columns of each benchmark table of the page, by script name."""
    out = {}
    headings = list(_HEADING.finditer(markdown))
    for i, h in enumerate(headings):
        section = markdown[h.end() : headings[i + 1].start() if i + 1 < len(headings) else len(markdown)]
        section = _SUBHEADING.split(section, maxsplit=1)[0]  # a later heading's tables are its own
        rows = [r for r in section.splitlines() if r.startswith("|")]
        if len(rows) < 3:
            continue
        head = [c.strip() for c in rows[0].strip("|").split("|")]
        results = []
        for row in rows[2:]:
            cells = [c.strip() for c in row.strip("|").split("|")]
            for name, cell in zip(head[1:], cells[1:]):
                b = _BASELINE.search(name)
                if b:
                    results.append(_cell_results(cells[0].replace("`", ""), b.group(1), cell))
        out[h.group("script")] = {
            "benchmark": h.group("script"), "title": h.group("title").replace("`", ""),
            "machine": f"as stated on {page}", "source": f"the published tables of {page}",
            "results": [r for cell in results for r in cell],
        }  # fmt: skip
    return out


def _series(doc: dict[str, Any]) -> tuple[list[str], list[str], dict[tuple[str, str], list[dict[str, Any]]]]:
    cases: list[str] = []
    baselines: list[str] = []
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in doc["results"]:
        if r["case"] not in cases:
            cases.append(r["case"])
        if r["baseline"] not in baselines:
            baselines.append(r["baseline"])
        runs.setdefault((r["case"], r["baseline"]), []).append(r)
    return cases, baselines, runs


def plot(docs: list[dict[str, Any]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    heights = [0.9 + 0.42 * len(_series(d)[0]) for d in docs]
    fig, axes = plt.subplots(len(docs), 1, figsize=(8.5, sum(heights)), squeeze=False,
                             gridspec_kw={"height_ratios": heights})  # fmt: skip
    colors = {"PyTorch": "#ee4c2c", "NumPy": "#4d77cf"}
    for ax, doc in zip(axes[:, 0], docs):
        cases, baselines, runs = _series(doc)
        width = 0.8 / len(baselines)
        for j, baseline in enumerate(baselines):
            ys, xs, lo, hi = [], [], [], []
            for i, case in enumerate(cases):
                rs = runs.get((case, baseline))
                if not rs:
                    continue
                values = [r["ratio"] for r in rs]
                bounds = values + [v for r in rs if r.get("interval") for v in r["interval"]]
                mid = statistics.median(values)
                ys.append(i + (j - (len(baselines) - 1) / 2) * width)
                xs.append(mid)
                lo.append(mid - min(bounds))
                hi.append(max(bounds) - mid)
            ax.barh(ys, xs, height=width * 0.9, xerr=[lo, hi], color=colors.get(baseline, f"C{j}"),
                    error_kw={"elinewidth": 1, "capsize": 2}, label=f"ndplane / {baseline}")  # fmt: skip
            for y, x, up in zip(ys, xs, hi):
                ax.annotate(f"{x:.2f}{_TIMES}", (x + up, y), xytext=(4, 0), textcoords="offset points", va="center",
                            fontsize=7)  # fmt: skip
        ax.set_xscale("log")
        left, right = ax.get_xlim()
        ax.set_xlim(left, right * 1.6)  # room for the labels
        ticks = [t for t in (0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20) if left <= t <= right * 1.6]
        ax.set_xticks(ticks, [f"{t:g}{_TIMES}" for t in ticks])
        ax.minorticks_off()
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_yticks(range(len(cases)), cases, fontsize=8)
        ax.invert_yaxis()
        ax.set_title(doc.get("title") or doc["benchmark"], fontsize=9, loc="left")
        ax.set_xlabel("ndplane time / baseline time (log scale; left of the line: ndplane faster)", fontsize=8)
        ax.tick_params(axis="x", labelsize=8)
        ax.legend(fontsize=7, loc="lower right")
        ax.grid(axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110, metadata={"Software": None})
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("inputs", nargs="*", type=Path, help="benchmark JSON files")
    parser.add_argument("-o", "--output", type=Path, help="the PNG to write")
    parser.add_argument("--from-tables", type=Path, metavar="PAGE", help="derive the JSON from a page's tables")
    parser.add_argument("-d", "--directory", type=Path, default=Path("."), help="with --from-tables: where to write")
    args = parser.parse_args(argv)
    if args.from_tables:
        for script, doc in tables_to_json(args.from_tables.read_text(), str(args.from_tables)).items():
            (args.directory / f"{script}.json").parent.mkdir(parents=True, exist_ok=True)
            (args.directory / f"{script}.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
            plot([doc], args.directory / f"{script}.png")
            print(f"wrote {args.directory / script}.json and .png ({len(doc['results'])} results)")
        return 0
    if not args.inputs or args.output is None:
        parser.error("give JSON files and -o OUT.png, or --from-tables PAGE")
    plot([json.loads(p.read_text()) for p in args.inputs], args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
