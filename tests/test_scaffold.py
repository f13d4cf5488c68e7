"""``ndplane new-backend`` (``ndplane/_scaffold.py``): the generated package, without installing it.

Generating, compiling and registering the backend through its hook is fast and runs here;
installing it with pip and certifying it with the conformance suite is a step of ``.ci/run``.
"""

from __future__ import annotations

import importlib
import py_compile
import sys
from pathlib import Path

import numpy as np
import pytest

import ndplane as nd
from ndplane import _scaffold
from ndplane.backend import PROTOCOL_VERSION, plugins
from ndplane.cli import main

tomllib = pytest.importorskip("tomllib")


def test_the_package_has_every_file_and_each_compiles(tmp_path: Path) -> None:
    root = _scaffold.new_backend("genfiles", tmp_path / "pkg")
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert files == ["README.md", "ndplane_genfiles/__init__.py", "ndplane_genfiles/backend.py",
                     "pyproject.toml", "tests/test_genfiles.py"]  # fmt: skip
    for path in root.rglob("*.py"):
        py_compile.compile(str(path), doraise=True)
        assert "$" not in path.read_text(), f"a placeholder left in {path}"
    meta = tomllib.loads((root / "pyproject.toml").read_text())
    assert meta["project"]["name"] == "ndplane-genfiles"
    assert meta["project"]["entry-points"]["ndplane.backends"] == {"genfiles": "ndplane_genfiles.backend"}
    major, minor = nd.__version__.split(".")[:2]
    assert f"ndplane>={major}.{minor},<{major}.{int(minor) + 1}" in meta["project"]["dependencies"]
    readme = (root / "README.md").read_text()
    assert "pytest --pyargs ndplane.conformance --ndplane-backend genfiles" in readme
    test = (root / "tests" / "test_genfiles.py").read_text()
    assert '"--pyargs", "ndplane.conformance", "--ndplane-backend", "genfiles"' in test


def test_the_backend_registers_through_its_hook_and_runs_ndplane(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _scaffold.new_backend("genhook", tmp_path / "pkg")
    monkeypatch.syspath_prepend(str(root))
    module = importlib.import_module("ndplane_genhook.backend")
    try:
        (spec,) = module.ndplane_register_backends()
        assert spec.name == "genhook" and spec.protocol_version == PROTOCOL_VERSION
        assert spec.distribution == "ndplane-genhook" and spec.is_available() == (True, "")
        backend = spec.factory(0)
        assert isinstance(backend, nd.backend.Backend) and backend.ops == frozenset()
        assert backend.protocol_version == PROTOCOL_VERSION and backend.dtypes == set(nd.ALL_DTYPES)
        # Only the memory primitives are overridden: every compute method is the base class's.
        own = {n for n, v in vars(type(backend)).items() if callable(v) and not n.startswith("__")}
        assert own == {"memory_stats", "alloc", "free", "from_host", "to_host", "copy", "fill"}
        plugins.register(module, name="genhook-plugin")
        x = nd.asarray([[1.0, 2.0], [3.0, 4.0]], device="genhook")
        with pytest.warns(nd.FallbackWarning, match="matmul on float64 runs through the host fallback"):
            y = x @ x  # no native kernel at all: the host fallback, which warns once
        with nd.fallback_mode("allow"):
            assert (x.T @ x + 1).tolist() == [[11.0, 15.0], [15.0, 21.0]]
            assert nd.sort(nd.asarray(np.array([3, 1, 2], np.uint8), device="genhook")).tolist() == [1, 2, 3]
            # subtract decomposes into add(x, -y): a Python scalar wraps around as NumPy's x - y does
            u8 = nd.asarray(np.array([5, 0], np.uint8), device="genhook")
            i8 = nd.asarray(np.array([1, -1], np.int8), device="genhook")
            assert (u8 - 1).tolist() == [4, 255] and (i8 - (-128)).tolist() == [-127, 127]
        del x, y, u8, i8
        assert nd.Device("genhook").backend.memory_stats() == {"buffers": 0, "bytes": 0}
    finally:
        plugins.unregister("genhook-plugin")
        for name in [m for m in sys.modules if m.startswith("ndplane_genhook")]:
            del sys.modules[name]


@pytest.mark.parametrize("name", ["MyDev", "my-dev", "2dev", "_dev", "class", "", "dév"])
def test_names_that_cannot_name_a_backend(name: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=f"NAME must be a lower-case Python identifier .*got {name!r}"):
        _scaffold.new_backend(name, tmp_path / "pkg")
    assert not (tmp_path / "pkg").exists()


def test_an_installed_backend_name_or_a_used_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"a backend named 'numpy' is already installed \(ndplane-numpy\)\."):
        _scaffold.new_backend("numpy", tmp_path / "pkg")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="pkg already exists and is not an empty directory"):
        _scaffold.new_backend("genused", tmp_path / "pkg")
    assert [p.name for p in (tmp_path / "pkg").iterdir()] == ["keep.txt"]
    _scaffold.new_backend("genused", tmp_path / "empty")  # an empty directory is fine


def test_cli_new_backend(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["new-backend", "gencli", "--dir", str(tmp_path / "here")]) == 0
    out = capsys.readouterr().out
    assert f"wrote the gencli backend to {tmp_path / 'here'}" in out and "pip install -e" in out
    assert (tmp_path / "here" / "ndplane_gencli" / "backend.py").is_file()
    monkeypatch.chdir(tmp_path)
    assert main(["new-backend", "gencli"]) == 0  # default: ./ndplane-NAME
    assert (tmp_path / "ndplane-gencli" / "pyproject.toml").is_file()
    capsys.readouterr()
    assert main(["new-backend", "Bad-Name"]) == 2
    assert "ndplane new-backend: NAME must be a lower-case Python identifier" in capsys.readouterr().err
