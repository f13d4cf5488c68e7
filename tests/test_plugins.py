"""Plugin discovery: broken, incompatible and allow-listed plugins never break ``import ndplane``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ndplane as nd
from ndplane.backend import BackendSpec, plugins


def _install_fake_dist(site: Path, dist: str, module: str, source: str) -> None:
    """Write a module plus a .dist-info with an ``ndplane.backends`` entry point, as pip would."""
    (site / f"{module}.py").write_text(textwrap.dedent(source))
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"  # pip normalises the name
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[ndplane.backends]\n{module} = {module}\n")


def _run(site: Path, code: str, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PYTHONPATH": str(site), **env}
    full_env.pop("NDPLANE_PLUGINS", None) if "NDPLANE_PLUGINS" not in env else None
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env, timeout=120)


PROBE = "import ndplane as nd; print(float(nd.sum(nd.arange(5, device='numpy'))))"


@pytest.fixture
def broken_site(tmp_path: Path) -> Path:
    _install_fake_dist(tmp_path, "ndplane-broken", "ndplane_broken", "raise RuntimeError('kaboom at import')\n")
    _install_fake_dist(tmp_path, "ndplane-raising", "ndplane_raising", """
        from ndplane.backend import hookimpl
        @hookimpl
        def ndplane_register_backends():
            raise ValueError('hook exploded')
    """)
    _install_fake_dist(tmp_path, "ndplane-future", "ndplane_future", """
        from ndplane.backend import BackendSpec, hookimpl
        @hookimpl
        def ndplane_register_backends():
            return [BackendSpec(name='future', factory=lambda i: None, distribution='ndplane-future',
                                protocol_version=99)]
    """)
    _install_fake_dist(tmp_path, "ndplane-single", "ndplane_single", """
        from ndplane.backend import BackendSpec, hookimpl
        @hookimpl
        def ndplane_register_backends():
            return BackendSpec(name='single', factory=lambda i: None, protocol_version=1)  # not a list
    """)
    return tmp_path


def test_broken_plugins_are_skipped_with_one_warning_each(broken_site: Path) -> None:
    r = _run(broken_site, PROBE)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "10.0"
    err = r.stderr
    assert "ndplane-broken" in err and "kaboom at import" in err and "pip install -U ndplane-broken" in err
    assert "ndplane-raising" in err and "hook exploded" in err
    assert "ndplane-future" in err and "protocol 99" in err
    assert "ndplane-single" in err and "not a list of BackendSpec" in err
    assert err.count("PluginWarning") == 4


def test_allowlist_skips_other_plugins(broken_site: Path) -> None:
    r = _run(broken_site, PROBE + "; print(sorted(b['name'] for b in nd.backends()))", NDPLANE_PLUGINS="numpy")
    assert r.returncode == 0, r.stderr
    assert "PluginWarning" not in r.stderr
    assert "['numpy', 'numpy-contig', 'numpy-nof64']" in r.stdout


def test_cli_lists_numpy_beside_broken_plugins(broken_site: Path) -> None:
    r = _run(broken_site, "from ndplane.cli import main; main(['backends'])")
    assert r.returncode == 0, r.stderr
    assert any(line.startswith("numpy ") and "available" in line for line in r.stdout.splitlines())


def test_import_does_not_load_plugins() -> None:
    code = "import sys, ndplane; print('ndplane_numpy' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "False", r.stderr


def test_unavailable_backend_reports_why() -> None:
    spec = BackendSpec(name="never", factory=lambda i: None, protocol_version=1,
                       is_available=lambda: (False, "no such hardware"))

    class Plugin:
        @staticmethod
        @nd.backend.hookimpl
        def ndplane_register_backends() -> list[BackendSpec]:
            return [spec]

    plugins.register(Plugin, name="test-never")
    try:
        with pytest.raises(nd.BackendUnavailableError, match="no such hardware"):
            nd.zeros(2, device="never")
        assert not next(b for b in nd.backends() if b["name"] == "never")["available"]
        assert nd.Device("never") not in nd.devices()
    finally:
        plugins.unregister("test-never")


def test_unknown_device_names_installed_backends() -> None:
    with pytest.raises(nd.BackendUnavailableError, match=r"installed: .*numpy"):
        nd.zeros(2, device="nosuch")
