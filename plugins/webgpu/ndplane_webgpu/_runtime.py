"""The wgpu side of the backend: adapters, the device, a size-bucketed buffer pool,
the pipeline cache and asynchronous submission.

Imported only when a backend starts (``BackendSpec.factory``) or when availability
is probed, never when ndplane imports the plugin.
"""

from __future__ import annotations

import os
import struct
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import wgpu

import ndplane

# Backends that run WGSL compute shaders; OpenGL (GLES) adapters do not.
COMPUTE_BACKENDS = ("Vulkan", "Metal", "D3D12")
SOFTWARE_TYPES = ("CPU",)
SOFTWARE_NAMES = ("llvmpipe", "lavapipe", "swiftshader", "warp")

WG = 256  # threads per workgroup of the 1-D kernels
_RING = 4 << 20  # bytes of the parameter ring (one batch of dispatches' parameters)
_PARAM_WINDOW = 256  # bytes of the ring one dispatch sees (larger parameter lists: a power of two)
_BATCH = 64  # dispatches recorded before a submit
_LIMBO_CAP = 256 << 20  # bytes freed inside an open batch before it is submitted early
_GROUP_CACHE = 4096  # bind groups kept (keyed by layout and buffer identity)
_POOL_CAP = 1 << 30  # bytes kept in the pool for reuse
_USAGE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST

# 2^-127 (a subnormal) times 2 must be 2^-126 (0x00800000); a flushing GPU gives 0.
_PROBE_SUBNORMAL = """@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> OUT: array<u32>;
@compute @workgroup_size(1)
fn main() { OUT[0] = bitcast<u32>(bitcast<f32>(P[0]) * 2.0); }
"""

_lock = threading.Lock()
_adapters: list[Any] | None = None
_runtimes: dict[int, Runtime] = {}


def adapters() -> list[Any]:
    """The compute-capable adapters, best first (cached for the process)."""
    global _adapters
    with _lock:
        if _adapters is None:
            found = [a for a in wgpu.gpu.enumerate_adapters_sync()
                     if a.info.get("backend_type") in COMPUTE_BACKENDS]  # fmt: skip
            found.sort(key=lambda a: is_software(a))
            _adapters = found
        return _adapters


def is_software(adapter: Any) -> bool:
    info = adapter.info
    name = f"{info.get('device', '')} {info.get('vendor', '')}".lower()
    return info.get("adapter_type") in SOFTWARE_TYPES or any(s in name for s in SOFTWARE_NAMES)


def runtime(index: int) -> Runtime:
    """The one Runtime (wgpu device) per adapter index, created on first use."""
    with _lock:
        rt = _runtimes.get(index)
    if rt is None:
        found = adapters()
        with _lock:
            rt = _runtimes.get(index)
            if rt is None:
                rt = _runtimes[index] = Runtime(found[index], index)
    return rt


class Buffer:
    """A device allocation handed to the core: the wgpu buffer, the bytes asked for and
    the bucket capacity (a multiple of 4, what the shader may address)."""

    __slots__ = ("gpu", "nbytes", "cap")

    def __init__(self, gpu: Any, nbytes: int, cap: int) -> None:
        self.gpu, self.nbytes, self.cap = gpu, nbytes, cap

    def __repr__(self) -> str:
        return f"<webgpu Buffer {self.nbytes} bytes>"


