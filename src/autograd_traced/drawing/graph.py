"""Walk the graph autograd recorded for a tensor and draw it as an inline, theme-aware SVG.

``walk`` follows ``grad_fn`` and ``next_functions`` from a root tensor (usually ``loss``) and
returns a small frozen ``Graph``. ``to_dot`` turns it into Graphviz DOT, and ``graph_svg``
renders that with ``svg.render_svg``, which makes the SVG fit to inline in either palette.

What counts as a saved value: a ``_saved_*`` attribute of a backward node whose value is a tensor
(or a tuple of tensors, listed as ``name[i]``). ``None`` entries (for example
``MulBackward0._saved_other`` when the other factor needs no gradient) and plain numbers or sizes
(``AddBackward0._saved_alpha``, ``SumBackward0._saved_self_sym_sizes``) are not tensors autograd
frees, so they are left out. Nodes of custom ``torch.autograd.Function`` classes keep their
tensors in ``ctx.saved_tensors`` instead and show no saved values.

Untracked tensors (``requires_grad=False``, such as ``x1`` and ``y``) are not nodes of the autograd
graph. They are found through the op nodes that saved them, so they are drawn only while those
saved values are still there: once freed, autograd no longer knows which tensor it had saved.
"""

from __future__ import annotations

import html
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import torch

from autograd_traced.drawing.svg import (
    FONT,
    FREED_COLOUR,
    REQUIRES_GRAD_COLOUR,
    SAVED_COLOUR,
    Draw,
    dot_svg,
    render_svg,
)

NodeKind = Literal["output", "op", "leaf", "input"]
EdgeKind = Literal["next", "saved"]
Direction = Literal["forward", "backward"]


# Substrings of the RuntimeErrors torch raises when a saved tensor is read: freed by a
# backward pass, or changed in place since it was saved (the next backward would raise).
_FREED_MESSAGE = "after they have already been freed"
_MODIFIED_MESSAGE = "has been modified by an inplace operation"
MODIFIED = "(changed in place)"  # what such an entry shows instead of a value


@dataclass(frozen=True)
class Saved:
    """One tensor a backward node kept for its gradient formula."""

    attr: str  # attribute name without the `_saved_` prefix, e.g. "result", "self"
    name: str | None  # variable in `names` holding the same tensor, e.g. "a"
    value: str | None  # formatted value; None when freed
    freed: bool = False


@dataclass(frozen=True)
class Node:
    id: str  # n0, n1, ... in walk order
    kind: NodeKind
    label: str  # op name ("SigmoidBackward0") or variable name ("w1", "loss")
    value: str | None = None  # formatted tensor value for output, leaf and input nodes
    saved: tuple[Saved, ...] = ()
    grad: str | None = None  # a leaf's formatted .grad; None while it has none


@dataclass(frozen=True)
class Edge:
    """An edge in the direction autograd walks: from the loss side towards the leaves."""

    source: str
    target: str
    kind: EdgeKind  # "next": a next_functions entry; "saved": an op saved this untracked input


@dataclass(frozen=True)
class Graph:
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]

    def node(self, label: str) -> Node:
        """The first node with this label (walk order)."""
        for node in self.nodes:
            if node.label == label:
                return node
        raise KeyError(label)

    def labelled_edges(self) -> list[tuple[str, str, EdgeKind]]:
        """Edges as (source label, target label, kind), in walk order."""
        labels = {node.id: node.label for node in self.nodes}
        return [(labels[e.source], labels[e.target], e.kind) for e in self.edges]


