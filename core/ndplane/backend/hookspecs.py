"""Hook specifications for ndplane backend plugins (pluggy project name ``ndplane``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .spec import BackendSpec

hookspec = pluggy.HookspecMarker("ndplane")
hookimpl = pluggy.HookimplMarker("ndplane")

# ---------------------------------------------------------------------------
# discovery
# ---------------------------------------------------------------------------


@hookspec
def ndplane_register_backends() -> list[BackendSpec] | None:
    """Return the backends this plugin provides, as a list of ``BackendSpec``.

    Called once per process, the first time ndplane needs its devices. It must
    be cheap: describe the backends, do not initialise a device (that happens
    in ``BackendSpec.factory``). Return an empty list (or ``None``, which counts
    as empty) when the plugin has nothing to offer on this machine. Not
    ``firstresult``: every plugin's specs are collected.
    """
