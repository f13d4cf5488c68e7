"""Devices: parsing ``"kind[:index]"``, the backend behind each device, the default device."""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections.abc import Iterator
from typing import Any, ClassVar

from ._dtypes import ALL_DTYPES
from ._errors import BackendUnavailableError
from .backend import plugins
from .backend.base import Backend

__all__ = ["Device", "as_device", "devices", "backends", "default_device", "get_default_device"]

_lock = threading.RLock()


class Device:
    """A device: a backend name plus an index, e.g. ``Device("cpu:0")``.

    Devices are interned, so ``is`` works; they compare equal to their string.

    >>> import ndplane as nd
    >>> nd.Device("numpy") == "numpy:0", str(nd.Device("numpy"))
    (True, 'numpy:0')
    """

    __slots__ = ("kind", "index", "_backend", "_plans", "__weakref__")
    _interned: ClassVar[dict[tuple[str, int], Device]] = {}

    kind: str
    index: int
    _backend: Backend | None
    _plans: dict[Any, Any]  # (op, dtype) -> (path, compute dtype, result dtype), see _dispatch

    def __new__(cls, spec: str | Device, index: int | None = None) -> Device:
        if isinstance(spec, Device):
            return spec
        kind, idx = _parse(spec, index)
        key = (kind, idx)
        dev = cls._interned.get(key)
        if dev is None:
            with _lock:
                dev = cls._interned.get(key)
                if dev is None:
                    dev = object.__new__(cls)
                    dev.kind, dev.index, dev._backend, dev._plans = kind, idx, None, {}
                    cls._interned[key] = dev
        return dev

    def __repr__(self) -> str:
        return f"Device('{self.kind}:{self.index}')"

    def __str__(self) -> str:
        return f"{self.kind}:{self.index}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Device):
            return self is other
        if isinstance(other, str):
            try:
                return _parse(other, None) == (self.kind, self.index)
            except ValueError:
                return False
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.kind, self.index))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Device, (str(self),))

    @property
    def backend(self) -> Backend:
        """The backend instance serving this device (started on first use).

        >>> import ndplane as nd
        >>> b = nd.Device("numpy").backend
        >>> b.name, "strided" in b.capabilities, nd.float64 in b.dtypes
        ('numpy', True, True)
        """
        b = self._backend
        if b is None:
            b = self._backend = _start_backend(self.kind, self.index)
        return b


def _parse(spec: str, index: int | None) -> tuple[str, int]:
    if not isinstance(spec, str):
        raise TypeError(f"device: expected a string such as 'cpu' or 'cuda:1', or a Device; got {spec!r}.")
    kind, sep, idx = spec.strip().partition(":")
    if not kind or (sep and not idx.isdigit()):
        raise ValueError(f"device: cannot parse {spec!r}; expected 'kind' or 'kind:index' such as 'cuda:1'.")
    if sep and index is not None and int(idx) != index:
        raise ValueError(f"device: {spec!r} and index={index} disagree.")
    return kind, int(idx) if sep else (index or 0)


def _start_backend(kind: str, index: int) -> Backend:
    with _lock:
        specs = plugins.backend_specs()
        spec = specs.get(kind)
        if spec is None:
            raise BackendUnavailableError(
                f"device '{kind}:{index}': no backend named {kind!r} is installed "
                f"(installed: {', '.join(sorted(specs)) or 'none'}). Install the plugin, e.g. "
                f"`pip install ndplane-{kind}`, and check `ndplane backends`."
            )
        ok, why = _available(spec)
        if not ok:
            raise BackendUnavailableError(f"device '{kind}:{index}' is not available: {why}")
        count = spec.device_count()
        if not 0 <= index < count:
            raise BackendUnavailableError(
                f"device '{kind}:{index}': the {kind} backend has {count} device(s) "
                f"(indices 0 to {count - 1})."
            )
        return spec.factory(index)


def _available(spec: Any) -> tuple[bool, str]:
    try:
        return spec.is_available()
    except Exception as exc:  # noqa: BLE001 - a broken probe means unavailable, never a crash
        return False, f"is_available() raised {type(exc).__name__}: {exc}"


def as_device(device: Any) -> Device:
    """``None`` -> the default device; a string or Device -> that Device."""
    if device is None:
        return get_default_device()
    if type(device) is Device:
        return device
    return Device(device)


def devices() -> list[Device]:
    """Every available device of every installed backend, test-only fakes included.

    >>> import ndplane as nd
    >>> nd.Device("numpy") in nd.devices()
    True
    """
    out: list[Device] = []
    for name, spec in sorted(plugins.backend_specs().items()):
        if _available(spec)[0]:
            out.extend(Device(name, i) for i in range(spec.device_count()))
    return out


def backends() -> list[dict[str, Any]]:
    """One row per installed backend: name, distribution, version, availability and features.

    Starting an available backend to read its dtypes and capabilities happens here, so
    call it when you want the full picture (``ndplane backends`` does).

    >>> import ndplane as nd
    >>> row = next(r for r in nd.backends() if r["name"] == "numpy")
    >>> row["available"], row["distribution"], "linalg" in row["capabilities"]
    (True, 'ndplane-numpy', True)
    """
    rows = []
    for name, spec in sorted(plugins.backend_specs().items()):
        ok, why = _available(spec)
        row: dict[str, Any] = {
            "name": name, "distribution": spec.distribution, "version": spec.version,
            "available": ok, "reason": why, "test_only": spec.test_only,
            "description": spec.description,
        }  # fmt: skip
        if ok:
            try:
                b = Device(name, 0).backend
                row["devices"] = spec.device_count()
                row["dtypes"] = [d.name for d in ALL_DTYPES if d in b.dtypes]
                row["capabilities"] = sorted(b.capabilities)
            except Exception as exc:  # noqa: BLE001
                row["available"], row["reason"] = False, f"{type(exc).__name__}: {exc}"
        rows.append(row)
    return rows


_default: contextvars.ContextVar[Device | None] = contextvars.ContextVar("ndplane_default_device", default=None)
_auto_default: Device | None = None


def _priority(spec: Any) -> int:
    p = spec.priority
    return p() if callable(p) else p


def get_default_device() -> Device:
    """The device creation functions use when ``device=None``.

    Order: the innermost ``default_device(...)`` context, then ``NDPLANE_DEVICE``, then the
    available non-test backend with the highest priority (cuda > webgpu on a GPU > cpu > numpy).

    >>> import ndplane as nd
    >>> with nd.default_device("numpy:1"):
    ...     nd.get_default_device()
    Device('numpy:1')
    """
    dev = _default.get()
    if dev is not None:
        return dev
    global _auto_default
    if _auto_default is None:
        env = os.environ.get("NDPLANE_DEVICE")
        if env:
            _auto_default = Device(env)
        else:
            candidates = [
                (_priority(spec), name) for name, spec in plugins.backend_specs().items()
                if not spec.test_only and _available(spec)[0]
            ]  # fmt: skip
            if not candidates:
                raise BackendUnavailableError(
                    "ndplane: no backend is available. Install one, e.g. `pip install ndplane-numpy`,"
                    " and check `ndplane backends`."
                )
            _auto_default = Device(max(candidates)[1])
    return _auto_default


@contextlib.contextmanager
def default_device(device: str | Device) -> Iterator[Device]:
    """Make ``device`` the default inside a ``with`` block (per thread and task).

    >>> import ndplane as nd
    >>> with nd.default_device("numpy:1"):
    ...     str(nd.zeros(2).device)
    'numpy:1'
    """
    dev = Device(device)
    token = _default.set(dev)
    try:
        yield dev
    finally:
        _default.reset(token)
