"""The API reference: every public name of ndplane, its docstring example, and where it runs.

    python tools/api_reference.py OUTDIR     # write the reference pages as Markdown
    mkdocs build                             # runs it as a hook (mkdocs.yml: hooks)

The public surface is ``ndplane.__all__``, followed into every public submodule's ``__all__``
(``linalg``, ``fft``, ``random``, ``nn`` with ``functional`` and ``init``, ``optim``, ...), plus
the members of :class:`ndplane.Array` and the public methods of the public classes.
``tests/test_reference.py`` checks that each has a ``>>>`` example and runs it.

Each function's page entry also says which dtypes it accepts and, per installed device, how it
runs: its docstring example runs on the reference backend with the backend's primitives
recorded, once with the example's own arrays and once per dtype with them cast to it; the
recorded primitives are then looked up per device with the cell ``ndplane info`` prints
(``ndplane.cli.op_cell``: the backends' declared ``ops``, ``supports`` and dtypes).
"""

from __future__ import annotations

import contextlib
import doctest
import functools
import inspect
import re
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import ndplane as nd
from ndplane import _dtypes
from ndplane.cli import _ABBREV, op_cell

REFERENCE_DEVICE = "numpy"
DOCTEST_FLAGS = doctest.ELLIPSIS  # what pytest's --doctest-modules uses by default
_SEVERITY = {"N": 0, "D": 1, "H": 2, ".": 3}

# Pages of the top-level namespace, by the private module that defines each name.
_CHAPTERS = {
    "ndplane._creation": "creation", "ndplane._dlpack": "creation",
    "ndplane._dtypes": "data-types", "ndplane._data_type_functions": "data-types",
    "ndplane._elementwise": "elementwise", "ndplane._manipulation": "manipulation",
    "ndplane._indexing": "indexing", "ndplane._searching": "searching", "ndplane._set": "set",
    "ndplane._sorting": "sorting", "ndplane._statistical": "statistical", "ndplane._utility": "utility",
    "ndplane._linear_algebra_functions": "linear-algebra", "ndplane._inspection": "inspection",
    "ndplane._devices": "devices", "ndplane._dispatch": "devices", "ndplane._errors": "devices",
    "ndplane._graph": "devices",
}  # fmt: skip
_TITLES = {
    "array": "The Array", "creation": "Creation functions", "data-types": "Data types",
    "elementwise": "Elementwise functions", "manipulation": "Manipulation functions",
    "indexing": "Indexing functions", "searching": "Searching functions", "set": "Set functions",
    "sorting": "Sorting functions", "statistical": "Statistical functions", "utility": "Utility functions",
    "linear-algebra": "Linear algebra (main namespace)", "inspection": "Inspection",
    "devices": "Devices, fallback, gradient mode and errors", "constants": "Constants",
}  # fmt: skip


@dataclass
class Entry:
    """One public name: ``name`` is its full dotted path (``ndplane.Array.sum``)."""

    name: str
    obj: Any
    kind: str  # module-level: function | class | data; Array: method | property | attribute; member
    page: str
    owner: Any = None  # the module or class the name is looked up on
    attr: str = ""
    doc: str = ""
    members: list[Entry] = field(default_factory=list)  # a class's public methods

    @property
    def has_example(self) -> bool:
        return ">>>" in self.doc


# ---------------------------------------------------------------------------
# the public surface
# ---------------------------------------------------------------------------


def _data_docs() -> dict[str, str]:
    """Docstrings of names that cannot carry one (constants, dtypes): the ``__test__`` tables
    doctest runs (``ndplane/__init__.py`` and ``ndplane/_namespace.py``)."""
    docs: dict[str, str] = {}
    for module in (nd, nd._namespace):
        docs.update(getattr(module, "__test__", {}))
    return docs


def _page_of(module_name: str, attr: str, obj: Any) -> str:
    if module_name != "ndplane":
        return module_name.removeprefix("ndplane.").replace(".", "-")
    if obj is nd.Array:
        return "array"
    if isinstance(obj, _dtypes.DType) or attr == "ALL_DTYPES":
        return "data-types"
    if not (inspect.isclass(obj) or callable(obj)):
        return "constants"
    if attr in nd._elementwise.__all__:
        return "elementwise"
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        return "devices"
    module = getattr(obj, "__module__", "") or ""
    return _CHAPTERS.get(module) or module.removeprefix("ndplane.").lstrip("_").replace(".", "-") or "other"


