"""ndplane arrays as the chunks of dask.array (``ndplane.dask``), on the threaded scheduler and on
a LocalCluster of two worker processes: results against NumPy, the type and device of the chunks
inside the graph, and no conversion of a chunk to NumPy anywhere in it."""

from __future__ import annotations

import contextlib
import os
import pickle
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import ndplane as nd

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import cloudpickle  # noqa: E402
import dask  # noqa: E402
import dask.sizeof  # noqa: E402
from dask.callbacks import Callback  # noqa: E402

import ndplane.dask  # noqa: E402

# The worker processes cannot import this test module: send its functions by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

# NOTE: pylist has no native sqrt (std) and sort: its host fallback is an error under the strict
# NDPLANE_FALLBACK=error these tests run with; the cubed tests (test_cubed.py) cover it. webgpu
# runs where its adapter has float64 (the data's dtype; lavapipe has it), its chunks computed by
# several threads at once on the threaded scheduler (the backend serialises its calls).
_AVAILABLE = {b["name"] for b in nd.backends() if b["available"]}
DEVICES = [d for d in ("numpy", "cpu") if d in _AVAILABLE]
if "webgpu" in _AVAILABLE and nd.float64 in nd.Device("webgpu").backend.dtypes:
    DEVICES.append("webgpu")
RNG = np.random.default_rng(42)


# ---------------------------------------------------------------------------
# the guard: a chunk turned into NumPy through __array__ is recorded, and fails its task
# ---------------------------------------------------------------------------

def _install_guard() -> None:
    """Make ``__array__`` record the call and fail in this process (run in every worker too),
    and turn every NumPy fallback into an error."""
    seen: list[str] = []

    def forbidden(self: nd.Array, dtype: Any = None, copy: Any = None) -> np.ndarray:
        import traceback

        seen.append("".join(traceback.format_stack(limit=6)[:-1]))
        raise TypeError("a chunk was converted to NumPy through __array__ inside the Dask graph")

    forbidden.seen = seen  # type: ignore[attr-defined]
    nd.Array.__array__ = forbidden  # type: ignore[method-assign]
    os.environ["NDPLANE_FALLBACK"] = "error"


def _remove_guard(original: Any) -> list[str]:
    seen: list[str] = nd.Array.__array__.seen  # type: ignore[attr-defined]
    nd.Array.__array__ = original  # type: ignore[method-assign]
    os.environ.pop("NDPLANE_FALLBACK", None)
    return seen


@contextlib.contextmanager
def no_numpy_conversion(client: Any = None) -> Iterator[None]:
    original = nd.Array.__array__
    targets = [None] + ([client] if client is not None else [])
    for c in targets:
        _install_guard() if c is None else c.run(_install_guard)
    try:
        yield
    finally:
        seen = _remove_guard(original) + [s for c in targets if c is not None
                                          for log in c.run(_remove_guard, original).values() for s in log]  # fmt: skip
        assert not seen, "chunks were converted to NumPy inside the graph:\n" + "\n".join(seen)


