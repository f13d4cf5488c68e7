"""The digits data set (it ships inside scikit-learn: no download) as device arrays."""

from __future__ import annotations

from typing import Any

import numpy as np

import ndplane as nd


def load_digits_split(device: Any = None, test_fraction: float = 0.2, seed: int = 0) -> tuple[nd.Array, ...]:
    """(x_train, y_train, x_test, y_test): 8x8 images scaled to [0, 1] as float32, int labels."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise SystemExit(
            "The digits examples need scikit-learn (the data set ships inside it): "
            "pip install scikit-learn tqdm   (or: pip install ndplane[demo])"
        ) from None
    data = load_digits()
    order = np.random.default_rng(seed).permutation(len(data.target))
    x = (data.data[order] / 16.0).astype(np.float32)
    y = data.target[order].astype(np.int64)
    n_test = int(len(y) * test_fraction)
    dev = nd.Device(device) if device is not None else nd.get_default_device()
    index = dev.backend.default_dtypes["indexing"]
    to = lambda a, dt=None: nd.asarray(a, device=dev, dtype=dt)  # noqa: E731
    return to(x[n_test:]), to(y[n_test:], index), to(x[:n_test]), to(y[:n_test], index)


def progress(iterable: Any, enabled: bool, **kwargs: Any) -> Any:
    """A tqdm progress bar when tqdm is installed and ``enabled``; the plain iterable otherwise."""
    if not enabled:
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return iterable
    return tqdm(iterable, **kwargs)
