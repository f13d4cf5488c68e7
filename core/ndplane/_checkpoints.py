"""Checkpoints in the safetensors format: ``save``, ``load``, ``load_metadata``.

A safetensors file is an 8-byte little-endian header length ``N``, ``N`` bytes of JSON
(``{key: {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, "__metadata__":
{str: str}}``), then the data region: each tensor's C-order little-endian bytes at
``[begin, end)``, the tensors covering the region with no hole and no overlap. Nothing in
it is code, so loading runs nothing (unlike pickle).

``save`` writes through the ``safetensors`` package, so the files are the ones PyTorch,
JAX or ``safetensors.numpy`` write and read. ``load`` parses the header itself: the
package's Python API hands out copies, while ``load`` maps the data region with NumPy
(copy-on-write) and gives each tensor to its device as a view of that mapping. A
host-resident backend that adopts host memory (``Backend.adopt_host``: ``numpy``, ``cpu``) then
uses the mapped pages as the array's buffer, so nothing is read until it is used; every
other device gets one copy, straight from the page cache into its buffer.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import safetensors
import safetensors.numpy

from . import _dispatch, _dtypes, _layout
from ._array import Array, check_array
from ._devices import Device, as_device
from ._errors import UnsupportedDTypeError

__all__ = ["save", "load", "load_metadata"]

PathLike = str | os.PathLike[str]

#: The safetensors code of each ndplane dtype it can store (complex128 has none).
CODES: dict[_dtypes.DType, str] = {
    _dtypes.bool: "BOOL", _dtypes.int8: "I8", _dtypes.int16: "I16", _dtypes.int32: "I32",
    _dtypes.int64: "I64", _dtypes.uint8: "U8", _dtypes.uint16: "U16", _dtypes.uint32: "U32",
    _dtypes.uint64: "U64", _dtypes.float16: "F16", _dtypes.float32: "F32", _dtypes.float64: "F64",
    _dtypes.complex64: "C64",
}  # fmt: skip
_FROM_CODE = {code: dtype for dtype, code in CODES.items()}
#: safetensors dtypes ndplane has no equivalent for (a valid file that ndplane cannot hold).
_FOREIGN = frozenset({
    "BF16", "F8_E4M3", "F8_E5M2", "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ", "F6_E2M3", "F6_E3M2", "F4",
})  # fmt: skip
_METADATA = "__metadata__"
_MAX_HEADER = 100_000_000  # the safetensors package's own limit


def save(path: PathLike, arrays: Mapping[str, Array], metadata: Mapping[str, str] | None = None) -> None:
    """Write ``arrays`` (name -> Array, any device, any layout) to a safetensors file.

    ``metadata`` is free text, ``{str: str}``, stored in the header. The file is written
    beside ``path`` and then renamed over it, so a crash never leaves half a checkpoint and
    arrays still mapped from the old file (see :func:`load`) keep their data. complex128
    has no safetensors code and raises ``TypeError``.

    >>> import ndplane as nd, os, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = os.path.join(tmp.name, "ckpt.safetensors")
    >>> w = nd.reshape(nd.arange(6.0, device="numpy"), (2, 3))
    >>> nd.save(path, {"w": w.T, "step": nd.asarray(7)}, metadata={"epoch": "3"})
    >>> nd.load(path, device="numpy")["w"]
    Array([[0., 3.],
           [1., 4.],
           [2., 5.]], dtype=float64, device='numpy:0')
    >>> tmp.cleanup()
    """
    if not isinstance(arrays, Mapping):
        raise TypeError(
            f"ndplane.save: arrays must be a mapping of str to Array; got {type(arrays).__name__}."
        )
    host = {key: _to_host(key, x) for key, x in arrays.items()}
    meta = _check_metadata(metadata)
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"ndplane.save: {path.parent}: no such directory.")
    if path.is_dir():
        raise IsADirectoryError(f"ndplane.save: {path} is a directory.")
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        safetensors.numpy.save_file(host, tmp, metadata=meta)
        os.replace(tmp, path)
    except safetensors.SafetensorError as exc:  # I/O errors (disk full, permissions)
        raise OSError(f"ndplane.save: cannot write {path}: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)


def _to_host(key: Any, x: Any) -> np.ndarray:
    if not isinstance(key, str):
        raise TypeError(f"ndplane.save: keys must be str; got {key!r} ({type(key).__name__}).")
    if key == _METADATA:
        raise ValueError(f"ndplane.save: the key {_METADATA!r} is reserved by the safetensors format.")
    check_array(f"ndplane.save: arrays[{key!r}]", x)
    if x.dtype not in CODES:
        raise TypeError(
            f"ndplane.save: arrays[{key!r}] has dtype {x.dtype.name}, which the safetensors format "
            f"cannot store (it stores {', '.join(d.name for d in CODES)}); cast it first, e.g. "
            f"to complex64, or save its real and imaginary parts."
        )
    # NOTE: to_host, not to_numpy: on a host-resident device a contiguous array is written
    # from its own memory, with no copy; order="C" copies only non-contiguous views.
    return np.asarray(x._storage.backend.to_host(x._ref), order="C")


def _check_metadata(metadata: Mapping[str, str] | None) -> dict[str, str] | None:
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        raise TypeError(f"ndplane.save: metadata must be a dict of str to str; got {metadata!r}.")
    return dict(metadata)


def load(path: PathLike, device: str | Device | None = None, *, mmap: bool = True) -> dict[str, Array]:
    """Read a safetensors file as ``{name: Array}`` on ``device`` (the default device if None).

    With ``mmap=True`` the file's data is memory-mapped (copy-on-write: writing to a
    loaded array never changes the file). On a device whose backend adopts host memory
    (``numpy``) each array then *is* a view of the mapping: loading costs no copy and
    reads only the pages that are used, and the mapping lives as long as the arrays, so
    do not overwrite the file in place meanwhile (:func:`save` replaces it instead, which
    is safe). Other devices copy each tensor from the mapping into their own memory, and
    the mapping is closed before ``load`` returns. ``mmap=False`` reads the file instead.

    The file is checked before any array is made; a missing file raises
    ``FileNotFoundError``, a truncated or malformed one ``ValueError`` saying what is
    wrong, a tensor whose dtype ndplane lacks (bfloat16, float8) ``TypeError``, one the
    device lacks ``UnsupportedDTypeError``.

    >>> import ndplane as nd, os, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = os.path.join(tmp.name, "ckpt.safetensors")
    >>> nd.save(path, {"a": nd.asarray([1, 2]), "b": nd.ones((2, 2), dtype=nd.float32)})
    >>> state = nd.load(path, device="numpy")
    >>> sorted(state), state["a"]
    (['a', 'b'], Array([1, 2], dtype=int64, device='numpy:0'))
    >>> tmp.cleanup()
    """
    dev = as_device(device)
    name, path = "ndplane.load", Path(path)
    with _open(path, name) as f:
        start, entries, _ = _read_header(f, path, name)
        backend = dev.backend
        for key, dtype, _, _ in entries:
            if dtype not in backend.dtypes:
                raise UnsupportedDTypeError(
                    f"{name}: {path}: tensor {key!r} is {dtype.name}, which device '{dev}' does not "
                    f"support; load the file on another device and cast it with nd.astype."
                )
        data = _map(f, start, entries) if mmap else None
        out = {}
        for key, dtype, shape, (begin, end) in sorted(entries, key=lambda e: e[0]):
            if data is not None:
                raw = data[begin:end]
            else:
                raw = np.empty(end - begin, np.uint8)
                f.seek(start + begin)
                if f.readinto(raw.data) != end - begin:
                    raise ValueError(f"{name}: {path}: the file got shorter while it was read.")
            host = raw.view(dtype.dtype.newbyteorder("<")).reshape(shape)
            if sys.byteorder == "big":
                host = host.astype(dtype.dtype)
            out[key] = _dispatch.from_host(host, dev, name, adopt=True)
    return out


def load_metadata(path: PathLike) -> dict[str, str]:
    """The ``metadata`` dict stored in a safetensors file (``{}`` when it has none).

    The whole header is checked as in :func:`load`; no tensor data is read.

    >>> import ndplane as nd, os, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = os.path.join(tmp.name, "ckpt.safetensors")
    >>> nd.save(path, {"w": nd.zeros(2)}, metadata={"epoch": "3", "format": "pt"})
    >>> sorted(nd.load_metadata(path).items())  # the file keeps no order
    [('epoch', '3'), ('format', 'pt')]
    >>> tmp.cleanup()
    """
    path = Path(path)
    with _open(path, "ndplane.load_metadata") as f:
        return _read_header(f, path, "ndplane.load_metadata")[2]


# ---------------------------------------------------------------------------
# reading: the header, checked field by field
# ---------------------------------------------------------------------------

Entry = tuple[str, _dtypes.DType, tuple[int, ...], tuple[int, int]]


def _open(path: Path, name: str) -> Any:
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise FileNotFoundError(f"{name}: {path}: no such file.") from None
    except OSError as exc:
        raise type(exc)(f"{name}: cannot open {path}: {exc.strerror or exc}.") from None


def _read_header(f: Any, path: Path, name: str) -> tuple[int, list[Entry], dict[str, str]]:
    """(start of the data region, the tensors, the metadata) of an open safetensors file."""

    where = f"{name}: {path}"

    def bad(what: str) -> ValueError:
        return ValueError(f"{where} is not a valid safetensors file: {what}.")

    size = os.fstat(f.fileno()).st_size
    if size < 8:
        raise bad(f"it has {size} bytes, fewer than the 8 of the header length (truncated?)")
    n = int.from_bytes(f.read(8), "little")
    if n > _MAX_HEADER:
        raise bad(f"the header length {n} is over the {_MAX_HEADER}-byte limit")
    if n > size - 8:
        raise bad(f"the header length is {n} bytes, but only {size - 8} bytes follow it (truncated?)")
    try:
        header = json.loads(f.read(n).decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError) as exc:
        raise bad(f"the header is not valid UTF-8 JSON ({exc})") from None
    if not isinstance(header, dict):
        raise bad(f"the header is a JSON {type(header).__name__}, not an object")
    meta = header.pop(_METADATA, None)
    meta = {} if meta is None else meta  # NOTE: the format allows null
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise bad(f"{_METADATA} must map str to str; got {meta!r}")
    entries = [_entry(key, info, where, bad) for key, info in header.items()]
    _check_coverage(entries, size - 8 - n, bad)
    return 8 + n, entries, meta


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        dup = next(k for i, (k, _) in enumerate(pairs) if k in dict(pairs[:i]))
        raise ValueError(f"the key {dup!r} appears twice")
    return out


def _entry(key: str, info: Any, where: str, bad: Callable[[str], ValueError]) -> Entry:
    if not isinstance(info, dict) or not {"dtype", "shape", "data_offsets"} <= info.keys():
        raise bad(f"tensor {key!r} needs 'dtype', 'shape' and 'data_offsets'; got {info!r}")
    code, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
    if code in _FOREIGN:
        raise TypeError(
            f"{where}: tensor {key!r} has the safetensors dtype {code}, which ndplane has no "
            f"equivalent for (it has {', '.join(CODES.values())}); convert it before saving, e.g. "
            f"bfloat16 to float32 in PyTorch."
        )
    dtype = _FROM_CODE.get(code) if isinstance(code, str) else None
    if dtype is None:
        raise bad(f"tensor {key!r} has an unknown dtype {code!r}")
    if not _ints(shape) or any(d < 0 for d in shape):
        raise bad(f"tensor {key!r} has the shape {shape!r}; expected a list of non-negative integers")
    if not _ints(offsets) or len(offsets) != 2 or not 0 <= offsets[0] <= offsets[1]:
        raise bad(f"tensor {key!r} has data_offsets {offsets!r}; expected [begin, end], 0 <= begin <= end")
    shape = tuple(shape)
    nbytes = _layout.prod(shape) * dtype.itemsize
    if offsets[1] - offsets[0] != nbytes:
        raise bad(f"tensor {key!r} has {offsets[1] - offsets[0]} bytes of data, but {dtype.name} of shape "
                  f"{shape} needs {nbytes}")  # fmt: skip
    return key, dtype, shape, (offsets[0], offsets[1])


def _ints(value: Any) -> bool:
    return isinstance(value, list) and all(type(v) is int for v in value)


def _check_coverage(entries: list[Entry], data_len: int, bad: Callable[[str], ValueError]) -> None:
    """The tensors tile the data region exactly: no overlap, no hole, nothing past its end."""
    end, last = 0, None
    for key, _, _, (b, e) in sorted(entries, key=lambda t: t[3]):
        if e > data_len:
            raise bad(f"tensor {key!r} ends at byte {e} of the data, but the file holds only {data_len} "
                      f"bytes of data (truncated?)")  # fmt: skip
        if b < end:
            raise bad(f"tensors {last!r} and {key!r} overlap (bytes {b} to {min(e, end)} of the data)")
        if b > end:
            raise bad(f"bytes {end} to {b} of the data belong to no tensor")
        end, last = e, key
    if end < data_len:
        raise bad(f"{data_len - end} bytes after the last tensor belong to no tensor")


def _map(f: Any, start: int, entries: list[Entry]) -> np.ndarray:
    data_len = max((e for *_, (_, e) in entries), default=0)
    if not data_len:
        return np.empty(0, np.uint8)  # NOTE: mmap refuses an empty mapping
    # NOTE: "c" is copy-on-write (MAP_PRIVATE): arrays that adopt the pages may be written to,
    # and the file never changes.
    return np.memmap(f, np.uint8, mode="c", offset=start, shape=(data_len,))
