"""ndplane as cubed's backend namespace (``ndplane.cubed``): real cubed computations on every
installed host-resident device, with cubed's threads executor and with its Dask executor on a
LocalCluster of two worker processes, against NumPy; and the memory bound on a computation
over an array four times larger than the memory cubed is allowed."""

from __future__ import annotations

import importlib.util
import os
import sys
import tracemalloc
from collections.abc import Iterator
from typing import Any
from unittest import mock

import numpy as np
import pytest

import ndplane as nd
import ndplane.cubed

if importlib.util.find_spec("cubed") is None or importlib.util.find_spec("distributed") is None:
    pytest.skip("cubed and distributed are not installed (pip install 'ndplane[distributed]')", allow_module_level=True)

# The worker processes cannot import this test module: send its functions by value.
cloudpickle = pytest.importorskip("cloudpickle")
cloudpickle.register_pickle_by_value(sys.modules[__name__])

#: Every available device whose arrays live in host memory, with the shape it is tested at:
#: pylist computes in pure Python (about 1 us an element and op), so it gets a tiny array.
SHAPES = {"numpy": (12, 10, 8), "cpu": (12, 10, 8), "pylist": (4, 3, 2)}
HOST_DEVICES = [b["name"] for b in nd.backends()
                if b["available"] and not b["test_only"] and "host" in b.get("capabilities", ())]  # fmt: skip


def test_every_host_device_has_a_shape() -> None:
    assert set(HOST_DEVICES) <= set(SHAPES), f"give {set(HOST_DEVICES) - set(SHAPES)} a shape in SHAPES"


@pytest.fixture(scope="module")
def cubed() -> Iterator[Any]:
    """cubed, imported with ndplane.cubed as its backend (the variables are restored afterwards)."""
    with mock.patch.dict(os.environ):
        ndplane.cubed.use()
        import cubed
        import cubed.array_api
        from cubed.backend_array_api import namespace

        assert namespace is ndplane.cubed, "cubed was imported earlier with another backend"
        yield cubed


@pytest.fixture(scope="module")
def cluster(cubed: Any) -> Iterator[Any]:
    """One LocalCluster for the module; its workers inherit CUBED_BACKEND_ARRAY_API_MODULE.

    NOTE: cubed 0.27's DaskExecutor checks ``allowed_mem`` against the workers listed by its
    asynchronous client's ``scheduler_info()``, which distributed 2026.x leaves without workers
    ("Cluster has no workers running", with any backend): the same check is run here against
    this cluster's synchronous client (docs/distributed.md shows the same workaround).
    """
    import cubed.runtime.executors.dask as dask_executor
    import distributed

    check = dask_executor.check_runtime_memory
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  memory_limit="2GiB", silence_logs=40) as c:  # fmt: skip
        with distributed.Client(c) as client, mock.patch.object(
            dask_executor, "check_runtime_memory", lambda spec, _: check(spec, client)
        ):  # fmt: skip
            yield client


@pytest.fixture(params=["threads", "dask"])
def executor(request: pytest.FixtureRequest, cubed: Any) -> Any:
    from cubed.runtime.create import create_executor

    if request.param == "threads":
        return create_executor("threads")
    client = request.getfixturevalue("cluster")
    return create_executor("dask", {"compute_kwargs": {"address": client.scheduler.address}})


