"""Fixtures of the cpu backend's tests; the helpers live in cpu_helpers.py."""

from __future__ import annotations

import os
import sys

import pytest

pytest.importorskip("ndplane_cpu._native")
sys.path.insert(0, os.path.dirname(__file__))

from cpu_helpers import Helper


@pytest.fixture
def h():
    helper = Helper()
    before = helper.be.memory_stats()
    yield helper
    helper.free_all()
    assert helper.be.memory_stats() == before, "cpu buffers leaked"
