"""Root conftest: collect the tests of in-repo plugins only when they are installed."""

from __future__ import annotations

import importlib.util

_PLUGIN_DIRS = {
    "plugins/numpy": "ndplane_numpy",
    "plugins/cpu": "ndplane_cpu",
    "plugins/webgpu": "ndplane_webgpu",
    "plugins/cuda": "ndplane_cuda",
    "examples/pylist-backend": "ndplane_pylist",
}

# NOTE: a plugin that is not installed (not built on this machine) is skipped, not failed.
collect_ignore = [path for path, package in _PLUGIN_DIRS.items() if importlib.util.find_spec(package) is None]
collect_ignore += ["benchmarks", "build", "core/ndplane/__main__.py"]
# ndplane.dask imports dask (the `distributed` extra): its examples run only where it is installed.
if importlib.util.find_spec("dask") is None:
    collect_ignore.append("core/ndplane/dask.py")


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _doctests_on_the_reference_device(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """Docstring examples print ``device='numpy:0'``: run them there, whatever else is installed."""
    if type(request.node).__name__ != "DoctestItem":
        yield
        return
    import ndplane as nd

    with nd.default_device("numpy"):
        yield