# ---------------------------------------------------------------------------
# the cluster and the schedulers
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """One LocalCluster for the module: 2 worker processes, which import ndplane.dask at start."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  preload=["ndplane.dask"], silence_logs=40) as cluster:  # fmt: skip
        with distributed.Client(cluster) as c:
            yield c


@pytest.fixture(params=["threads", "cluster"])
def scheduler(request: pytest.FixtureRequest) -> Any:
    """``(compute, persist, client)`` for the threaded scheduler or the LocalCluster."""
    if request.param == "threads":
        return (lambda *xs: dask.compute(*xs, scheduler="threads"),
                lambda x: x.persist(scheduler="threads"), None)  # fmt: skip
    c = request.getfixturevalue("client")
    return (lambda *xs: c.compute(list(xs), sync=True), lambda x: c.persist(x), c)


class _TaskTypes(Callback):
    """Records the type of every task's result on the threaded scheduler (values of dicts too:
    the intermediates of mean/var)."""

    def __init__(self) -> None:
        super().__init__()
        self.types: set[str] = set()

    def _posttask(self, key: Any, result: Any, dsk: Any, state: Any, id: Any) -> None:
        for v in result.values() if isinstance(result, dict) else [result]:
            if hasattr(v, "shape"):
                self.types.add(f"{type(v).__module__}.{type(v).__name__}")


def _data(device: str, shape: tuple[int, ...]) -> tuple[np.ndarray, nd.Array]:
    host = RNG.standard_normal(shape)
    return host, nd.asarray(host, device=device)


def _check(got: Any, want: np.ndarray, device: str) -> None:
    assert type(got) is nd.Array and got.device == nd.Device(device), f"{type(got)} on {getattr(got, 'device', '-')}"
    np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-10, atol=1e-10)


# ---------------------------------------------------------------------------
# tests
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_from_array_keeps_the_meta(device: str) -> None:
    _, x = _data(device, (6, 4))
    d = da.from_array(x, chunks=(3, 2))
    assert type(d._meta) is nd.Array and d._meta.device == nd.Device(device) and d._meta.shape == (0, 0)
    assert d.dtype is nd.float64
    assert type((d + 1)._meta) is nd.Array and type(d.sum(axis=0)._meta) is nd.Array
    assert type((d @ d.T)._meta) is nd.Array


@pytest.mark.parametrize("device", DEVICES)
def test_computations_against_numpy(device: str, scheduler: Any) -> None:
    compute, _, client = scheduler
    h, x = _data(device, (12, 10, 6))
    d = da.from_array(x, chunks=(5, 4, 6))
    m = d[:, :, 0]
    hm = h[:, :, 0]

    def block(b: Any) -> Any:  # runs inside the graph, on each chunk
        assert type(b) is nd.Array and b.device == nd.Device(device), f"chunk is {type(b)}"
        return nd.tanh(b) * 2.0

    cases = {
        "elementwise": (da.exp(d) * 2.0 - d / 3.0 + 1.0, np.exp(h) * 2.0 - h / 3.0 + 1.0),
        "normalise": ((d - d.mean(axis=0)) / d.std(axis=0), (h - h.mean(axis=0)) / h.std(axis=0)),
        "sum(0,2)": (d.sum(axis=(0, 2)), h.sum(axis=(0, 2))),
        "max(1,2)": (d.max(axis=(1, 2)), h.max(axis=(1, 2))),
        "var(0,1)": (d.var(axis=(0, 1)), h.var(axis=(0, 1))),
        "mean": (d.mean(), h.mean()),
        "prod(2)": (d.prod(axis=2), h.prod(axis=2)),
        "matmul": (m.T @ m, hm.T @ hm),
        "map_blocks": (d.map_blocks(block), np.tanh(h) * 2.0),
        "rechunk": (d.rechunk((4, 10, 3)) + 0.0, h),
        "argmax": (m.argmax(axis=0), hm.argmax(axis=0)),
    }
    tracker = _TaskTypes()
    with no_numpy_conversion(client), tracker:
        results = compute(*(c[0] for c in cases.values()))
    for (name, (_, want)), got in zip(cases.items(), results):
        try:
            _check(got, want, device)
        except AssertionError as e:
            raise AssertionError(f"{name}: {e}") from None
    if client is None:
        assert tracker.types == {"ndplane._array.Array"}, tracker.types


@pytest.mark.parametrize("device", DEVICES)
def test_persist_keeps_ndplane_chunks_in_place(device: str, scheduler: Any) -> None:
    compute, persist, client = scheduler
    h, x = _data(device, (8, 6))
    with no_numpy_conversion(client):
        p = persist(da.from_array(x, chunks=(4, 3)) * 3.0)
        if client is None:
            chunks = [v for v in dict(p.__dask_graph__()).values() if hasattr(v, "shape")]
            assert len(chunks) == 4 and all(type(c) is nd.Array for c in chunks)
        else:  # ask each worker about the chunks it holds (no chunk travels)
            futures = distributed.futures_of(p)
            kinds = client.gather([client.submit(lambda c: (type(c).__name__, str(c.device)), f) for f in futures])
            assert len(kinds) == 4 and set(kinds) == {("Array", str(nd.Device(device)))}
        (got,) = compute(p.sum(axis=0))
    _check(got, (h * 3.0).sum(axis=0), device)


def test_the_guard_sees_a_conversion(scheduler: Any) -> None:
    """The check above can fail: a task that turns its chunk into NumPy is caught."""
    compute, _, client = scheduler
    d = da.from_array(nd.zeros((4, 4), device="numpy"), chunks=2)
    converts = d.map_blocks(np.asarray, meta=d._meta)  # (a meta: nothing converts before the graph runs)
    with pytest.raises(AssertionError, match="converted to NumPy") as caught:
        with no_numpy_conversion(client):
            with contextlib.suppress(TypeError):
                compute(converts)
    assert "dask/_task_spec.py" in str(caught.value)  # seen while a task ran (in a worker, on the cluster)


def test_dask_and_ndplane_operands_mix() -> None:
    x = nd.arange(6.0, device="numpy")
    d = da.from_array(nd.arange(6.0, device="numpy"), chunks=3)
    for mixed in (d + x, x + d, np.add(x, d), np.concatenate([d, x])):
        assert isinstance(mixed, da.Array) and type(mixed._meta) is nd.Array
    (got,) = dask.compute(d + x, scheduler="threads")
    _check(got, 2.0 * np.arange(6.0), "numpy")


def test_sizeof_counts_the_chunk_bytes_in_every_process(client: Any) -> None:
    x = nd.zeros((100, 10), device="numpy")
    assert dask.sizeof.sizeof(x) == 8000 and dask.sizeof.sizeof(x[:10]) == 800
    # the workers got it from the dask.sizeof entry point (and ndplane.dask from preload)
    assert set(client.run(lambda: dask.sizeof.sizeof(nd.zeros(1000))).values()) == {8000}
    assert all(client.run(lambda: "ndplane.dask" in __import__("sys").modules).values())


def test_chunks_travel_with_their_device(client: Any) -> None:
    x = nd.asarray([1.0, 2.0], device="numpy:1")
    y = client.submit(lambda a: a * 2.0, x).result()
    assert type(y) is nd.Array and y.device == "numpy:1" and y.tolist() == [2.0, 4.0]
    buffers: list[pickle.PickleBuffer] = []
    data = pickle.dumps(x, protocol=5, buffer_callback=buffers.append)
    assert len(buffers) == 1 and pickle.loads(data, buffers=buffers).device == "numpy:1"


@pytest.mark.parametrize("device", DEVICES)
def test_large_chunks_travel_in_shards(device: str) -> None:
    """distributed cuts a frame into shards along its memoryview's first axis: the out-of-band
    buffer is flat bytes, so a 2-D chunk goes in equal shards, as a NumPy chunk does."""
    from distributed.protocol.serialize import merge_and_deserialize, serialize_and_split

    host, x = _data(device, (64, 48))
    header, frames = serialize_and_split(x[::-1, 1:], size=4096)  # a view: sent as its own values
    assert header["serializer"] == "dask"
    payload = [f.nbytes for f in map(memoryview, frames)]
    assert payload == [4096] * 5 + [64 * 47 * 8 - 5 * 4096]
    got = merge_and_deserialize(header, [bytearray(f) for f in frames])
    _check(got, host[::-1, 1:], device)


def test_to_backend_numpy_is_the_explicit_copy() -> None:
    d = da.from_array(nd.arange(4.0, device="numpy"), chunks=2)
    n = d.to_backend("numpy")
    assert type(n._meta) is np.ndarray
    assert type(n.compute(scheduler="threads")) is np.ndarray


@pytest.mark.parametrize("device", DEVICES)
def test_the_scheduler_route_sends_the_bytes_out_of_band(device: str) -> None:
    """Messages to and through the scheduler are pickled with protocol 4, which would carry an
    array in band (copied three to four times); distributed's own serializer sends it as one
    frame of the array's memory (host-resident devices: no copy) on every route, rebuilt on its
    device."""
    from distributed.protocol.serialize import deserialize, serialize

    host, x = _data(device, (5, 6))
    for context in ({"pickle-protocol": 4}, {"pickle-protocol": 5}, None):
        header, frames = serialize(x, context=context)
        assert header["serializer"] == "dask" and len(frames) == 1
        if "host" in x.device.backend.capabilities:
            assert np.shares_memory(np.asarray(frames[0]), x.device.backend.to_host(x._ref))
        _check(deserialize(header, [bytearray(f) for f in frames]), host, device)
    empty = nd.zeros((0, 3), device=device)
    header, frames = serialize(empty)
    assert deserialize(header, frames).shape == (0, 3)


def test_a_fresh_client_and_workers_know_the_serializer() -> None:
    """No ``ndplane.dask`` anywhere, ndplane imported before distributed, workers without a
    preload: the ``dask.sizeof`` entry point registers the serializer in each process, so a
    result gathered through the scheduler comes back as an ndplane array on its device."""
    code = """if True:
        import ndplane as nd
        import distributed
        from distributed.protocol.serialize import serialize
        assert serialize(nd.zeros(2, device="numpy"))[0]["serializer"] == "dask"
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                      silence_logs=40) as cluster, distributed.Client(cluster) as c:
            y = c.submit(lambda: nd.arange(6.0, device="numpy:1") * 2.0).result()
            assert type(y) is nd.Array and y.device == "numpy:1" and y.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
            kinds = c.run(lambda: serialize(nd.zeros(2, device="numpy"))[0]["serializer"])
            assert set(kinds.values()) == {"dask"}, kinds
            assert not any(c.run(lambda: "ndplane.dask" in __import__("sys").modules).values())
        print("ok")
    """
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]
