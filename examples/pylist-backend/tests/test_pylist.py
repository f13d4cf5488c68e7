"""Direct kernel tests of the pylist backend, plus a few through ndplane.

The shared conformance suite is the real test of a backend:
``pytest --pyargs ndplane.conformance --ndplane-backend pylist``.
These tests call the kernels on hand-built Refs, as the core would.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import ndplane as nd
from ndplane.backend import STRIDED, Ref

pylist = pytest.importorskip("ndplane_pylist")


@pytest.fixture
def backend():
    b = pylist.PylistBackend()
    yield b
    assert b.memory_stats() == {"buffers": 0, "bytes": 0}, "a test leaked a buffer"


def ref(buf, dtype, shape, strides=None, offset=0):
    if strides is None:
        strides = tuple(int(np.prod(shape[i + 1 :])) for i in range(len(shape)))
    contiguous = strides == tuple(int(np.prod(shape[i + 1 :])) for i in range(len(shape)))
    return Ref(buf, dtype, shape, strides, offset, int(np.prod(shape)), contiguous)


def host(b, values, dtype):
    a = np.asarray(values, dtype=dtype.dtype)
    return b.from_host(a), a


def test_description():
    b = pylist.PylistBackend(0)
    assert b.name == "pylist" and b.protocol_version == 1
    assert b.dtypes == {nd.bool, nd.int64, nd.float64}
    assert set(b.default_dtypes.values()) <= b.dtypes
    assert STRIDED not in b.capabilities
    assert b.supports("matmul", nd.float64) and not b.supports("matmul", nd.bool)
    assert not b.supports("sort", nd.float64)


def test_memory_roundtrip_and_stats(backend):
    buf, a = host(backend, [[1.5, -2.0], [3.0, 4.0]], nd.float64)
    assert backend.memory_stats() == {"buffers": 1, "bytes": 32}
    np.testing.assert_array_equal(backend.to_host(ref(buf, nd.float64, (2, 2))), a)
    backend.free(buf)
    empty = backend.alloc(0)
    assert backend.to_host(ref(empty, nd.int64, (0, 3))).shape == (0, 3)
    backend.free(empty)


def test_to_host_and_copy_walk_strides(backend):
    buf, a = host(backend, np.arange(12), nd.int64)
    # a[2:0:-1, ::3] of the (3, 4) array: negative and stepped strides with an offset
    view = ref(buf, nd.int64, (2, 2), (-4, 3), 8)
    np.testing.assert_array_equal(backend.to_host(view), a.reshape(3, 4)[2:0:-1, ::3])
    bcast = ref(buf, nd.int64, (3, 2), (0, 1), 5)  # stride 0: a broadcast row
    np.testing.assert_array_equal(backend.to_host(bcast), [[5, 6]] * 3)
    dst = backend.alloc(6 * 8)
    backend.copy(bcast, ref(dst, nd.int64, (3, 2), (1, 3)))  # a column-major destination
    np.testing.assert_array_equal(backend.to_host(ref(dst, nd.int64, (6,))), [5, 5, 5, 6, 6, 6])
    backend.free(dst)
    backend.free(buf)


def test_fill_strided(backend):
    buf, _ = host(backend, np.zeros(6), nd.float64)
    backend.fill(ref(buf, nd.float64, (3,), (2,), 1), -0.5)
    got = backend.to_host(ref(buf, nd.float64, (6,)))
    np.testing.assert_array_equal(got, [0, -0.5, 0, -0.5, 0, -0.5])
    backend.free(buf)


def _run(backend, method, op, inputs, out_dtype, shape):
    out = backend.alloc(int(np.prod(shape)) * out_dtype.itemsize)
    args = [op] if op else []
    bufs = []
    for v, dt in inputs:
        if isinstance(v, (bool, int, float)):
            args.append(v)
        else:
            buf, a = host(backend, v, dt)
            bufs.append(buf)
            args.append(ref(buf, dt, a.shape))
    getattr(backend, method)(*args, ref(out, out_dtype, shape))
    result = backend.to_host(ref(out, out_dtype, shape)).copy()
    for buf in bufs + [out]:
        backend.free(buf)
    return result


def test_binary_ieee_and_int64_wraparound(backend):
    f = nd.float64
    got = _run(backend, "binary", "divide", [([1.0, -1.0, 0.0, 1.0], f), ([0.0, 0.0, 0.0, -0.0], f)], f, (4,))
    assert got[0] == math.inf and got[1] == -math.inf and math.isnan(got[2]) and got[3] == -math.inf
    big = 2**62
    got = _run(backend, "binary", "add", [([big, -(2**63)], nd.int64), (big, None)], nd.int64, (2,))
    np.testing.assert_array_equal(got, np.array([big, -(2**63)]) + np.int64(big))
    got = _run(backend, "binary", "less", [([1.0, math.nan], f), ([2.0, 1.0], f)], nd.bool, (2,))
    np.testing.assert_array_equal(got, [True, False])


def test_unary_exp_overflow(backend):
    got = _run(backend, "unary", "exp", [([0.0, 1000.0, -math.inf], nd.float64)], nd.float64, (3,))
    np.testing.assert_array_equal(got, [1.0, math.inf, 0.0])


def test_cast_follows_numpy_astype(backend):
    x = [1.7, -1.7, 0.0, -0.0]
    got = _run(backend, "cast", None, [(x, nd.float64)], nd.int64, (4,))
    np.testing.assert_array_equal(got, [1, -1, 0, 0])  # truncation toward zero
    x[-1] = math.nan
    got = _run(backend, "cast", None, [(x, nd.float64)], nd.bool, (4,))
    np.testing.assert_array_equal(got, [True, True, False, True])


def test_reduce_last_axis(backend):
    x = [[1.0, math.nan, 3.0], [4.0, 5.0, -6.0]]
    got = _run(backend, "reduce", "max", [(x, nd.float64)], nd.float64, (2,))
    assert math.isnan(got[0]) and got[1] == 5.0
    got = _run(backend, "reduce", "sum", [([[True, True], [False, True]], nd.bool)], nd.int64, (2,))
    np.testing.assert_array_equal(got, [2, 1])


def test_where_and_matmul(backend):
    got = _run(backend, "where", None,
               [([True, False], nd.bool), ([1, 2], nd.int64), ([3, 4], nd.int64)], nd.int64, (2,))  # fmt: skip
    np.testing.assert_array_equal(got, [1, 4])
    a, b = np.arange(12.0).reshape(2, 2, 3), np.arange(12.0).reshape(2, 3, 2)
    got = _run(backend, "matmul", None, [(a, nd.float64), (b, nd.float64)], nd.float64, (2, 2, 2))
    np.testing.assert_array_equal(got, a @ b)


def test_through_ndplane_views_are_compacted():
    x = nd.reshape(nd.arange(6.0, device="pylist"), (2, 3))
    y = x.T[::-1] * 2.0 + x.T  # transposed, flipped operands reach the kernel compacted
    np.testing.assert_array_equal(y.to_numpy(), (np.arange(6.0).reshape(2, 3).T[::-1] * 2.0
                                                 + np.arange(6.0).reshape(2, 3).T))  # fmt: skip
    assert (nd.sum(x, axis=0) == nd.asarray([3.0, 5.0, 7.0], device="pylist")).tolist() == [True] * 3


def test_unsupported_op_takes_host_fallback():
    x = nd.asarray([3.0, 1.0, 2.0], device="pylist")
    with nd.fallback_mode("error"), pytest.raises(nd.FallbackError, match="sort"):
        nd.sort(x)
    with nd.fallback_mode("allow"):
        assert nd.sort(x).tolist() == [1.0, 2.0, 3.0]
