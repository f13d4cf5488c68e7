"""``ndplane new-backend NAME``: write a ready backend package from the templates.

The templates are files of the package (``ndplane/templates/backend/*.tmpl``), not strings
here: each reads as the file it becomes, and ``string.Template`` fills in ``${name}``,
``${cls}``, ``${protocol}`` and ``${core_pin}`` (a placeholder it does not know raises).
The package has the entry point, a ``Backend`` subclass with only the memory primitives,
a README and a test module that runs the conformance suite; it passes that suite as
generated, through the core's decompositions and host fallback.

>>> import tempfile, pathlib
>>> from ndplane._scaffold import new_backend
>>> with tempfile.TemporaryDirectory() as tmp:
...     root = new_backend("mydev", pathlib.Path(tmp) / "ndplane-mydev")
...     for path in sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file()):
...         print(path)
README.md
ndplane_mydev/__init__.py
ndplane_mydev/backend.py
pyproject.toml
tests/test_mydev.py
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import keyword
import re
from pathlib import Path
from string import Template

import ndplane

from .backend import PROTOCOL_VERSION, plugins

__all__ = ["new_backend", "check_name"]

#: Generated path (``{name}`` filled in) -> template file in ``ndplane/templates/backend``.
FILES = {
    "pyproject.toml": "pyproject.toml.tmpl",
    "README.md": "README.md.tmpl",
    "ndplane_{name}/__init__.py": "__init__.py.tmpl",
    "ndplane_{name}/backend.py": "backend.py.tmpl",
    "tests/test_{name}.py": "test_backend.py.tmpl",
}


def check_name(name: str) -> None:
    """Raise ``ValueError`` unless ``name`` can name a new backend (and its device)."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or keyword.iskeyword(name):
        raise ValueError(
            f"ndplane new-backend: NAME must be a lower-case Python identifier (a-z, 0-9 and _, "
            f"starting with a letter; it names the device and the package ndplane_NAME); got {name!r}."
        )
    specs = plugins.backend_specs()
    if name in specs:
        owner = specs[name].distribution or "an installed plugin"
        raise ValueError(f"ndplane new-backend: a backend named {name!r} is already installed ({owner}).")
    if importlib.util.find_spec(f"ndplane_{name}") is not None:
        raise ValueError(f"ndplane new-backend: a module named ndplane_{name} is already installed.")


def new_backend(name: str, directory: str | Path | None = None) -> Path:
    """Write the package of a new backend ``name`` into ``directory`` (``./ndplane-NAME``).

    The directory must not exist or be empty. Returns it.
    """
    check_name(name)
    root = Path(directory if directory is not None else f"ndplane-{name}")
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise FileExistsError(f"ndplane new-backend: {root} already exists and is not an empty directory.")
    major, minor = (int(v) for v in ndplane.__version__.split(".")[:2])
    values = {
        "name": name, "cls": "".join(w.capitalize() for w in name.split("_")) + "Backend",
        "protocol": str(PROTOCOL_VERSION), "core_pin": f">={major}.{minor},<{major}.{minor + 1}",
    }  # fmt: skip
    templates = importlib.resources.files("ndplane") / "templates" / "backend"
    for target, source in FILES.items():
        path = root / target.format(name=name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(Template((templates / source).read_text()).substitute(values))
    return root
