"""The autograd graph: nodes recorded by ops, and grad mode (the backward engine is
:mod:`ndplane.autograd.engine`, a layer above every op).

An op that produced ``out`` from inputs of which at least one requires a
gradient calls :func:`record`; ``out._node`` then points at a :class:`Node`
holding the rule's name, the inputs, the arrays the rule needs (checked
against their storage's version counter at backward time) and parameters.
Rules live in a table (``RULES``) filled by :mod:`ndplane.autograd.rules`, so
this module imports no op: it sits just above ``_array`` and below ``_dispatch``.

An op with several outputs (``linalg.svd``: U, S, Vh) calls :func:`record_multi`:
each output gets its own node (so an in-place alias of one output keeps its
place), and the nodes share a ``group`` key. ``run_backward`` collects the
gradient of every output of a group (``None`` where none flowed) and calls the
rule once, with the tuple, when it reaches the group's last output in
topological order (see :func:`ndplane.autograd.engine.run_backward`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from typing import Any

from ._array import Array, detached

__all__ = ["Node", "record", "record_multi", "record_elementwise", "no_grad", "enable_grad", "is_grad_enabled",
           "set_grad_enabled", "alias", "check_inplace"]  # fmt: skip

#: name -> rule(g, node) -> tuple with one gradient (or None) per input.
RULES: dict[str, Callable[[Any, Node], Sequence[Any]]] = {}
#: Elementwise ops whose rule reads no operand values, and those that read the output
#: (filled by rules.py): only what a rule reads is saved and version-checked.
NO_SAVE: set[str] = set()
NEEDS_OUT: set[str] = set()

_state = threading.local()


def is_grad_enabled() -> bool:
    """Whether ops record the graph (per thread; on by default).

    >>> import ndplane as nd
    >>> nd.autograd.is_grad_enabled()
    True
    >>> with nd.no_grad():
    ...     nd.autograd.is_grad_enabled()
    False
    """
    return getattr(_state, "enabled", True)


class set_grad_enabled(contextlib.ContextDecorator):
    """Turn recording on or off inside a ``with`` block (or a decorated function).

    A small class rather than a generator-based context manager: it is entered on every
    composite and optimizer step, and this costs a fraction of a generator's setup.

    >>> import ndplane as nd
    >>> w = nd.ones(2, requires_grad=True)
    >>> with nd.autograd.set_grad_enabled(False):
    ...     (w * 2).requires_grad
    False
    >>> @nd.autograd.set_grad_enabled(False)
    ... def predict(x):
    ...     return x * w
    >>> predict(nd.ones(2)).requires_grad
    False
    """

    __slots__ = ("mode", "prev")

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self.prev = True

    def __enter__(self) -> None:
        self.prev = getattr(_state, "enabled", True)
        _state.enabled = self.mode

    def __exit__(self, *exc: object) -> None:
        _state.enabled = self.prev


def no_grad() -> contextlib.AbstractContextManager[None]:
    """Do not record the graph inside the block (inference, optimizer steps).

    >>> import ndplane as nd
    >>> w = nd.ones(2, requires_grad=True)
    >>> with nd.no_grad():
    ...     (w * 2).requires_grad
    False
    """
    return set_grad_enabled(False)


def enable_grad() -> contextlib.AbstractContextManager[None]:
    """Record the graph inside the block, even within ``no_grad``.

    >>> import ndplane as nd
    >>> w = nd.ones(2, requires_grad=True)
    >>> with nd.no_grad():
    ...     with nd.enable_grad():
    ...         (w * 2).requires_grad
    True
    """
    return set_grad_enabled(True)


class Node:
    """One recorded op: how to send the output's gradient to its inputs."""

    __slots__ = ("name", "inputs", "edges", "saved", "versions", "params", "group", "out_slots", "__weakref__")

    def __init__(self, name: str, inputs: tuple[Array | None, ...], saved: tuple[Array, ...], params: Any,
                 group: tuple[int, int, object] | None = None,
                 out_slots: tuple[tuple[int, int], ...] = ()) -> None:  # fmt: skip
        self.name = name
        self.inputs = inputs
        # NOTE: where each input's gradient goes: the input's node as it is now, or the input
        # itself where it is a leaf. Not the input array: an in-place write later gives that
        # array a new node (x[1:4] = ..., x += ...), which must not receive the gradient of
        # what this op read before the write.
        self.edges: tuple[Node | Array | None, ...] = tuple(
            None if x is None else x._node if x._node is not None else x for x in inputs
        )
        self.saved: tuple[Array, ...] | None = saved
        self.versions = [s._storage.version for s in saved]
        self.params = params
        self.group = group  # (this output's index, number of outputs, key shared by the op's nodes)
        # (position in saved, output index): saved arrays that are this op's own outputs,
        # stored detached (no cycle) and re-attached by saved_values() for higher orders
        self.out_slots = out_slots

    def __repr__(self) -> str:
        return f"<Node {self.name}>"

    def operands(self) -> tuple[Any, ...]:
        """For elementwise nodes: the operands (arrays or scalars) and the output, or None
        where the rule saved nothing (see :func:`record_elementwise`)."""
        scalars, with_operands, with_out = self.params
        vals = list(self.saved_values())
        ops = [s if s is not None else (vals.pop(0) if with_operands else None) for s in scalars]
        return (*ops, vals.pop(0) if with_out else None)

    def saved_values(self) -> tuple[Array, ...]:
        if self.saved is None:
            raise RuntimeError(
                f"backward: the graph through {self.name} was already freed by an earlier backward(); "
                f"pass retain_graph=True to the first backward() to go through it twice."
            )
        for s, v in zip(self.saved, self.versions):
            if s._storage.version != v:
                raise RuntimeError(
                    f"backward: an array saved by {self.name} for the gradient was modified in place "
                    f"after it was used (version {v} -> {s._storage.version}); the gradient would be "
                    f"wrong. Use an out-of-place op (x = x + y, not x += y) or .detach() a copy."
                )
        if self.out_slots and getattr(_state, "enabled", True):
            return self._attached(self.saved)
        return self.saved

    def _attached(self, values: tuple[Array, ...]) -> tuple[Array, ...]:
        """The saved values with this op's outputs joined to the graph again (through this node
        or, for another output of the op, a sibling node): when the backward itself is recorded
        (``create_graph``), a rule reading its output then differentiates through the op."""
        saved = list(values)
        for pos, index in self.out_slots:
            a = detached(saved[pos])
            if self.group is None or self.group[0] == index:
                a._node = self
            else:
                _, count, key = self.group
                a._node = sib = Node.__new__(Node)
                sib.name, sib.inputs, sib.saved, sib.params = self.name, self.inputs, self.saved, self.params
                sib.edges = self.edges
                sib.versions, sib.group, sib.out_slots = self.versions, (index, count, key), self.out_slots
            a.requires_grad = True
            saved[pos] = a
        return tuple(saved)




