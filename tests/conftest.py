from __future__ import annotations

import gc

import pytest

import ndplane as nd


@pytest.fixture(autouse=True)
def _reference_default_device():  # type: ignore[no-untyped-def]
    """Core tests run on the reference backend unless they name a device (a cpu or GPU plugin
    installed beside it would otherwise become the default)."""
    with nd.default_device("numpy"):
        yield


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
