"""The cuda kernels against NumPy on a real GPU (skipped where none is available).

The conformance suite (``pytest --pyargs ndplane.conformance --ndplane-backend cuda``)
covers every op; these tests aim at the engine's own paths: the vectorised and strided
elementwise kernels, layouts beyond eight axes, the three reduction layouts, the scans'
chunk carries, cuBLAS operand flags, Philox and the allocator's out-of-memory path.
"""

from __future__ import annotations

import gc
import os
import sys

import numpy as np
import pytest
from ndplane_cuda import backend as cuda_backend

import ndplane as nd
import ndplane.nn.functional as F
from ndplane.backend import reference

ok, _count, reason = cuda_backend._probe()
pytestmark = pytest.mark.skipif(not ok, reason=f"no usable CUDA device: {reason}")
RNG = np.random.default_rng(3)


def on_gpu(a: np.ndarray) -> nd.Array:
    return nd.asarray(a, device="cuda")


@pytest.mark.parametrize("n", [1, 3, 4, 17, 1000, 1 << 20])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int64", "complex128"])
def test_add_contiguous_vector_and_tail(n: int, dtype: str) -> None:
    a, b = (RNG.standard_normal(n) * 50).astype(dtype), (RNG.standard_normal(n) * 50).astype(dtype)
    np.testing.assert_array_equal((on_gpu(a) + on_gpu(b)).to_numpy(), a + b)


def test_misaligned_views_take_the_scalar_path() -> None:
    a = RNG.standard_normal(1001).astype(np.float32)
    x = on_gpu(a)
    np.testing.assert_array_equal((x[1:] * 2.0).to_numpy(), a[1:] * 2.0)


@pytest.mark.parametrize("ndim", [2, 5, 9, 11])
def test_strided_layouts_with_many_axes(ndim: int) -> None:
    shape = (2,) * ndim
    a = RNG.standard_normal(shape)
    x = on_gpu(a)
    perm = tuple(RNG.permutation(ndim))
    want = np.transpose(a, perm)[..., ::-1] - a[..., :1]
    got = nd.permute_dims(x, perm)[..., ::-1] - x[..., :1]
    np.testing.assert_array_equal(got.to_numpy(), want)


@pytest.mark.parametrize("shape", [(64, 64), (33, 1000), (1000, 45), (3, 50, 70), (2, 3, 4, 129, 33)])
@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "float32", "float64", "complex128"])
def test_transposed_copies_go_through_tiles(shape: tuple[int, ...], dtype: str) -> None:
    """A copy, cast or unary map of a view whose last two axes are swapped: 32 x 32 tiles
    through shared memory (edges, leading axes, every item size), as NumPy."""
    a = (RNG.standard_normal(shape) * 20).astype(dtype)
    x = nd.matrix_transpose(on_gpu(a))
    want = np.swapaxes(a, -1, -2)
    np.testing.assert_array_equal(nd.asarray(x, copy=True).to_numpy(), want)
    np.testing.assert_array_equal(nd.reshape(x, (-1,)).to_numpy(), want.reshape(-1))
    if dtype != "complex128":
        np.testing.assert_array_equal(nd.astype(x, nd.float64).to_numpy(), want.astype(np.float64))
    if dtype in ("float32", "float64"):
        np.testing.assert_array_equal(nd.negative(x).to_numpy(), -want)
        np.testing.assert_array_equal(nd.matrix_transpose(on_gpu(a))[..., ::-1, :].to_numpy().copy(), want[..., ::-1, :])
    out = on_gpu(np.zeros(want.shape[:-1] + (want.shape[-1] * 2,), dtype))
    out[..., ::2] = x  # into a strided output: not the tiled road (its rows are not dense)
    np.testing.assert_array_equal(out.to_numpy()[..., ::2], want)


