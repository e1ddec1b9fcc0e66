"""Record autograd's walk back as it really runs: each node it executes, in order.

`Watch` hooks every backward node the program's tensors reach (`Node.register_prehook` and
`Node.register_hook`) while one line runs, and takes the hooks off after it. A prehook sees the
gradient a node receives, a hook the gradients it sends to each input; right after a node's
hook, autograd frees that node's saved values (unless the graph is retained), so the saved
values still held are compared from one node to the next. What comes out (`BackwardPass`)
holds strings only, like the rest of a trace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import torch

from autograd_traced.drawing.graph import (
    backward_order,
    format_value,
    name_of,
    node_label,
    saved_tensors,
    tensor_names,
)

ACCUMULATE = "AccumulateGrad"  # how the reader knows the node that writes a leaf's .grad


@dataclass(frozen=True)
class Sent:
    """A gradient a node passed on to one of its inputs; None where that input needs none."""

    to: str  # the receiving op, the leaf (its AccumulateGrad), or the untracked input
    node: str  # the receiver's id in the drawing ("n3"); "" when it has none there
    value: str | None
    factor: str = ""  # the local derivative in the node's own saved names: "a(1 - a)"
    factor_value: str = ""


@dataclass(frozen=True)
class NodeRun:
    """One node autograd executed."""

    number: int  # 1-based, in execution order
    name: str  # "SigmoidBackward0"; ACCUMULATE for a leaf's
    node: str  # its id in the drawing ("n2"); "" when it has none there
    received: str  # the gradient it received, summed over every path that reached it
    arrived: tuple[tuple[str, str], ...] = ()  # (sender, gradient) where paths met here
    sent: tuple[Sent, ...] = ()
    leaf: str = ""  # ACCUMULATE: the leaf whose .grad it writes
    grad_before: str = "None"  # ACCUMULATE: that .grad before and after it ran
    grad_after: str = "None"
    freed: tuple[str, ...] = ()  # its saved values freed as it finished: "saved result (a = …)"
    error: str = ""  # the call failed here, with this message
    missing: tuple[str, ...] = ()  # its saved values already freed when it ran: "saved self"

    @property
    def title(self) -> str:
        return f"{ACCUMULATE} ({self.leaf})" if self.leaf else self.name


@dataclass(frozen=True)
class Skipped:
    """A node of the walked graph that the call did not need, so did not run."""

    name: str
    node: str
    leaf: str = ""  # ACCUMULATE: its leaf, whose .grad stays as it was
    grad: str = "None"


@dataclass(frozen=True)
class BackwardPass:
    runs: tuple[NodeRun, ...]
    skipped: tuple[Skipped, ...]

    def run(self, title: str) -> NodeRun:
        """The node run shown as `title`: "SigmoidBackward0", "AccumulateGrad (b)"."""
        return next(run for run in self.runs if run.title == title)


@dataclass
class _Run:
    index: int  # into Watch.nodes
    received: str
    grad_before: str
    factors: dict[int, tuple[str, str]]  # input slot -> (formula, value)
    untracked: str  # what its slot without a node stands for, read while still saved
    missing: tuple[str, ...]
    sent: list[str | None] | None = None  # None: its hook never ran (the call failed here)
    grad_after: str = "None"


@dataclass
class Watch:
    """Hooks on every node `namespace`'s tensors reach while a line runs (a context manager).

    Node ids are those of the drawing of `drawn`'s graph, the graph the reader sees walked.
    """

    namespace: Mapping[str, object]
    drawn: torch.Tensor | None
    nodes: list[Any] = field(default_factory=list)
    _runs: list[_Run] = field(default_factory=list)
    _held: list[set[tuple[int, str]]] = field(default_factory=list)  # before each run, at end
    _saved: dict[tuple[int, str], str] = field(default_factory=dict)  # (node, attr) -> words
    _handles: list[Any] = field(default_factory=list)

    def __enter__(self) -> Watch:
        for name, value in self.namespace.items():
            if not name.startswith("_") and isinstance(value, torch.Tensor) and value.grad_fn:
                self.nodes += [
                    fn for fn in backward_order(value.grad_fn) if self._index(fn) is None
                ]
        for index, fn in enumerate(self.nodes):
            self._handles.append(fn.register_prehook(lambda grads, i=index: self._pre(i, grads)))
            self._handles.append(fn.register_hook(lambda sent, _, i=index: self._post(i, sent)))
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        if self._runs:
            self._held.append(self._held_now())

    def result(self, error: str = "") -> BackwardPass | None:
        """The walk, once the line ran (None if no node ran); `error` is what the line raised."""
        if not self._runs:
            return None
        named = tensor_names(self.namespace)
        labels = [node_label(fn, named) for fn in self.nodes]
        drawn = self.drawn.grad_fn if self.drawn is not None else None
        ids = {id(fn): f"n{i + 1}" for i, fn in enumerate(backward_order(drawn) if drawn else [])}
        arrived: dict[int, list[tuple[str, str]]] = {}
        runs = []
        for number, run in enumerate(self._runs, start=1):
            fn = self.nodes[run.index]
            leaf = labels[run.index] if _is_leaf(fn) else ""
            sent = []
            for slot, value in enumerate(run.sent or ()):
                receiver = fn.next_functions[slot][0]
                to = self._index(receiver)
                if to is not None and value is not None:
                    arrived.setdefault(to, []).append((_title(fn, labels[run.index]), value))
                factor, factor_value = run.factors.get(slot, ("", ""))
                receiver_label = labels[to] if to is not None else run.untracked
                sent.append(
                    Sent(receiver_label, ids.get(id(receiver), ""), value, factor, factor_value)
                )
            met = arrived.get(run.index, [])
            freed = self._held[number - 1] - self._held[number]
            runs.append(
                NodeRun(
                    number=number,
                    name=ACCUMULATE if leaf else str(fn.name()),
                    node=ids.get(id(fn), ""),
                    received=run.received,
                    arrived=tuple(met) if len(met) > 1 else (),
                    sent=tuple(sent),
                    leaf=leaf,
                    grad_before=run.grad_before,
                    grad_after=run.grad_after,
                    freed=tuple(self._saved[key] for key in sorted(freed)),
                    error=error if run.sent is None else "",
                    missing=run.missing,
                )
            )
        ran = {run.index for run in self._runs}
        skipped = []
        for fn in backward_order(self.nodes[self._runs[0].index]):
            index = self._index(fn)
            if index is None or index in ran:
                continue
            leaf = labels[index] if _is_leaf(fn) else ""
            name = ACCUMULATE if leaf else str(fn.name())
            skipped.append(Skipped(name, ids.get(id(fn), ""), leaf, _grad(fn)))
        return BackwardPass(tuple(runs), tuple(skipped))

    def _index(self, fn: Any) -> int | None:
        return next((i for i, node in enumerate(self.nodes) if node is fn), None)

    def _pre(self, index: int, grads: Sequence[torch.Tensor | None]) -> None:
        self._held.append(self._held_now())
        fn = self.nodes[index]
        named = tensor_names(self.namespace)
        received = ", ".join("None" if g is None else format_value(g) for g in grads)
        factors, untracked = _factors(fn, named), _untracked(fn, named)
        missing = tuple(f"saved {attr}" for attr, value in saved_tensors(fn) if value is None)
        self._runs.append(_Run(index, received, _grad(fn), factors, untracked, missing))

    def _post(self, index: int, sent: Sequence[torch.Tensor | None]) -> None:
        run = next(run for run in reversed(self._runs) if run.index == index)
        run.sent = [None if grad is None else format_value(grad) for grad in sent]
        run.grad_after = _grad(self.nodes[index])

    def _held_now(self) -> set[tuple[int, str]]:
        """The saved values every node still holds (the ones freed can no longer be read)."""
        held = set()
        named = tensor_names(self.namespace)
        for index, fn in enumerate(self.nodes):
            for attr, tensor in saved_tensors(fn):
                if not isinstance(tensor, torch.Tensor):
                    continue
                held.add((index, attr))
                if (index, attr) not in self._saved:
                    name = name_of(tensor, named)
                    value = format_value(tensor)
                    who = f" ({name} = {value})" if name else f" = {value}"
                    self._saved[index, attr] = f"saved {attr}{who}"  # the node's own
        return held


def _is_leaf(fn: Any) -> bool:
    return isinstance(getattr(fn, "variable", None), torch.Tensor)


def _title(fn: Any, label: str) -> str:
    return f"{ACCUMULATE} ({label})" if _is_leaf(fn) else label


def _grad(fn: Any) -> str:
    """A leaf's .grad as its AccumulateGrad node sees it; "None" for any other node."""
    variable = getattr(fn, "variable", None)
    grad = variable.grad if isinstance(variable, torch.Tensor) else None
    return "None" if grad is None else format_value(grad)


