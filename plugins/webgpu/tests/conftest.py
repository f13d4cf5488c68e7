"""Fixtures of the WebGPU plugin tests: the backend (skipped without an adapter) and a
``host`` that uploads NumPy views and checks that memory returns to its baseline."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
sys.path.insert(0, str(Path(__file__).parent))

from webgpu_helpers import Host


@pytest.fixture(scope="session")
def be():
    from ndplane_webgpu.backend import WebGPUBackend, _probe

    ok, why, _, _ = _probe()
    if not ok:
        pytest.skip(f"no WebGPU adapter: {why}")
    return WebGPUBackend(0)


@pytest.fixture
def host(be):
    before = be.memory_stats()
    h = Host(be)
    yield h
    h.free()
    assert be.memory_stats() == before