@pytest.mark.parametrize(("m", "k"), [(1, 1), (7, 3), (1000, 5), (3, 100_000), (5000, 300), (1, 0), (1, 1 << 22)])
@pytest.mark.parametrize("axis", [0, 1])
def test_reductions_every_layout(m: int, k: int, axis: int) -> None:
    a = RNG.standard_normal((m, k))
    x = on_gpu(a)
    np.testing.assert_allclose(nd.sum(x, axis=axis).to_numpy(), a.sum(axis=axis), rtol=1e-10, atol=1e-9)
    if a.shape[axis]:
        np.testing.assert_array_equal(nd.argmax(x, axis=axis).to_numpy(), a.argmax(axis=axis))
        np.testing.assert_array_equal(nd.min(x, axis=axis).to_numpy(), a.min(axis=axis))


@pytest.mark.parametrize(("m", "k"), [(32, 129), (40, 5000), (8192, 300), (33, 1 << 20)])
@pytest.mark.parametrize("dtype", ["float16", "float32", "int64", "complex64", "bool"])
def test_column_reductions_split_into_segments(m: int, k: int, dtype: str) -> None:
    """A reduction over the leading axis: 32 rows a block, the reduced axis split into segments
    whose partial accumulators a second kernel combines in order; ties and NaN in argmax/argmin
    across segments keep the first index, float16 sums accumulate in float32."""
    a = (RNG.standard_normal((k, m)) * 3).astype(dtype)
    if dtype not in ("bool", "complex64"):
        a[k // 2] = a[1] = a.max(axis=0)  # ties in two segments: the first index wins
    if dtype in ("float16", "float32"):
        a[k - 1, 3] = a[k // 3, 3] = np.nan
    x = on_gpu(a)
    if dtype == "bool":
        np.testing.assert_array_equal(nd.any(x, axis=0).to_numpy(), a.any(axis=0))
        np.testing.assert_array_equal(nd.all(x, axis=0).to_numpy(), a.all(axis=0))
        return
    want = a.astype(np.float64 if dtype != "complex64" else np.complex128).sum(axis=0)
    tol = {"float16": 2e-2, "float32": 1e-4, "complex64": 1e-4}.get(dtype, 1e-9)  # complex64 sums in complex64
    np.testing.assert_allclose(nd.sum(x, axis=0).to_numpy(), want, rtol=tol, atol=tol * np.sqrt(k))
    if dtype != "complex64":
        np.testing.assert_array_equal(nd.argmax(x, axis=0).to_numpy(), a.argmax(axis=0))
        np.testing.assert_array_equal(nd.argmin(x, axis=0).to_numpy(), a.argmin(axis=0))
        np.testing.assert_array_equal(nd.max(x, axis=0).to_numpy(), a.max(axis=0))


@pytest.mark.parametrize("dtype", ["float16", "float32", "int32"])
def test_long_rows_split_into_segments_keep_the_first_extreme(dtype: str) -> None:
    """A full reduction is one long row, split over the grid into segments: ties and NaN in
    different segments still give the first index, as NumPy."""
    a = (RNG.standard_normal(1 << 21) * 5).astype(dtype)
    a[[123_457, 1_900_000]] = a.max() + 1  # the same maximum in two segments
    x = on_gpu(a)
    assert int(nd.argmax(x)) == 123_457 and int(nd.argmin(x)) == int(np.argmin(a))
    np.testing.assert_allclose(float(nd.sum(x)), float(a.astype(np.float64).sum()),
                               rtol=1e-2 if dtype == "float16" else 1e-5)
    if dtype != "int32":
        a[[1_500_000, 200_000]] = np.nan
        assert int(nd.argmax(on_gpu(a))) == 200_000 and np.isnan(float(nd.max(on_gpu(a))))


def test_nan_propagates_and_argmax_takes_the_first_nan() -> None:
    a = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 1.0, 0.5, 9.0]])
    x = on_gpu(a)
    np.testing.assert_array_equal(nd.max(x, axis=1).to_numpy(), [np.nan, 9.0])
    np.testing.assert_array_equal(nd.argmax(x, axis=1).to_numpy(), [1, 3])


@pytest.mark.parametrize("k", [1, 2047, 2048, 2049, 50_000])
def test_cumulative_sum_carries_across_chunks(k: int) -> None:
    a = RNG.integers(-100, 100, (3, k))
    np.testing.assert_array_equal(nd.cumulative_sum(on_gpu(a), axis=1).to_numpy(), np.cumsum(a, axis=1))


