from __future__ import annotations

import gc

import pytest

import ndplane as nd


@pytest.fixture
def numpy_device() -> nd.Device:
    return nd.Device("numpy")


@pytest.fixture
def no_leaks():
    """Fail a test that leaves buffers alive on any numpy device."""
    devs = [nd.Device(n) for n in ("numpy", "numpy:1", "numpy-nof64", "numpy-contig")]
    gc.collect()
    before = [d.backend.memory_stats() for d in devs]
    yield
    gc.collect()
    after = [d.backend.memory_stats() for d in devs]
    assert after == before
