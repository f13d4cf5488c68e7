"""Every ``>>>`` example in the user docs runs as written (the docs cannot drift from the code)."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = ["getting-started.md", "architecture.md", "backend-authors.md", "autograd-and-nn.md"]


@pytest.mark.parametrize("page", PAGES)
def test_doc_examples_run(page: str) -> None:
    pytest.importorskip("ndplane_pylist", reason="the docs' examples use the example backend")
    # A Markdown fence line would read as expected output: make it the blank line that ends it.
    text = re.sub(r"^\s*```.*$", "", (DOCS / page).read_text(), flags=re.MULTILINE)
    test = doctest.DocTestParser().get_doctest(text, {}, page, str(DOCS / page), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in docs/{page} failed"
