"""The autograd graph walker, its DOT output and the SVG post-processing."""

from __future__ import annotations

import re

import pytest
import torch
from torch.autograd import grad

from autograd_traced.drawing import graph as graph_module
from autograd_traced.drawing import svg as svg_module
from autograd_traced.drawing.graph import (
    FONT,
    Graph,
    Saved,
    describe,
    format_value,
    graph_svg,
    to_dot,
    walk,
)
from autograd_traced.drawing.svg import render_svg
from tests.support.hostile_drawings import HOSTILE_SVG, hostile_graph

# The site's example program, up to the point where gradients are requested.
ARTICLE_PROGRAM = """\
import torch
import torch.nn.functional as F
b = torch.tensor(0.0, requires_grad=True)
w1 = torch.tensor(2.2, requires_grad=True)
x1 = torch.tensor(1.1)
y = torch.tensor(1.0)
z = x1 * w1 + b
a = torch.sigmoid(z)
loss = F.binary_cross_entropy(a, y)
"""

FREED = "after they have already been freed"


@pytest.fixture
def ns() -> dict[str, object]:
    namespace: dict[str, object] = {}
    exec(ARTICLE_PROGRAM, namespace)
    return namespace


def loss_of(ns: dict[str, object]) -> torch.Tensor:
    loss = ns["loss"]
    assert isinstance(loss, torch.Tensor)
    return loss


def saved_by_label(g: Graph) -> dict[str, tuple[Saved, ...]]:
    return {n.label: n.saved for n in g.nodes if n.kind == "op"}


# --- walk: the article's program ---------------------------------------------------------------


def test_article_nodes(ns: dict[str, object]) -> None:
    g = walk(loss_of(ns), ns)
    assert [(n.id, n.kind, n.label, n.value) for n in g.nodes] == [
        ("n0", "output", "loss", "0.0852"),
        ("n1", "op", "BinaryCrossEntropyBackward0", None),
        ("n2", "op", "SigmoidBackward0", None),
        ("n3", "op", "AddBackward0", None),
        ("n4", "op", "MulBackward0", None),
        ("n5", "leaf", "b", "0.0000"),
        ("n6", "leaf", "w1", "2.2000"),
        ("n7", "input", "y", "1.0000"),
        ("n8", "input", "x1", "1.1000"),
    ]


def test_article_edges(ns: dict[str, object]) -> None:
    assert walk(loss_of(ns), ns).labelled_edges() == [
        ("loss", "BinaryCrossEntropyBackward0", "next"),
        ("BinaryCrossEntropyBackward0", "y", "saved"),
        ("BinaryCrossEntropyBackward0", "SigmoidBackward0", "next"),
        ("SigmoidBackward0", "AddBackward0", "next"),
        ("AddBackward0", "MulBackward0", "next"),
        ("AddBackward0", "b", "next"),
        ("MulBackward0", "x1", "saved"),
        ("MulBackward0", "w1", "next"),
    ]


def test_article_saved_values(ns: dict[str, object]) -> None:
    # MulBackward0 saves no `other` (w1): the gradient for x1 is not needed. AddBackward0's
    # alpha and BCE's reduction are numbers, BCE's weight is None: none of them is listed.
    assert saved_by_label(walk(loss_of(ns), ns)) == {
        "BinaryCrossEntropyBackward0": (
            Saved("self", "a", "0.9183"),
            Saved("target", "y", "1.0000"),
        ),
        "SigmoidBackward0": (Saved("result", "a", "0.9183"),),
        "AddBackward0": (),
        "MulBackward0": (Saved("self", "x1", "1.1000"),),
    }


def test_walk_is_repeatable(ns: dict[str, object]) -> None:
    assert walk(loss_of(ns), ns) == walk(loss_of(ns), ns)


def test_unnamed_tensors_get_generic_labels(ns: dict[str, object]) -> None:
    g = walk(loss_of(ns), {})
    assert [n.label for n in g.nodes if n.kind != "op"] == [
        "output",
        "leaf",
        "leaf",
        "input",
        "input",
    ]
    assert g.node("SigmoidBackward0").saved == (Saved("result", None, "0.9183"),)


def test_public_name_wins_over_underscore(ns: dict[str, object]) -> None:
    g = walk(loss_of(ns), {"_": ns["a"], **ns})
    assert g.node("SigmoidBackward0").saved == (Saved("result", "a", "0.9183"),)