def _saved_by_attr(fn: Any) -> dict[str, torch.Tensor]:
    return {attr: t for attr, t in saved_tensors(fn) if isinstance(t, torch.Tensor)}


def _untracked(fn: Any, named: list[tuple[str, torch.Tensor]]) -> str:
    """The input a slot without a node stands for: the one untracked tensor the node saved,
    if it saved exactly one and has one such slot (x1 for x1 * w1, y for the loss's target)."""
    untracked = [
        name_of(tensor, named) for tensor in _saved_by_attr(fn).values() if not tensor.requires_grad
    ]
    empty = [next_fn for next_fn, _ in fn.next_functions if next_fn is None]
    if len(untracked) == 1 and untracked[0] and len(empty) == 1:
        return untracked[0]
    return "an input that needs no gradient"


def _factors(fn: Any, named: list[tuple[str, torch.Tensor]]) -> dict[int, tuple[str, str]]:
    """The local derivative for each input slot, from the node's own saved values, for the
    nodes the site's programs use; other nodes show the gradients in and out only."""
    saved = _saved_by_attr(fn)

    def called(attr: str) -> str:
        return name_of(saved[attr], named) or attr

    kind = fn.name()
    if kind == "SigmoidBackward0" and "result" in saved:
        result, a = saved["result"], called("result")
        return {0: (f"{a}(1 - {a})", format_value(result * (1 - result)))}
    if kind == "MulBackward0":  # each factor's derivative is the other factor
        pairs = ((0, "other"), (1, "self"))
        return {
            slot: (called(attr), format_value(saved[attr])) for slot, attr in pairs if attr in saved
        }
    if kind == "AddBackward0" and getattr(fn, "_saved_alpha", 1) == 1:
        return {0: ("1", "1"), 1: ("1", "1")}
    if kind == "BinaryCrossEntropyBackward0" and {"self", "target"} <= saved.keys():
        p, t, a, y = saved["self"], saved["target"], called("self"), called("target")
        factor = (p - t) / (p * (1 - p))
        formula = f"({a} - {y}) / ({a}(1 - {a}))"
        if getattr(fn, "_saved_reduction", 0) == 1 and p.numel() > 1:  # mean
            factor, formula = factor / p.numel(), f"{formula} / {p.numel()}"
        return {0: (formula, format_value(factor))}
    return {}