@pytest.mark.parametrize("k", [5, 300, 2048, 5000])
@pytest.mark.parametrize("dtype", ["int8", "uint32", "float16", "float32", "float64", "complex128"])
def test_scans_every_dtype_and_layout(k: int, dtype: str) -> None:
    """Rows read and written warp-striped and exchanged through shared memory: contiguous
    rows, a reversed strided view and a scan along the leading axis (strided columns)."""
    a = (RNG.standard_normal((6, k)) * 3).astype(dtype)
    if dtype == "complex128":
        a = a + 1j * a[::-1]
    exact = a.dtype.kind in "iu"
    tol = 2e-2 if dtype == "float16" else 1e-4 if dtype == "float32" else 1e-10
    whole = on_gpu(a)
    # (view of x, its host twin, axis): rows, a reversed strided view's rows, strided columns
    for x, src, axis in ((whole, a, 1), (whole[::-2, ::-3], a[::-2, ::-3], 1), (whole, a, 0)):
        got = nd.cumulative_sum(x, axis=axis, dtype=x.dtype).to_numpy()  # the kernel of a's dtype
        if exact:
            np.testing.assert_array_equal(got, np.cumsum(src, axis=axis, dtype=src.dtype))
        else:
            want = np.cumsum(src.astype(np.complex128 if dtype == "complex128" else np.float64), axis=axis)
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.sqrt(src.shape[axis]) * 3)
    a_prod = RNG.choice([-1, 1], (4, k)).astype("int32")
    np.testing.assert_array_equal(nd.cumulative_prod(on_gpu(a_prod), axis=1).to_numpy(), np.cumprod(a_prod, axis=1))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int16", "uint64"])
def test_argmax_rows_keep_the_first_extreme_and_first_nan(dtype: str) -> None:
    """Long rows read four elements ahead per thread and fold them in order: ties keep the
    first index, the first NaN wins, in every position of the unrolled loop and its tail."""
    k = 4 * 256 * 3 + 77
    a = (RNG.standard_normal((9, k)) * 100).astype(dtype)
    top = a.max() if a.dtype.kind != "f" else np.asarray(a.max() + 1, dtype)
    for r, cols in enumerate([(5, 9), (256, 1024), (k - 1, k - 2), (700, 3000), (1300, 2000)]):
        a[r, list(cols)] = top
    if a.dtype.kind == "f":
        a[5, [2000, 777]] = np.nan
        a[6, [k - 1]] = np.nan
        a[7, [0, 1]] = np.nan
    x = on_gpu(a)
    np.testing.assert_array_equal(nd.argmax(x, axis=1).to_numpy(), a.argmax(axis=1))
    np.testing.assert_array_equal(nd.argmin(x, axis=1).to_numpy(), a.argmin(axis=1))
    np.testing.assert_array_equal(nd.argmax(x[:, ::-1], axis=1).to_numpy(), a[:, ::-1].argmax(axis=1))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "complex128", "int32"])
def test_matmul_transposed_and_batched(dtype: str) -> None:
    a = RNG.standard_normal((4, 30, 20)).astype(dtype)
    b = RNG.standard_normal((20, 10)).astype(dtype)
    x, y = on_gpu(a), on_gpu(b)
    tol = {"float16": 2e-2, "float32": 1e-4, "complex64": 1e-4}.get(dtype, 1e-10)
    np.testing.assert_allclose((x @ y).to_numpy(), a @ b, rtol=tol, atol=tol)
    # Both operands column-major (cuBLAS op T), the first a slice of its columns.
    t = np.swapaxes(a, -1, -2)
    np.testing.assert_allclose((nd.matrix_transpose(x)[:, :, :20] @ nd.matrix_transpose(x[:, :20, :])).to_numpy(),
                               t[:, :, :20] @ np.swapaxes(a[:, :20, :], -1, -2), rtol=tol, atol=tol)
    # A reversed matrix and a broadcast vector: layouts no BLAS takes, compacted by the core.
    np.testing.assert_allclose((nd.flip(y, axis=0) @ nd.broadcast_to(y[:1, 0], (10,))).to_numpy(),
                               b[::-1] @ np.broadcast_to(b[:1, 0], (10,)), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "int64", "uint64", "float16", "float32", "float64"])
