"""The core's layers: every module imports only from modules below it, at module level.

``LAYERS`` is the one table of the order (``docs/architecture.md`` draws it). Read from the
top, a module may import any module listed before it -- in an earlier layer, or earlier in its
own layer -- and nothing after it. Importing ``pkg.mod`` runs ``pkg/__init__.py`` first, so it
counts as an import of the package too. An import inside a function is allowed only for an
optional third-party dependency or with its reason in a trailing ``# lazy: ...`` comment;
``if TYPE_CHECKING:`` imports never run, but must point down like the others.

The surface of ``Array`` is declared in ``_array.pyi`` and bound from ``_methods.METHODS``:
the last tests here keep the stub and the class in step.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

import ndplane
from ndplane._methods import METHODS

ROOT = pathlib.Path(ndplane.__file__).parent

LAYERS: list[tuple[str, list[str]]] = [
    ("foundation: errors, layout, dtypes, the backend protocol", [
        "_errors", "_layout", "_dtypes", "backend.ops", "backend.base", "backend.spec",
        "backend.hookspecs", "backend.host", "backend", "backend.reference", "backend.plugins",
    ]),
    ("devices", ["_devices"]),
    ("the Array: storage, layout, views, host conversion", ["_array"]),
    ("the autograd graph: nodes, recording, grad mode", ["_graph"]),
    ("dispatch: plans, kernels, fallback, decompositions", ["_dispatch"]),
    ("primitive chapters", [
        "_elementwise", "_data_type_functions", "_manipulation", "_creation", "_statistical",
        "_utility", "_sorting", "_indexing",
    ]),
    ("composite chapters", [
        "_searching", "_subscript", "_set", "_linear_algebra_functions", "_random", "random",
        "fft", "linalg", "special", "_dlpack", "_inspection", "_checkpoints",
    ]),
    ("the Array API namespace", ["_namespace"]),
    ("backward engine, gradient rules, fused composites, nn, optim", [
        "autograd.rules", "autograd.rules_extra", "autograd.engine", "autograd", "composite._conv",
        "composite._pool", "composite",
        "nn.functional", "nn.init", "nn.modules", "nn", "optim",
    ]),
    ("the package: method binding, public namespace", [
        "_numpy_operands", "_numpy_functions", "_numpy_creation", "_numpy_protocol", "_methods", "",
    ]),
    ("clients of the package: examples, command line, conformance suite", [
        "examples._data", "examples.digits_mlp", "examples.*", "examples", "_scaffold", "cli", "__main__",
        "_dask_serialize", "_dask_sizeof", "dask", "cubed",
        "conformance._helpers", "conformance.plugin", "conformance.*", "conformance",
    ]),
]  # fmt: skip

#: Third-party packages a core module may import inside a function (optional dependencies).
OPTIONAL = {"sklearn", "tqdm", "torch", "scipy", "dask", "distributed", "cubed"}


def _name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _rank() -> dict[str, int]:
    order = [m for _, mods in LAYERS for m in mods]
    return {m: i for i, m in enumerate(order)}


def _position(rank: dict[str, int], module: str) -> int | None:
    if module in rank:
        return rank[module]
    parent = module.rsplit(".", 1)[0] if "." in module else ""
    return rank.get(f"{parent}.*")


def _modules() -> dict[str, pathlib.Path]:
    return {_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom | ast.Import, known: set[str]) -> list[str]:
    """Core modules an import statement loads (package ``__init__``s included), by layer name."""
    targets: list[str] = []
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names if a.name == "ndplane" or a.name.startswith("ndplane.")]
        bases = [n.split(".", 1)[1] if "." in n else "" for n in names]
        subs: list[str] = []
    else:
        if node.level:
            pkg = importer.split(".") if is_package else importer.split(".")[:-1]
            pkg = [p for p in pkg if p]
            pkg = pkg[: len(pkg) - (node.level - 1)]
            base = ".".join(pkg + ([node.module] if node.module else []))
        elif node.module and (node.module == "ndplane" or node.module.startswith("ndplane.")):
            base = node.module.split(".", 1)[1] if "." in node.module else ""
        else:
            return []
        bases = [base]
        subs = [f"{base}.{a.name}".lstrip(".") for a in node.names]
    for base in bases:
        parts = base.split(".") if base else []
        # every package on the way, except those the importer is inside (already initialised)
        targets += [p for p in (".".join(parts[:i]) for i in range(1, len(parts) + 1))
                    if not importer.startswith(p + ".")]  # fmt: skip
        if isinstance(node, ast.Import) or any(s not in known for s in subs):
            targets.append(base)  # ``import ndplane``, or a name read from the package itself
    targets += [s for s in subs if s in known]
    return [t for t in dict.fromkeys(targets) if t in known and t != importer]


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: pathlib.Path) -> tuple[list[ast.stmt], list[ast.stmt]]:
    """(module-level imports, TYPE_CHECKING ones included; imports inside functions or classes)."""
    tree = ast.parse(path.read_text())
    top: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            top.append(node)
        elif isinstance(node, ast.If) and _type_checking(node):
            top += [n for n in node.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    nested = [
        n for n in ast.walk(tree)
        if isinstance(n, (ast.Import, ast.ImportFrom)) and n not in top and n.col_offset > 0
    ]  # fmt: skip
    return top, nested


def test_every_core_module_has_a_layer() -> None:
    rank = _rank()
    missing = [m for m in _modules() if _position(rank, m) is None]
    stale = [m for m in rank if not m.endswith("*") and m not in _modules()]
    assert not missing, f"modules without a place in LAYERS: {missing}"
    assert not stale, f"LAYERS names modules that do not exist: {stale}"


def test_imports_point_down() -> None:
    rank, modules = _rank(), _modules()
    known = set(modules)
    up = []
    for name, path in modules.items():
        here = _position(rank, name)
        assert here is not None
        top, _ = _imports(path)
        for node in top:
            for target in _resolve(name, path.name == "__init__.py", node, known):
                there = _position(rank, target)
                if there is None or there >= here:
                    up.append(f"{name}:{node.lineno} imports {target or 'ndplane'}")
    assert not up, "imports that point up a layer (see LAYERS):\n" + "\n".join(up)


def test_no_import_inside_a_function_without_a_reason() -> None:
    bad = []
    for name, path in _modules().items():
        lines = path.read_text().splitlines()
        for node in _imports(path)[1]:
            first = node.names[0].name if isinstance(node, ast.Import) else "." * node.level + (node.module or "")
            if first.split(".")[0] in OPTIONAL or "# lazy:" in lines[node.lineno - 1]:
                continue
            bad.append(f"{name}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    assert not bad, "imports inside functions (move them to the top, or say why with '# lazy: ...'):\n" + "\n".join(bad)


def test_the_layer_test_sees_an_upward_import(tmp_path: pathlib.Path) -> None:
    """The checks above are not vacuous: an upward import and a nested one are found."""
    src = tmp_path / "probe.py"
    src.write_text("from ._namespace import exp\n\ndef f():\n    from . import _creation\n")
    top, nested = _imports(src)
    assert _resolve("_array", False, top[0], set(_modules())) == ["_namespace"]
    assert _position(_rank(), "_namespace") > _position(_rank(), "_array")  # type: ignore[operator]
    assert len(nested) == 1


# ---------------------------------------------------------------------------
# the Array's surface: _array.pyi declares it, _methods.METHODS binds it
# ---------------------------------------------------------------------------


def _stub_names() -> set[str]:
    tree = ast.parse((ROOT / "_array.pyi").read_text())
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Array"]
    names = set()
    for n in cls.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(n.name)
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            names.add(n.target.id)
    return names


def test_the_stub_declares_exactly_the_array_surface() -> None:
    runtime = {n for n in dir(ndplane.Array) if not n.startswith("_") or (n.startswith("__") and n.endswith("__"))}
    runtime -= set(dir(object)) - {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__",
                                   "__init__", "__reduce_ex__", "__repr__", "__str__"}  # fmt: skip
    runtime -= {"__slots__", "__weakref__", "__annotations__", "__dict__", "__module__"}
    stub = {n for n in _stub_names() if not n.startswith("_") or n.endswith("__")}
    assert runtime - stub == set(), f"on Array but not declared in _array.pyi: {sorted(runtime - stub)}"
    assert stub - runtime == set(), f"declared in _array.pyi but not on Array: {sorted(stub - runtime)}"


@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_bound_method_is_the_table_entry(name: str) -> None:
    assert ndplane.Array.__dict__[name] is METHODS[name]
