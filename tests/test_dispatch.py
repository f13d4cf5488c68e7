"""The dispatch road: native -> decomposition -> host fallback, and errors before any kernel."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ndplane as nd
from ndplane import _dispatch
from ndplane.backend import BackendSpec, hookimpl, plugins
from ndplane_numpy.backend import NumpyBackend

CALLS: list[str] = []


class Sparse(NumpyBackend):
    """The reference backend with most kernels missing, recording what it is asked to run."""

    ops = frozenset({"add", "multiply", "negative", "equal", "less", "bitwise_and", "log", "exp", "log1p",
                     "maximum", "abs", "where", "cast", "sum"})  # fmt: skip

    def binary(self, op, a, b, out):  # type: ignore[no-untyped-def]
        CALLS.append(op)
        super().binary(op, a, b, out)

    def unary(self, op, x, out):  # type: ignore[no-untyped-def]
        CALLS.append(op)
        super().unary(op, x, out)


class Plugin:
    @staticmethod
    @hookimpl
    def ndplane_register_backends() -> list[BackendSpec]:
        return [BackendSpec(name="sparse", factory=lambda i: Sparse(i, name="sparse"), protocol_version=1,
                            test_only=True)]


class NoSigmoid(NumpyBackend):
    """The reference backend without the sigmoid kernel (a backend written before it was added)."""

    ops = NumpyBackend.ops - {"sigmoid"}

    def unary(self, op, x, out):  # type: ignore[no-untyped-def]
        CALLS.append(op)
        super().unary(op, x, out)


class NoSigmoidPlugin:
    @staticmethod
    @hookimpl
    def ndplane_register_backends() -> list[BackendSpec]:
        return [BackendSpec(name="nosigmoid", factory=lambda i: NoSigmoid(i, name="nosigmoid"), protocol_version=1,
                            test_only=True)]  # fmt: skip


@pytest.fixture(scope="module")
def sparse() -> nd.Device:
    plugins.register(Plugin, name="test-sparse")
    yield nd.Device("sparse")
    plugins.unregister("test-sparse")


def test_native_kernel_is_called(sparse: nd.Device) -> None:
    CALLS.clear()
    x = nd.asarray([1.0, 2.0], device=sparse)
    assert (x + x).tolist() == [2.0, 4.0]
    assert CALLS == ["add"]


def test_decomposition_runs_without_fallback(sparse: nd.Device) -> None:
    x = nd.asarray([1.0, -2.0, 3.0], device=sparse)
    CALLS.clear()
    with nd.fallback_mode("error"):
        assert nd.square(x).tolist() == [1.0, 4.0, 9.0]  # square -> multiply
        assert (x - 1.0).tolist() == [0.0, -3.0, 2.0]  # subtract -> add(negative)
        assert nd.greater(x, 0.0).tolist() == [True, False, True]  # greater -> less, swapped
        got = nd.logaddexp(x, nd.asarray([-np.inf, 1.0, 3.0], device=sparse)).to_numpy()
    np.testing.assert_allclose(got, np.logaddexp([1.0, -2.0, 3.0], [-np.inf, 1.0, 3.0]))
    assert "multiply" in CALLS and "subtract" not in CALLS and "square" not in CALLS


def test_sigmoid_decomposes_where_the_kernel_is_missing() -> None:
    """A backend without the sigmoid kernel runs the core's stable formula (no fallback), recorded
    as one node with the row's gradient ``out * (1 - out)`` (0.25 at x = 0, 0 at the extremes)."""
    plugins.register(NoSigmoidPlugin, name="test-nosigmoid")
    try:
        host = np.array([0.0, -0.0, 2.0, -3.0, 800.0, -800.0, np.inf, -np.inf, np.nan])
        x = nd.asarray(host, device="nosigmoid")
        x.requires_grad = True
        CALLS.clear()
        with nd.fallback_mode("error"), np.errstate(over="ignore"):
            y = nd.nn.functional.sigmoid(x)
            want = 1 / (1 + np.exp(-host))
        assert "exp" in CALLS and "sigmoid" not in CALLS
        np.testing.assert_allclose(y.to_numpy(), want, rtol=1e-15)
        assert y._node is not None and y._node.name == "sigmoid"
        nd.sum(y[:6]).backward()
        assert x.grad is not None
        np.testing.assert_allclose(x.grad.to_numpy()[:6], (want * (1 - want))[:6], rtol=1e-15)
    finally:
        plugins.unregister(name="test-nosigmoid")


