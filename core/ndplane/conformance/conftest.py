"""Suite-wide fixtures of the conformance suite (the ``device`` fixture lives in ``plugin.py``)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from ndplane.conformance._helpers import live_backends


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.when == "call":
        item.stash[_CALL_FAILED] = report.failed
    return report


_CALL_FAILED = pytest.StashKey[bool]()


@pytest.fixture(autouse=True)
def memory_returns_to_baseline(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every passing test leaves each started device's ``memory_stats()`` at its baseline.

    (A failing test's traceback keeps its arrays alive, so it is not checked.)
    """
    if "device" in request.fixturenames:
        request.getfixturevalue("device").backend  # noqa: B018 - start it before the baseline
    before = {d: b.memory_stats() for d, b in live_backends().items()}
    yield
    if request.node.stash.get(_CALL_FAILED, True) or not _leaks(before):
        return
    # NOTE: a full gc.collect() costs ~0.1 s with hypothesis loaded; pay it only on suspicion
    # (arrays kept alive by reference cycles are freed by it).
    gc.collect()
    leaks = _leaks(before)
    assert not leaks, f"memory_stats() did not return to its baseline (before, after): {leaks}"


def _leaks(before: dict[Any, dict[str, int]]) -> dict[str, Any]:
    return {
        str(d): (before[d], b.memory_stats()) for d, b in live_backends().items()
        if d in before and _grew(before[d], b.memory_stats())
    }  # fmt: skip


def _grew(before: dict[str, int], after: dict[str, int]) -> bool:
    return after["buffers"] > before["buffers"] or after["bytes"] > before["bytes"]
