"""Copies and casts from a transposed source: the tiled, register-blocked paths, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from cpu_helpers import BY_NP, DTYPES

SHAPES = [(8, 8), (37, 91), (91, 37), (9, 300), (1000, 1000)]


def transposed_views(h, dtype, shape):
    """(name, view, base): views of `shape` whose rows are strided and columns contiguous."""
    base = h.data(shape[::-1], dtype, special=False)
    yield "x.T", base.T, base
    big = h.data((shape[1] + 3, 2 * shape[0] + 1), dtype, special=False)
    yield "flipped, stepped, offset", big[3:, ::-2][:, : shape[0]].T, big


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_copy_from_transposed(h, dtype):
    for shape in SHAPES:
        for name, view, base in transposed_views(h, dtype, shape):
            out = h.empty(shape, dtype)
            h.be.copy(h.put(view, base), out)
            np.testing.assert_array_equal(h.get(out), view, err_msg=f"{dtype.name} {shape} {name}")


@pytest.mark.parametrize("pair", ["float32>float64", "int8>float32", "float64>complex64", "bool>int64",
                                  "uint16>int8", "float16>float32"])  # fmt: skip
def test_cast_from_transposed(h, pair):
    src, dst = (BY_NP[np.dtype(n)] for n in pair.split(">"))
    for shape in SHAPES:
        for name, view, base in transposed_views(h, src, shape):
            out = h.empty(shape, dst)
            h.be.cast(h.put(view, base), out)
            with np.errstate(all="ignore"):
                want = view.astype(dst.dtype)
            np.testing.assert_array_equal(h.get(out), want, err_msg=f"{pair} {shape} {name}")
