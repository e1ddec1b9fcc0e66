"""Record a traced snippet step by step: after each line, every variable, what changed, what the
line printed, and the autograd graph as it stands at that moment.

`Recorder.observe` is the observer `run_snippet` calls after each example, so the state is read
*after that line* from real execution. A `Trace` holds only strings and frozen records (no
tensors), so it can be rendered, pickled or sent to another process. The graph is drawn only at
the steps where it changed; the other steps point at the drawing they share.
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from autograd_traced.drawing.backward_pass import BackwardPass, Watch
from autograd_traced.drawing.graph import Graph, describe, format_value, to_dot, walk
from autograd_traced.drawing.svg import Draw, dot_svg, render_svg
from autograd_traced.running.snippets import ExampleRun


@dataclass(frozen=True)
class Variable:
    """One name the program holds, as it was after a line."""

    name: str
    value: str
    tensor: bool = False
    requires_grad: bool = False
    is_leaf: bool = False
    grad_fn: str = "None"
    grad: str = "None"


@dataclass(frozen=True)
class DrawnAt:
    """Where a graph is drawn on the page: at a step of this trace or of one above it."""

    anchor: str  # that step's element id, e.g. "trace-setup-line-10"
    line: int
    title: str  # that trace's snippet


@dataclass(frozen=True)
class Step:
    number: int  # 1-based, as the reader counts lines
    source: str
    output: str  # what the line printed; for an expected error, the traceback as shown
    raised: bool
    variables: tuple[Variable, ...]
    changed: tuple[str, ...]  # names that are new, rebound or whose state differs
    removed: tuple[str, ...]  # names the line deleted
    graph: Graph | None  # walked from `root`, None before any tracked operation
    root: str | None
    graph_at: DrawnAt | None  # the drawing that shows this step's graph
    graph_changes: tuple[str, ...]  # what changed in the graph at this line, in words
    backward: BackwardPass | None = None  # the nodes autograd ran during this line, if any
    backward_at: DrawnAt | None = None  # the drawing of the graph it walked, as before the line

    def variable(self, name: str) -> Variable:
        for variable in self.variables:
            if variable.name == name:
                return variable
        raise KeyError(name)


@dataclass
class Trace:
    start: tuple[Variable, ...] = ()  # what the program held before the first line
    steps: list[Step] = field(default_factory=list)
    drawings: dict[int, str] = field(default_factory=dict)  # step number -> SVG, where it changed


@dataclass
class Recorder:
    """Fills a `Trace` while a snippet runs; start it before the first example."""

    id_prefix: str
    title: str
    trace: Trace = field(default_factory=Trace)
    _before: dict[str, object] = field(default_factory=dict)
    _variables: dict[str, Variable] = field(default_factory=dict)
    _root: str | None = None
    _root_tensor: torch.Tensor | None = None
    _graph: Graph | None = None
    _dot: str = ""
    _drawn: dict[str, DrawnAt] = field(default_factory=dict)  # DOT -> where the page shows it
    # Tensors a line rebound, by their former name: a graph still holds them as leaves.
    _former: dict[str, torch.Tensor] = field(default_factory=dict)
    draw: Draw = dot_svg  # runs Graphviz (the page's process asks the build's)
    _watch: Watch | None = None  # autograd's nodes, hooked while the current line runs
    _walked_at: DrawnAt | None = None  # where the graph as it stands before that line is drawn

    def start(self, namespace: dict[str, Any]) -> None:
        """Take the state the snippet starts from (earlier snippets of the page may have run)."""
        self._before = dict(namespace)
        self._drawn = _drawn_on_page(namespace)
        self._variables = {v.name: v for v in _variables(namespace)}
        self.trace.start = tuple(self._variables.values())
        self._root = _outermost(namespace)
        if self._root is not None:
            self._root_tensor = namespace[self._root]
            self._graph = walk(self._root_tensor, namespace)
            self._dot = _dot(self._graph)

    def watch(self, namespace: dict[str, Any]) -> Watch:
        """The hooks a line runs under: if it walks the graph back, each node it runs."""
        self._walked_at = (
            self.trace.steps[-1].graph_at if self.trace.steps else self._drawn.get(self._dot)
        )
        self._watch = Watch(namespace, self._root_tensor)
        return self._watch

    def observe(self, run: ExampleRun, namespace: dict[str, Any]) -> None:
        error = run.output.rstrip().rsplit("\n", 1)[-1] if run.raised else ""
        backward = self._watch.result(error) if self._watch is not None else None
        self._watch = None
        variables = {v.name: v for v in _variables(namespace)}
        changed = tuple(
            name
            for name, variable in variables.items()
            if self._before.get(name, self) is not namespace[name]
            or self._variables.get(name) != variable
        )
        self._former.update(
            (f"old {name}", value)
            for name, value in self._before.items()
            if isinstance(value, torch.Tensor) and namespace.get(name) is not value
        )
        root = self._next_root(changed, namespace)
        tensor = namespace[root] if root is not None else None
        # The names held now win (walk looks them up in order), then the former ones.
        graph = walk(tensor, {**namespace, **self._former}) if tensor is not None else None
        dot = _dot(graph) if graph is not None else ""
        number = len(self.trace.steps) + 1
        graph_at = self.trace.steps[-1].graph_at if self.trace.steps else None
        notes: tuple[str, ...] = ()
        if graph is None:
            graph_at = None
        elif dot != self._dot or graph_at is None:  # changed, or first shown in this trace
            if dot != self._dot:
                notes = tuple(_graph_changes(self._graph, graph, new=self._is_new(tensor)))
            graph_at = self._drawn.get(dot) or self._draw(number, root, graph, dot)
        self.trace.steps.append(
            Step(
                number=number,
                source=run.source.rstrip("\n"),
                output=run.output,
                raised=run.example.exc_msg is not None,
                variables=tuple(variables.values()),
                changed=changed,
                removed=tuple(name for name in self._variables if name not in variables),
                graph=graph,
                root=root,
                graph_at=graph_at,
                graph_changes=notes,
                backward=backward,
                backward_at=self._walked_at if backward is not None else None,
            )
        )
        self._before, self._variables = dict(namespace), variables
        self._root, self._root_tensor, self._graph, self._dot = root, tensor, graph, dot

    def _draw(self, number: int, root: str | None, graph: Graph, dot: str) -> DrawnAt:
        alt = f"The autograd graph of {root} after line {number}. {describe(graph)}"
        self.trace.drawings[number] = render_svg(dot, alt=alt, draw=self.draw)
        self._drawn[dot] = DrawnAt(f"{self.id_prefix}-line-{number}", number, self.title)
        return self._drawn[dot]

    def _next_root(self, changed: tuple[str, ...], namespace: dict[str, Any]) -> str | None:
        """The tensor whose graph to draw: the last one this line bound with a grad_fn, else
        the one drawn before, else the outermost one the program holds."""
        bound = [name for name in changed if _has_graph(namespace[name])]
        if bound:
            return bound[-1]
        if self._root is not None and _has_graph(namespace.get(self._root)):
            return self._root
        return _outermost(namespace)

    def _is_new(self, tensor: torch.Tensor | None) -> bool:
        """True when `tensor`'s graph does not contain the one drawn before."""
        if self._root_tensor is None or tensor is None:
            return True
        return all(fn is not self._root_tensor.grad_fn for fn in _nodes(tensor.grad_fn))


