"""NumPy's protocols on Array: every row of the ufunc and function tables against NumPy, the
NumPy fallback under the fallback policy, mixed NumPy operands, the NumPy-style methods."""

from __future__ import annotations

import pickle
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ndplane as nd
from ndplane._numpy_operands import FUNCTIONS
from ndplane._numpy_protocol import UFUNCS

RNG = np.random.default_rng(0)


def _host(obj: Any) -> Any:
    if isinstance(obj, nd.Array):
        return obj.to_numpy()
    if isinstance(obj, (list, tuple)):
        return type(obj)(_host(v) for v in obj)
    return obj


def _same(got: Any, want: Any, name: str) -> None:
    """``got`` (ndplane, on numpy:1) holds what NumPy computed, with NumPy's dtype."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), name
        for g, w in zip(got, want):
            _same(g, w, name)
        return
    if not isinstance(want, (np.ndarray, np.generic)):
        assert got == want, name
        return
    assert type(got) is nd.Array and got.device == "numpy:1", f"{name}: got {type(got).__name__}"
    assert got.dtype.name == np.asarray(want).dtype.name, f"{name}: {got.dtype.name} != {np.asarray(want).dtype}"
    np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=name)


@pytest.fixture
def fresh_warnings() -> Any:
    from ndplane import _dispatch

    saved = set(_dispatch._warned)
    _dispatch._warned.clear()
    yield
    _dispatch._warned.clear()
    _dispatch._warned.update(saved)


# ---------------------------------------------------------------------------
# ufuncs: every row, on the dtype NumPy computes it in
# ---------------------------------------------------------------------------


def _ufunc_inputs(ufunc: np.ufunc) -> list[np.ndarray]:
    if ufunc.__name__.startswith("logical_"):  # rows for bool only (other kinds: the fallback, below)
        return [RNG.integers(0, 2, 6).astype(bool) for _ in range(ufunc.nin)]
    if ufunc is np.matmul:
        return [RNG.standard_normal((3, 4)), RNG.standard_normal((4, 2))]
    if "dd->d" in ufunc.types or "d->d" in ufunc.types or "dd->?" in ufunc.types or "d->?" in ufunc.types:
        return [RNG.uniform(0.1, 0.9, 6) * RNG.choice([-2.0, 2.0], 6) for _ in range(ufunc.nin)]
    if "ll->l" in ufunc.types or "l->l" in ufunc.types:
        return [RNG.integers(1, 5, 6) for _ in range(ufunc.nin)]
    return [RNG.integers(0, 2, 6).astype(bool) for _ in range(ufunc.nin)]


@pytest.mark.parametrize("ufunc", sorted(UFUNCS, key=lambda u: u.__name__), ids=lambda u: u.__name__)
def test_every_ufunc_row_matches_numpy(ufunc: np.ufunc) -> None:
    host = _ufunc_inputs(ufunc)
    args = [nd.asarray(h, device="numpy:1") for h in host]
    with np.errstate(all="ignore"), nd.fallback_mode("error"):
        want = ufunc(*host)
        _same(ufunc(*args), want, ufunc.__name__)
        _same(ufunc(args[0], *host[1:]), want, ufunc.__name__)  # a NumPy operand joins the device


@pytest.mark.usefixtures("fresh_warnings")
def test_ufunc_kinds_numpy_takes_and_ndplane_does_not_fall_back() -> None:
    x = nd.asarray([0.0, 2.0], device="numpy:1")
    with pytest.warns(nd.FallbackWarning, match=r"numpy\.logical_and runs through NumPy .* logical_and of float64"):
        _same(np.logical_and(x, x), np.logical_and([0.0, 2.0], [0.0, 2.0]), "logical_and")
    with pytest.warns(nd.FallbackWarning, match="reciprocal of int64"):
        _same(np.reciprocal(nd.asarray([1, 2], device="numpy:1")), np.reciprocal(np.array([1, 2])), "reciprocal")


def test_ufunc_scalars_out_and_dtype() -> None:
    x = nd.asarray([1.0, 2.0, 4.0], device="numpy:1", dtype=nd.float32)
    with nd.fallback_mode("error"):
        assert np.multiply(x, np.float64(2.0)).dtype is nd.float32  # NumPy scalars are Python scalars
        assert np.add(x, 1, dtype=np.float64).dtype is nd.float64
        out = nd.zeros(3, device="numpy:1", dtype=nd.float32)
        assert np.sqrt(x, out=out) is out
        np.testing.assert_array_equal(out.to_numpy(), np.sqrt(np.float32([1.0, 2.0, 4.0])))
        y = np.ones(3) + x  # ndarray + Array: NumPy defers to Array.__array_ufunc__
        assert type(y) is nd.Array and y.device == "numpy:1"


# ---------------------------------------------------------------------------
# functions: each row against NumPy (``CASES`` must name every row of FUNCTIONS)
# ---------------------------------------------------------------------------

A = RNG.standard_normal((4, 5))
B = RNG.standard_normal((5, 3))
N = RNG.integers(-3, 9, (4, 5))
SPD = A @ A.T + 4 * np.eye(4)


def _case(func: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]:
    return func, args, kwargs


CASES = [
    _case(np.sum, A, axis=(0, 1)), _case(np.sum, N, axis=0, keepdims=True), _case(np.sum, N, dtype=np.float32),
    _case(np.prod, A, axis=1), _case(np.max, A, axis=0), _case(np.amax, A), _case(np.min, N, axis=1, keepdims=True),
    _case(np.amin, A), _case(np.all, A > 0, axis=0), _case(np.any, A > 0), _case(np.mean, A, axis=1),
    _case(np.mean, N), _case(np.mean, A, dtype=np.float32), _case(np.std, A, axis=0, ddof=1), _case(np.var, N),
    _case(np.nansum, np.where(A > 1, np.nan, A), axis=0), _case(np.argmax, A, axis=1), _case(np.argmin, A),
    _case(np.cumsum, N), _case(np.cumprod, A, axis=1), _case(np.count_nonzero, A > 0, axis=0),
    _case(np.concatenate, [A, A], axis=1), _case(np.concatenate, [A, A], axis=None), _case(np.stack, [A, A], axis=2),
    _case(np.transpose, A), _case(np.swapaxes, A, 0, 1), _case(np.reshape, A, (5, 4)), _case(np.ravel, A),
    _case(np.squeeze, A[None, :, None]), _case(np.expand_dims, A, (0, 3)), _case(np.broadcast_to, A[0], (3, 5)),
    _case(np.broadcast_arrays, A, A[0]), _case(np.moveaxis, A, 0, -1), _case(np.flip, A, 1), _case(np.roll, A, 2),
    _case(np.tile, A, (2, 1)), _case(np.repeat, A, 2, axis=0), _case(np.take, A, 2, axis=1),
    _case(np.take, A, np.array([[0, 1], [3, 3]]), axis=0), _case(np.take, A, [7, 0]),
    _case(np.take_along_axis, A, np.argsort(A, axis=1), axis=1), _case(np.where, A > 0, A, 0.0),
    _case(np.where, A > 0), _case(np.nonzero, A > 0), _case(np.clip, A, -0.5, 0.5), _case(np.clip, N, min=0),
    _case(np.round, A, 2), _case(np.around, N), _case(np.diff, A, axis=0), _case(np.diff, A, prepend=0.0),
    _case(np.tril, A, -1), _case(np.triu, A), _case(np.sort, A, axis=0), _case(np.sort, N, axis=None),
    _case(np.argsort, A, kind="stable"), _case(np.searchsorted, np.sort(A[0]), A[1]), _case(np.unique, N),
    _case(np.unravel_index, np.array([3, 17]), (4, 5)), _case(np.ravel_multi_index, (np.array([0, 3]), np.array([4, 2])), (4, 5)),
    _case(np.dot, A, B), _case(np.dot, A[0], A[1]), _case(np.tensordot, A, B, axes=1), _case(np.outer, A[0], B[0]),
    _case(np.linalg.qr, A), _case(np.linalg.svd, A, full_matrices=False), _case(np.linalg.svd, A, compute_uv=False),
    _case(np.linalg.inv, SPD), _case(np.linalg.solve, SPD, A), _case(np.linalg.det, SPD), _case(np.linalg.cholesky, SPD),
    _case(np.empty_like, A, shape=(2,)), _case(np.zeros_like, N, dtype=np.float32), _case(np.ones_like, A, order="C"),
    _case(np.full_like, A, fill_value=7.0), _case(np.copy, A), _case(np.shape, A), _case(np.ndim, A),
    _case(np.size, A, 1), _case(np.iscomplexobj, A), _case(np.isrealobj, A), _case(np.result_type, A, np.int8),
    _case(np.real, A), _case(np.imag, A), _case(np.isin, N, [1, 5, 99]), _case(np.isin, A, A[0], invert=True),
]  # fmt: skip
if hasattr(np, "astype"):
    CASES.append(_case(np.astype, N, np.float32))

LIKE_CASES = [  # NumPy's creation functions that dispatch on like=
    _case(np.array, [[1, 2], [3, 4]], ndmin=3), _case(np.asarray, [1.5], dtype=np.float32), _case(np.asanyarray, [True]),
    _case(np.ascontiguousarray, [[1.0]]), _case(np.empty, (2, 3)), _case(np.zeros, 3, dtype=np.int16),
    _case(np.ones, (2,)), _case(np.full, (2, 2), 3), _case(np.arange, 5), _case(np.arange, 1.0, 2.0, 0.25),
]  # fmt: skip


def _name(case: tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]) -> str:
    return f"{case[0].__name__}-{'-'.join(sorted(case[2]))}"


@pytest.mark.parametrize("case", CASES, ids=_name)
def test_function_rows_match_numpy(case: tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]) -> None:
    func, args, kwargs = case
    ours = tuple(nd.asarray(a, device="numpy:1") if isinstance(a, np.ndarray) and a is args[0] else a for a in args)
    ours = tuple([nd.asarray(v, device="numpy:1") for v in a] if isinstance(a, list) and func in (
        np.concatenate, np.stack) else a for a in ours)  # fmt: skip
    if func is np.ravel_multi_index:
        ours = (tuple(nd.asarray(v, device="numpy:1") for v in args[0]), args[1])
    with nd.fallback_mode("error"):
        got = func(*ours, **kwargs)
    want = func(*args, **kwargs)
    if func is np.empty_like:
        assert got.shape == want.shape and got.dtype.name == want.dtype.name and got.device == "numpy:1"
        return
    if func is np.linalg.qr:
        got, want = (got.Q @ got.R,), (want.Q @ want.R,)  # the factorisation is unique up to signs
    if func is np.linalg.svd and not isinstance(want, np.ndarray):
        got, want = (got.S,), (want.S,)
    _same(got, want, func.__name__)


@pytest.mark.parametrize("case", LIKE_CASES, ids=_name)
def test_like_creation_rows_match_numpy(case: tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]) -> None:
    func, args, kwargs = case
    with nd.fallback_mode("error"):
        got = func(*args, like=nd.zeros(1, device="numpy:1"), **kwargs)
    want = func(*args, **kwargs)
    if func is np.empty:
        assert got.shape == want.shape and got.dtype.name == want.dtype.name
        return
    _same(got, want, func.__name__)


def test_every_function_row_is_checked() -> None:
    checked = {c[0] for c in CASES + LIKE_CASES}
    assert not set(FUNCTIONS) - checked, sorted(f.__name__ for f in set(FUNCTIONS) - checked)


# ---------------------------------------------------------------------------
# the NumPy fallback: the core's fallback policy, one warning per function
# ---------------------------------------------------------------------------


@pytest.mark.usefixtures("fresh_warnings")
def test_outside_the_tables_is_the_numpy_fallback() -> None:
    x = nd.asarray(A, device="numpy:1")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = np.median(x, axis=0)
        np.median(x, axis=1)  # warned once per function and device kind
        part = np.sum(x, where=x > 0)  # an argument outside the row
        assert np.add.reduce(x, axis=0).device == "numpy:1"  # a ufunc method
    _same(got, np.median(A, axis=0), "median")
    _same(part, np.sum(A, where=A > 0), "sum(where=)")
    messages = [str(w.message) for w in caught if issubclass(w.category, nd.FallbackWarning)]
    assert len(messages) == 3 and messages[0].startswith("numpy.median runs through NumPy on the host")
    assert "where" in messages[1] and "numpy.add.reduce" in messages[2]
    assert caught[0].filename == __file__  # the warning points at the caller
    with nd.fallback_mode("error"), pytest.raises(nd.FallbackError, match=r"numpy\.median: ndplane has no"):
        np.median(x)
    with nd.fallback_mode("allow"), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(np.percentile(x, 50)) == pytest.approx(np.percentile(A, 50))


def test_writes_into_arguments_raise_typeerror() -> None:
    x = nd.asarray([1.0, 2.0], device="numpy:1")
    with pytest.raises(TypeError, match=r"numpy\.copyto writes into its argument"):
        np.copyto(x, np.zeros(2))
    with pytest.raises(TypeError, match=r"numpy\.add\.at writes into its argument"):
        np.add.at(x, [0], 1.0)
    with pytest.raises(TypeError, match=r"numpy\.add writes into its argument"):
        np.add(x, 1.0, out=np.zeros(2))


def test_fallback_never_moves_between_devices() -> None:
    a, b = nd.asarray(A, device="numpy:1"), nd.asarray(A, device="numpy")
    with pytest.raises(nd.DeviceMismatchError, match=r"numpy\.einsum"):
        np.einsum("ij,ij->i", a, b)
    with pytest.raises(nd.DeviceMismatchError):
        np.add(a, b)


def test_unknown_duck_arrays_get_their_turn() -> None:
    class Duck:
        def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> str:
            return "duck"

        def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> str:
            return "duck"

    x = nd.asarray([1.0], device="numpy:1")
    assert np.concatenate([x, Duck()]) == "duck"  # type: ignore[comparison-overlap]
    assert np.add(x, Duck()) == "duck"


def test_asarray_is_still_the_explicit_road_to_numpy() -> None:
    x = nd.asarray(A, device="numpy:1")
    assert type(np.asarray(x)) is np.ndarray and type(np.array(x)) is np.ndarray


# ---------------------------------------------------------------------------
# what Dask reads on a chunk besides the protocols
# ---------------------------------------------------------------------------


def test_numpy_style_methods_and_dtype_type() -> None:
    x = nd.asarray(A[None], device="numpy:1")
    c = x.copy()
    assert c._storage is not x._storage and c.device == x.device
    assert x.ravel().shape == (20,) and x.squeeze().shape == (4, 5) and x.squeeze(0).shape == (4, 5)
    assert nd.float32.type is np.float32 and nd.bool.type is np.bool_
    assert x.__array_priority__ > np.zeros(1).__array_priority__


def test_numpy_arrays_index_like_lists() -> None:
    x = nd.reshape(nd.arange(12, device="numpy:1"), (3, 4))
    h = np.arange(12).reshape(3, 4)
    for key in (np.array([2, 0]), (slice(None), np.array([True, False, True, False])), np.array(1),
                (np.int64(1), np.array([[0], [1]]))):  # fmt: skip
        np.testing.assert_array_equal(x[key].to_numpy(), h[key])
    x[np.array([0, 2])] = 0
    x[np.array(1), np.array(2)] = -1
    h[[0, 2]] = 0
    h[1, 2] = -1
    np.testing.assert_array_equal(x.to_numpy(), h)


def test_pickle_keeps_the_device_index() -> None:
    x = nd.asarray(A, device="numpy:1")
    buffers: list[pickle.PickleBuffer] = []
    y = pickle.loads(pickle.dumps(x, protocol=5, buffer_callback=buffers.append), buffers=buffers)
    assert y.device == "numpy:1" and len(buffers) == 1
