"""Shared timing helpers: best-of-N wall time, ratios printed side by side in one run."""

from __future__ import annotations

import timeit
from typing import Any, Callable


def best_time(fn: Callable[[], Any], *, min_time: float = 0.2, repeat: int = 5) -> float:
    """Best per-call seconds over ``repeat`` rounds, each running at least ``min_time``."""
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    number = max(1, int(number * min_time / 0.2))
    return min(timer.repeat(repeat=repeat, number=number)) / number


def print_table(rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))))


def try_import_torch() -> Any:
    try:
        import torch  # noqa: PLC0415

        torch.set_num_threads(max(1, torch.get_num_threads()))
        return torch
    except ImportError:
        return None


def device_from_args() -> Any:
    """The ndplane device named by ``--device`` (the default device without it)."""
    import argparse

    import ndplane as nd

    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default=None)
    args = parser.parse_args()
    return nd.Device(args.device) if args.device else nd.get_default_device()
