"""Every public name has an API reference entry with a ``>>>`` example, and every example runs.

The public surface is what ``tools/api_reference.py`` generates the reference from:
``ndplane.__all__`` followed into each public submodule's ``__all__``, the members of
``ndplane.Array``, and the public methods of the public classes. ``--doctest-modules`` does
not reach all of these examples (the elementwise functions and Array's operators are built
from tables; constants and dtypes keep theirs in ``__test__``), so this runs each of them.
"""

from __future__ import annotations

import api_reference  # tools/, on sys.path through conftest.py
import pytest

import ndplane as nd

ENTRIES = api_reference.all_entries()


def test_the_surface_is_complete() -> None:
    names = {e.name for e in ENTRIES}
    for expected in ("ndplane.asarray", "ndplane.exp", "ndplane.e", "ndplane.float32", "ndplane.linalg.svd",
                     "ndplane.fft.rfft", "ndplane.random.default_rng", "ndplane.nn.Linear",
                     "ndplane.nn.functional.relu", "ndplane.nn.init.zeros_", "ndplane.optim.Adam",
                     "ndplane.Array.sum", "ndplane.Array.__add__", "ndplane.Array.T", "ndplane.Array.grad",
                     "ndplane.nn.Module.parameters", "ndplane.random.Generator.normal"):  # fmt: skip
        assert expected in names
    assert len(ENTRIES) > 400
    assert all(name in names for name in (f"ndplane.{n}" for n in nd.__all__ if not hasattr(getattr(nd, n), "__all__")))


def test_every_public_name_has_an_example() -> None:
    missing = [e.name for e in ENTRIES if not e.has_example]
    assert not missing, f"{len(missing)} public names have no >>> example in their docstring:\n" + "\n".join(missing)


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.has_example], ids=lambda e: e.name)
def test_example_runs(entry) -> None:  # type: ignore[no-untyped-def]
    trace = api_reference.run_example(entry, probe=False)
    assert trace.failures == 0, trace.report


def test_a_failing_example_is_reported() -> None:
    entry = api_reference.Entry("ndplane.fake", nd.sum, "function", "statistical", nd, "sum",
                                ">>> import ndplane as nd\n>>> int(nd.sum(nd.arange(3)))\n4\n")  # fmt: skip
    trace = api_reference.run_example(entry)
    assert trace.failures == 1 and "Expected:\n    4\nGot:\n    3" in trace.report


def test_device_tables_come_from_the_backends_declared_support() -> None:
    entry = next(e for e in ENTRIES if e.name == "ndplane.sort")
    trace = api_reference.run_example(entry)
    assert ("sort", nd.int64) in trace.kernels
    assert trace.by_dtype is not None and nd.float32 in trace.by_dtype and nd.complex64 not in trace.by_dtype
    numpy = nd.Device("numpy")
    assert api_reference.cell(numpy, trace.kernels) == ("N", [])
    pylist = nd.Device("pylist") if "pylist" in {b["name"] for b in nd.backends() if b["available"]} else None
    if pylist is not None:  # sort is not among pylist's native ops: the host fallback, as `ndplane info` says
        assert api_reference.cell(pylist, trace.kernels) == ("H", ["sort (i64)"])
        assert api_reference.cell(pylist, trace.by_dtype[nd.float32], nd.float32) == (".", ["float32"])
        linear = api_reference.run_example(next(e for e in ENTRIES if e.name == "ndplane.nn.Linear"))
        # Its weights are drawn from uint32 random bits, a dtype pylist does not have.
        letter, notes = api_reference.cell(pylist, linear.kernels)
        assert letter == "." and "random_bits (u32)" in notes
