"""Host-side self-tests of the cuda plugin: everything that needs no GPU.

The launch planner, the cuBLAS operand mapping, Philox, the caching allocator's
bookkeeping and the op tables run here on any machine; the built binary is checked for
its architectures and for needing no CUDA library at load time.
"""

from __future__ import annotations

import itertools
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from ndplane_cuda import _native as native
from ndplane_cuda import backend as cuda_backend

import ndplane
from ndplane._elementwise import OPS
from ndplane.backend import reference

RNG = np.random.default_rng(7)


# -- availability -------------------------------------------------------------------------
def test_probe_says_why_not_or_finds_devices() -> None:
    ok, count, driver, runtime, reason = native.probe()
    assert runtime >= 12000
    if ok:
        assert count >= 1 and reason == ""
    else:
        assert count == 0
        assert any(w in reason for w in ("no NVIDIA driver", "update the driver", "no CUDA device", "CUDA could not"))
        if driver == 0:
            assert "no NVIDIA driver" in reason


def test_unavailable_device_is_listed_with_its_reason() -> None:
    ok, _count, reason = cuda_backend._probe()
    specs = {s.name: s for s in ndplane.backend.plugins.specs()} if hasattr(ndplane.backend.plugins, "specs") else {}
    spec = specs.get("cuda") or cuda_backend.ndplane_register_backends()[0]
    assert spec.is_available() == (ok, reason)
    if not ok:
        with pytest.raises(Exception, match="cuda"):
            ndplane.zeros(3, device="cuda")