def bucket(nbytes: int) -> int:
    """Round up to 4 quarter steps per power of two (at most 25% waste), at least 256 bytes."""
    n = max(nbytes, 256)
    top = 1 << (n - 1).bit_length()
    step = top // 8
    return -(-n // step) * step


class Runtime:
    """One wgpu device: memory, pipelines and submission."""

    def __init__(self, adapter: Any, index: int) -> None:
        lim = adapter.limits
        wanted = ("max-storage-buffer-binding-size", "max-buffer-size",
                  "max-compute-workgroup-storage-size", "max-storage-buffers-per-shader-stage",
                  "max-compute-invocations-per-workgroup")  # fmt: skip
        self.adapter = adapter
        self.name = f"webgpu:{index}"
        # The features that give dtypes (backend.FEATURE_DTYPES): a shader naming i64/u64/f64
        # does not compile on a device created without them.
        features = [f for f in ("shader-int64", "shader-f64") if f in adapter.features]
        self.device = adapter.request_device_sync(
            label=f"ndplane {self.name}", required_limits={k: lim[k] for k in wanted},
            required_features=features,
        )
        self.queue = self.device.queue
        # Held by every backend call (backend._serialized): one thread records at a time.
        self.lock = threading.RLock()
        # Buffers freed while another thread held the lock (backend.free never waits for it):
        # the next call that takes the lock frees them. Appends and pops are atomic.
        self.pending_frees: list[Buffer] = []
        self.features = frozenset(adapter.features)
        self.software = is_software(adapter)
        self.max_binding = min(lim["max-storage-buffer-binding-size"], lim["max-buffer-size"])
        self.max_groups = lim["max-compute-workgroups-per-dimension"]
        self.align = max(lim["min-storage-buffer-offset-alignment"], 4)
        self.live_buffers = 0
        self.live_bytes = 0
        self._pool: dict[int, list[Any]] = {}
        self._pool_bytes = int(os.environ.get("NDPLANE_WEBGPU_POOL_BYTES", _POOL_CAP))
        self._pooled = 0
        # NOTE: every wgpu buffer we own stays reachable from here. An array freed by the cyclic
        # GC hands its buffer to the pool from Storage.__del__; were the wgpu buffer in the same
        # garbage cycle, its own __del__ would release it in that pass and the pool would keep
        # a dead buffer.
        self._owned: dict[int, Any] = {}
        self._pipelines: dict[Any, Any] = {}
        self._layouts: dict[Any, Any] = {}
        # Dispatch parameters: staged here, uploaded once per batch into the ring, each dispatch
        # reading its window through a dynamic offset, so bind groups can be cached.
        self._ring = self.device.create_buffer(size=_RING, usage=_USAGE, label="ndplane params")
        self._stage = bytearray(_RING)
        self._ring_pos = 0
        self._groups: dict[Any, Any] = {}
        self.batch = max(1, int(os.environ.get("NDPLANE_WEBGPU_BATCH", _BATCH)))
        self._recorded = 0
        # Buffers freed while a batch is open: pooled at its submit (see flush()).
        self._limbo: list[tuple[Any, int]] = []
        self._limbo_bytes = 0
        # A scratch binding for kernels whose optional buffers go unused in a dispatch.
        self.dummy = Buffer(self.device.create_buffer(size=256, usage=_USAGE, label="ndplane dummy"), 0, 256)
        self._encoder: Any = None
        self._pass: Any = None
        self._pass_pipe: Any = None  # the pipeline the open pass has set
        self._flushes: bool | None = None

    # -- memory --------------------------------------------------------------

    def alloc(self, nbytes: int) -> Buffer:
        if nbytes > self.max_binding:
            raise ndplane.OutOfMemoryError(
                f"{self.name}: cannot allocate {nbytes} bytes: one array may hold at most "
                f"{self.max_binding} bytes on this adapter (max_storage_buffer_binding_size). "
                f"Split the array, or use another device such as 'cpu'."
            )
        cap = min(bucket(nbytes), self.max_binding) if nbytes > 0 else 256
        cap = max(cap, -(-nbytes // 4) * 4)
        free = self._pool.get(cap)
        if free:
            gpu = free.pop()
            self._pooled -= cap
        else:
            gpu = self._create(cap, nbytes)
        self.live_buffers += 1
        self.live_bytes += nbytes
        return Buffer(gpu, nbytes, cap)

    def _create(self, cap: int, nbytes: int) -> Any:
        try:
            gpu = self.device.create_buffer(size=cap, usage=_USAGE)
        except Exception:  # noqa: BLE001 - wgpu reports OOM as several error types
            self.flush()
            self.trim()
            try:
                gpu = self.device.create_buffer(size=cap, usage=_USAGE)
            except Exception as exc:  # noqa: BLE001
                raise ndplane.OutOfMemoryError(
                    f"{self.name}: out of device memory allocating {nbytes} bytes "
                    f"({self.live_bytes} bytes in {self.live_buffers} live buffers): {exc}"
                ) from None
        self._owned[id(gpu)] = gpu
        return gpu

    def free(self, buf: Buffer) -> None:
        if buf.gpu is None:
            raise RuntimeError(f"{self.name}: buffer {buf!r} freed twice")
        self.live_buffers -= 1
        self.live_bytes -= buf.nbytes
        # NOTE: a dispatch recorded but not yet submitted may still use the buffer. Reused now,
        # a queue.write_buffer into it (from_host) would land before that dispatch runs, since
        # the queue orders writes before the next submit: it waits in limbo until the submit.
        if self._encoder is None:
            self._release(buf.gpu, buf.cap)
        else:
            self._limbo.append((buf.gpu, buf.cap))
            self._limbo_bytes += buf.cap
            if self._limbo_bytes > _LIMBO_CAP:
                self.flush()
        buf.gpu = None

    def _release(self, gpu: Any, cap: int) -> None:
        # Submitted work that used the buffer runs before any work submitted later, so a
        # pooled buffer needs no wait.
        if self._pooled + cap <= self._pool_bytes:
            self._pool.setdefault(cap, []).append(gpu)
            self._pooled += cap
        else:
            self._destroy(gpu)

    def _destroy(self, gpu: Any) -> None:
        del self._owned[id(gpu)]
        self._groups.clear()  # NOTE: keyed by id(gpu), which a new buffer may take over
        gpu.destroy()

    def trim(self) -> None:
        """Destroy every pooled buffer."""
        for bufs in self._pool.values():
            for gpu in bufs:
                self._destroy(gpu)
        self._pool.clear()
        self._pooled = 0

    def pool_stats(self) -> dict[str, int]:
        return {"pooled_buffers": sum(map(len, self._pool.values())), "pooled_bytes": self._pooled,
                "pipelines": len(self._pipelines), "bind_groups": len(self._groups),
                "pending_frees": len(self._limbo)}  # fmt: skip

    def write(self, buf: Buffer, data: bytes | np.ndarray) -> None:
        raw = memoryview(np.ascontiguousarray(data)).cast("B")
        n = len(raw)
        if n % 4:
            padded = bytearray(n + (-n) % 4)
            padded[:n] = raw
            raw = memoryview(padded)
        if len(raw):
            self.queue.write_buffer(buf.gpu, 0, raw)

    def read(self, buf: Buffer, start: int, stop: int) -> bytes:
        """Bytes [start, stop) of buf, after all submitted work (this waits)."""
        self.flush()
        lo, hi = start - start % 4, min(-(-stop // 4) * 4, buf.cap)
        if hi <= lo:
            return b""
        data = self.queue.read_buffer(buf.gpu, lo, hi - lo)
        return bytes(data)[start - lo : stop - lo]

    def copy_bytes(self, src: Buffer, src_off: int, dst: Buffer, dst_off: int, n: int) -> None:
        """Buffer-to-buffer copy of n bytes (offsets and n multiples of 4)."""
        self._end_pass()
        self._enc().copy_buffer_to_buffer(src.gpu, src_off, dst.gpu, dst_off, n)

    def synchronize(self) -> None:
        self.flush()
        # NOTE: wgpu-native's blocking device poll, in this thread, returns once every submitted
        # command buffer has run (wgpu-py 0.32's Device._poll_wait; the plugin pins wgpu <0.33).
        # The fallback maps a buffer after a copy queued behind all earlier work, which waits
        # for it too, but creates, maps and destroys a buffer and hands the wait to wgpu-py's
        # poll thread (queue.on_submitted_work_done_sync() raises TypeError in wgpu 0.32).
        poll_wait = getattr(self.device, "_poll_wait", None)
        if poll_wait is not None:
            poll_wait()
        else:
            self.queue.read_buffer(self._ring, 0, 4)

    # -- adapter properties --------------------------------------------------

    def flushes_f32_subnormals(self) -> bool:
        """Whether f32 arithmetic flushes subnormals to zero here (WGSL permits it, and WebGPU
        gives no control over it): 2^-127 * 2 from a buffer, so no compiler can fold it. Asked
        once per device."""
        if self._flushes is None:
            out = self.alloc(4)
            try:
                self.run(("probe_subnormal",), lambda: _PROBE_SUBNORMAL, [0x00400000], [(1, out, True)], (1, 1, 1))
                got = int.from_bytes(self.read(out, 0, 4), "little")
            finally:
                self.free(out)
            self._flushes = got != 0x00800000
        return self._flushes

    # -- pipelines and dispatch ----------------------------------------------

    def pipeline(self, key: Any, source: Callable[[], str], entry: str,
                 spec: tuple[tuple[int, bool], ...]) -> Any:  # fmt: skip
        """The compute pipeline of ``entry`` in the shader ``source()`` (cached by key), with an
        explicit layout: binding 0 the params, then (binding, writable) storage buffers."""
        pipe = self._pipelines.get((key, entry, spec))
        if pipe is None:
            module = self._pipelines.get((key, None, None))
            if module is None:
                module = self._pipelines[key, None, None] = self.device.create_shader_module(code=source())
            pipe = self.device.create_compute_pipeline(
                layout=self._layout(spec), compute={"module": module, "entry_point": entry}
            )
            self._pipelines[key, entry, spec] = pipe
        return pipe

    def _layout(self, spec: tuple[tuple[int, bool], ...]) -> Any:
        layout = self._layouts.get(spec)
        if layout is None:
            params = {"binding": 0, "visibility": wgpu.ShaderStage.COMPUTE,
                      "buffer": {"type": "read-only-storage", "has_dynamic_offset": True}}
            entries = [params] + [{"binding": b, "visibility": wgpu.ShaderStage.COMPUTE,
                                   "buffer": {"type": "storage" if w else "read-only-storage"}}
                                  for b, w in spec]  # fmt: skip
            bgl = self.device.create_bind_group_layout(entries=entries)
            layout = self._layouts[spec] = (bgl, self.device.create_pipeline_layout(bind_group_layouts=[bgl]))
        return layout[1]

    def run(self, key: Any, source: Callable[[], str], params: Sequence[int],
            buffers: Sequence[tuple[int, Buffer, bool]], grid: tuple[int, int, int],
            entry: str = "main") -> None:  # fmt: skip
        """Record one dispatch of ``entry``: params at binding 0, then (binding, buffer, writable)."""
        spec = tuple((b, w) for b, _, w in buffers)
        pipe = self.pipeline(key, source, entry, spec)
        self._dispatch(pipe, self._layouts[spec][0], params, [(b, buf) for b, buf, _ in buffers], grid)

    def groups(self, n: int) -> tuple[int, int, int]:
        """A grid of at least n workgroups: 2-D past max_compute_workgroups_per_dimension."""
        if n <= self.max_groups:
            return (n, 1, 1)
        y = -(-n // self.max_groups)
        if y > self.max_groups:
            raise ValueError(f"{self.name}: {n} workgroups exceed the dispatch limits.")
        return (self.max_groups, y, 1)

    def _dispatch(self, pipe: Any, bgl: Any, params: Sequence[int], buffers: Sequence[tuple[int, Buffer]],
                  grid: tuple[int, int, int]) -> None:  # fmt: skip
        n = len(params)
        window = _PARAM_WINDOW if 4 * n <= _PARAM_WINDOW else 1 << (4 * n - 1).bit_length()
        if self._ring_pos + window > _RING:
            self.flush()  # NOTE: the next batch starts the ring over; see flush().
        off = self._ring_pos
        self._ring_pos = off + -(-4 * max(n, 1) // self.align) * self.align
        struct.pack_into(f"<{n}I", self._stage, off, *[p & 0xFFFFFFFF for p in params])
        key = (bgl, window, *[(b, id(buf.gpu)) for b, buf in buffers])
        group = self._groups.get(key)
        if group is None:
            if len(self._groups) >= _GROUP_CACHE:
                self._groups.clear()
            entries = [{"binding": 0, "resource": {"buffer": self._ring, "offset": 0, "size": window}}]
            entries += [{"binding": b, "resource": {"buffer": buf.gpu, "offset": 0, "size": buf.cap}}
                        for b, buf in buffers]  # fmt: skip
            group = self._groups[key] = self.device.create_bind_group(layout=bgl, entries=entries)
        if self._pass is None:
            self._pass = self._enc().begin_compute_pass()
            self._pass_pipe = None
        if pipe is not self._pass_pipe:
            self._pass.set_pipeline(pipe)
            self._pass_pipe = pipe
        self._pass.set_bind_group(0, group, [off])
        self._pass.dispatch_workgroups(*grid)
        self._recorded += 1
        if self._recorded >= self.batch:
            self.flush()

    def _enc(self) -> Any:
        if self._encoder is None:
            self._encoder = self.device.create_command_encoder()
        return self._encoder

    def _end_pass(self) -> None:
        if self._pass is not None:
            self._pass.end()
            self._pass = None

    def flush(self) -> None:
        """Submit what was recorded; does not wait.

        The parameters of the whole batch go up in one ``write_buffer``, which the queue orders
        before the batch's command buffer and after every earlier submit: so each batch starts
        the ring at offset 0. Buffers freed while the batch was open join the pool only now;
        from here on, work that reuses them is ordered after every dispatch that used them.
        """
        self._end_pass()
        if self._encoder is not None:
            if self._ring_pos:
                self.queue.write_buffer(self._ring, 0, memoryview(self._stage)[: self._ring_pos])
            self.queue.submit([self._encoder.finish()])
            self._encoder = None
        self._ring_pos = 0
        self._recorded = 0
        for gpu, cap in self._limbo:
            self._release(gpu, cap)
        self._limbo.clear()
        self._limbo_bytes = 0
