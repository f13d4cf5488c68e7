"""End to end: the digits MLP (64-128-10, Adam, batch 64) reaches >= 95% test accuracy in 20 epochs."""

from __future__ import annotations

import pytest

import ndplane as nd
from ndplane.examples import digits_mlp
from ndplane.examples._data import load_digits_split


def test_digits_mlp_trains(device: nd.Device) -> None:
    pytest.importorskip("sklearn", reason="the digits data set ships with scikit-learn (pip install ndplane[demo])")
    if nd.float32 not in device.backend.dtypes or nd.uint32 not in device.backend.dtypes:
        pytest.skip(f"{device} lacks float32 or uint32 (the example's dtypes)")
    data = load_digits_split(device)
    result = digits_mlp.train(digits_mlp.make_model(device), data, epochs=20, show_progress=False)
    assert result["test_accuracy"] >= 0.95, result
