"""VJP rules of the ``linalg`` kernels (inv, solve, det, slogdet), written with core ops.

The factorisations without a rule here (cholesky, qr, svd, eigh, ...) carry no gradient
yet; composites over them and over these four (pinv, matrix_power, the norms built on
``svdvals`` excepted) are differentiated through their decomposition. Complex inputs
follow PyTorch's convention (conjugate Wirtinger derivative), as in :mod:`rules`.
"""

from __future__ import annotations

from typing import Any

import ndplane as nd

from .graph import RULES, Node


def _h(x: nd.Array) -> nd.Array:
    """The conjugate transpose of the last two axes."""
    t = nd.matrix_transpose(x)
    return nd.conj(t) if t.dtype.kind == "complex" else t


def _inv(g: Any, node: Node) -> tuple[Any]:
    (y,) = node.saved_values()
    return (-(_h(y) @ g @ _h(y)),)


def _solve(g: Any, node: Node) -> tuple[Any, Any]:
    a, x = node.saved_values()
    gb = nd.linalg.solve(_h(a), g)
    return -(gb @ _h(x)), gb


def _det(g: Any, node: Node) -> tuple[Any]:
    a, d = node.saved_values()
    scale = g * (nd.conj(d) if d.dtype.kind == "complex" else d)
    return (scale[..., None, None] * _h(nd.linalg.inv(a)),)


def _logabsdet(g: Any, node: Node) -> tuple[Any]:
    (a,) = node.saved_values()
    gi = g if a.dtype.kind != "complex" else nd.astype(g, a.dtype)
    return (gi[..., None, None] * _h(nd.linalg.inv(a)),)


RULES.update({"linalg_inv": _inv, "linalg_solve": _solve, "linalg_det": _det, "linalg_logabsdet": _logabsdet})
