"""Dtypes and promotion: the Array API table within a kind, higher kind wins across kinds."""

from __future__ import annotations

import numpy as np
import pytest

import ndplane as nd
from ndplane._dtypes import PROMOTION_TABLE, promote

SPEC_PAIRS = [  # rows of the Array API promotion table
    (nd.int8, nd.uint8, nd.int16), (nd.int16, nd.uint16, nd.int32), (nd.int32, nd.uint32, nd.int64),
    (nd.uint8, nd.int64, nd.int64), (nd.uint16, nd.int8, nd.int32), (nd.uint8, nd.uint32, nd.uint32),
    (nd.int8, nd.int64, nd.int64), (nd.float16, nd.float32, nd.float32), (nd.float32, nd.float64, nd.float64),
    (nd.float32, nd.complex64, nd.complex64), (nd.float64, nd.complex64, nd.complex128),
    (nd.complex64, nd.complex128, nd.complex128), (nd.bool, nd.bool, nd.bool),
]  # fmt: skip


@pytest.mark.parametrize(("a", "b", "want"), SPEC_PAIRS)
def test_array_api_table(a: nd.DType, b: nd.DType, want: nd.DType) -> None:
    assert promote(a, b) is want and promote(b, a) is want
    x, y = nd.ones(2, dtype=a), nd.ones(2, dtype=b)
    assert (x == y).dtype is nd.bool
    if a.kind != "bool":
        assert (x + y).dtype is want


def test_cross_kind_and_errors() -> None:
    assert promote(nd.int8, nd.float32) is nd.float32
    assert promote(nd.bool, nd.uint16) is nd.uint16
    assert promote(nd.int64, nd.complex64) is nd.complex64
    with pytest.raises(TypeError, match="uint64 and int8"):
        promote(nd.uint64, nd.int8)
    assert all(promote(a, b) is promote(b, a) for a, b in PROMOTION_TABLE)


def test_python_scalars_are_weak() -> None:
    x8 = nd.ones(2, dtype=nd.int8)
    f32 = nd.ones(2, dtype=nd.float32)
    assert (x8 + 3).dtype is nd.int8
    assert (f32 * 2.5).dtype is nd.float32
    assert (x8 * 2.5).dtype is nd.float64  # the device's default float
    assert (f32 + 1j).dtype is nd.complex64
    assert (nd.ones(2, dtype=nd.int32, device="numpy-nof64") / 2).dtype is nd.float32


def test_numpy_interop_of_dtypes() -> None:
    assert np.dtype(nd.float32) == np.float32
    assert np.zeros(2, dtype=nd.int16).dtype == np.int16
    assert nd.asarray(np.arange(3, dtype=np.uint8)).dtype is nd.uint8
    import pickle

    assert pickle.loads(pickle.dumps(nd.complex64)) is nd.complex64


def test_isdtype_finfo_iinfo_can_cast() -> None:
    assert nd.isdtype(nd.uint8, "unsigned integer") and not nd.isdtype(nd.uint8, "signed integer")
    assert nd.isdtype(nd.complex64, ("real floating", "complex floating"))
    with pytest.raises(ValueError, match="unknown kind"):
        nd.isdtype(nd.int8, "whatever")
    f = nd.finfo(nd.complex64)
    assert f.dtype is nd.float32 and f.bits == 32 and isinstance(f.eps, float)
    assert nd.iinfo(nd.ones(1, dtype=nd.uint8)).max == 255
    assert nd.can_cast(nd.uint8, nd.int16) and not nd.can_cast(nd.int16, nd.uint8)
    with pytest.raises(TypeError, match="finfo"):
        nd.finfo(nd.int32)