def title(slug: str) -> str:
    """A reference page's title: a chapter's, ``ndplane.linalg``'s, or a private module's summary."""
    if slug in _TITLES:
        return _TITLES[slug]
    name = f"ndplane.{slug.replace('-', '.')}"
    if name in sys.modules:
        return name
    module = sys.modules.get(f"ndplane._{slug.replace('-', '.')}")
    doc = (inspect.getdoc(module) or "") if module is not None else ""
    return doc.split("\n")[0].rstrip(".").split(":")[0] or slug.replace("-", " ").capitalize()


def page_order() -> list[str]:
    """The reference pages in reading order: the Array, the namespace's chapters, the submodules."""
    slugs = list(dict.fromkeys(e.page for e in entries()))
    chapters = [s for s in _TITLES if s in slugs]
    return chapters + [s for s in slugs if s not in _TITLES]


def _class_members(cls: type, name: str, page: str) -> list[Entry]:
    """Public methods and properties a class defines, less overrides of a documented base's."""
    out = []
    for attr, value in vars(cls).items():
        if attr.startswith("_") or not (callable(value) or isinstance(value, (property, classmethod, staticmethod))):
            continue
        if any(attr in vars(base) for base in cls.__mro__[1:] if base.__module__.startswith("ndplane")):
            continue  # e.g. Linear.forward: Module.forward documents it
        doc = inspect.getdoc(getattr(cls, attr)) if not isinstance(value, property) else (value.__doc__ or "")
        out.append(Entry(f"{name}.{attr}", value, "member", page, cls, attr, doc or ""))
    return out


def _array_members() -> list[Entry]:
    """Array's attributes, methods and operators (dunders it defines, not ``object``'s)."""
    out = []
    # Attributes and methods first, then the operators and protocols (dunders).
    for attr, value in sorted(vars(nd.Array).items(), key=lambda kv: (kv[0].startswith("__"), kv[0].lower())):
        if attr.startswith("_") and not (attr.startswith("__") and attr.endswith("__")):
            continue
        if attr.startswith("__") and (not callable(value) or value is vars(object).get(attr)):
            continue
        if isinstance(value, property):
            kind, doc = "property", value.__doc__ or ""
        elif callable(value):
            kind, doc = "method", inspect.getdoc(value) or ""
        else:  # a slot: grad, requires_grad
            kind, doc = "attribute", inspect.getdoc(value) or ""  # a __slots__ dict value
        out.append(Entry(f"ndplane.Array.{attr}", value, kind, "array", nd.Array, attr, doc))
    return out


@functools.cache
def entries() -> list[Entry]:
    """Every public name, in namespace order (Array's members after the Array)."""
    out: list[Entry] = []
    data = _data_docs()
    seen: set[str] = set()

    def walk(module: Any) -> None:
        for attr in module.__all__:
            obj = getattr(module, attr)
            if inspect.ismodule(obj):
                if obj.__name__.startswith("ndplane.") and obj.__name__ not in seen:
                    seen.add(obj.__name__)
                    walk(obj)
                continue
            name = f"{module.__name__}.{attr}"
            page = _page_of(module.__name__, attr, obj)
            if inspect.isclass(obj) or callable(obj):
                entry = Entry(name, obj, "class" if inspect.isclass(obj) else "function", page, module, attr,
                              inspect.getdoc(obj) or "")  # fmt: skip
                if obj is nd.Array:
                    entry.members = _array_members()
                elif inspect.isclass(obj) and obj.__module__.startswith("ndplane"):
                    entry.members = _class_members(obj, name, page)
                elif getattr(obj, "__doc__", None) is type(obj).__doc__ and not inspect.isfunction(obj):
                    entry.doc = ""  # an instance (a context manager object): no docstring of its own
            else:
                entry = Entry(name, obj, "data", page, module, attr, data.get(attr, ""))
            out.append(entry)

    walk(nd)
    return out


def all_entries() -> list[Entry]:
    """Every entry and every member entry, flat."""
    return [e for top in entries() for e in (top, *top.members)]


# ---------------------------------------------------------------------------
# running examples with the reference backend's primitives recorded
# ---------------------------------------------------------------------------

_PRIMITIVES = ("unary", "binary", "reduce", "scan", "linalg", "fft", "where", "cast", "matmul", "take",
               "scatter_add", "sort", "random_bits")  # fmt: skip


def _primitive_key(method: str, args: tuple[Any, ...]) -> tuple[str, Any]:
    """(op name as ``ndplane info`` lists it, dtype the kernel computes in)."""
    if method in ("unary", "binary", "reduce", "scan", "fft"):
        refs = [a for a in args[1:] if hasattr(a, "dtype") and hasattr(a, "strides")]
        return args[0], refs[0].dtype
    if method == "linalg":
        return args[0], args[1][0].dtype
    if method == "random_bits":
        return method, args[2].dtype
    if method == "scatter_add":
        return method, args[2].dtype  # values
    if method == "where":
        return method, args[1].dtype
    return method, args[0].dtype