def record(name: str, out: Array, inputs: tuple[Any, ...], saved: tuple[Array, ...] = (),
           params: Any = None) -> Array:  # fmt: skip
    """Attach a node to ``out`` if grad mode is on and an input requires a gradient.

    ``inputs`` may contain non-arrays (Python scalars); they get no gradient. ``saved`` are
    the arrays the rule reads; they are stored detached (no reference cycle through ``out``).
    """
    if not getattr(_state, "enabled", True):
        return out
    arrays = [x if type(x) is Array and x.requires_grad else None for x in inputs]
    if arrays.count(None) == len(arrays) or out._ref.dtype.kind not in _FLOATING:
        return out  # no input needs a gradient, or an integer/boolean result (none flows)
    out_slots: tuple[tuple[int, int], ...] = ()
    for s in saved:
        if s is out:  # NOTE: identity, not `in`: Array.__eq__ is elementwise
            out_slots = tuple((i, 0) for i, x in enumerate(saved) if x is out)
            saved = tuple(detached(x) if x is out else x for x in saved)
            break
    out._node = Node(name, tuple(arrays), saved, params, None, out_slots)
    out.requires_grad = True
    return out


_FLOATING = frozenset({"float", "complex"})


def record_multi(name: str, outs: tuple[Array, ...], inputs: tuple[Any, ...], saved: tuple[Array, ...] = (),
                 params: Any = None) -> tuple[Array, ...]:  # fmt: skip
    """Attach one rule to all ``outs`` of an op (see the module docstring): the rule gets a tuple
    with one gradient per output, ``None`` for an output no gradient reached."""
    if not getattr(_state, "enabled", True):
        return outs
    arrays = tuple(x if type(x) is Array and x.requires_grad else None for x in inputs)
    if arrays.count(None) == len(arrays):
        return outs
    out_slots = tuple((p, j) for p, s in enumerate(saved) for j, o in enumerate(outs) if s is o)
    saved = tuple(detached(s) if any(s is o for o in outs) else s for s in saved)
    key = object()
    for i, out in enumerate(outs):
        if out._ref.dtype.kind in _FLOATING:
            out._node = Node(name, arrays, saved, params, (i, len(outs), key), out_slots)
            out.requires_grad = True
    return outs


def alias(x: Array) -> Array:
    """A second Array object for ``x`` (same storage, layout and node): what an in-place
    write records as the value before the write."""
    a = detached(x)
    a._node, a.requires_grad = x._node, x.requires_grad
    return a


def check_inplace(x: Array, name: str) -> None:
    if x.requires_grad and x._node is None and getattr(_state, "enabled", True):
        raise RuntimeError(
            f"{name}: an array that requires grad and is a leaf of the graph cannot be modified in "
            f"place; do it under ndplane.no_grad() (as optimizers do), or on a copy."
        )


def record_elementwise(op: str, out: Array, operands: tuple[Any, ...]) -> Array:
    """Record an elementwise op: saves the array operands and ``out`` unless the rule needs none;
    ``params`` keeps the scalar operands (None in an array's place)."""
    with_operands = op not in NO_SAVE
    with_out = op in NEEDS_OUT
    saved = [x for x in operands if type(x) is Array] if with_operands else []
    if with_out:
        saved.append(out)  # NOTE: record() stores it detached and marks it as the output
    scalars = tuple([None if type(x) is Array else x for x in operands])
    return record(op, out, operands, tuple(saved), (scalars, with_operands, with_out))
