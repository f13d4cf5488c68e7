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
from .._graph import RULES, set_grad_enabled

__all__ = ["run_backward"]


def _toposort(roots: Sequence[Array]) -> list[Array]:
    """Arrays reachable from ``roots`` through nodes, each after every array that uses it."""
    order: list[Array] = []
    seen: set[int] = set()
    for root in roots:
        if id(root) in seen:
            continue
        seen.add(id(root))
        stack: list[tuple[Array, int]] = [(root, 0)]
        while stack:
            arr, i = stack.pop()
            node = arr._node
            inputs = node.inputs if node is not None and node.inputs is not None else ()
            if i < len(inputs):
                stack.append((arr, i + 1))
                child = inputs[i]
                if child is not None and id(child) not in seen:
                    seen.add(id(child))
                    stack.append((child, 0))
            else:
                order.append(arr)
    order.reverse()  # every array now precedes the arrays it was computed from
    return order


def run_backward(
    roots: Sequence[Array], grads: Sequence[Array], *, retain_graph: bool, create_graph: bool,
    inputs: Sequence[Array] | None = None,
) -> list[Array | None] | None:  # fmt: skip
    """Propagate ``grads`` from ``roots`` back through the graph.

    Without ``inputs``: accumulate into ``.grad`` of every leaf that requires a gradient.
    With ``inputs``: return their gradients (``None`` where unreachable), touching no ``.grad``.
    """
    acc: dict[int, Array] = {}
    for root, grad in zip(roots, grads):
        acc[id(root)] = binary("add", acc[id(root)], grad) if id(root) in acc else grad
    wanted = {id(x) for x in inputs} if inputs is not None else None
    order = _toposort(roots)
    # NOTE: several arrays may share a node (an op's outputs; an output and the alias of it a
    # rule read under create_graph): their gradients are summed and the rule runs once, at the
    # last of them in the order -- by then every contribution has arrived.
    last: dict[int, int] = {}
    shared: set[int] = set()
    for i, a in enumerate(order):
        n = a._node
        if n is not None:
            k = id(n.group[2]) if n.group is not None else id(n)
            if k in last:
                shared.add(k)
            last[k] = i
    pending: dict[int, Any] = {}
    g: Array | tuple[Array | None, ...] | None  # a multi-output op's rule gets one per output
    with set_grad_enabled(create_graph):
        for i, arr in enumerate(order):
            g = acc.get(id(arr))
            node = arr._node
            if node is None:
                if g is not None and wanted is None and arr.requires_grad:
                    arr.grad = g if arr.grad is None else binary("add", arr.grad, g)
                continue
            if wanted is not None and id(arr) in wanted:
                g = None  # a requested intermediate: keep its gradient, stop here
            if node.group is not None:
                g = _gather(node.group, g, last[id(node.group[2])] == i, pending)
            elif id(node) in shared:
                g = _gather((0, 1, node), g, last[id(node)] == i, pending)
                g = g[0] if g is not None else None
            if g is None:
                continue
            in_grads = RULES[node.name](g, node)
            for child, cg in zip(node.inputs, in_grads):
                if child is None or cg is None:
                    continue
                if cg.dtype is not child.dtype:
                    cg = cast(cg, child.dtype)
                key = id(child)
                acc[key] = binary("add", acc[key], cg) if key in acc else cg
            if not retain_graph:
                node.saved = None
    if inputs is not None:
        return [acc.get(id(x)) for x in inputs]
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
