"""pytest plugin (entry point ``pytest11``): the ``--ndplane-backend`` option and ``device`` fixture."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ndplane", "ndplane backend conformance")
    group.addoption(
        "--ndplane-backend",
        action="append",
        default=[],
        metavar="NAME",
        help="run the ndplane conformance suite on this backend (repeatable; default: every available one)",
    )


def selected_backends(config: pytest.Config) -> list[str]:
    import ndplane  # lazy: pytest loads this plugin in every session of the environment
    from ndplane.backend import plugins  # lazy: as above

    chosen = config.getoption("--ndplane-backend") or []
    specs = plugins.backend_specs()
    if chosen:
        missing = [name for name in chosen if name not in specs]
        if missing:
            raise pytest.UsageError(
                f"--ndplane-backend: no backend named {', '.join(missing)} is installed "
                f"(installed: {', '.join(sorted(specs))})."
            )
        return list(chosen)
    available = {d.kind for d in ndplane.devices()}
    return sorted(name for name in specs if name in available)


_SUITE_DIR = Path(__file__).resolve().parent


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # NOTE: this plugin is active in every pytest session of the environment; it only
    # parametrizes the suite's own tests, never a user's fixture that happens to be named `device`.
    if "device" in metafunc.fixturenames and Path(metafunc.definition.path).resolve().parent == _SUITE_DIR:
        names = selected_backends(metafunc.config)
        metafunc.parametrize("device", names, indirect=True, ids=names)


@pytest.fixture
def device(request: pytest.FixtureRequest) -> Any:
    import ndplane  # lazy: as above

    dev = ndplane.Device(request.param)
    ok, why = _available(request.param)
    if not ok:
        pytest.skip(f"backend {request.param!r} is not available: {why}")
    return dev


def _available(name: str) -> tuple[bool, str]:
    from ndplane.backend import plugins  # lazy: as above

    spec = plugins.backend_specs()[name]
    try:
        return spec.is_available()
    except Exception as exc:  # noqa: BLE001
        return False, str(exc)
