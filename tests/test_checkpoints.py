"""Checkpoints (``ndplane/_checkpoints.py``): safetensors files, bit for bit, on the host devices.

Round trips on every installed host-resident device and every dtype the format stores,
views of every layout, metadata, the memory-mapped path (zero-copy where the backend
adopts host memory), every kind of corrupt file, ``Module.save``/``Module.load``, and
interoperability with ``safetensors.numpy`` (always) and PyTorch (when installed). The
conformance suite (``ndplane/conformance/test_checkpoints.py``) runs the round trip on
every backend, device-resident ones included.
"""

from __future__ import annotations

import gc
import json
import pickle
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import safetensors.numpy

import ndplane as nd
from ndplane import _checkpoints
from ndplane.backend import plugins

STORABLE = list(_checkpoints.CODES)


@pytest.fixture(params=sorted(plugins.backend_specs()))
def host_device(request: pytest.FixtureRequest) -> nd.Device:
    """Every installed, available host-resident device (others are skipped)."""
    if request.param not in {d.kind for d in nd.devices()}:
        pytest.skip(f"backend {request.param!r} is not available")
    dev = nd.Device(request.param)
    if "host" not in dev.backend.capabilities:
        pytest.skip(f"{dev} is not host-resident")
    return dev


def _random(dtype: nd.DType, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Random bits of ``dtype`` (NaNs with payloads, infinities, subnormals included)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype is nd.bool:
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    return rng.integers(0, 256, n * dtype.itemsize, dtype=np.uint8).view(dtype.dtype).reshape(shape)


def _assert_bits(got: nd.Array | np.ndarray, want: np.ndarray) -> None:
    host = got.to_numpy() if isinstance(got, nd.Array) else got
    assert host.dtype == want.dtype and host.shape == want.shape
    assert host.tobytes() == np.ascontiguousarray(want).tobytes()


def _bases(a: np.ndarray) -> list[Any]:
    chain = []
    while a is not None:
        chain.append(a)
        a = getattr(a, "base", None)
    return chain


# ---------------------------------------------------------------------------
# round trips
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("mmap", [True, False], ids=["mmap", "read"])
def test_every_dtype_round_trips_bit_exactly(host_device: nd.Device, mmap: bool, tmp_path: Path) -> None:
    dtypes = [d for d in STORABLE if d in host_device.backend.dtypes]
    shapes = [(3, 5), (), (0, 4), (2, 1, 3)]
    want = {f"{d.name}/{i}": _random(d, s, i) for d in dtypes for i, s in enumerate(shapes)}
    path = tmp_path / "all.safetensors"
    nd.save(path, {k: nd.asarray(v, device=host_device) for k, v in want.items()})
    loaded = nd.load(path, device=host_device, mmap=mmap)
    assert list(loaded) == sorted(want)
    for key, value in want.items():
        assert loaded[key].device == host_device and loaded[key].dtype is nd.asarray(value).dtype
        _assert_bits(loaded[key], value)
    on_disk = safetensors.numpy.load_file(path)
    for key, value in want.items():
        _assert_bits(on_disk[key], value)


VIEWS: dict[str, Callable[[Any, Any], Any]] = {
    "transposed": lambda xp, a: a.T,
    "negative strides": lambda xp, a: a[::-1, ::-2],
    "stepped with an offset": lambda xp, a: a[1:, 1::2],
    "0-d element": lambda xp, a: a[2, 3],
    "empty": lambda xp, a: a[2:2, :],
    "broadcast": lambda xp, a: xp.broadcast_to(a[1], (2, 3, 4)),
    "permuted 3-d": lambda xp, a: xp.permute_dims(xp.reshape(a, (2, 3, 2)), (2, 0, 1)),
}


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_views_are_saved_as_their_values(host_device: nd.Device, view: str, tmp_path: Path) -> None:
    dtype = nd.float64 if nd.float64 in host_device.backend.dtypes else nd.float32
    base = _random(dtype, (3, 4))
    x = VIEWS[view](nd, nd.asarray(base, device=host_device))
    want = np.asarray(VIEWS[view](np, base))
    path = tmp_path / "view.safetensors"
    nd.save(path, {"v": x})
    _assert_bits(safetensors.numpy.load_file(path)["v"], want)
    _assert_bits(nd.load(path, device=host_device)["v"], want)


def test_views_of_one_storage_are_saved_separately(tmp_path: Path) -> None:
    x = nd.reshape(nd.arange(6.0), (2, 3))
    nd.save(tmp_path / "tied.safetensors", {"x": x, "row": x[1], "col": x[:, 2]})
    got = nd.load(tmp_path / "tied.safetensors")
    assert got["row"].tolist() == [3.0, 4.0, 5.0] and got["col"].tolist() == [2.0, 5.0]
    got["x"][1, 2] = -1.0
    assert got["row"].tolist() == [3.0, 4.0, 5.0], "loaded arrays share no memory"


def test_arrays_requiring_grad_are_saved_as_values(tmp_path: Path) -> None:
    w = nd.asarray([1.0, 2.0], requires_grad=True)
    nd.save(tmp_path / "w.safetensors", {"w": w * 2})
    got = nd.load(tmp_path / "w.safetensors")["w"]
    assert got.tolist() == [2.0, 4.0] and not got.requires_grad


def test_load_uses_the_default_device(tmp_path: Path) -> None:
    nd.save(tmp_path / "a.safetensors", {"a": nd.arange(3)})
    with nd.default_device("numpy:1"):
        assert nd.load(tmp_path / "a.safetensors")["a"].device == "numpy:1"
    assert nd.load(tmp_path / "a.safetensors", device="numpy-contig")["a"].device == "numpy-contig:0"


def test_metadata(tmp_path: Path) -> None:
    path = tmp_path / "m.safetensors"
    nd.save(path, {"a": nd.zeros(1)})
    assert nd.load_metadata(path) == {}
    nd.save(path, {"a": nd.zeros(1)}, metadata={"epoch": "3", "ünïcode": "✓"})
    assert nd.load_metadata(path) == {"epoch": "3", "ünïcode": "✓"}
    with safetensors.safe_open(path, framework="np") as f:
        assert f.metadata() == {"epoch": "3", "ünïcode": "✓"}


def test_null_metadata_is_no_metadata(tmp_path: Path) -> None:
    (tmp_path / "n.safetensors").write_bytes(_file({"__metadata__": None, "a": _t("I8", [2], [0, 2])}, b"\x01\xff"))
    assert nd.load_metadata(tmp_path / "n.safetensors") == {}
    assert nd.load(tmp_path / "n.safetensors")["a"].tolist() == [1, -1]


def test_an_empty_checkpoint(tmp_path: Path) -> None:
    nd.save(tmp_path / "e.safetensors", {}, metadata={"note": "nothing"})
    assert nd.load(tmp_path / "e.safetensors") == {}
    assert nd.load_metadata(tmp_path / "e.safetensors") == {"note": "nothing"}


# ---------------------------------------------------------------------------
# memory mapping
# ---------------------------------------------------------------------------


def test_mmap_is_zero_copy_where_the_backend_adopts_host_memory(tmp_path: Path, no_leaks: None) -> None:
    path = tmp_path / "big.safetensors"
    nd.save(path, {"w": nd.reshape(nd.arange(12.0), (3, 4)), "i": nd.arange(5, dtype=nd.int32)})
    mapped = nd.load(path, device="numpy")
    read = nd.load(path, device="numpy", mmap=False)
    assert any(isinstance(b, np.memmap) for b in _bases(np.asarray(mapped["w"])))
    assert not any(isinstance(b, np.memmap) for b in _bases(np.asarray(read["w"])))
    # Copy-on-write: the loaded array may be written, the file never is.
    mapped["w"][0, 0] = 100.0
    mapped["w"] += 1.0
    assert mapped["w"][0].tolist() == [101.0, 2.0, 3.0, 4.0]
    assert safetensors.numpy.load_file(path)["w"][0].tolist() == [0.0, 1.0, 2.0, 3.0]
    # save replaces the file (a new inode), so the mapped arrays keep their values.
    nd.save(path, {"w": nd.zeros((3, 4))})
    assert mapped["w"][2].tolist() == [9.0, 10.0, 11.0, 12.0] and mapped["i"].tolist() == [0, 1, 2, 3, 4]
    del mapped, read
    gc.collect()


def test_misaligned_tensors_are_copied_not_adopted(tmp_path: Path) -> None:
    # A writer that does not align: a 3-byte tensor first puts the float64 one at offset 3.
    header = {"a": {"dtype": "U8", "shape": [3], "data_offsets": [0, 3]},
              "b": {"dtype": "F64", "shape": [2], "data_offsets": [3, 19]}}  # fmt: skip
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    data = bytes([1, 2, 3]) + np.array([1.5, -2.5]).tobytes()
    (tmp_path / "m.safetensors").write_bytes(struct.pack("<Q", len(raw)) + raw + data)
    got = nd.load(tmp_path / "m.safetensors", device="numpy")
    assert got["a"].tolist() == [1, 2, 3] and got["b"].tolist() == [1.5, -2.5]
    assert not any(isinstance(b, np.memmap) for b in _bases(np.asarray(got["b"])))


def test_backends_that_do_not_adopt_get_a_copy(tmp_path: Path) -> None:
    pytest.importorskip("ndplane_pylist")
    nd.save(tmp_path / "p.safetensors", {"w": nd.arange(4.0)})
    w = nd.load(tmp_path / "p.safetensors", device="pylist")["w"]
    assert type(w._storage.buffer) is bytearray and w.tolist() == [0.0, 1.0, 2.0, 3.0]


# ---------------------------------------------------------------------------
# errors: saving
# ---------------------------------------------------------------------------


def test_save_errors_name_the_key_and_write_nothing(tmp_path: Path) -> None:
    path = tmp_path / "bad.safetensors"
    cases: list[tuple[Any, dict[str, Any], type[Exception], str]] = [
        ({"z": nd.zeros(2, dtype=nd.complex128)}, {}, TypeError,
         r"ndplane.save: arrays\['z'\] has dtype complex128, which the safetensors format cannot store"),
        ({"w": np.zeros(2)}, {}, TypeError,
         r"ndplane.save: arrays\['w'\]: expected an ndplane array; got ndarray"),
        ({1: nd.zeros(2)}, {}, TypeError, "ndplane.save: keys must be str; got 1"),
        ({"__metadata__": nd.zeros(2)}, {}, ValueError, "'__metadata__' is reserved"),
        ([nd.zeros(2)], {}, TypeError, "arrays must be a mapping of str to Array; got list"),
        ({"a": nd.zeros(2)}, {"metadata": {"epoch": 3}}, TypeError, "metadata must be a dict of str to str"),
    ]  # fmt: skip
    for arrays, kwargs, exc, message in cases:
        with pytest.raises(exc, match=message):
            nd.save(path, arrays, **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_save_into_a_missing_directory_leaves_no_temporary(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"ndplane\.save: .*nodir: no such directory"):
        nd.save(tmp_path / "nodir" / "a.safetensors", {"a": nd.zeros(1)})
    with pytest.raises(IsADirectoryError, match=r"ndplane\.save: .* is a directory"):
        nd.save(tmp_path, {"a": nd.zeros(1)})
    nd.save(tmp_path / "a.safetensors", {"a": nd.zeros(1)})
    assert [p.name for p in tmp_path.iterdir()] == ["a.safetensors"]


# ---------------------------------------------------------------------------
# errors: loading corrupt files
# ---------------------------------------------------------------------------


def _file(header: Any, data: bytes = b"", *, length: int | None = None) -> bytes:
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(raw) if length is None else length) + raw + data


def _t(dtype: str, shape: list[Any], offsets: list[Any]) -> dict[str, Any]:
    return {"dtype": dtype, "shape": shape, "data_offsets": offsets}


F32x2 = _t("F32", [2], [0, 8])
CORRUPT: dict[str, tuple[bytes, type[Exception], str]] = {
    "empty file": (b"", ValueError, "it has 0 bytes, fewer than the 8 of the header length"),
    "cut in the length": (b"\x10\x00\x00", ValueError, "it has 3 bytes"),
    "header past the end": (_file({"a": F32x2}, length=4096), ValueError,
                            "the header length is 4096 bytes, but only"),
    "header over the limit": (_file(b"{}", length=10**9), ValueError, "is over the 100000000-byte limit"),
    "bad JSON": (_file(b'{"a": {"dtype": "F32",'), ValueError, "the header is not valid UTF-8 JSON"),
    "not UTF-8": (_file(b'{"\xff": 1}'), ValueError, "the header is not valid UTF-8 JSON"),
    "not an object": (_file([1, 2]), ValueError, "the header is a JSON list, not an object"),
    "duplicate key": (_file(b'{"a": {}, "a": {}}'), ValueError, "the key 'a' appears twice"),
    "missing field": (_file({"a": {"dtype": "F32", "shape": [2]}}), ValueError,
                      "tensor 'a' needs 'dtype', 'shape' and 'data_offsets'"),
    "unknown dtype": (_file({"a": _t("F12", [2], [0, 8])}, bytes(8)), ValueError,
                      "tensor 'a' has an unknown dtype 'F12'"),
    "dtype not a string": (_file({"a": _t(7, [2], [0, 8])}, bytes(8)), ValueError, "unknown dtype 7"),
    "negative shape": (_file({"a": _t("F32", [-2], [0, 8])}, bytes(8)), ValueError, r"the shape \[-2\]"),
    "bool in shape": (_file({"a": _t("F32", [True], [0, 4])}, bytes(4)), ValueError, r"the shape \[True\]"),
    "three offsets": (_file({"a": _t("F32", [2], [0, 4, 8])}, bytes(8)), ValueError,
                      r"data_offsets \[0, 4, 8\]"),
    "offsets reversed": (_file({"a": _t("F32", [2], [8, 0])}, bytes(8)), ValueError, "0 <= begin <= end"),
    "short tensor": (_file({"a": _t("F32", [3], [0, 8])}, bytes(8)), ValueError,
                     "tensor 'a' has 8 bytes of data, but float32 of shape \\(3,\\) needs 12"),
    "overlap": (_file({"a": F32x2, "b": _t("F32", [2], [4, 12])}, bytes(12)), ValueError,
                "tensors 'a' and 'b' overlap"),
    "hole": (_file({"a": F32x2, "b": _t("F32", [1], [12, 16])}, bytes(16)), ValueError,
             "bytes 8 to 12 of the data belong to no tensor"),
    "offsets out of range": (_file({"a": _t("F32", [2], [1000, 1008])}, bytes(8)), ValueError,
                             "tensor 'a' ends at byte 1008 of the data, but the file holds only 8 bytes"),
    "truncated data": (_file({"a": F32x2}, bytes(5)), ValueError,
                       "tensor 'a' ends at byte 8 of the data, but the file holds only 5 bytes of data"),
    "trailing bytes": (_file({"a": F32x2}, bytes(12)), ValueError,
                       "4 bytes after the last tensor belong to no tensor"),
    "bad metadata": (_file({"__metadata__": {"epoch": 3}}), ValueError, "__metadata__ must map str to str"),
    "bfloat16": (_file({"w": _t("BF16", [2], [0, 4])}, bytes(4)), TypeError,
                 "tensor 'w' has the safetensors dtype BF16, which ndplane has no equivalent for"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CORRUPT))
@pytest.mark.parametrize("mmap", [True, False], ids=["mmap", "read"])
def test_corrupt_files_raise_a_clear_error(case: str, mmap: bool, tmp_path: Path) -> None:
    content, exc, message = CORRUPT[case]
    path = tmp_path / f"{case}.safetensors"
    path.write_bytes(content)
    for load in (lambda: nd.load(path, mmap=mmap), lambda: nd.load_metadata(path)):
        with pytest.raises(exc, match=message) as info:
            load()
        assert str(path) in str(info.value) and "ndplane.load" in str(info.value)


def test_every_truncation_of_a_real_file_is_an_error(tmp_path: Path) -> None:
    full = tmp_path / "full.safetensors"
    nd.save(full, {"a": nd.arange(3.0), "b": nd.asarray([True]), "c": nd.zeros((2, 2), dtype=nd.int16)})
    raw = full.read_bytes()
    cut = tmp_path / "cut.safetensors"
    for n in range(len(raw)):
        cut.write_bytes(raw[:n])
        with pytest.raises(ValueError, match=r"ndplane.load: .* is not a valid safetensors file"):
            nd.load(cut)


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"ndplane\.load: .*nope\.safetensors: no such file"):
        nd.load(tmp_path / "nope.safetensors")
    with pytest.raises(IsADirectoryError, match=r"ndplane\.load: cannot open"):
        nd.load(tmp_path)