# Pages are built one after another, each in a namespace of its own: the drawings on the page
# being built are kept with its namespace, so a graph that looks the same is drawn once a page.
_page: tuple[dict[str, Any], dict[str, DrawnAt]] | None = None


def _drawn_on_page(namespace: dict[str, Any]) -> dict[str, DrawnAt]:
    global _page
    if _page is None or _page[0] is not namespace:
        _page = (namespace, {})
    return _page[1]


def _dot(graph: Graph) -> str:
    # One node wide and compact: the whole graph fits beside the code on a desktop and under it
    # on a phone, drawn at one unit per pixel (its smallest text at 11 px). Ids: the walk back
    # highlights the node running and the edges it sends gradients along.
    return to_dot(graph, direction="backward", grads=True, column=True, compact=True, ids=True)


def _graph_changes(before: Graph | None, after: Graph, *, new: bool) -> Iterator[str]:
    if new or before is None:
        ops = ", ".join(node.label for node in after.nodes if node.kind == "op")
        yield f"new graph of {after.nodes[0].label}: {ops}"
        return
    ops_before = [node.label for node in before.nodes if node.kind == "op"]
    ops_after = [node.label for node in after.nodes if node.kind == "op"]
    added = ops_after[: len(ops_after) - len(ops_before)]  # the walk meets new nodes first
    if added:
        yield "recorded " + ", ".join(added)
    held = {(node.label, s.attr) for node in before.nodes for s in node.saved if not s.freed}
    freed = [
        f"{node.label}'s saved {saved.attr}"
        for node in after.nodes
        for saved in node.saved
        if saved.freed and (node.label, saved.attr) in held
    ]
    if freed:
        yield "freed " + ", ".join(freed)
    grads = {node.label: node.grad for node in before.nodes if node.kind == "leaf"}
    yield from (
        f"{node.label}.grad = {node.grad}"
        for node in after.nodes
        if node.kind == "leaf" and node.grad != grads.get(node.label)
    )


