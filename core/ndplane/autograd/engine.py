"""The backward engine: walks the recorded graph from the outputs to the leaves.

It sits above every op (it adds and casts gradients through ``_dispatch``), while
the graph it walks (:mod:`ndplane._graph`) sits below them all. An op with several
outputs (``linalg.svd``: U, S, Vh) has one node per output sharing a ``group`` key:
``run_backward`` collects the gradient of every output of a group (``None`` where
none flowed) and calls the rule once, with the tuple, when it reaches the group's
last output in topological order -- every output comes before the op's inputs
there, so each output's gradient is complete by then.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._array import Array
from .._dispatch import binary, cast
from .._graph import RULES, Node, set_grad_enabled

__all__ = ["run_backward"]


Vertex = Node | Array  # a node, or a leaf array (no node) that collects a gradient


def _vertex(x: Array) -> Vertex:
    return x._node if x._node is not None else x


def _toposort(roots: Sequence[Vertex]) -> list[Vertex]:
    """Vertices reachable from ``roots`` through the nodes' edges, each after every vertex
    that uses it."""
    order: list[Vertex] = []
    seen: set[int] = set()
    for root in roots:
        if id(root) in seen:
            continue
        seen.add(id(root))
        stack: list[tuple[Vertex, int]] = [(root, 0)]
        while stack:
            v, i = stack.pop()
            edges = v.edges if isinstance(v, Node) else ()
            if i < len(edges):
                stack.append((v, i + 1))
                child = edges[i]
                if child is not None and id(child) not in seen:
                    seen.add(id(child))
                    stack.append((child, 0))
            else:
                order.append(v)
    order.reverse()  # every vertex now precedes the vertices it was computed from
    return order


def run_backward(
    roots: Sequence[Array], grads: Sequence[Array], *, retain_graph: bool, create_graph: bool,
    inputs: Sequence[Array] | None = None,
) -> list[Array | None] | None:  # fmt: skip
    """Propagate ``grads`` from ``roots`` back through the graph.

    Without ``inputs``: accumulate into ``.grad`` of every leaf that requires a gradient.
    With ``inputs``: return their gradients (``None`` where unreachable), touching no ``.grad``.
    """
    # NOTE: the graph's vertices are nodes (and leaves), not arrays: arrays that share a node
    # (an output and an alias of it) are one vertex, and an array written in place after an
    # op read it is two (see Node.edges).
    acc: dict[int, Array] = {}
    root_vs = [_vertex(r) for r in roots]
    for v, grad in zip(root_vs, grads):
        acc[id(v)] = binary("add", acc[id(v)], grad) if id(v) in acc else grad
    want = [_vertex(x) for x in inputs] if inputs is not None else None
    wanted = {id(v) for v in want} if want is not None else None
    order = _toposort(root_vs)
    # The nodes of a multi-output op's outputs share a group key: the rule runs once, at the
    # last of them in the order -- by then every output's gradient has arrived.
    last = {id(v.group[2]): i for i, v in enumerate(order) if isinstance(v, Node) and v.group is not None}
    pending: dict[int, Any] = {}
    g: Array | tuple[Array | None, ...] | None  # a multi-output op's rule gets one per output
    with set_grad_enabled(create_graph):
        for i, v in enumerate(order):
            g = acc.get(id(v))
            if not isinstance(v, Node):  # a leaf
                if g is not None and wanted is None and v.requires_grad:
                    v.grad = g if v.grad is None else binary("add", v.grad, g)
                continue
            if wanted is not None and id(v) in wanted:
                g = None  # a requested intermediate: keep its gradient, stop here
            if v.group is not None:
                g = _gather(v.group, g, last[id(v.group[2])] == i, pending)
            if g is None:
                continue
            in_grads = RULES[v.name](g, v)
            for child, edge, cg in zip(v.inputs, v.edges, in_grads):
                if edge is None or child is None or cg is None:
                    continue
                if cg.dtype is not child.dtype:
                    cg = cast(cg, child.dtype)
                key = id(edge)
                acc[key] = binary("add", acc[key], cg) if key in acc else cg
            if not retain_graph:
                v.saved = None
    if want is not None:
        return [acc.get(id(v)) for v in want]
    return None


def _gather(group: tuple[int, int, object], g: Array | None, is_last: bool,
            pending: dict[int, list[Any]]) -> tuple[Array | None, ...] | None:  # fmt: skip
    """Add ``g`` to its output's slot of the group; on the group's last output, the slots."""
    index, count, key = group
    slots = pending.setdefault(id(key), [None] * count)
    if g is not None:
        slots[index] = g if slots[index] is None else binary("add", slots[index], g)
    if not is_last:
        return None
    del pending[id(key)]
    return tuple(slots) if any(s is not None for s in slots) else None
