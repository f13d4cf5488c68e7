"""Suite-wide fixtures of the conformance suite (the ``device`` fixture lives in ``plugin.py``)."""

from __future__ import annotations

import gc
from typing import Iterator

import pytest

from ndplane.conformance._helpers import live_backends


@pytest.fixture(autouse=True)
def memory_returns_to_baseline(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every test leaves each started device's ``memory_stats()`` where it found it."""
    if "device" in request.fixturenames:
        request.getfixturevalue("device").backend  # noqa: B018 - start it before the baseline
    gc.collect()
    before = {d: b.memory_stats() for d, b in live_backends().items()}
    yield
    gc.collect()
    leaks = {
        str(d): (before[d], b.memory_stats()) for d, b in live_backends().items()
        if d in before and b.memory_stats() != before[d]
    }  # fmt: skip
    assert not leaks, f"memory_stats() did not return to its baseline (before, after): {leaks}"
