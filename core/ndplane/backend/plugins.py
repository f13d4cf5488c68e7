"""The one PluginManager and the code that loads backend plugins.

Plugins are modules named by entry points in the group ``ndplane.backends``.
Loading is lazy (first use of a device) and fault-tolerant: a plugin that
fails to import, raises in its hook or declares another protocol version is
skipped with one :class:`~ndplane.PluginWarning` that names it and the fix.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
import threading
import warnings
from types import ModuleType
from typing import Any

import pluggy

from .._errors import PluginWarning
from . import hookspecs
from .ops import PROTOCOL_VERSION
from .spec import BackendSpec

__all__ = ["ENTRY_POINT_GROUP", "get_plugin_manager", "backend_specs", "register", "unregister", "reset"]

ENTRY_POINT_GROUP = "ndplane.backends"

_lock = threading.RLock()
_pm: pluggy.PluginManager | None = None
_specs: dict[str, BackendSpec] | None = None
_sources: dict[str, str] = {}  # plugin name -> distribution, for messages


def get_plugin_manager() -> pluggy.PluginManager:
    global _pm
    with _lock:
        if _pm is None:
            _pm = pluggy.PluginManager("ndplane")
            _pm.add_hookspecs(hookspecs)
            if os.environ.get("NDPLANE_TRACE_PLUGINS"):
                _pm.trace.root.setwriter(lambda msg: print(msg, end="", file=sys.stderr))
                _pm.enable_tracing()
            _load_entry_points(_pm)
        return _pm


def _allowlist() -> set[str] | None:
    raw = os.environ.get("NDPLANE_PLUGINS")
    if raw is None or not raw.strip():
        return None
    return {name.strip() for name in raw.split(",") if name.strip()}


def _skip(what: str, dist: str, error: str, fix: str) -> None:
    warnings.warn(
        f"ndplane: skipped backend plugin {what} (distribution {dist or 'unknown'}): {error}. {fix}",
        PluginWarning,
        stacklevel=4,
    )


def _load_entry_points(pm: pluggy.PluginManager) -> None:
    allow = _allowlist()
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if allow is not None and ep.name not in allow:
            continue
        dist = ep.dist.name if ep.dist is not None else ""
        if pm.get_plugin(ep.name) is not None:
            continue
        try:
            module = ep.load()
        except Exception as exc:  # noqa: BLE001 - any failure must only skip this plugin
            _skip(
                repr(ep.name), dist, f"import of {ep.value!r} failed with {type(exc).__name__}: {exc}",
                f"Reinstall or upgrade it (pip install -U {dist or ep.name}), uninstall it, or leave "
                f"it out of NDPLANE_PLUGINS.",
            )
            continue
        pm.register(module, name=ep.name)
        _sources[ep.name] = dist


def register(plugin: ModuleType | Any, name: str | None = None) -> None:
    """Register a plugin object explicitly (used by tests and embedded plugins)."""
    with _lock:
        pm = get_plugin_manager()
        pm.register(plugin, name=name)
        global _specs
        _specs = None


def unregister(name: str) -> None:
    """Unregister a plugin registered with :func:`register` (or loaded from an entry point)."""
    with _lock:
        get_plugin_manager().unregister(name=name)
        global _specs
        _specs = None


def reset() -> None:
    """Forget every loaded plugin; the next use loads the entry points again."""
    global _pm, _specs
    with _lock:
        _pm, _specs = None, None
        _sources.clear()


def backend_specs() -> dict[str, BackendSpec]:
    """Every compatible BackendSpec by name (available or not), loading plugins on first use."""
    global _specs
    with _lock:
        if _specs is not None:
            return _specs
        pm = get_plugin_manager()
        specs: dict[str, BackendSpec] = {}
        for impl in reversed(pm.hook.ndplane_register_backends.get_hookimpls()):
            dist = _sources.get(impl.plugin_name, impl.plugin_name)
            try:
                # NOTE: a plugin's answer, checked below: the hookspec's type is not a promise
                result: object = impl.function() or []
            except Exception as exc:  # noqa: BLE001
                _skip(repr(impl.plugin_name), dist,
                      f"ndplane_register_backends raised {type(exc).__name__}: {exc}",
                      f"Report it to the plugin's authors or uninstall {dist}.")
                continue
            if not isinstance(result, (list, tuple)):
                _skip(repr(impl.plugin_name), dist,
                      f"ndplane_register_backends returned {type(result).__name__}, not a list of BackendSpec",
                      f"Report it to the plugin's authors or uninstall {dist}.")
                continue
            for spec in result:
                if not isinstance(spec, BackendSpec):
                    _skip(repr(impl.plugin_name), dist,
                          f"ndplane_register_backends returned {type(spec).__name__}, not BackendSpec",
                          f"Report it to the plugin's authors or uninstall {dist}.")
                    continue
                if spec.protocol_version != PROTOCOL_VERSION:
                    _skip(repr(spec.name), spec.distribution or dist,
                          f"it implements backend protocol {spec.protocol_version}, this ndplane "
                          f"speaks protocol {PROTOCOL_VERSION}",
                          "Install versions of ndplane and the plugin that speak the same protocol "
                          "(pip install -U ndplane " + (spec.distribution or dist) + ").")
                    continue
                if spec.name in specs:
                    _skip(repr(spec.name), spec.distribution or dist,
                          f"the backend name is already taken by {specs[spec.name].distribution!r}",
                          "Uninstall one of the two distributions.")
                    continue
                specs[spec.name] = spec
        _specs = specs
        return specs