def _nodes(fn: Any) -> Iterator[Any]:
    """Every backward node reachable from `fn`, each once."""
    seen: set[int] = set()
    stack = [fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        stack.extend(next_fn for next_fn, _ in node.next_functions)


def _has_graph(value: object) -> bool:
    return isinstance(value, torch.Tensor) and value.grad_fn is not None


def _outermost(namespace: dict[str, Any]) -> str | None:
    """The last-defined tensor with a graph that no other named tensor's graph contains."""
    tensors = {name: value for name, value in _public(namespace) if _has_graph(value)}
    inner = {
        id(fn)
        for value in tensors.values()
        for fn in _nodes(value.grad_fn)
        if fn is not value.grad_fn
    }
    outer = [name for name, value in tensors.items() if id(value.grad_fn) not in inner]
    return outer[-1] if outer else None


def _public(namespace: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    return ((name, value) for name, value in namespace.items() if not name.startswith("_"))


def _variables(namespace: dict[str, Any]) -> Iterator[Variable]:
    """The program's values: modules, functions and classes are its tools, not its state."""
    for name, value in _public(namespace):
        if isinstance(value, types.ModuleType) or (
            callable(value) and not isinstance(value, torch.autograd.graph.Node)
        ):
            continue
        if isinstance(value, torch.Tensor):
            # A non-leaf's .grad stays None (and reading it warns) unless it retains its grad.
            grad = value.grad if value.is_leaf or value.retains_grad else None
            yield Variable(
                name,
                format_value(value),
                tensor=True,
                requires_grad=value.requires_grad,
                is_leaf=value.is_leaf,
                grad_fn=type(value.grad_fn).__name__ if value.grad_fn is not None else "None",
                grad="None" if grad is None else format_value(grad),
            )
        else:
            yield Variable(name, _describe(value))


def _describe(value: object) -> str:
    if isinstance(value, torch.autograd.graph.Node):
        return f"node {type(value).__name__}"  # as grad_fn names it
    if isinstance(value, tuple) and all(isinstance(item, torch.Tensor) for item in value):
        return "(" + ", ".join(format_value(item) for item in value) + ",)"
    if isinstance(value, float):
        return f"{value:.4f}"
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"
