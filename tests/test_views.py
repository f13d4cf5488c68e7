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
