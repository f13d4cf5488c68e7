"""NumPy's dispatch protocols on every backend: NumPy functions and ufuncs called on ndplane
arrays run ndplane's functions and stay on the array's device (``__array_function__``,
``__array_ufunc__``); what the tables lack is the NumPy fallback, under the fallback policy."""

from __future__ import annotations

import numpy as np
import pytest

import ndplane as nd
from ndplane import _numpy_protocol
from ndplane.conformance import _helpers as h


def test_numpy_functions_and_ufuncs_stay_on_the_device(device: nd.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    dtype = h.default(device, "real floating")
    host = np.arange(12, dtype=h.np_dtype(dtype)).reshape(3, 4) - 5
    x = nd.asarray(host, device=device)
    # The tables' rows never go through NumPy. NOTE: a spy, not fallback_mode("error"): that
    # would also refuse the op-level host fallback a backend without kernels relies on.
    through_numpy: list[str] = []
    real = _numpy_protocol._through_numpy

    def spy(self: nd.Array, name: str, *args: object, **kwargs: object) -> object:
        through_numpy.append(name)
        return real(self, name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_numpy_protocol, "_through_numpy", spy)
    cases = {
        "add": (np.add(x, 2), np.add(host, 2)),
        "multiply by a NumPy row": (np.multiply(x, host[0]), host * host[0]),
        "NumPy operand on the left": (host[0] + x, host[0] + host),
        "negative": (-x, -host),
        "sum": (np.sum(x, axis=0), np.sum(host, axis=0)),
        "max keepdims": (np.max(x, axis=1, keepdims=True), np.max(host, axis=1, keepdims=True)),
        "concatenate": (np.concatenate([x, x], axis=1), np.concatenate([host, host], axis=1)),
        "transpose": (np.transpose(x), host.T),
        "where": (np.where(x > 0, x, 0), np.where(host > 0, host, 0)),
        "zeros_like": (np.zeros_like(x), np.zeros_like(host)),
    }
    assert not through_numpy, f"table rows ran through NumPy: {through_numpy}"
    monkeypatch.undo()
    for name, (got, want) in cases.items():
        assert type(got) is nd.Array and got.device is device, f"{name}: {type(got).__name__}"
        assert got.dtype.name == want.dtype.name, f"{name}: {got.dtype.name} != {want.dtype}"
        np.testing.assert_allclose(got.to_numpy(), want, err_msg=name)
    with nd.fallback_mode("error"), pytest.raises(nd.FallbackError, match=r"numpy\.median"):
        np.median(x)
    with nd.fallback_mode("allow"):
        med = np.median(x, axis=0)  # outside the tables: through NumPy, back on the device
    assert type(med) is nd.Array and med.device is device
    np.testing.assert_allclose(med.to_numpy(), np.median(host, axis=0))
