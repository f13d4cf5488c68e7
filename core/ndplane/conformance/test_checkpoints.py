"""Checkpoints on every backend: ``save`` from any layout, ``load`` onto the device, both ways.

``load`` hands each tensor to the device through ``from_host``, or through
``Backend.adopt_host`` (memory-mapped, zero-copy) where a host-resident backend takes it;
either way the arrays must hold the file's values bit for bit, accept writes without
changing the file, and free their memory (the suite checks ``memory_stats()``).
"""

from __future__ import annotations

import gc
import tempfile
from pathlib import Path

import numpy as np
import pytest
import safetensors.numpy
from hypothesis import given
from hypothesis import strategies as st

import ndplane as nd
from ndplane.conformance import _helpers as h

#: The dtypes the safetensors format stores (complex128 has no code).
STORABLE = [d for d in nd.ALL_DTYPES if d is not nd.complex128]


def _storable(device: nd.Device) -> list[nd.DType]:
    return [d for d in h.supported(device) if d in STORABLE]


@h.hyp()
@given(data=st.data(), mmap=st.booleans())
def test_save_load_round_trip(device: nd.Device, data: st.DataObject, mmap: bool) -> None:
    shape = data.draw(h.shapes(max_dims=3), label="shape")
    drawn = {d.name: data.draw(h.arrays(device, d, shape), label=f"x {d.name}") for d in _storable(device)}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ckpt.safetensors"
        nd.save(path, {k: a.x for k, a in drawn.items()}, metadata={"device": str(device)})
        on_disk = safetensors.numpy.load_file(path)
        loaded = nd.load(path, device=device, mmap=mmap)
        assert nd.load_metadata(path) == {"device": str(device)}
    assert sorted(loaded) == sorted(drawn)
    for key, a in drawn.items():
        h.assert_values(on_disk[key], a.ref, a.x.dtype, exact=True, signed_zeros=True, msg=f"{key} on disk: ")
        assert loaded[key].device == device
        h.assert_same(loaded[key], a.ref, a.x.dtype, exact=True, signed_zeros=True, msg=f"{key} loaded: ")


@pytest.mark.parametrize("mmap", [True, False])
def test_loaded_arrays_are_writable_and_the_file_is_not(device: nd.Device, mmap: bool) -> None:
    dtype = h.default(device, "real floating")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ckpt.safetensors"
        nd.save(path, {"w": nd.reshape(nd.arange(6, dtype=dtype, device=device), (2, 3))})
        w = nd.load(path, device=device, mmap=mmap)["w"]
        w[0, :] = -1.0
        w += 1.0
        h.assert_same(w, np.array([[0, 0, 0], [4, 5, 6]], h.np_dtype(dtype)), dtype, exact=True)
        again = nd.load(path, device=device, mmap=mmap)["w"]
        h.assert_same(again, np.arange(6, dtype=h.np_dtype(dtype)).reshape(2, 3), dtype, exact=True)
        # Replacing the file (save writes a new one and renames it) leaves loaded arrays intact.
        nd.save(path, {"w": nd.zeros((2, 3), dtype=dtype, device=device)})
        h.assert_same(again, np.arange(6, dtype=h.np_dtype(dtype)).reshape(2, 3), dtype, exact=True)
        del w, again
        gc.collect()


def test_unstorable_and_unsupported_dtypes(device: nd.Device) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ckpt.safetensors"
        if nd.complex128 in device.backend.dtypes:
            with pytest.raises(TypeError, match=r"ndplane.save: arrays\['z'\] has dtype complex128"):
                nd.save(path, {"z": nd.zeros(2, dtype=nd.complex128, device=device)})
            assert not path.exists()
        missing = [d for d in STORABLE if d not in device.backend.dtypes]
        if not missing:
            return
        np_missing = np.zeros(3, h.np_dtype(missing[0]))
        safetensors.numpy.save_file({"m": np_missing}, path)
        with pytest.raises(nd.UnsupportedDTypeError, match=f"tensor 'm' is {missing[0].name}"):
            nd.load(path, device=device)
