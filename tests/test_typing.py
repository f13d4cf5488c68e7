"""Type checkers see the Array's surface: a small typed user program passes ``mypy --strict``.

The operators and methods are bound at import from ``_methods.METHODS``; ``_array.pyi``
declares them (``tests/test_layers.py`` keeps the stub and the class equal). The core package
itself passes mypy under its configuration in ``pyproject.toml``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api", reason="mypy is in the test extra: pip install -e .[test]")

SCRIPT = Path(__file__).parent / "typing" / "user_script.py"
ROOT = Path(__file__).resolve().parent.parent


def test_a_typed_user_script_passes_mypy_strict(tmp_path: Path) -> None:
    out, err, status = mypy_api.run(["--strict", "--cache-dir", str(tmp_path / "cache"), str(SCRIPT)])
    assert status == 0, out + err


def test_mypy_sees_a_wrong_type(tmp_path: Path) -> None:
    """Not vacuous: assigning an Array's sum to an int is an error mypy reports."""
    bad = tmp_path / "bad.py"
    bad.write_text("import ndplane as nd\n\nn: int = nd.ones(3).sum()\n")
    out, _, status = mypy_api.run(["--strict", "--cache-dir", str(tmp_path / "cache"), str(bad)])
    assert status == 1 and "incompatible types in assignment" in out.lower(), out


def test_the_core_package_passes_mypy(tmp_path: Path) -> None:
    """The whole of ``core/ndplane`` (the conformance tests included) type-checks cleanly under the
    configuration in ``pyproject.toml`` (``check_untyped_defs``: unannotated bodies too)."""
    out, err, status = mypy_api.run([
        "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(tmp_path / "cache"), str(ROOT / "core" / "ndplane"),
    ])  # fmt: skip
    assert status == 0, out + err