def test_arange_is_made_on_the_device_as_the_host_makes_it(dtype: str) -> None:
    """fused:arange: start + i * step in float64 rounded once (no FMA), or wrapping int64."""
    be = nd.asarray([0], device="cuda").device.backend
    assert "fused:arange" in be.capabilities
    if dtype.startswith(("int", "uint")):
        for start, stop, step in ((0, 1000, 1), (5, -300, -7), (0, 70_000, 3)):
            got = nd.arange(start, stop, step, dtype=getattr(nd, dtype), device="cuda").to_numpy()
            np.testing.assert_array_equal(got, (start + step * np.arange(len(range(start, stop, step)))).astype(dtype))
    else:
        for start, stop, step in ((0.0, 1000.0, 1.0), (0.1, 5.3, 0.37), (1e4, -1e4, -0.3)):
            n = int(np.ceil((stop - start) / step))
            got = nd.arange(start, stop, step, dtype=getattr(nd, dtype), device="cuda").to_numpy()
            np.testing.assert_array_equal(got, (start + step * np.arange(n, dtype=np.float64)).astype(dtype))
    out = nd.empty((3,), dtype=getattr(nd, dtype), device="cuda")
    wrong = {"start": 0.5, "step": 1.0} if dtype.startswith(("int", "uint")) else {"start": 0, "step": 1}
    with pytest.raises(TypeError, match="fused arange"):
        be.fused("arange", (), out._ref, wrong)


def test_random_bits_match_the_reference_stream() -> None:
    out = nd.empty(1027, dtype=nd.uint32, device="cuda")
    out.device.backend.random_bits(12345, (1 << 64) - 2, out._ref)
    want = np.empty(1027, np.uint32)
    reference.random_bits(12345, (1 << 64) - 2, want)
    np.testing.assert_array_equal(out.to_numpy(), want)


def test_out_of_memory_is_a_clear_error() -> None:
    with pytest.raises(nd.OutOfMemoryError, match=r"cuda:0.*bytes"):
        nd.empty(1 << 45, dtype=nd.uint8, device="cuda")


def test_memory_returns_to_the_cache() -> None:
    # NOTE: run alone after the file's other tests (compute-sanitizer's run, twice on an H200),
    # x's buffer was still counted after `del x`; under xdist it was not. Garbage cycles of
    # earlier tests are collected first and the collector held off in the window, and if
    # something still holds x, the referrers are named.
    backend = nd.Device("cuda").backend
    gc.collect()
    gc.disable()
    try:
        before = backend.memory_stats()
        x = nd.ones((1000, 1000), device="cuda")
        assert backend.memory_stats()["buffers"] == before["buffers"] + 1
        probe = object()  # held by this frame alone, as x should be
        assert sys.getrefcount(x) == sys.getrefcount(probe), f"x is held by {[type(r) for r in gc.get_referrers(x)]}"
        del x
        after = backend.memory_stats()
    finally:
        gc.enable()
    assert after["buffers"] == before["buffers"]
    if os.environ.get("NDPLANE_CUDA_NO_CACHE", "") not in ("", "0"):  # compute-sanitizer's runs
        assert after["cached_bytes"] == 0
    else:
        assert after["cached_bytes"] >= 8_000_000