@contextlib.contextmanager
def recording() -> Iterator[set[tuple[str, Any]]]:
    """The set of (op, dtype) kernels the reference device runs inside the block."""
    backend = nd.Device(REFERENCE_DEVICE).backend
    seen: set[tuple[str, Any]] = set()

    def wrap(method: str) -> Callable[..., Any]:
        bound = getattr(backend, method)

        def recorded(*args: Any, **kwargs: Any) -> Any:
            seen.add(_primitive_key(method, args))
            return bound(*args, **kwargs)

        return recorded

    for method in _PRIMITIVES:
        setattr(backend, method, wrap(method))
    try:
        yield seen
    finally:
        for method in _PRIMITIVES:
            delattr(backend, method)


@dataclass
class Trace:
    """What running an entry's example found."""

    failures: int = 0
    report: str = ""
    kernels: set[tuple[str, Any]] = field(default_factory=set)  # the whole example
    by_dtype: dict[Any, set[tuple[str, Any]]] | None = None  # dtype -> kernels; None: not probed


def _globs(entry: Entry) -> dict[str, Any]:
    """The globals doctest gives the example: its defining module's (pytest --doctest-modules)."""
    module = sys.modules.get(getattr(entry.obj, "__module__", "") or "") if entry.kind != "data" else None
    return dict(vars(module)) if module is not None else {"__name__": "__reference__"}


@contextlib.contextmanager
def _intercepted(entry: Entry, calls: list[tuple[tuple[Any, ...], dict[str, Any], Any]]) -> Iterator[None]:
    """Replace the entry's function on its owner by one that remembers its first call."""
    if entry.kind not in ("function", "method") or entry.owner is None:
        yield
        return
    original = inspect.getattr_static(entry.owner, entry.attr)

    @functools.wraps(entry.obj)
    def spy(*args: Any, **kwargs: Any) -> Any:
        result = entry.obj(*args, **kwargs)
        if not calls:
            calls.append((args, kwargs, result))
        return result

    setattr(entry.owner, entry.attr, spy)
    try:
        yield
    finally:
        setattr(entry.owner, entry.attr, original)


def run_example(entry: Entry, *, probe: bool = True) -> Trace:
    """Run the entry's ``>>>`` example on the reference device (as doctest would)."""
    trace = Trace()
    test = doctest.DocTestParser().get_doctest(entry.doc, _globs(entry), entry.name, None, 0)
    out: list[str] = []
    runner = doctest.DocTestRunner(optionflags=DOCTEST_FLAGS)
    calls: list[tuple[tuple[Any, ...], dict[str, Any], Any]] = []
    with nd.default_device(REFERENCE_DEVICE), warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        with recording() as kernels, _intercepted(entry, calls):
            runner.run(test, out=out.append, clear_globs=False)
        trace.kernels = kernels
        trace.failures, trace.report = runner.failures, "".join(out)
        if probe and calls and not trace.failures:
            trace.by_dtype = _probe(entry, *calls[0])
    return trace


def _cast(value: Any, source: Any, dtype: Any) -> Any:
    if type(value) is nd.Array and value.dtype is source:
        return nd.asarray(value.to_numpy().astype(dtype.dtype), device=REFERENCE_DEVICE)
    if isinstance(value, (list, tuple)) and any(type(v) is nd.Array for v in value):
        return type(value)(_cast(v, source, dtype) for v in value)
    return value


def _arrays(values: Any) -> list[Any]:
    found = []
    for v in values:
        if type(v) is nd.Array:
            found.append(v)
        elif isinstance(v, (list, tuple)):
            found.extend(a for a in v if type(a) is nd.Array)
    return found