# -- the launch planner --------------------------------------------------------------------
def _offsets(shape: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    """Element offsets of every index of a layout, in C order."""
    if not shape:
        return np.zeros(1, np.int64)
    grids = np.meshgrid(*[np.arange(n, dtype=np.int64) for n in shape], indexing="ij")
    return sum(g * s for g, s in zip(grids, strides, strict=True)).reshape(-1)


def _random_layout(rng: np.random.Generator, ndim: int, nargs: int) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    shape = tuple(int(n) for n in rng.choice([1, 1, 2, 3, 4, 5], ndim))
    layouts = []
    for a in range(nargs):
        kind = rng.integers(4)
        contiguous = [int(np.prod(shape[i + 1:])) for i in range(ndim)]
        if kind == 0:  # C-contiguous
            st = contiguous
        elif kind == 1:  # broadcast along random axes
            st = [0 if rng.random() < 0.4 else s for s in contiguous]
        elif kind == 2:  # reversed and sliced
            st = [-2 * s if rng.random() < 0.5 else 3 * s for s in contiguous]
        else:  # transposed
            st = list(rng.permutation(contiguous))
        layouts.append(tuple(int(s) for s in st))
        del a
    return shape, layouts


@pytest.mark.parametrize("seed", range(40))
def test_coalesce_keeps_every_operands_offsets(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ndim, nargs = int(rng.integers(0, 7)), int(rng.integers(1, 5))
    shape, layouts = _random_layout(rng, ndim, nargs)
    n, mshape, mstrides, launches = native._selftest_coalesce(list(shape), [list(s) for s in layouts])
    assert n == int(np.prod(shape))
    assert len(mshape) <= max(ndim, 0)
    assert len(launches) == 1 and launches[0][2] == [0] * nargs
    for a in range(nargs):
        np.testing.assert_array_equal(_offsets(tuple(mshape), tuple(mstrides[a])), _offsets(shape, layouts[a]))
    # a plan is "contiguous" exactly when every operand walks memory one element at a time
    dense = all(np.array_equal(_offsets(shape, s), np.arange(n)) for s in layouts)
    assert launches[0][1] == dense


def test_coalesce_merges_contiguous_and_drops_unit_axes() -> None:
    n, shape, strides, launches = native._selftest_coalesce([2, 1, 3, 4], [[12, 12, 4, 1], [0, 0, 0, 1]])
    assert (n, shape) == (24, [6, 4]) and strides == [[4, 1], [0, 1]]
    n, shape, strides, launches = native._selftest_coalesce([2, 3, 4], [[12, 4, 1]])
    assert (shape, strides, launches) == ([24], [[1]], [(1, True, [0])])
    n, shape, strides, launches = native._selftest_coalesce([3, 0, 2], [[2, 2, 1]])
    assert n == 0 and launches == []


def test_more_than_eight_unmergeable_axes_are_split_into_launches() -> None:
    shape = [2] * 10
    strides = [3 ** (9 - i) for i in range(10)]  # no two axes merge
    _n, mshape, _mstrides, launches = native._selftest_coalesce(shape, [strides])
    assert len(mshape) == 10
    assert len(launches) == 4 and all(nd == 8 for nd, _contig, _base in launches)
    bases = sorted(base[0] for _nd, _c, base in launches)
    assert bases == sorted(i * strides[0] + j * strides[1] for i in range(2) for j in range(2))


# -- the cuBLAS operand mapping ------------------------------------------------------------
def _cublas_gemm(plan: dict[str, int], a_buf: np.ndarray, b_buf: np.ndarray) -> np.ndarray:
    """What cuBLAS computes for the plan: column-major C = op(A) op(B), batch by batch,
    with cuBLAS's A our b and its B our a (flat element buffers)."""
    m, n, k, batch = plan["m"], plan["n"], plan["k"], plan["batch"]
    c = np.zeros(batch * plan["stride_c"] if batch else 0)
    for z in range(batch):
        def mat(buf: np.ndarray, base: int, rows: int, cols: int, ld: int) -> np.ndarray:
            idx = base + np.arange(rows)[:, None] + ld * np.arange(cols)[None, :]
            return buf[idx]

        A = mat(b_buf, z * plan["stride_a"], *((k, m) if plan["trans_a"] else (m, k)), plan["lda"])
        B = mat(a_buf, z * plan["stride_b"], *((n, k) if plan["trans_b"] else (k, n)), plan["ldb"])
        A = A.T if plan["trans_a"] else A
        B = B.T if plan["trans_b"] else B
        C = A @ B  # (m, n) column-major: element (i, j) at i + j * ldc
        idx = z * plan["stride_c"] + np.arange(m)[:, None] + plan["ldc"] * np.arange(n)[None, :]
        c[idx] = C
    return c


def _operand(rng: np.random.Generator, batch: int, r: int, c: int, col_major: bool, broadcast: bool):
    """A (B, r, c) view over a padded flat buffer: row- or column-major, maybe batch-broadcast."""
    nb = 1 if broadcast else batch
    ld = (r if col_major else c) + int(rng.integers(0, 3))
    mat = ld * (c if col_major else r)
    bstride = 0 if broadcast else mat + int(rng.integers(0, 5))
    buf = rng.standard_normal(max(bstride * nb + mat, 1) + 8)
    strides = (bstride, 1, ld) if col_major else (bstride, ld, 1)
    shape = (1 if broadcast else batch, r, c)
    values = np.stack([buf[z * bstride + np.arange(r)[:, None] * strides[1] + np.arange(c)[None, :] * strides[2]]
                       for z in range(shape[0])])  # fmt: skip
    return buf, list(shape), list(strides), values


@pytest.mark.parametrize("case", list(itertools.product([False, True], [False, True], [False, True], [False, True])))
def test_gemm_plan_matches_numpy(case: tuple[bool, bool, bool, bool]) -> None:
    a_col, b_col, a_bcast, b_bcast = case
    rng = np.random.default_rng(hash(case) % 2**32)
    batch, m, k, n = 3, 4, 5, 6
    a_buf, a_shape, a_st, a = _operand(rng, batch, m, k, a_col, a_bcast)
    b_buf, b_shape, b_st, b = _operand(rng, batch, k, n, b_col, b_bcast)
    plan = native._selftest_gemm(a_shape, a_st, b_shape, b_st)
    assert plan["trans_a"] == b_col and plan["trans_b"] == a_col
    want = np.matmul(a, b)
    assert plan["batch"] == want.shape[0]
    got = _cublas_gemm(plan, a_buf, b_buf).reshape(want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize(("m", "k", "n"), [(1, 5, 6), (4, 1, 6), (4, 5, 1), (1, 1, 1)])
def test_gemm_plan_degenerate_matrices(m: int, k: int, n: int) -> None:
    rng = np.random.default_rng(m * 100 + k * 10 + n)
    for a_col, b_col in itertools.product([False, True], repeat=2):
        a_buf, a_shape, a_st, a = _operand(rng, 2, m, k, a_col, False)
        b_buf, b_shape, b_st, b = _operand(rng, 2, k, n, b_col, False)
        plan = native._selftest_gemm(a_shape, a_st, b_shape, b_st)
        assert plan["lda"] >= max(1, plan["k"] if plan["trans_a"] else plan["m"])
        assert plan["ldb"] >= max(1, plan["n"] if plan["trans_b"] else plan["k"])
        got = _cublas_gemm(plan, a_buf, b_buf).reshape(2, m, n)
        np.testing.assert_allclose(got, a @ b, rtol=1e-12)


def test_gemm_plan_refuses_a_matrix_with_no_unit_stride() -> None:
    with pytest.raises(ValueError, match="row- or column-major"):
        native._selftest_gemm([1, 4, 5], [0, 10, 2], [1, 5, 6], [0, 6, 1])


# -- Philox-4x32-10 ------------------------------------------------------------------------
def test_philox_known_answer() -> None:
    assert native._selftest_philox(0, 0, 0) == (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)


def test_philox_matches_the_reference_stream() -> None:
    for key, lo, hi in [(1, 2, 3), (2**64 - 1, 2**64 - 1, 5), (0xDEADBEEF12345678, 7, 2**63)]:
        ctr = np.array([[lo & 0xFFFFFFFF, lo >> 32, hi & 0xFFFFFFFF, hi >> 32]], np.uint32)
        want = tuple(int(w) for w in reference.philox4x32(key, ctr)[0])
        assert native._selftest_philox(key, lo, hi) == want


# -- the caching allocator (over host memory) ----------------------------------------------
def test_allocator_reuses_freed_blocks() -> None:
    a = native._HostAllocator(1 << 30, True)
    hs = [a.allocate(int(n)) for n in RNG.integers(1, 300_000, 50)]
    first = a.stats()
    assert first["buffers"] == 50 and first["raw_allocs"] == first["segments"]
    for h in hs:
        a.release(h)
    s = a.stats()
    assert s["buffers"] == 0 and s["bytes"] == 0
    assert s["cached_bytes"] == s["reserved_bytes"] == first["reserved_bytes"]
    for n in RNG.integers(1, 300_000, 50):
        a.release(a.allocate(int(n)))
    assert a.stats()["raw_allocs"] == first["raw_allocs"]  # served from the cache
    a.empty_cache()
    assert a.stats()["reserved_bytes"] == 0 and a.stats()["raw_in_use"] == 0


def test_allocator_blocks_never_overlap_and_merge_back() -> None:
    a = native._HostAllocator(1 << 30, True)
    sizes = [int(n) for n in RNG.integers(0, 70_000, 200)] + [3 << 20, 5 << 20]
    hs = [a.allocate(n) for n in sizes]
    spans = sorted((a.address(h), a.address(h) + max(n, 1)) for h, n in zip(hs, sizes, strict=True))
    assert all(end <= nxt for (_, end), (nxt, _) in itertools.pairwise(spans))
    assert all(a.address(h) % 512 == 0 for h in hs)
    for h in RNG.permutation(hs):
        a.release(int(h))
    s = a.stats()
    # every segment merged back into one free block: releasing the cache returns all of it
    a.empty_cache()
    assert a.stats()["reserved_bytes"] == 0 and s["segments"] >= 1


def test_allocator_releases_the_cache_and_retries_when_memory_runs_out() -> None:
    a = native._HostAllocator(16 << 20, True)  # 16 MiB "device"
    big = [a.allocate(3 << 20) for _ in range(4)]  # 4 x 4 MiB segments
    assert -1 not in big
    for h in big:
        a.release(h)  # cached, still held
    assert a.stats()["reserved_bytes"] == 16 << 20
    h = a.allocate(10 << 20)  # needs the cache given back first
    assert h != -1 and a.stats()["reserved_bytes"] == 10 << 20
    assert a.allocate(10 << 20) == -1  # really out of memory: the caller raises OutOfMemoryError
    a.release(h)


def test_allocator_without_caching_returns_memory_at_once() -> None:
    a = native._HostAllocator(1 << 30, False)
    h = a.allocate(5 << 20)
    assert a.stats()["reserved_bytes"] == 6 << 20
    a.release(h)
    assert a.stats()["reserved_bytes"] == 0 and a.stats()["raw_in_use"] == 0


# -- the op tables agree with the core's rows ----------------------------------------------
def test_native_op_tables_match_the_core_rows() -> None:
    """Every (op, dtype) the core sends to the kernels -- after its result rule, e.g. ints
    computed in the default float -- has a native kernel."""
    table = native.op_dtypes()
    defaults = cuda_backend._DEFAULTS
    for kind in ("unary", "binary"):
        for op, names in table[kind].items():
            assert op in OPS, f"the cuda plugin has an op the core does not know: {op}"
            for dtype in ndplane.ALL_DTYPES:
                if dtype.kind not in OPS[op].kinds:
                    continue
                try:
                    compute, _result = ndplane._dispatch.META[op](dtype, defaults)
                except TypeError:
                    continue  # refused by the core (e.g. complex for a realfloat op)
                assert compute.name in names, f"{op}: the core computes {dtype.name} as {compute.name}; no kernel"
    assert set(table["unary"]) | set(table["binary"]) == set(OPS)  # every core row is native here
    assert set(table["reduce"]) == {"sum", "prod", "max", "min", "argmax", "argmin", "any", "all"}
    assert set(table["scan"]) == {"cumulative_sum", "cumulative_prod"}


# -- the binary ----------------------------------------------------------------------------
def _tool(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    try:
        import nvidia

        for root in nvidia.__path__:
            p = Path(root) / "cu13" / "bin" / name
            if p.exists():
                return str(p)
    except ImportError:
        pass
    return None


def test_default_architectures_are_turing_ampere_hopper_and_hopper_ptx() -> None:
    cmake = Path(__file__).parents[1] / "CMakeLists.txt"
    if not cmake.exists():
        pytest.skip("not a source checkout")
    assert 'set(CMAKE_CUDA_ARCHITECTURES "75-real;80-real;90")' in cmake.read_text()


def test_binary_has_every_architecture_of_its_build() -> None:
    """The build's CMAKE_CUDA_ARCHITECTURES (the default, or what NDPLANE_CUDA_ARCHITECTURES
    chose, e.g. 90 on the GPU machine): "NN-real" is machine code, "NN" machine code and PTX."""
    cuobjdump = _tool("cuobjdump")
    if cuobjdump is None:
        pytest.skip("cuobjdump not installed (pip install nvidia-cuda-cuobjdump)")
    archs = native.architectures().split(",")
    if any(not a.split("-")[0].isdigit() for a in archs):
        pytest.skip(f"built for {archs}: resolved by CMake at build time")
    so = native.__file__
    elf = subprocess.run([cuobjdump, "--list-elf", so], capture_output=True, text=True, check=True).stdout
    ptx = subprocess.run([cuobjdump, "--list-ptx", so], capture_output=True, text=True, check=True).stdout
    for arch in archs:
        sm = "sm_" + arch.split("-")[0]
        assert sm in elf, f"no {sm} code in {so}"
        if not arch.endswith("-real"):
            assert sm in ptx, f"no {sm} PTX in {so} (newer GPUs JIT it)"


def test_binary_needs_no_cuda_library() -> None:
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf (binutils) not installed")
    dynamic = subprocess.run([readelf, "-d", native.__file__], capture_output=True, text=True, check=True).stdout
    needed = [line for line in dynamic.splitlines() if "(NEEDED)" in line]
    assert needed
    assert not [line for line in needed if any(lib in line for lib in ("cuda", "cublas", "nvrtc"))], needed


# -- DLPack export --------------------------------------------------------------------------
@pytest.mark.parametrize("made", ["array", "capsule"])
def test_exported_is_one_producer_for_either_nanobind(made: str) -> None:
    """nanobind gives an object with ``__dlpack__`` (2.2 and later) or, older, the capsule
    itself (the H100 run of 2026-11-27 met the latter): consumers see one producer either way."""
    a = np.arange(6.0)
    x = cuda_backend._Exported(a if made == "array" else a.__dlpack__(), (1, 0))
    assert x.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(x), a)