# -- sort, take, scatter_add (CUB radix sort; a deterministic scatter) ---------------------
@pytest.mark.parametrize("shape", [(1, 1), (1, 5000), (3, 7), (300, 33), (2, 1 << 17)])
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "int64", "uint64", "float16", "float32", "float64"])
def test_sort_rows_match_numpy_stable(shape: tuple[int, int], dtype: str) -> None:
    a = (RNG.standard_normal(shape) * 20).astype(dtype)
    if a.dtype.kind == "f":
        a.ravel()[::7] = np.nan
        a.ravel()[1::11] = -0.0
        a.ravel()[2::13] = np.inf
    x = on_gpu(a)
    for descending in (False, True):
        idx = nd.argsort(x, axis=-1, descending=descending, stable=True).to_numpy()
        want = np.argsort(a[:, ::-1], axis=-1, kind="stable")
        want = (shape[1] - 1 - want)[:, ::-1] if descending else np.argsort(a, axis=-1, kind="stable")
        np.testing.assert_array_equal(idx, want)
        got = nd.sort(x, axis=-1, descending=descending).to_numpy()
        np.testing.assert_array_equal(got.view(f"u{a.itemsize}") if a.dtype.kind == "f" else got,
                                      np.take_along_axis(a, want, -1).view(f"u{a.itemsize}") if a.dtype.kind == "f"
                                      else np.take_along_axis(a, want, -1))


def test_sort_of_a_transposed_and_reversed_view() -> None:
    a = RNG.standard_normal((40, 30)).astype(np.float32)
    x = nd.flip(nd.matrix_transpose(on_gpu(a)), axis=0)
    np.testing.assert_array_equal(nd.sort(x, axis=-1).to_numpy(), np.sort(a.T[::-1], axis=-1))


@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "float32", "complex128"])
@pytest.mark.parametrize("index_dtype", ["int8", "int32", "uint64"])
def test_take_strided_rows_any_index_dtype(dtype: str, index_dtype: str) -> None:
    a = (RNG.standard_normal((6, 100)) * 10).astype(dtype)
    i = RNG.integers(0, 50, 77).astype(index_dtype)
    x = on_gpu(a)[::-2, ::2]  # a reversed, strided (3, 50) view
    np.testing.assert_array_equal(nd.take(x, on_gpu(i), axis=-1).to_numpy(), np.take(a[::-2, ::2], i, axis=-1))


@pytest.mark.parametrize("cols", [1, 3, 8, 64, 1000])
@pytest.mark.parametrize("dtype", ["bool", "int16", "float32", "float64", "complex128"])
@pytest.mark.parametrize("offset", [0, 1])
def test_take_whole_rows_in_wide_words(cols: int, dtype: str, offset: int) -> None:
    """take along axis 0: whole rows, moved as 16-byte words where the row, its stride and both
    addresses allow (offset 1 misaligns the source: narrower words or single items)."""
    a = (RNG.standard_normal((50, cols + offset)) * 10).astype(dtype)
    i = RNG.integers(0, 50, 300)
    src = on_gpu(a)[:, offset:]
    np.testing.assert_array_equal(nd.take(src, on_gpu(i), axis=0).to_numpy(), np.take(a[:, offset:], i, axis=0))
    np.testing.assert_array_equal(src[on_gpu(i[::-1].copy())].to_numpy(), a[:, offset:][i[::-1]])


@pytest.mark.parametrize("dtype", ["bool", "int32", "float16", "float32", "complex64"])
def test_scatter_add_is_numpys_add_at_bit_for_bit(dtype: str) -> None:
    """The indices are stably sorted and each target adds its values in order, as add.at: the
    same result every run, float16 rounding after every addition included."""
    base = (RNG.standard_normal((5, 40)) * 3).astype(dtype)
    vals = (RNG.standard_normal((5, 3000)) * 3).astype(dtype)
    idx = RNG.integers(0, 40, 3000)
    want = base.copy()
    (np.logical_or if dtype == "bool" else np.add).at(want, (slice(None), idx), vals)
    i, v = on_gpu(idx), on_gpu(vals)  # NOTE: held, or their buffers go with the temporaries
    for _ in range(2):
        out = on_gpu(base)
        out.device.backend.scatter_add(out._ref, i._ref, v._ref)
        np.testing.assert_array_equal(out.to_numpy(), want)