def _probe(entry: Entry, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> dict[Any, set] | None:
    """Call the entry again once per dtype: its data arrays cast to it (those of the result's dtype,
    else of the first array's), or with ``dtype=`` when it takes no array. dtype -> kernels run,
    for the dtypes it accepts; None when there is nothing to vary."""
    arrays = _arrays((*args, *kwargs.values()))
    if arrays:
        out_dtype = getattr(result, "dtype", None)
        source = out_dtype if any(a.dtype is out_dtype for a in arrays) else arrays[0].dtype

        def call(dt: Any) -> Any:
            return entry.obj(*(_cast(a, source, dt) for a in args), **{k: _cast(v, source, dt) for k, v in kwargs.items()})
    else:
        try:
            params = inspect.signature(entry.obj).parameters
        except (TypeError, ValueError):
            return None
        if "dtype" not in params:
            return None

        def call(dt: Any) -> Any:
            return entry.obj(*args, **{**kwargs, "dtype": dt})

    accepted: dict[Any, set] = {}
    for dt in _dtypes.ALL_DTYPES:
        with recording() as kernels:
            try:
                call(dt)
            except Exception:  # noqa: BLE001 - a dtype the function rejects, whatever it raises
                continue
        accepted[dt] = kernels
    return accepted


# ---------------------------------------------------------------------------
# per device: which path each recorded kernel takes there
# ---------------------------------------------------------------------------


def _repository_distributions() -> set[str]:
    """The backend distributions this repository ships (plugins/*, examples/*)."""
    root = Path(__file__).resolve().parent.parent
    names = set()
    for path in [*root.glob("plugins/*/pyproject.toml"), *root.glob("examples/*/pyproject.toml")]:
        m = re.search(r'^name\s*=\s*"([^"]+)"', path.read_text(), re.MULTILINE)
        if m:
            names.add(m.group(1))
    return names


@functools.cache
def devices() -> tuple[list[nd.Device], list[tuple[str, str]]]:
    """The available non-test devices of this repository's backends, and (name, reason) of the
    installed but unavailable ones (a backend installed from elsewhere is not documented here)."""
    ok, missing = [], []
    ours = _repository_distributions()
    for row in nd.backends():
        if row["test_only"] or row["distribution"] not in ours:
            continue
        if row["available"]:
            ok.append(nd.Device(row["name"]))
        else:
            missing.append((row["name"], row["reason"]))
    return ok, missing


def _on_device(dev: nd.Device, dt: Any) -> Any:
    """``dt`` as ``dev`` would compute it: a reference default dtype (float64 of an integer
    input, int64 indices) becomes the device's default of the same kind."""
    backend = dev.backend
    if dt in backend.dtypes:
        return dt
    reference = nd.Device(REFERENCE_DEVICE).backend.default_dtypes
    for kind, default in reference.items():
        if default is dt and kind in backend.default_dtypes:
            return backend.default_dtypes[kind]
    return None


def cell(dev: nd.Device, kernels: set[tuple[str, Any]], dt: Any | None = None) -> tuple[str, list[str]]:
    """The worst path over ``kernels`` on ``dev`` (``ndplane info``'s letters), and the kernels
    that take it (those of the host fallback for H, the unsupported ones for ``.``)."""
    if dt is not None and dt not in dev.backend.dtypes:
        return ".", [dt.name]
    letter, notes = "N", []
    for op, kdt in sorted(kernels, key=lambda k: (k[0], k[1].name)):
        mapped = _on_device(dev, kdt)
        c = op_cell(dev, op, mapped) if mapped is not None else "."
        if _SEVERITY[c] > _SEVERITY[letter]:
            letter, notes = c, []
        if c == letter and c in "H.":
            notes.append(f"{op} ({_ABBREV[(mapped or kdt).name]})")
    return letter, notes


def support_markdown(trace: Trace) -> str:
    """The "Dtypes" and "Devices" lines of an entry, and its dtype x device table."""
    devs, _ = devices()
    lines = []
    if trace.by_dtype is not None:
        names = ", ".join(f"`{d.name}`" for d in trace.by_dtype) or "none (every probe raised)"
        lines.append(f"**Dtypes** (the example's arrays cast to each): {names}")
    summary = []
    for dev in devs:
        letter, notes = cell(dev, trace.kernels)
        what = {"N": "native", "D": "native, through core decompositions",
                ".": "not supported (" + ", ".join(notes) + ": a dtype the device lacks)",
                "H": "host fallback for " + ", ".join(notes)}[letter]  # fmt: skip
        summary.append(f"`{dev.kind}` {what}")
    if devs and trace.kernels:
        lines.append("**Devices** (the example, as run): " + "; ".join(summary) + ".")
    elif devs:
        lines.append("**Devices**: no kernel at all (layout, metadata or Python only): every device.")
    if trace.by_dtype:
        dts = list(trace.by_dtype)
        head = "| device | " + " | ".join(_ABBREV[d.name] for d in dts) + " |"
        rows = [head, "|---" * (len(dts) + 1) + "|"]
        for dev in devs:
            rows.append(f"| `{dev.kind}` | " + " | ".join(cell(dev, trace.by_dtype[d], d)[0] for d in dts) + " |")
        lines.append('??? note "Per dtype and device"\n\n' + "\n".join("    " + r for r in rows)
                     + "\n\n    N native, D core decomposition, H host fallback, . unsupported on that device.")  # fmt: skip
    return "\n\n".join(lines)


# ---------------------------------------------------------------------------
# pages
# ---------------------------------------------------------------------------

def _block(entry: Entry, level: int, members: bool) -> str:
    opts = [f"heading_level: {level}", "show_root_heading: true"]
    if not members:
        opts.append("members: false")
    return f"::: {entry.name}\n    options:\n" + "".join(f"      {o}\n" for o in opts)


def _entry_markdown(entry: Entry, level: int, failures: list[str]) -> str:
    if entry.kind == "data":
        doc = entry.doc.strip()
        summary, _, rest = doc.partition("\n")
        return (f"{'#' * level} `{entry.name}`\n\n`{entry.name} = {entry.obj!r}`\n\n"
                f"{summary}\n\n{fence_doctests(rest.strip())}\n\n{support_markdown(run_example(entry, probe=False))}\n")  # fmt: skip
    trace = run_example(entry, probe=entry.kind in ("function", "method"))
    if trace.failures:
        failures.append(f"{entry.name}: {trace.failures} example(s) failed\n{trace.report}")
    own = entry.members and entry.obj is not nd.Array
    return _block(entry, level, bool(own)) + "\n" + support_markdown(trace) + "\n"


def pages(failures: list[str] | None = None) -> dict[str, str]:
    """Reference page path (under ``reference/``) -> Markdown."""
    failures = [] if failures is None else failures
    body: dict[str, list[str]] = {}
    for entry in entries():
        page = body.setdefault(entry.page, [])
        page.append(_entry_markdown(entry, 2, failures))
        if entry.obj is nd.Array:
            for member in entry.members:
                page.append(_entry_markdown(member, 3, failures))
    out = {}
    for slug in page_order():
        module = sys.modules.get(f"ndplane.{slug.replace('-', '.')}")
        intro = (inspect.getdoc(module) or "") if module is not None and slug not in _TITLES else ""
        out[f"reference/{slug}.md"] = f"# {title(slug)}\n\n{fence_doctests(intro)}\n\n" + "\n".join(body[slug])
    out["reference/index.md"] = _index()
    return out


_DOCTEST_BLOCK = re.compile(r"^([ \t]*)>>>.*(?:\n\1(?![ \t]*$).*)*", re.MULTILINE)


def fence_doctests(doc: str) -> str:
    """Docstring text with each doctest block (a ``>>>`` line and the non-blank lines after it)
    in a ``pycon`` fence: Markdown would read ``>>>`` as nested quotes and ``[1, 2]`` as a link."""
    return _DOCTEST_BLOCK.sub(lambda m: f"\n{m.group(1)}```pycon\n{m.group(0)}\n{m.group(1)}```\n", doc)


def _index() -> str:
    devs, missing = devices()
    n = len(all_entries())
    lines = [
        "# API reference", "",
        f"Every public name of ndplane ({n} entries): its signature, docstring and example, generated "
        "from the code when this site was built. Every example runs in CI (`tests/test_reference.py`, "
        "on the `numpy` reference device).", "",
        "Under each function, **Dtypes** lists the dtypes it accepts (its example run again with the "
        "example's arrays cast to each dtype) and **Devices** how each device runs it: the example's "
        "kernels, recorded on the reference backend, looked up in each device's declared support "
        "exactly as `ndplane info DEVICE` does (N native, D core decomposition, H host fallback).", "",
        "Devices on the machine that built this site: " + ", ".join(f"`{d}`" for d in devs) + "."
        + ("" if not missing else " Installed but unavailable there, so absent from the tables: "
           + "; ".join(f"`{name}` ({why})" for name, why in missing) + "."), "",
    ]  # fmt: skip
    for slug in page_order():
        lines.append(f"- [{title(slug)}]({slug}.md)")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# mkdocs hook and command line
# ---------------------------------------------------------------------------


def on_files(files: Any, config: Any) -> Any:
    """mkdocs hook: add the generated reference pages; an example that fails fails the build."""
    import logging

    from mkdocs.structure.files import File

    failures: list[str] = []
    for path, text in pages(failures).items():
        files.append(File.generated(config, path, content=text))
    log = logging.getLogger("mkdocs.plugins.api_reference")
    for failure in failures:
        log.warning("reference example failed: %s", failure)
    return files


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    out = Path(argv[0])
    failures: list[str] = []
    for path, text in pages(failures).items():
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        (out / path).write_text(text)
    print("\n".join(failures) or f"wrote {len(all_entries())} entries under {out / 'reference'}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