class _Exploit:
    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.touch, (Path(_Exploit.target),))

    target = ""


def test_a_pickle_is_rejected_and_never_run(tmp_path: Path) -> None:
    _Exploit.target = str(tmp_path / "pwned")
    (tmp_path / "model.pt").write_bytes(pickle.dumps({"w": _Exploit()}))
    with pytest.raises(ValueError, match="is not a valid safetensors file"):
        nd.load(tmp_path / "model.pt")
    assert not (tmp_path / "pwned").exists()


def test_a_dtype_the_device_lacks(tmp_path: Path) -> None:
    nd.save(tmp_path / "f.safetensors", {"w": nd.zeros(2, dtype=nd.float64)})
    with pytest.raises(nd.UnsupportedDTypeError, match="tensor 'w' is float64, which device 'numpy-nof64:0'"):
        nd.load(tmp_path / "f.safetensors", device="numpy-nof64")


# ---------------------------------------------------------------------------
# interoperability: safetensors.numpy (always), PyTorch (when installed)
# ---------------------------------------------------------------------------


def test_files_are_byte_identical_to_safetensors_numpy(tmp_path: Path) -> None:
    want = {d.name: _random(d, (2, 3), i) for i, d in enumerate(STORABLE)}
    want["scalar"], want["empty"] = np.array(1.5, np.float32), np.zeros((0, 2), np.int8)
    safetensors.numpy.save_file(want, tmp_path / "theirs.safetensors", metadata={"by": "numpy"})
    ours = {k: nd.asarray(v) for k, v in want.items()}
    nd.save(tmp_path / "ours.safetensors", ours, metadata={"by": "numpy"})
    assert (tmp_path / "ours.safetensors").read_bytes() == (tmp_path / "theirs.safetensors").read_bytes()
    got = nd.load(tmp_path / "theirs.safetensors")
    for key, value in want.items():
        _assert_bits(got[key], value)
    assert nd.load_metadata(tmp_path / "theirs.safetensors") == {"by": "numpy"}