# -- DLPack with PyTorch on the same GPU ----------------------------------------------------
def test_dlpack_shares_memory_with_pytorch_both_ways() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    x = nd.arange(1 << 20, dtype=nd.float32, device="cuda") * 2.0  # queued, maybe unfinished
    t = torch.from_dlpack(x)  # ordered before PyTorch's current stream by an event
    assert t.device.type == "cuda" and t.data_ptr() == torch.from_dlpack(x).data_ptr()
    assert t[-1].item() == 2.0 * ((1 << 20) - 1)
    t[0] = 100.0
    assert x[0] == 100.0
    u = torch.arange(1 << 20, dtype=torch.float64, device="cuda") * 3  # on PyTorch's stream
    y = nd.from_dlpack(u, copy=False)  # our stream waits for PyTorch's
    assert y.device == nd.Device("cuda") and y.dtype == nd.float64
    assert y[-1] == 3.0 * ((1 << 20) - 1)
    y[1] = -1.0
    nd.Device("cuda").backend.synchronize()
    assert u[1].item() == -1.0
    cai = x.__cuda_array_interface__
    assert cai["version"] == 3 and cai["typestr"] == "<f4" and cai["stream"] not in (None, 0)
    v = torch.as_tensor(x, device="cuda")  # through __cuda_array_interface__
    assert v.data_ptr() == cai["data"][0] and v[0].item() == 100.0
    del u
    assert float(nd.sum(y)) == float(np.sum(np.arange(1 << 20) * 3.0)) - 3.0 - 1.0  # y keeps the memory


# -- fused row kernels ------------------------------------------------------------------------
@pytest.mark.parametrize("k", [1, 7, 256, 1000, 70000])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_fused_rows_match_float64(k: int, dtype: str) -> None:
    a = (RNG.standard_normal((5, k)) * 4).astype(dtype)
    a[1, 0] = np.nan
    a[2, :] = -np.inf
    x = on_gpu(a)
    assert "fused:softmax" in x.device.backend.capabilities
    w, b = RNG.standard_normal(k).astype(dtype), RNG.standard_normal(k).astype(dtype)
    r = a.astype(np.float64)
    with np.errstate(all="ignore"):
        e = np.exp(r - r.max(-1, keepdims=True))
        lse = np.log(np.exp(r - np.where(np.isfinite(r.max(-1, keepdims=True)), r.max(-1, keepdims=True), 0)).sum(-1)) \
            + np.where(np.isfinite(r.max(-1)), r.max(-1), 0)
        mu = r.mean(-1, keepdims=True)
        ln = (r - mu) / np.sqrt(((r - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * w + b
    tol = {"float16": 5e-3, "float32": 1e-5, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(F.softmax(x, axis=-1).to_numpy(), e / e.sum(-1, keepdims=True), rtol=tol, atol=tol)
    np.testing.assert_allclose(F.logsumexp(x, axis=-1).to_numpy(), lse, rtol=tol, atol=tol)
    np.testing.assert_allclose(F.layer_norm(x, (k,), on_gpu(w), on_gpu(b)).to_numpy(), ln,
                               rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("decoupled", [False, True])
def test_fused_adam_matches_the_numpy_device(dtype: str, decoupled: bool) -> None:
    """Three steps of Adam (L2 weight decay) or AdamW (decoupled) through the fused kernel on the
    GPU and the generic rule on the numpy device."""
    assert "fused:adam" in nd.Device("cuda").backend.capabilities
    w0 = RNG.standard_normal((300, 70)).astype(dtype)
    # NOTE: |g + 0.1 w| stays above 0.5: near 0, (1 - b2) * g**2 is subnormal in float16 state
    # (3 significant bits), and a last-bit difference before rounding it moves the step by a
    # third (one weight in 21000 on an H200, and in a NumPy model of the kernel alike).
    n = RNG.standard_normal((300, 70))
    g0 = (np.sign(n) * (1 + np.abs(n))).astype(dtype)
    got = []
    for dev in ("numpy", "cuda"):
        w = nd.asarray(w0, device=dev)
        w.requires_grad_()
        opt = (nd.optim.AdamW if decoupled else nd.optim.Adam)([w], lr=1e-2, weight_decay=0.1)
        for step in range(3):
            w.grad = nd.asarray(g0 * (step + 1), device=dev)
            opt.step()
        got.append(w.to_numpy().astype(np.float64))
    tol = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(got[1], got[0], rtol=tol, atol=tol)
