"""BackendSpec: the cheap metadata a plugin registers (importing it starts no device)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Backend

__all__ = ["BackendSpec"]


def _always_available() -> tuple[bool, str]:
    return True, ""


@dataclass(frozen=True)
class BackendSpec:
    """How to find and start a backend.

    ``factory(index)`` builds the :class:`~ndplane.backend.Backend` serving
    device ``name:index``; it runs on first use of that device, never at
    import.  ``is_available()`` must be cheap and must not raise: it returns
    ``(True, "")`` or ``(False, "why not, and how to fix it")``.

    >>> from ndplane.backend import BackendSpec
    >>> spec = BackendSpec(name="mine", factory=lambda index: None, protocol_version=1)
    >>> spec.is_available()
    (True, '')
    """

    name: str
    factory: Callable[[int], Backend]
    #: The protocol version the plugin was written for: required, so that a plugin built for
    #: another version is recognised (a default would silently claim the installed one).
    protocol_version: int = field(kw_only=True)
    distribution: str = ""
    version: str = ""
    is_available: Callable[[], tuple[bool, str]] = _always_available
    #: Number of devices of this kind (indices 0 .. n-1); called lazily.
    device_count: Callable[[], int] = field(default=lambda: 1)
    #: Rank for the default device: the available spec with the highest value wins.
    #: A callable is evaluated lazily (a GPU backend may rank a software adapter low).
    priority: int | Callable[[], int] = 0
    #: Test-only devices (fakes) are never chosen as the default device.
    test_only: bool = False
    description: str = ""
