"""Every Python code block of every page under docs/ runs as written (the docs cannot drift from
the code); the API reference's examples are run by tests/test_reference.py.

What "runs" means, per fenced block of a page, in page order and in one namespace per page:

* a ``python`` or ``pycon`` block of ``>>>`` examples runs under doctest;
* a ``python`` block preceded by ``<!-- excerpt: PATH -->`` quotes a file of the repository
  (the backend guide quotes the example backend's source, which runs in its own tests): it
  must still be there verbatim, indentation and trailing ``# noqa``/``# type:``/``# fmt:``
  comments aside;
* any other ``python`` block is executed;
* ``bash``, ``console``, ``text``, ``toml``, ... blocks are not Python and are not run;
* a block preceded by ``<!-- docs-test: skip REASON -->`` is not run (the reason is required).
"""

from __future__ import annotations

import doctest
import re
import textwrap
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
PYTHON = ("python", "py", "pycon")
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
                    re.MULTILINE | re.DOTALL)  # fmt: skip
_SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s+(?P<reason>\S[^>]*?)\s*-->\s*$")
_EXCERPT = re.compile(r"<!--\s*excerpt:\s*(?P<path>\S+)\s*-->\s*$")
_TOOL_COMMENT = re.compile(r"\s+# (noqa|type: ?ignore|fmt: ?skip)\b.*$")


@dataclass
class Block:
    line: int
    lang: str
    body: str
    skip: str | None  # the reason given by a docs-test: skip marker
    excerpt: str | None  # the file an excerpt marker names

    @property
    def is_doctest(self) -> bool:
        return self.body.lstrip().startswith(">>>")


def blocks(text: str) -> list[Block]:
    out = []
    for m in _FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip, excerpt = _SKIP.search(before), _EXCERPT.search(before)
        body = textwrap.dedent(m.group("body"))
        out.append(Block(text.count("\n", 0, m.start()) + 1, m.group("lang").lower(), body,
                         skip.group("reason") if skip else None, excerpt.group("path") if excerpt else None))  # fmt: skip
    return out


@cache
def _source_lines(path: Path) -> list[str]:
    return [_TOOL_COMMENT.sub("", line.rstrip()) for line in path.read_text().splitlines()]


def is_excerpt(body: str, path: Path) -> bool:
    """Whether ``path`` holds ``body``'s lines, in order and consecutive, at one indentation."""
    want = [line.rstrip() for line in textwrap.dedent(body).strip("\n").splitlines()]
    first = want[0].lstrip()
    lead = len(want[0]) - len(first)
    lines = _source_lines(path)
    for i, line in enumerate(lines):
        if line.lstrip() != first or i + len(want) > len(lines) or len(line) - len(first) < lead:
            continue
        indent = line[: len(line) - len(first) - lead]
        if all((lines[i + k] == indent + w) if w else not lines[i + k] for k, w in enumerate(want)):
            return True
    return False


def run_page(page: str, text: str | None = None) -> tuple[int, list[str]]:
    """Run the page's Python blocks; (blocks run, failure reports)."""
    text = (DOCS / page).read_text() if text is None else text
    globs: dict[str, object] = {"__name__": f"docs/{page}"}
    ran, failures = 0, []
    for block in blocks(text):
        where = f"docs/{page}:{block.line}"
        if block.lang not in PYTHON or block.skip:
            continue
        ran += 1
        if block.is_doctest:
            test = doctest.DocTestParser().get_doctest(block.body, globs, where, str(DOCS / page), block.line)
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
            report: list[str] = []
            runner.run(test, out=report.append, clear_globs=False)
            globs.update(test.globs)  # DocTest ran on a copy: later blocks see what this one defined
            if runner.failures:
                failures.append("".join(report))
        elif block.excerpt is not None:
            source = ROOT / block.excerpt
            if not source.is_file() or not is_excerpt(block.body, source):
                failures.append(f"{where}: the block is no longer in {block.excerpt} as quoted; copy it again.")
        else:
            try:
                exec(compile(block.body, where, "exec"), globs)
            except Exception as exc:  # noqa: BLE001 - reported with the block's place
                failures.append(f"{where}: running the block raised {type(exc).__name__}: {exc}")
    return ran, failures


@pytest.mark.parametrize("page", PAGES)
def test_doc_code_blocks_run(page: str) -> None:
    pytest.importorskip("ndplane_pylist", reason="the docs' examples use the example backend")
    ran, failures = run_page(page)
    assert not failures, "\n".join(failures)
    python = [b for b in blocks((DOCS / page).read_text()) if b.lang in PYTHON]
    assert ran == len([b for b in python if not b.skip])


def test_every_page_is_collected() -> None:
    assert {"index.md", "getting-started.md", "backend-authors.md", "performance.md"} <= set(PAGES)


def test_skip_markers_need_a_reason_and_blocks_are_parsed() -> None:
    text = "a\n<!-- docs-test: skip needs a GPU -->\n```python\nimport x\n```\n\n```bash\nls\n```\n"
    got = blocks(text)
    assert [(b.lang, b.skip, b.body) for b in got] == [("python", "needs a GPU", "import x\n"), ("bash", None, "ls\n")]
    assert blocks("<!-- excerpt: a/b.py -->\n```python\nx = 1\n```\n")[0].excerpt == "a/b.py"
    assert blocks("<!-- docs-test: skip -->\n```python\n1\n```\n")[0].skip is None


def test_wrong_blocks_fail_and_excerpts_are_found() -> None:
    text = ("```python\n>>> 1 + 1\n3\n```\n\n```python\nraise RuntimeError('boom')\n```\n\n"
            "```python\nx = 2\n```\n\n```pycon\n>>> x * 3\n6\n```\n\n```console\n$ false\n```\n\n"
            "<!-- excerpt: tests/test_docs.py -->\n```python\ndef no_such_function():\n    pass\n```\n")  # fmt: skip
    ran, failures = run_page("made-up.md", text)
    assert ran == 5 and len(failures) == 3
    assert "Expected:\n    3\nGot:\n    2" in failures[0] and "RuntimeError: boom" in failures[1]
    assert "no longer in tests/test_docs.py" in failures[2]
    this = Path(__file__)
    assert is_excerpt("    def is_doctest(self) -> bool:\n        return self.body.lstrip().startswith(\">>>\")\n", this)
    assert not is_excerpt("def is_doctest(self) -> bool:\n    return False\n", this)
