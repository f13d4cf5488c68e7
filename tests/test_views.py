"""Views are metadata only: O(1), no allocation, shared storage in both directions."""

from __future__ import annotations

import numpy as np
import pytest

import ndplane as nd

VIEWS = {
    "slice": (lambda x: x[1:, ::2], lambda a: a[1:, ::2]),
    "negative step": (lambda x: x[::-1, ::-3], lambda a: a[::-1, ::-3]),
    "int + ellipsis": (lambda x: x[..., 2], lambda a: a[..., 2]),
    "newaxis": (lambda x: x[None, :, None], lambda a: a[None, :, None]),
    "T": (lambda x: x.T, lambda a: a.T),
    "permute_dims": (lambda x: nd.permute_dims(x, (1, 0)), lambda a: a.transpose(1, 0)),
    "reshape": (lambda x: nd.reshape(x, (6, 4)), lambda a: a.reshape(6, 4)),
    "flip": (lambda x: nd.flip(x, axis=1), lambda a: np.flip(a, axis=1)),
    "expand+squeeze": (lambda x: nd.squeeze(nd.expand_dims(x, axis=0), axis=0), lambda a: a),
    "broadcast_to": (lambda x: nd.broadcast_to(x[:1], (3, 4, 6)), lambda a: np.broadcast_to(a[:1], (3, 4, 6))),
    "moveaxis": (lambda x: nd.moveaxis(x, 0, 1), lambda a: np.moveaxis(a, 0, 1)),
    "unstack": (lambda x: nd.unstack(x, axis=1)[3], lambda a: a[:, 3]),
}


@pytest.mark.parametrize("name", list(VIEWS))
@pytest.mark.parametrize("device", ["numpy", "numpy-contig"])
def test_view_values_and_no_allocation(name: str, device: str, no_leaks: None) -> None:
    view, ref = VIEWS[name]
    host = np.arange(24.0).reshape(4, 6)
    x = nd.asarray(host, device=device)
    stats = x.device.backend.memory_stats()
    v = view(x)
    assert x.device.backend.memory_stats() == stats, "a view allocated memory"
    assert v._storage is x._storage
    np.testing.assert_array_equal(v.to_numpy(), ref(host))


def test_writes_are_visible_both_ways() -> None:
    x = nd.zeros((4, 6))
    v = x[1:3, ::-2]
    v[...] = 7.0
    assert float(nd.sum(x)) == 7.0 * v.size
    x[1, 5] = -1.0
    assert float(v[0, 0]) == -1.0
    t = x.T
    t[0, 3] = 5.0
    assert float(x[3, 0]) == 5.0


def test_view_cost_is_independent_of_size() -> None:
    # Same number of allocations and the same layout math for 16 and 16M elements.
    for n in (16, 16 * 1024 * 1024):
        x = nd.empty((n // 16, 16), dtype=nd.float32)
        backend = x.device.backend
        before = backend.memory_stats()
        views = [x.T, x[::2], x[:, 3], nd.reshape(x, (16, -1)), nd.flip(x), nd.expand_dims(x, axis=1)]
        assert backend.memory_stats() == before
        assert all(v._storage is x._storage for v in views)
        del x, views


def test_reshape_copies_only_when_needed() -> None:
    x = nd.reshape(nd.arange(12), (3, 4))
    assert nd.reshape(x.T, (12,))._storage is not x._storage  # transposed: must copy
    assert nd.reshape(x[:, :2], (6,))._storage is not x._storage
    assert nd.reshape(x[1:], (8,))._storage is x._storage
    with pytest.raises(ValueError, match="copy=False"):
        nd.reshape(x.T, (12,), copy=False)
    assert nd.reshape(x, (12,), copy=True)._storage is not x._storage
    with pytest.raises(ValueError, match="cannot reshape an array of size 12 into shape"):
        nd.reshape(x, (5, -1))


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "flipped"])
def test_setitem_integer_arrays_on_any_axes_and_views(layout: str) -> None:
    # x[rows] = y (the advanced axes moved first), on views, with duplicate rows (the last
    # write wins, as NumPy's), advanced axes apart, and the gradient of both operands
    rng = np.random.default_rng(5)
    host = rng.standard_normal((6, 5, 4))
    keys = [(np.array([4, 0, 4, 2]),), (slice(None), np.array([3, 1])), (np.array([0, 5]), slice(None), np.array([1, 3])),
            (np.array([[1], [2]]), np.array([0, 4]))]  # fmt: skip
    for key in keys:
        if layout == "transposed":  # a (6, 5, 4) view of a (4, 5, 6) array
            x = nd.permute_dims(nd.asarray(np.ascontiguousarray(host.transpose(2, 1, 0))), (2, 1, 0))
        else:
            x = nd.asarray(host, copy=True) if layout == "contiguous" else nd.flip(nd.asarray(host), axis=0)
        ref = x.to_numpy().copy()
        value = rng.standard_normal(ref[key].shape)
        nd_key = tuple(nd.asarray(k) if isinstance(k, np.ndarray) else k for k in key)
        x[nd_key] = nd.asarray(value)
        ref[key] = value
        np.testing.assert_array_equal(x.to_numpy(), ref)
    w = nd.asarray(host, requires_grad=True)
    v = nd.asarray(rng.standard_normal((3, 5, 4)), requires_grad=True)
    y = w * 1.0
    y[nd.asarray([1, 3, 1])] = v * 2.0
    nd.sum(y * y).backward()
    gw = 2 * host
    gw[[1, 3]] = 0
    hv = v.to_numpy()
    gv = 8 * hv[[2, 1, 2]]  # row 1 holds v[2] (the last write); both writes to it get its gradient, as PyTorch's
    np.testing.assert_allclose(w.grad.to_numpy(), gw)
    np.testing.assert_allclose(v.grad.to_numpy(), gv)
