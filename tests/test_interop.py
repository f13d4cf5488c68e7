"""NumPy conversion, pickling (protocol 5, out-of-band), devices, random determinism."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import ndplane as nd


@pytest.mark.parametrize("device", ["numpy", "numpy-nof64", "numpy-contig"])
def test_pickle_roundtrip_out_of_band(device: str) -> None:
    x = nd.asarray(np.arange(12, dtype=np.float32).reshape(3, 4), device=device).T[::-1]
    buffers: list[pickle.PickleBuffer] = []
    data = pickle.dumps(x, protocol=5, buffer_callback=buffers.append)
    assert len(buffers) == 1 and len(data) < 400  # the payload travelled out of band
    y = pickle.loads(data, buffers=buffers)
    assert y.device.kind == x.device.kind and y.dtype is x.dtype
    np.testing.assert_array_equal(y.to_numpy(), x.to_numpy())
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(x)).to_numpy(), x.to_numpy())


def test_numpy_conversion() -> None:
    host = np.arange(6.0).reshape(2, 3)
    x = nd.asarray(host)
    assert np.asarray(x).tolist() == host.tolist()
    assert np.shares_memory(np.asarray(x), np.asarray(x))  # host-resident: no copy needed
    assert not np.shares_memory(x.to_numpy(), np.asarray(x))
    host[0, 0] = 99.0
    assert float(x[0, 0]) == 0.0  # asarray copied the caller's data
    assert np.asarray(x[:, ::-1]).tolist() == [[2.0, 1.0, 0.0], [5.0, 4.0, 3.0]]
    assert nd.asarray([[True, False]]).dtype is nd.bool
    assert nd.asarray([1, 2.5]).dtype is nd.float64 and nd.asarray([1j]).dtype is nd.complex128
    with pytest.raises(OverflowError):
        nd.asarray([2**40], device="numpy-nof64")


def test_to_device_copies_between_devices() -> None:
    x = nd.arange(4.0)
    y = x.to_device("numpy:1")
    assert y.device == "numpy:1" and y._storage is not x._storage
    assert x.to_device("numpy:0") is x
    with nd.default_device("numpy-contig"):
        assert nd.zeros(1).device == "numpy-contig:0"


def test_scalars_and_repr() -> None:
    x = nd.asarray([[1.5]])
    assert float(x) == 1.5 and int(nd.asarray(3)) == 3 and complex(nd.asarray(1j)) == 1j
    assert repr(nd.asarray([1, 2], dtype=nd.int8)) == "Array([1, 2], dtype=int8, device='numpy:0')"
    with pytest.raises(TypeError, match="__index__"):
        [0, 1][nd.asarray(1.0)]  # type: ignore[index]
    with pytest.raises(TypeError, match=r"use ndplane\.asarray"):
        nd.Array()


def test_random_is_identical_on_every_device() -> None:
    want = nd.random.default_rng(123).random((5, 7), dtype=nd.float32).to_numpy()
    for dev in ("numpy:1", "numpy-nof64", "numpy-contig"):
        got = nd.random.default_rng(123).random((5, 7), dtype=nd.float32, device=dev).to_numpy()
        np.testing.assert_array_equal(got, want)
    ints = nd.random.default_rng(5).integers(-3, 4, (4000,), dtype=nd.int16).to_numpy()
    assert set(np.unique(ints)) == set(range(-3, 4))
    g = nd.random.default_rng(9)
    assert not np.array_equal(g.random(8).to_numpy(), g.random(8).to_numpy())  # the counter advances