def describe(graph: Graph) -> str:
    """The graph in words, for readers who cannot see the picture (the SVG's alt text)."""

    def saved(node: Node) -> str:
        parts = [
            f"{entry.attr} (freed)"
            if entry.freed
            else f"{entry.attr}{f' ({entry.name})' if entry.name else ''} = {entry.value}"
            for entry in node.saved
        ]
        return f" saving {', '.join(parts)}" if parts else ""

    by_kind = {kind: [n for n in graph.nodes if n.kind == kind] for kind in ("output", "op")}
    leaves = [f"{n.label} = {n.value}" for n in graph.nodes if n.kind == "leaf"]
    inputs = [f"{n.label} = {n.value}" for n in graph.nodes if n.kind == "input"]
    sentences = [
        f"Walking back from {n.label} = {n.value}: "
        + "; ".join(f"{op.label}{saved(op)}" for op in by_kind["op"])
        for n in by_kind["output"]
    ]
    if leaves:
        sentences.append("Leaves with requires_grad=True: " + ", ".join(leaves))
    if inputs:
        sentences.append("Untracked inputs, saved but collecting no gradient: " + ", ".join(inputs))
    return ". ".join(sentences) + "."


def format_value(tensor: torch.Tensor) -> str:
    """Scalars as `1.1000`; up to four elements as a list; larger tensors by shape."""
    t = tensor.detach()
    if t.dim() == 0:
        return _format_number(t.item())
    if t.numel() <= 4:
        return "[" + ", ".join(_format_number(v) for v in t.flatten().tolist()) + "]"
    return f"tensor of shape {tuple(t.shape)}"


def _format_number(value: float | int | bool) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def tensor_names(names: Mapping[str, object]) -> list[tuple[str, torch.Tensor]]:
    """Tensors in `names`, public names first: `_` may hold the last result in a REPL."""
    tensors = [(k, v) for k, v in names.items() if isinstance(v, torch.Tensor)]
    return sorted(tensors, key=lambda item: item[0].startswith("_"))


def name_of(tensor: torch.Tensor, named: list[tuple[str, torch.Tensor]]) -> str | None:
    """Identity first; then same memory, shape and dtype, because unpacking a saved tensor can
    give a new Python object (e.g. SigmoidBackward0's result is `a` but not `a` itself)."""
    for name, value in named:
        if value is tensor:
            return name
    for name, value in named:
        if (
            value.data_ptr() == tensor.data_ptr()
            and value.data_ptr() != 0
            and value.shape == tensor.shape
            and value.stride() == tensor.stride()
            and value.dtype == tensor.dtype
        ):
            return name
    return None


def saved_tensors(fn: Any) -> Iterator[tuple[str, torch.Tensor | str | None]]:
    """(attr, tensor) for each saved tensor of `fn`; tensor is None when it was freed, and
    MODIFIED when it was changed in place after it was saved."""
    for attr in sorted(a for a in dir(fn) if a.startswith("_saved_")):
        short = attr.removeprefix("_saved_")
        try:
            value = getattr(fn, attr)
        except RuntimeError as error:
            if _MODIFIED_MESSAGE in str(error):
                yield short, MODIFIED
                continue
            if _FREED_MESSAGE not in str(error):
                raise
            yield short, None
            continue
        if isinstance(value, torch.Tensor):
            yield short, value
        elif isinstance(value, tuple | list):
            for i, item in enumerate(value):
                if isinstance(item, torch.Tensor):
                    yield f"{short}[{i}]", item


def backward_order(root_fn: Any) -> list[Any]:
    """Every backward node reachable from `root_fn`, each once, breadth first in
    next_functions order: the order `walk` numbers them in (n1, n2, ...)."""
    order: list[Any] = []
    seen: set[int] = set()
    queue: deque[Any] = deque([root_fn])
    while queue:
        fn = queue.popleft()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        order.append(fn)
        queue.extend(next_fn for next_fn, _ in fn.next_functions if next_fn is not None)
    return order


def node_label(fn: Any, named: list[tuple[str, torch.Tensor]]) -> str:
    """An op node by its name, a leaf's AccumulateGrad by the variable holding the leaf."""
    variable = getattr(fn, "variable", None)
    if isinstance(variable, torch.Tensor):
        return name_of(variable, named) or "leaf"
    return str(fn.name())


