"""The conformance suite reaches every public function and every operator of Array.

A function added to the namespace (or to linalg, fft, random, nn.functional) without a
conformance test, or an operator bound onto Array that the operator tables of
``test_elementwise`` do not list, fails here: holes like "in-place operators with two dtypes
were never tried" start as names nobody tested.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ndplane as nd
from ndplane.conformance import test_elementwise as elementwise

SUITE = Path(nd.conformance.__file__).parent
SOURCE = "\n".join(p.read_text() for p in sorted(SUITE.glob("*.py")))

# Array methods that are not elementwise operators, and the conformance test that calls them.
OTHER_DUNDERS = {
    "__getitem__": "test_indexing.py", "__setitem__": "test_indexing.py", "__matmul__": "test_matmul.py",
    "__rmatmul__": "test_matmul.py", "__imatmul__": "test_matmul.py::test_imatmul",
    "__array__": "test_array_api_extras.py::test_python_conversions",
    "__array_namespace__": "test_array_api_extras.py::test_python_conversions",
    "__bool__": "test_array_api_extras.py::test_python_conversions",
    "__int__": "test_array_api_extras.py::test_python_conversions",
    "__float__": "test_array_api_extras.py::test_python_conversions",
    "__complex__": "test_array_api_extras.py::test_python_conversions",
    "__index__": "test_array_api_extras.py::test_python_conversions",
    "__len__": "test_array_api_extras.py::test_python_conversions",
    "__iter__": "test_array_api_extras.py::test_python_conversions",
    "__dlpack__": "test_array_api_extras.py::test_dlpack", "__dlpack_device__": "test_array_api_extras.py::test_dlpack",
    "__array_function__": "test_numpy_protocols.py::test_numpy_functions_and_ufuncs_stay_on_the_device",
    "__array_ufunc__": "test_numpy_protocols.py::test_numpy_functions_and_ufuncs_stay_on_the_device",
}  # fmt: skip
UNARY_DUNDERS = {"__neg__": "neg", "__pos__": "pos", "__abs__": "abs", "__invert__": "invert"}


def _public_functions() -> list[str]:
    names = []
    for prefix, module in (("", nd), ("linalg.", nd.linalg), ("fft.", nd.fft), ("random.", nd.random),
                           ("nn.functional.", nd.nn.functional)):  # fmt: skip
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if callable(obj) and not isinstance(obj, type):
                names.append(prefix + name)
    return names


@pytest.mark.parametrize("name", _public_functions())
def test_every_public_function_is_in_the_suite(name: str) -> None:
    leaf = name.rsplit(".", 1)[-1]
    if name in elementwise.UNARY or name in elementwise.BINARY:
        return  # every row of the core's op table is driven by test_elementwise on every backend
    assert re.search(rf"\b{re.escape(leaf)}\b", SOURCE), (
        f"ndplane.{name} is called by no test of ndplane.conformance: add one (every backend runs it)."
    )


def test_every_operator_is_in_the_operator_tables() -> None:
    dunders = [n for n in vars(nd.Array) if n.startswith("__") and n.endswith("__") and callable(getattr(nd.Array, n))]
    dunders = [n for n in dunders if n not in vars(object) and n not in ("__init__", "__reduce_ex__", "__repr__")]
    missing = []
    for d in dunders:
        base = d[:2] + d[3:] if d[2] in "ri" and (d[:2] + d[3:]) in elementwise.OPERATORS else d
        if d in elementwise.OPERATORS or d in elementwise.INPLACE:
            continue
        if d.startswith("__r") and base in elementwise.OPERATORS:
            continue  # test_operator draws the reflected form of every operator
        if d in UNARY_DUNDERS and f'"{UNARY_DUNDERS[d]}"' in SOURCE:
            continue
        where = OTHER_DUNDERS.get(d)
        if where is not None:
            path, _, test = where.partition("::")
            text = (SUITE / path).read_text()
            if not test or f"def {test}(" in text:
                continue
        missing.append(d)
    assert not missing, f"Array operators no conformance test exercises: {missing}"


def test_every_inplace_operator_has_its_operator() -> None:
    for d, (op, _) in elementwise.INPLACE.items():
        assert ("__" + d[3:]) in elementwise.OPERATORS and elementwise.OPERATORS["__" + d[3:]][0] == op, d