def test_host_fallback_warns_once_then_errors_when_disabled(sparse: nd.Device, monkeypatch) -> None:
    x = nd.asarray([0.5, 0.25], device=sparse)
    _dispatch._warned.clear()
    with pytest.warns(nd.FallbackWarning, match="sin on float64 runs through the host fallback on backend 'sparse'"):
        y = nd.sin(x)
    np.testing.assert_allclose(y.to_numpy(), np.sin([0.5, 0.25]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nd.sin(x)  # the warning is shown once per op, dtype and backend
    with nd.fallback_mode("error"), pytest.raises(nd.FallbackError, match="sin"):
        nd.sin(x)
    monkeypatch.setenv("NDPLANE_FALLBACK", "error")
    with pytest.raises(nd.FallbackError, match="NDPLANE_FALLBACK=error"):
        nd.sort(x)


def test_host_fallback_covers_every_primitive(sparse: nd.Device) -> None:
    host = np.array([[3.0, 1.0, 2.0], [0.0, -1.0, 5.0]])
    x = nd.asarray(host, device=sparse)
    with nd.fallback_mode("allow"):
        np.testing.assert_array_equal(nd.sort(x, axis=1).to_numpy(), np.sort(host, axis=1))
        np.testing.assert_array_equal((x @ x.T).to_numpy(), host @ host.T)
        np.testing.assert_array_equal(nd.cumulative_sum(x, axis=1).to_numpy(), np.cumsum(host, axis=1))
        np.testing.assert_array_equal(nd.take(x, nd.asarray([2, 0], device=sparse), axis=1).to_numpy(), host[:, [2, 0]])
        np.testing.assert_array_equal(nd.argmax(x, axis=0).to_numpy(), host.argmax(axis=0))
        bits = nd.random.default_rng(7).bits(9, device=sparse).to_numpy()
    np.testing.assert_array_equal(bits, nd.random.default_rng(7).bits(9).to_numpy())


def test_device_mismatch_names_both_devices() -> None:
    a, b = nd.zeros(2, device="numpy:0"), nd.zeros(2, device="numpy:1")
    for fn in (lambda: a + b, lambda: nd.matmul(a, b), lambda: nd.where(a > 0, a, b),
               lambda: nd.concat([a, b]), lambda: a.__setitem__(slice(None), b)):  # fmt: skip
        with pytest.raises(nd.DeviceMismatchError, match="'numpy:0' and 'numpy:1'"):
            fn()
    assert (a + b.to_device("numpy:0")).device == "numpy:0"
    assert (a + 1).device == "numpy:0"  # Python scalars are fine


def test_unsupported_dtype_is_refused_before_any_work(no_leaks: None) -> None:
    dev = nd.Device("numpy-nof64")
    stats = dev.backend.memory_stats()
    for make in (lambda: nd.zeros(3, dtype=nd.float64, device=dev),
                 lambda: nd.asarray(np.ones(3), device=dev),
                 lambda: nd.astype(nd.zeros(3, device=dev), nd.int64)):  # fmt: skip
        with pytest.raises(nd.UnsupportedDTypeError, match=r"float64|int64.*numpy-nof64.*dtype=ndplane\.(float32|int32)"):
            make()
    assert nd.zeros(3, device=dev).dtype == nd.float32  # device defaults are 32-bit
    assert nd.arange(3, device=dev).dtype == nd.int32
    assert dev.backend.memory_stats()["buffers"] <= stats["buffers"] + 0


@pytest.mark.parametrize(
    ("fn", "error", "pattern"),
    [
        (lambda: nd.zeros((2, 3)) + nd.zeros((4,)), ValueError, r"add: shapes \(2, 3\), \(4,\) cannot be broadcast"),
        (lambda: nd.sum(nd.zeros((2, 3)), axis=2), IndexError, "sum: axis 2 is out of bounds .* 2 dimension"),
        (lambda: nd.zeros((2, 3))[2], IndexError, "index 2 is out of bounds for axis 0 with size 2"),
        (lambda: nd.zeros((2, 3))[0, 0, 0], IndexError, "too many indices"),
        (lambda: nd.take(nd.zeros(3), nd.asarray([3])), IndexError, "index 3 is out of bounds for size 3"),
        (lambda: nd.take(nd.zeros(3), nd.asarray([-4])), IndexError, "index -4 is out of bounds"),
        (lambda: nd.reshape(nd.zeros(6), (4, 2)), ValueError, r"cannot reshape an array of size 6 into shape \(4, 2\)"),
        (lambda: nd.zeros((2, 3)) @ nd.zeros((2, 3)), ValueError, "matmul: shapes .* not aligned"),
        (lambda: nd.asarray([1, 2], dtype=nd.int8) + 1000, OverflowError, "1000 is out of bounds for int8"),
        (lambda: nd.bitwise_and(nd.zeros(2), nd.zeros(2)), TypeError, "bitwise_and: only integer or boolean dtypes"),
        (lambda: nd.permute_dims(nd.zeros((2, 3)), (0, 0)), ValueError, "permute_dims: axes"),
        (lambda: nd.squeeze(nd.zeros((2, 3)), axis=0), ValueError, "squeeze: cannot remove axis 0 of size 2"),
        (lambda: bool(nd.zeros(3)), TypeError, "only arrays with one element"),
    ],
)
def test_bad_input_gets_a_clear_error(fn, error, pattern, no_leaks: None) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=pattern):
        fn()


def test_compact_path_on_contiguous_only_device() -> None:
    host = np.arange(12.0).reshape(3, 4)
    x = nd.asarray(host, device="numpy-contig")
    assert "strided" not in x.device.backend.capabilities
    got = (x.T[::-1] * nd.asarray([1.0, 2.0, 3.0], device="numpy-contig")).to_numpy()
    np.testing.assert_array_equal(got, host.T[::-1] * [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(nd.sum(x.T, axis=1).to_numpy(), host.T.sum(axis=1))


def test_a_backend_without_strided_gets_contiguous_reduction_operands(monkeypatch: pytest.MonkeyPatch) -> None:
    # reducing axis 0 of a contiguous array reads an (M, K) view that is not contiguous
    dev = nd.Device("numpy-contig")
    backend = dev.backend
    seen = []
    kernel = backend.reduce

    def reduce(op, x, out):  # type: ignore[no-untyped-def]
        seen.append(x.contiguous and x.strides == (x.shape[1], 1))
        return kernel(op, x, out)

    monkeypatch.setattr(backend, "reduce", reduce)
    x = nd.asarray(np.arange(12.0).reshape(3, 4), device=dev)
    assert nd.sum(x, axis=0).tolist() == [12.0, 15.0, 18.0, 21.0]
    assert nd.max(x[:, ::2], axis=1).tolist() == [2.0, 6.0, 10.0]
    assert seen == [True, True]


def test_the_contiguous_only_device_refuses_a_strided_compute_operand() -> None:
    # numpy-contig holds the core to its contract, so every suite run on it checks the core
    from ndplane.backend import Ref

    backend = nd.Device("numpy-contig").backend
    x = nd.asarray(np.arange(6.0).reshape(2, 3), device="numpy-contig")
    out = nd.empty((3, 2), device="numpy-contig")
    xr = x._ref
    transposed = Ref(xr.buffer, xr.dtype, (3, 2), (1, 3), 0, 6, False)
    lying = Ref(xr.buffer, xr.dtype, (3, 2), (1, 3), 0, 6, True)  # strides say otherwise
    for bad in (transposed, lying):
        with pytest.raises(AssertionError, match=r"numpy-contig\.unary: got a non-contiguous Ref"):
            backend.unary("negative", bad, out._ref)
    backend.copy(transposed, out._ref)  # copy takes any layout
    np.testing.assert_array_equal(out.to_numpy(), np.arange(6.0).reshape(2, 3).T)


def test_one_plan_cache_for_every_primitive() -> None:
    """Elementwise ops and kernel primitives share each device's plan cache, keyed by
    (op, dtype): their names must never coincide."""
    from ndplane.backend import ops

    families = [ops.UNARY_OPS | ops.BINARY_OPS, ops.REDUCE_OPS, ops.SCAN_OPS, ops.KERNEL_OPS, ops.LINALG_OPS,
                ops.FFT_OPS]  # fmt: skip
    seen: set[str] = set()
    for names in families:
        assert not (names & seen), sorted(names & seen)
        seen |= names
    dev = nd.Device("numpy")
    nd.sum(nd.ones((3,), device=dev))
    assert dev._plans[("sum", nd.float64)][0] == 0  # native, cached beside the elementwise plans
    assert not hasattr(_dispatch, "_KERNEL_PATHS")


def test_reference_backend_refuses_a_ref_whose_buffer_was_freed() -> None:
    """The numpy device holds the core to buffer lifetimes as a GPU backend must (there the
    memory is reused at once): a kernel handed a Ref of a freed buffer raises, where NumPy
    would read the still-allocated array. Core paths that drop an Array while its Ref is still
    to be read (a reduction's result copied after the Array was collected) fail here."""
    x = nd.asarray([3, -1, 7], device="numpy")
    be = x._storage.backend
    out = _dispatch.empty((), x.dtype, x.device)
    with pytest.raises(ValueError, match="freed"):
        be.copy(_dispatch.reduce("min", x, (0,), x.dtype)._ref, out._ref)
    kept = _dispatch.reduce("min", x, (0,), x.dtype)
    be.copy(kept._ref, out._ref)
    assert int(out) == -1 and _dispatch.bounds(x) == (-1, 7)