def walk(root: torch.Tensor, names: Mapping[str, object]) -> Graph:
    """Breadth-first walk from `root.grad_fn`, each backward node once, in next_functions order.

    `names` is the namespace the program ran in; tensors are labelled by the variable holding
    them. Ids: n0 is the root tensor, then the backward nodes in walk order, then the untracked
    inputs in the order they were found.
    """
    named = tensor_names(names)
    output = Node("n0", "output", name_of(root, named) or "output", format_value(root))
    if root.grad_fn is None:
        return Graph((output,), ())

    # Keyed by id() only while walking: the ids we emit are walk positions.
    order = backward_order(root.grad_fn)
    fn_ids = {id(fn): f"n{i + 1}" for i, fn in enumerate(order)}
    nodes: list[Node] = [output]
    inputs: list[Node] = []
    input_ids: dict[object, str] = {}
    edges: list[Edge] = [Edge("n0", fn_ids[id(root.grad_fn)], "next")]
    for fn in order:
        node_id = fn_ids[id(fn)]
        variable = getattr(fn, "variable", None)
        if isinstance(variable, torch.Tensor):  # AccumulateGrad: stands for the leaf it feeds
            label = node_label(fn, named)
            grad = None if variable.grad is None else format_value(variable.grad)
            nodes.append(Node(node_id, "leaf", label, format_value(variable), grad=grad))
        else:
            saved, saved_inputs = _describe_saved(fn, named)
            nodes.append(Node(node_id, "op", fn.name(), saved=saved))
            for key, label, value in saved_inputs:
                if key not in input_ids:
                    input_ids[key] = f"n{len(order) + 1 + len(inputs)}"
                    inputs.append(Node(input_ids[key], "input", label, value))
                edges.append(Edge(node_id, input_ids[key], "saved"))
        # None stands for an input that needs no gradient: autograd has no node for it.
        edges.extend(
            Edge(node_id, fn_ids[id(next_fn)], "next")
            for next_fn, _ in fn.next_functions
            if next_fn is not None
        )
    return Graph((*nodes, *inputs), tuple(edges))


def _describe_saved(
    fn: Any, named: list[tuple[str, torch.Tensor]]
) -> tuple[tuple[Saved, ...], list[tuple[object, str, str]]]:
    """Saved entries of an op node, plus (key, label, value) for each untracked input it saved."""
    saved: list[Saved] = []
    inputs: list[tuple[object, str, str]] = []
    for attr, tensor in saved_tensors(fn):
        if tensor is None:
            saved.append(Saved(attr, None, None, freed=True))
            continue
        if isinstance(tensor, str):  # changed in place: torch refuses to unpack it
            saved.append(Saved(attr, None, tensor))
            continue
        name = name_of(tensor, named)
        value = format_value(tensor)
        saved.append(Saved(attr, name, value))
        if not tensor.requires_grad:
            key: object = name or (tensor.data_ptr(), tuple(tensor.shape), tensor.dtype)
            inputs.append((key, name or "input", value))
    return tuple(saved), inputs


# --- DOT ---------------------------------------------------------------------------------------


def _dot_header(*, compact: bool) -> str:
    # Compact: ranks and node padding tight, the whole graph on a phone's screen beside its code.
    ranks, margin, pad = ("0.1", "0.18,0.04", "0.05") if compact else ("0.5", "0.22,0.1", "0.15")
    return f"""\
  graph [fontname="{FONT}", nodesep=0.45, ranksep={ranks}, pad={pad}];
  node [fontname="{FONT}", fontsize=13, shape=box, style=rounded, margin="{margin}"];
  edge [fontname="{FONT}", fontsize=11, arrowsize=0.8];"""


def _html(text: object) -> str:
    # Everything in a label is escaped: a value's text could otherwise close the label and
    # add DOT attributes (URL="javascript:...") to the drawing.
    return html.escape(str(text), quote=True)


def _line(body: str, colour: str, *, size: int = 11) -> str:
    """A smaller, coloured line under a node's title; `body` is already HTML-escaped."""
    return f'<BR/><FONT POINT-SIZE="{size}" COLOR="{colour}">{body}</FONT>'