# --- freed saved values ------------------------------------------------------------------------


def test_grad_without_retain_frees_the_nodes_it_ran(ns: dict[str, object]) -> None:
    grad(loss_of(ns), ns["b"])
    g = walk(loss_of(ns), ns)
    saved = saved_by_label(g)
    assert saved["BinaryCrossEntropyBackward0"] == (
        Saved("self", None, None, freed=True),
        Saved("target", None, None, freed=True),
    )
    assert saved["SigmoidBackward0"] == (Saved("result", None, None, freed=True),)
    # The gradient for b never needs MulBackward0, so the engine neither runs nor frees it.
    assert saved["MulBackward0"] == (Saved("self", "x1", "1.1000"),)
    # y is known only through BCE's saved target, which is gone.
    assert [n.label for n in g.nodes if n.kind == "input"] == ["x1"]


@pytest.mark.parametrize("request_gradient", ["backward", "grad_w1"])
def test_full_backward_frees_every_saved_value(
    ns: dict[str, object], request_gradient: str
) -> None:
    loss = loss_of(ns)
    if request_gradient == "backward":
        loss.backward()
    else:
        grad(loss, ns["w1"])
    g = walk(loss, ns)
    entries = [s for n in g.nodes for s in n.saved]
    assert [s.attr for s in entries] == ["self", "target", "result", "self"]
    assert all(s.freed and s.value is None and s.name is None for s in entries)
    assert [n.kind for n in g.nodes].count("input") == 0
    assert [n.label for n in g.nodes if n.kind == "leaf"] == ["b", "w1"]


def test_retain_graph_keeps_saved_values(ns: dict[str, object]) -> None:
    before = walk(loss_of(ns), ns)
    grad(loss_of(ns), ns["b"], retain_graph=True)
    assert walk(loss_of(ns), ns) == before
    loss_of(ns).backward()  # the second request works because the graph was kept


def test_second_request_raises_the_freed_error(ns: dict[str, object]) -> None:
    grad(loss_of(ns), ns["b"])
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        loss_of(ns).backward()
    with pytest.raises(RuntimeError, match=FREED):
        _ = loss_of(ns).grad_fn._saved_self  # type: ignore[union-attr]


# --- other graphs ------------------------------------------------------------------------------


def test_product_sum_graph() -> None:
    x = torch.tensor([1.0, 2.0])
    w = torch.tensor([0.5, -1.0], requires_grad=True)
    out = (x * w).sum()
    g = walk(out, {"x": x, "w": w, "out": out})
    assert [(n.kind, n.label, n.value) for n in g.nodes] == [
        ("output", "out", "-1.5000"),
        ("op", "SumBackward0", None),
        ("op", "MulBackward0", None),
        ("leaf", "w", "[0.5000, -1.0000]"),
        ("input", "x", "[1.0000, 2.0000]"),
    ]
    assert g.labelled_edges() == [
        ("out", "SumBackward0", "next"),
        ("SumBackward0", "MulBackward0", "next"),
        ("MulBackward0", "x", "saved"),
        ("MulBackward0", "w", "next"),
    ]
    # SumBackward0 keeps only the input's sizes, not a tensor.
    assert g.node("SumBackward0").saved == ()


def test_two_layer_graph_with_a_reused_leaf() -> None:
    x = torch.tensor(3.0)
    w = torch.tensor(0.5, requires_grad=True)
    h = torch.tanh(x * w)
    out = h * w
    g = walk(out, {"x": x, "w": w, "h": h, "out": out})
    assert [n.label for n in g.nodes] == [
        "out",
        "MulBackward0",
        "TanhBackward0",
        "w",
        "MulBackward0",
        "x",
    ]
    assert g.labelled_edges() == [
        ("out", "MulBackward0", "next"),
        ("MulBackward0", "TanhBackward0", "next"),
        ("MulBackward0", "w", "next"),
        ("TanhBackward0", "MulBackward0", "next"),
        ("MulBackward0", "x", "saved"),
        ("MulBackward0", "w", "next"),
    ]
    # w is one node, reached twice: its gradient is accumulated from both uses.
    assert [n.kind for n in g.nodes].count("leaf") == 1
    assert g.node("TanhBackward0").saved == (Saved("result", "h", "0.9051"),)
    outer = g.nodes[1]
    assert outer.saved == (Saved("other", "w", "0.5000"), Saved("self", "h", "0.9051"))