@pytest.fixture
def on_device(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Chunks on ``device`` here and, when the cluster runs, in its workers."""
    device = request.param
    monkeypatch.setenv(ndplane.cubed.DEVICE_VARIABLE, device)
    client = request.getfixturevalue("cluster") if "dask" in request.node.callspec.id else None
    if client is not None:
        client.run(_setenv, ndplane.cubed.DEVICE_VARIABLE, device)
    yield device
    if client is not None:
        client.run(_setenv, ndplane.cubed.DEVICE_VARIABLE, None)


def _setenv(name: str, value: str | None) -> None:  # run in each worker (sent by value, below)
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def _check(got: Any, want: np.ndarray, device: str, name: str) -> None:
    assert type(got) is nd.Array and got.device == nd.Device(device), f"{name}: {type(got)}"
    np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-10, atol=1e-10, err_msg=name)


@pytest.mark.parametrize("on_device", HOST_DEVICES, indirect=True)
def test_computations_against_numpy(cubed: Any, executor: Any, on_device: str, tmp_path: Any) -> None:
    xp = cubed.array_api
    device = on_device
    shape = SHAPES[device]
    h = np.random.default_rng(7).standard_normal(shape)
    spec = cubed.Spec(tmp_path, allowed_mem="100MB")
    a = xp.asarray(h, chunks=(shape[0] // 2, shape[1] // 3 + 1, shape[2]), spec=spec)
    hm = h[:, :, 0]
    m = xp.asarray(hm, chunks=(shape[0] // 2, shape[1] // 2), spec=spec)

    def block(b: Any) -> Any:  # runs in the task, on each chunk
        assert type(b) is nd.Array and b.device == nd.Device(device), f"chunk is {type(b)}"
        return b * 2.0 + 1.0

    cases = {
        "elementwise": (xp.exp(a) * 2.0 - a / 3.0 + xp.abs(a), np.exp(h) * 2.0 - h / 3.0 + np.abs(h)),
        "normalise": ((a - xp.mean(a, axis=0)) / xp.std(a, axis=0), (h - h.mean(axis=0)) / h.std(axis=0)),
        "sum(0,2)": (xp.sum(a, axis=(0, 2)), h.sum(axis=(0, 2))),
        "max(1,2)": (xp.max(a, axis=(1, 2)), h.max(axis=(1, 2))),
        "var(0,1)": (xp.var(a, axis=(0, 1)), h.var(axis=(0, 1))),
        "mean": (xp.mean(a), h.mean()),
        "matmul": (xp.matmul(xp.matrix_transpose(m), m), hm.T @ hm),
    }
    # NOTE: cubed's map_blocks, rechunk and indexing read block offsets from an int32 array (cubed
    # hardcodes the dtype), which a device without int32 -- pylist -- cannot hold.
    if "int32" in nd.__array_namespace_info__().dtypes(device=device):
        cases["map_blocks"] = (cubed.map_blocks(block, a, dtype=a.dtype), h * 2.0 + 1.0)
        cases["rechunk"] = (a.rechunk((shape[0], 2, 2)), h)
        cases["index"] = (a[1:, ::2, -1], h[1:, ::2, -1])
    results = cubed.compute(*(c[0] for c in cases.values()), executor=executor)
    for (name, (_, want)), got in zip(cases.items(), results):
        _check(got, want, device, name)


def test_memory_stays_within_allowed_mem(cubed: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """An array 4x larger than ``allowed_mem`` is normalised and reduced chunk by chunk, through
    Zarr on local disk, and the memory allocated never exceeds ``allowed_mem``: NumPy buffers
    (the numpy device, Zarr's codecs) are what tracemalloc sees, so the peak is measured, not
    projected. One worker thread, so that one task at a time holds memory."""
    from cubed.runtime.create import create_executor
    from cubed.runtime.pipeline import visit_nodes
    from cubed.runtime.types import Callback

    class Projected(Callback):  # what cubed planned each operation to hold
        def on_compute_start(self, event: Any) -> None:
            self.mem = [node["primitive_op"].projected_mem for _, node in visit_nodes(event.dag)]

    monkeypatch.setenv(ndplane.cubed.DEVICE_VARIABLE, "numpy")
    xp = cubed.array_api
    allowed = 8_000_000
    spec = cubed.Spec(tmp_path, allowed_mem=allowed, reserved_mem=0)
    a = cubed.random.random((2000, 2000), chunks=(250, 250), spec=spec)  # 32 MB of float64, 0.5 MB chunks
    assert a.nbytes == 4 * allowed
    b = xp.sum((a - xp.mean(a, axis=0)) * 2.0, axis=1)
    executor, projected = create_executor("threads", {"max_workers": 1}), Projected()
    tracemalloc.start()
    try:
        cubed.to_zarr(b, str(tmp_path / "out.zarr"), executor=executor, callbacks=[projected])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert projected.mem and max(projected.mem) <= allowed
    assert peak <= allowed, f"peak {peak / 1e6:.1f} MB > allowed_mem {allowed / 1e6:.1f} MB"
    got = nd.asarray(np.asarray(__import__("zarr").open_array(str(tmp_path / "out.zarr"))))
    assert got.shape == (2000,) and abs(float(nd.mean(got))) < 1e-9  # sums of centred columns