def _saved_line(entry: Saved) -> str:
    if entry.freed:
        # Strike the entry, not the word "freed", which has to stay readable.
        return _line(f"<S>saved {_html(entry.attr)}</S>: freed", FREED_COLOUR)
    who = f" ({entry.name})" if entry.name else ""
    return _line(_html(f"saved {entry.attr}{who} = {entry.value}"), SAVED_COLOUR)


def _node_dot(node: Node, *, grads: bool, ids: bool) -> str:
    if node.kind == "op":
        label = f"<B>{_html(node.label)}</B>" + "".join(_saved_line(s) for s in node.saved)
        attrs = 'class="ag-op"'
    elif node.kind == "leaf":
        label = f"<B>{_html(node.label)} = {_html(node.value)}</B>"
        label += _line("requires_grad=True", REQUIRES_GRAD_COLOUR, size=12)
        if grads:
            label += _line(_html(f".grad = {node.grad}"), REQUIRES_GRAD_COLOUR, size=12)
        attrs = 'class="ag-leaf", style="rounded,bold", penwidth=2'
    elif node.kind == "input":
        label = f"{_html(node.label)} = {_html(node.value)}"
        label += _line("requires_grad=False", SAVED_COLOUR, size=12)
        attrs = 'class="ag-input", style="rounded,dashed"'
    else:
        label = f"<B>{_html(node.label)} = {_html(node.value)}</B>"
        attrs = 'class="ag-output", shape=oval, penwidth=2'
    if ids:  # the player finds a node by it (Graphviz keeps classes, ids are dropped)
        attrs = attrs.replace('class="ag-', f'class="{node.id} ag-', 1)
    return f"  {node.id} [{attrs}, label=<{label}>];"


def to_dot(
    graph: Graph,
    *,
    direction: Direction = "backward",
    grads: bool = False,
    column: bool = False,
    compact: bool = False,
    ids: bool = False,
) -> str:
    """DOT source; the loss is on top either way.

    backward: arrows from the loss down to the leaves, the order autograd walks the graph.
    forward: arrows from leaves and inputs up to the loss, the way the values flowed.
    `grads` adds each leaf's `.grad`; `column` puts every node on a rank of its own, in walk
    order, so the drawing is one node wide and stays legible when scaled to a phone's width;
    `compact` packs ranks and nodes tighter; `ids` names each node and each edge in its
    classes (`n2`, `n2-n3`), for a script that highlights them.
    """
    if direction not in ("forward", "backward"):
        raise ValueError(f"direction must be 'forward' or 'backward', not {direction!r}")
    forward = direction == "forward"
    lines = [
        "digraph autograd {",
        f"  rankdir={'BT' if forward else 'TB'};",
        _dot_header(compact=compact),
        *(_node_dot(node, grads=grads, ids=ids) for node in graph.nodes),
    ]
    if column and len(graph.nodes) > 1:
        ids = [node.id for node in graph.nodes]
        chain = " -> ".join(reversed(ids) if forward else ids)  # edges point up when forward
        lines.append(f"  {chain} [style=invis, weight=100];")
    for edge in graph.edges:
        source, target = (edge.target, edge.source) if forward else (edge.source, edge.target)
        if edge.kind == "next":
            named = f"{edge.source}-{edge.target} " if ids else ""
            lines.append(f'  {source} -> {target} [class="{named}ag-next"];')
        else:
            # No arrowhead going backward: no gradient flows into an untracked input.
            tail = "" if forward else ", arrowhead=none"
            lines.append(f'  {source} -> {target} [class="ag-saved", style=dashed{tail}];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def graph_svg(
    root: torch.Tensor,
    names: Mapping[str, object],
    *,
    alt: str,
    direction: Direction = "backward",
    draw: Draw = dot_svg,
) -> str:
    """walk + to_dot + render_svg; `alt` is followed by the graph described in words."""
    graph = walk(root, names)
    dot = to_dot(graph, direction=direction)
    return render_svg(dot, alt=f"{alt}. {describe(graph)}", draw=draw)