def test_tuple_of_saved_tensors_is_listed_by_index() -> None:
    a = torch.arange(4.0, requires_grad=True)
    index = torch.tensor([0, 2])
    out = a[index].sum()
    g = walk(out, {"a": a, "index": index, "out": out})
    assert g.node("IndexBackward0").saved == (Saved("indices[0]", "index", "[0, 2]"),)
    assert g.node("index").kind == "input"


def test_graph_that_saves_nothing() -> None:
    x = torch.tensor(1.0)
    b = torch.tensor(0.5, requires_grad=True)
    out = (x + b).sum()
    g = walk(out, {"x": x, "b": b, "out": out})
    assert [(n.kind, n.label) for n in g.nodes] == [
        ("output", "out"),
        ("op", "SumBackward0"),
        ("op", "AddBackward0"),
        ("leaf", "b"),
    ]
    assert all(n.saved == () for n in g.nodes)
    for direction in ("backward", "forward"):
        dot = to_dot(g, direction=direction)
        assert "saved" not in dot


def test_root_without_grad_fn() -> None:
    t = torch.tensor(2.0)
    assert walk(t, {"t": t}) == Graph((graph_module.Node("n0", "output", "t", "2.0000"),), ())


@pytest.mark.parametrize(
    ("tensor", "text"),
    [
        (torch.tensor(1.1), "1.1000"),
        (torch.tensor(3), "3"),
        (torch.tensor([1.0, 2.0]), "[1.0000, 2.0000]"),
        (torch.zeros(2, 3), "tensor of shape (2, 3)"),
    ],
)
def test_format_value(tensor: torch.Tensor, text: str) -> None:
    assert format_value(tensor) == text


# --- DOT ---------------------------------------------------------------------------------------


def test_dot_backward_labels_and_arrows(ns: dict[str, object]) -> None:
    dot = to_dot(walk(loss_of(ns), ns), direction="backward")
    assert "rankdir=TB" in dot
    assert f'fontname="{FONT}"' in dot
    assert "n0 -> n1 [" in dot
    assert "n3 -> n5 [" in dot  # AddBackward0 -> AccumulateGrad(b)
    assert "n4 -> n8 [" in dot and "arrowhead=none" in dot  # MulBackward0 saved x1
    for text in (
        "<B>SigmoidBackward0</B>",
        "saved result (a) = 0.9183",
        "saved self (x1) = 1.1000",
        "saved target (y) = 1.0000",
        "<B>w1 = 2.2000</B>",
        "requires_grad=True",
        "x1 = 1.1000",
        "requires_grad=False",
        "<B>loss = 0.0852</B>",
    ):
        assert text in dot


def test_dot_forward_reverses_arrows(ns: dict[str, object]) -> None:
    g = walk(loss_of(ns), ns)
    backward = re.findall(r"(n\d+) -> (n\d+)", to_dot(g, direction="backward"))
    forward = re.findall(r"(n\d+) -> (n\d+)", to_dot(g, direction="forward"))
    assert forward == [(t, s) for s, t in backward]
    assert "rankdir=BT" in to_dot(g, direction="forward")


def test_dot_marks_freed_values(ns: dict[str, object]) -> None:
    loss_of(ns).backward()
    dot = to_dot(walk(loss_of(ns), ns))
    assert "<S>saved result</S>: freed" in dot
    assert "= 0.9183" not in dot.split("loss = ")[1]


def test_dot_shows_leaf_grads_only_when_asked(ns: dict[str, object]) -> None:
    before = to_dot(walk(loss_of(ns), ns), grads=True)
    assert before.count(".grad = None") == 2  # b and w1
    loss_of(ns).backward()
    g = walk(loss_of(ns), ns)
    assert (g.node("b").grad, g.node("w1").grad) == ("-0.0817", "-0.0898")
    assert ".grad = -0.0817" in to_dot(g, grads=True)
    assert ".grad" not in to_dot(g)  # the article's diagrams are unchanged


def test_dot_column_puts_each_node_on_its_own_rank(ns: dict[str, object]) -> None:
    g = walk(loss_of(ns), ns)
    ids = " -> ".join(node.id for node in g.nodes)
    assert f"  {ids} [style=invis, weight=100];" in to_dot(g, column=True)
    assert "style=invis" not in to_dot(g)
    forward = to_dot(g, direction="forward", column=True)
    assert " -> ".join(node.id for node in reversed(g.nodes)) + " [style=invis" in forward


