"""MkDocs hooks of the documentation site (``mkdocs.yml``: ``hooks``), and a griffe extension.

- ``on_config``: the "API reference" section of the nav lists the generated pages, in order.
- ``on_files``: adds those pages (``tools/api_reference.py``); a reference example that fails
  is a warning, so ``mkdocs build --strict`` fails on it.
- ``on_page_markdown``: a link from a page to a file of the repository outside ``docs/`` (the
  example backend's sources) has no page on the site: it becomes its text.
- ``DocstringMarkdown`` (a griffe extension): doctest blocks become ``pycon`` fences, Sphinx
  roles (``:func:`ndplane.zeros```) plain code spans.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import griffe

sys.path.insert(0, str(Path(__file__).resolve().parent))

import api_reference

ROOT = Path(__file__).resolve().parent.parent
_REFERENCE_NAV = "API reference"
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s#]+)(#[^)]*)?\)")
_ROLE = re.compile(r":(?:func|class|meth|attr|data|mod|exc|obj):`~?([^`]+)`")


def on_config(config: Any) -> Any:
    for i, item in enumerate(config["nav"] or []):
        if isinstance(item, dict) and _REFERENCE_NAV in item:
            config["nav"][i] = {_REFERENCE_NAV: [{"Overview": "reference/index.md"}] + [
                {api_reference.title(slug): f"reference/{slug}.md"} for slug in api_reference.page_order()
            ]}  # fmt: skip
    return config


def on_files(files: Any, config: Any) -> Any:
    return api_reference.on_files(files, config)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    docs = Path(config["docs_dir"]).resolve()
    source = docs / page.file.src_uri

    def unlink(m: re.Match[str]) -> str:
        target = m.group(2)
        if "://" in target or target.startswith("mailto:"):
            return m.group(0)
        path = (source.parent / target).resolve()
        outside = not path.is_relative_to(docs) and path.is_relative_to(ROOT) and path.exists()
        return m.group(1) if outside else m.group(0)

    return _LINK.sub(unlink, markdown)


class DocstringMarkdown(griffe.Extension):
    """Every docstring as Markdown: doctest blocks fenced (``pycon``), Sphinx roles as code spans
    (``:func:`~a.b``` -> ```b```, ``:class:`a.B``` -> ```a.B```)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            text = _ROLE.sub(lambda m: f"`{m.group(1).split('.')[-1] if '~' in m.group(0) else m.group(1)}`",
                             obj.docstring.value)  # fmt: skip
            obj.docstring.value = api_reference.fence_doctests(text)
