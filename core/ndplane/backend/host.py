"""Helpers for host-resident backends: NumPy arrays over a backend's memory that keep it alive.

>>> import numpy as np
>>> from ndplane.backend import held_view
>>> class Owner: ...
>>> owner, memory = Owner(), np.arange(3.0)
>>> a = held_view(memory, owner)
>>> a.base.owner is owner, np.shares_memory(a, memory)
(True, True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["held_view"]


class _Held:
    """``__array_interface__`` of a view, and the object that keeps its memory alive."""

    __slots__ = ("__array_interface__", "view", "owner")

    def __init__(self, view: np.ndarray, owner: Any) -> None:
        # NOTE: keep both: ``view`` may be a temporary that owns its memory (a backend whose
        # to_host copies), or a view whose memory ``owner`` (an Array, its Storage) owns.
        self.__array_interface__ = view.__array_interface__
        self.view = view
        self.owner = owner


def held_view(view: np.ndarray, owner: Any) -> np.ndarray:
    """A NumPy array over ``view``'s memory whose base chain holds ``owner``: a consumer that
    keeps the result (or NumPy's DLPack export of it) keeps ``owner`` alive too."""
    return np.asarray(_Held(view, owner))