def test_dot_rejects_unknown_direction(ns: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="direction"):
        to_dot(walk(loss_of(ns), ns), direction="sideways")  # type: ignore[arg-type]


# --- SVG ---------------------------------------------------------------------------------------


def test_render_svg_is_inline_ready(ns: dict[str, object]) -> None:
    alt = 'The graph of loss: "a" < b & c'
    svg = render_svg(to_dot(walk(loss_of(ns), ns)), alt=alt)
    assert svg.startswith("<svg ")
    assert svg.endswith("</svg>")
    assert 'role="img"' in svg
    assert 'aria-label="The graph of loss: &quot;a&quot; &lt; b &amp; c"' in svg
    assert "<title>" not in svg  # the alt text is exposed once: screen readers, search index
    for unwanted in ("<?xml", "<!DOCTYPE", "<!--", "graphviz", "&#45;", 'fill="white"', "black"):
        assert unwanted not in svg
    assert not re.search(r'(width|height)="[\d.]+pt"', svg)
    assert re.search(r'viewBox="[\d. ]+" style="width: \d+px; max-width: 100%; height: auto"', svg)
    assert "\n\n" not in svg
    assert not re.findall(r'(?:fill|stroke)="#', svg)  # colours come from CSS classes


def test_render_svg_classes(ns: dict[str, object]) -> None:
    svg = render_svg(to_dot(walk(loss_of(ns), ns)), alt="graph")
    for css_class in (
        "ag-diagram",
        "node ag-output",
        "node ag-op",
        "node ag-leaf",
        "node ag-input",
        "edge ag-next",
        "edge ag-saved",
        'class="ag-saved-value"',
        'class="ag-requires-grad"',
    ):
        assert css_class in svg
    loss_of(ns).backward()
    freed = render_svg(to_dot(walk(loss_of(ns), ns)), alt="graph")
    assert 'class="ag-freed"' in freed
    assert 'text-decoration="line-through"' in freed


def test_render_svg_leaves_no_ids_and_whole_point_geometry(ns: dict[str, object]) -> None:
    # Several diagrams share a page: no id can clash, and nothing refers to one.
    svg = render_svg(to_dot(walk(loss_of(ns), ns)), alt="graph")
    assert not re.search(r"\sid=", svg)
    assert not re.search(r'\s(?:points|d|x|y|transform)="[^"]*\d\.\d', svg)
    assert 'font-family="DejaVu Sans' not in svg and 'stroke="currentColor"' not in svg


def test_graph_svg_directions(ns: dict[str, object]) -> None:
    backward = graph_svg(loss_of(ns), ns, alt="backward")
    forward = graph_svg(loss_of(ns), ns, alt="forward", direction="forward")
    assert backward != forward.replace("forward", "backward")


def test_missing_dot_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(svg_module.shutil, "which", lambda *args, **kwargs: None)
    with pytest.raises(RuntimeError, match="apt-get install graphviz"):
        render_svg("digraph { a }", alt="a")


def test_dot_errors_are_reported() -> None:
    with pytest.raises(RuntimeError, match="dot failed"):
        render_svg("digraph { a [label=<<B>x</I>>] }", alt="broken")


def test_describe_reads_the_graph_for_screen_readers(ns: dict[str, object]) -> None:
    text = describe(walk(loss_of(ns), ns))
    assert text.startswith("Walking back from loss = 0.0852: BinaryCrossEntropyBackward0 saving")
    assert "SigmoidBackward0 saving result (a) = 0.9183" in text
    assert "Leaves with requires_grad=True: b = 0.0000, w1 = 2.2000" in text
    assert "x1 = 1.1000" in text


# --- hostile values and drawings -------------------------------------------------------------


def test_a_values_text_cannot_add_markup_to_the_graph() -> None:
    loss, names = hostile_graph()
    assert 'URL="javascript' not in to_dot(walk(loss, names))  # its text stays in its label
    svg = graph_svg(loss, names, alt="hostile")
    assert "<a" not in svg and "href" not in svg
    assert "URL=&quot;javascript:alert(1)&quot;" in svg  # shown as text, escaped


def test_every_inlined_drawing_is_inert() -> None:
    assert svg_module.inert(HOSTILE_SVG) == "<svg><text>kept</text></svg>"