def _torch_state(torch: Any) -> dict[str, Any]:
    g = torch.Generator().manual_seed(0)
    state = {
        "f16": torch.randn(3, 4, generator=g).half(), "f32": torch.randn(2, 3, generator=g),
        "f64": torch.randn(5, dtype=torch.float64, generator=g),
        "c64": torch.randn(2, dtype=torch.complex64, generator=g),
        "i8": torch.randint(-128, 127, (4,), dtype=torch.int8, generator=g),
        "i64": torch.randint(-(2**62), 2**62, (3,), dtype=torch.int64, generator=g),
        "u8": torch.randint(0, 255, (2, 2), dtype=torch.uint8, generator=g), "b": torch.tensor([True, False]),
        "scalar": torch.tensor(2.5), "empty": torch.zeros(0, 3),
        "nan": torch.tensor([float("nan"), float("inf"), -0.0]),
    }  # fmt: skip
    return state


def test_a_pytorch_state_dict_round_trips_bit_exactly(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    st_torch = pytest.importorskip("safetensors.torch")
    state = _torch_state(torch)
    st_torch.save_file(state, tmp_path / "torch.safetensors", metadata={"format": "pt"})
    got = nd.load(tmp_path / "torch.safetensors", device="numpy")
    for key, tensor in state.items():
        _assert_bits(got[key], tensor.numpy())
    nd.save(tmp_path / "back.safetensors", got, metadata=nd.load_metadata(tmp_path / "torch.safetensors"))
    back = st_torch.load_file(tmp_path / "back.safetensors")
    for key, tensor in state.items():
        assert back[key].dtype == tensor.dtype and back[key].shape == tensor.shape
        assert back[key].numpy().tobytes() == tensor.numpy().tobytes()
    assert (tmp_path / "back.safetensors").read_bytes() == (tmp_path / "torch.safetensors").read_bytes()


def test_a_pytorch_model_loads_into_ndplane_and_back(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    st_torch = pytest.importorskip("safetensors.torch")
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3)).double()
    st_torch.save_file(theirs.state_dict(), tmp_path / "torch.safetensors")
    ours = nd.nn.Sequential(nd.nn.Linear(4, 8), nd.nn.ReLU(), nd.nn.Linear(8, 3))
    assert ours.load(tmp_path / "torch.safetensors") is ours
    x = np.random.default_rng(0).standard_normal((5, 4))
    with torch.no_grad():
        expected = theirs(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ours(nd.asarray(x)).to_numpy(), expected, rtol=1e-12, atol=1e-12)
    # ... and an ndplane model's checkpoint loads into PyTorch.
    with nd.no_grad():
        for p in ours.parameters():
            p[...] = p * 2.0
    ours.save(tmp_path / "ours.safetensors")
    theirs.load_state_dict(st_torch.load_file(tmp_path / "ours.safetensors"))
    with torch.no_grad():
        expected = theirs(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ours(nd.asarray(x)).to_numpy(), expected, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------
# Module.save / Module.load
# ---------------------------------------------------------------------------


def _mlp(seed: int, device: str = "numpy") -> nd.nn.Module:
    g = nd.random.default_rng(seed, device=device)
    return nd.nn.Sequential(nd.nn.Linear(4, 8, device=device, generator=g), nd.nn.ReLU(),
                            nd.nn.Linear(8, 2, device=device, generator=g))  # fmt: skip


def test_module_round_trip_after_a_training_step(tmp_path: Path) -> None:
    model = _mlp(0)
    x = nd.asarray(np.random.default_rng(1).standard_normal((6, 4)))
    opt = nd.optim.Adam(model.parameters(), lr=0.1)
    loss = nd.sum(model(x) ** 2)
    loss.backward()
    opt.step()
    model.save(tmp_path / "model.safetensors", metadata={"step": "1"})
    fresh = _mlp(1)
    assert not np.array_equal(fresh(x).to_numpy(), model(x).to_numpy())
    assert fresh.load(tmp_path / "model.safetensors") is fresh
    assert fresh(x).to_numpy().tobytes() == model(x).to_numpy().tobytes()
    assert nd.load_metadata(tmp_path / "model.safetensors") == {"step": "1"}
    assert all(p.requires_grad and p.is_leaf for p in fresh.parameters())


def test_module_load_keeps_the_modules_device_and_dtype(tmp_path: Path) -> None:
    _mlp(0).save(tmp_path / "model.safetensors")  # float64 on numpy
    model = nd.nn.Sequential(nd.nn.Linear(4, 8, device="numpy-nof64"), nd.nn.ReLU(),
                             nd.nn.Linear(8, 2, device="numpy-nof64"))  # fmt: skip
    with pytest.raises(nd.UnsupportedDTypeError, match=r"tensor '0\.bias' is float64"):
        model.load(tmp_path / "model.safetensors")
    model32 = _mlp(0)
    with nd.no_grad():
        for p in model32.parameters():
            p[...] = 0.0
    model32.load(tmp_path / "model.safetensors")
    assert model32.state_dict()["0.weight"].tolist() == _mlp(0).state_dict()["0.weight"].tolist()


def test_module_load_strict(tmp_path: Path) -> None:
    nd.save(tmp_path / "part.safetensors", {"0.weight": nd.zeros((8, 4)), "extra": nd.zeros(1)})
    model = _mlp(0)
    missing = r"missing keys \['0.bias', '2.weight', '2.bias'\], unexpected keys \['extra'\]"
    with pytest.raises(KeyError, match=r"Module.load: .*part.safetensors: load_state_dict: " + missing):
        model.load(tmp_path / "part.safetensors")
    assert model.state_dict()["0.weight"].tolist() != np.zeros((8, 4)).tolist(), "strict loads nothing"
    model.load(tmp_path / "part.safetensors", strict=False)
    assert model.state_dict()["0.weight"].tolist() == np.zeros((8, 4)).tolist()
    nd.save(tmp_path / "shape.safetensors", {"0.weight": nd.zeros((4, 8))})
    with pytest.raises(ValueError, match=r"Module\.load: .*: load_state_dict: 0\.weight has shape"):
        model.load(tmp_path / "shape.safetensors", strict=False)
