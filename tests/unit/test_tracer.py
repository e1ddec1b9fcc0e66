"""The recorder behind the line-by-line player, run on the site's own snippets, and its HTML."""

from __future__ import annotations

import pickle
import re

import pytest
import torch

from autograd_traced.drawing.backward_pass import BackwardPass, NodeRun, Watch
from autograd_traced.drawing.player import TIMES, TRANSCRIPT, player_id, render_player
from autograd_traced.drawing.tracer import DrawnAt, Recorder, Step, Trace
from autograd_traced.running.snippets import Snippet, run_snippet
from tests.support.paths import ROOT

SETUP = "snippets/program/setup.pycon"


def trace(path: str, namespace: dict[str, object]) -> Trace:
    """Run one snippet in `namespace` through the same observer the build uses."""
    recorder = Recorder(player_id(path), title=path)
    recorder.start(namespace)
    snippet = Snippet.parse(path, (ROOT / path).read_text(encoding="utf-8"), page="test_tracer")
    run_snippet(
        snippet, namespace, page="test_tracer", observe=recorder.observe, watch=recorder.watch
    )
    return recorder.trace


def ops(step: Step) -> list[str]:
    assert step.graph is not None
    return [node.label for node in step.graph.nodes if node.kind == "op"]


def saved(step: Step) -> dict[tuple[str, str], tuple[str | None, bool]]:
    """(node, attr) -> (variable it holds, freed) for every saved value in the step's graph."""
    assert step.graph is not None
    return {(n.label, s.attr): (s.name, s.freed) for n in step.graph.nodes for s in n.saved}


@pytest.fixture
def namespace() -> dict[str, object]:
    return {"__name__": "__main__"}


@pytest.fixture
def after_setup(namespace: dict[str, object]) -> dict[str, object]:
    trace(SETUP, namespace)
    return namespace


def test_setup_graph_grows_line_by_line(namespace: dict[str, object]) -> None:
    steps = trace(SETUP, namespace).steps
    by_line = {step.source: step for step in steps}
    assert len(steps) == 12
    z = by_line["z = x1 * w1 + b"]
    assert (z.number, z.root, z.changed) == (8, "z", ("z",))
    assert ops(z) == ["AddBackward0", "MulBackward0"]  # no SigmoidBackward0 yet
    assert ops(by_line["a = torch.sigmoid(z)"]) == [
        "SigmoidBackward0",
        "AddBackward0",
        "MulBackward0",
    ]
    assert by_line["a = torch.sigmoid(z)"].graph_changes == ("recorded SigmoidBackward0",)
    assert all(step.graph is None for step in steps[:7])  # nothing recorded before z
    variable = z.variable("z")
    assert (variable.value, variable.requires_grad, variable.is_leaf, variable.grad_fn) == (
        "2.4200",
        True,
        False,
        "AddBackward0",
    )
    assert steps[3].variable("b").grad == "None"


def test_graph_is_drawn_only_where_it_changes(namespace: dict[str, object]) -> None:
    recorded = trace(SETUP, namespace)
    assert sorted(recorded.drawings) == [8, 9, 10]  # after z, a and loss
    drawn_at = [step.graph_at.line if step.graph_at else None for step in recorded.steps]
    assert drawn_at == [None] * 7 + [8, 9, 10, 10, 10]


def test_drawings_show_the_values_in_full(namespace: dict[str, object]) -> None:
    drawing = trace(SETUP, namespace).drawings[10]
    texts = re.findall(r"<text\b[^>]*>([^<]*)</text>", drawing)
    for label in ("loss = 0.0852", "saved result (a) = 0.9183", "saved self (x1) = 1.1000"):
        assert label in texts, label
    assert "SigmoidBackward0 saving result (a) = 0.9183" in drawing  # the aria-label
    assert 'viewBox="0 0 330 414"' in drawing  # geometry in whole points, compact (one screen)


def test_printed_output_is_recorded_per_line(namespace: dict[str, object]) -> None:
    steps = trace(SETUP, namespace).steps
    assert steps[10].output == "z = 2.4200   a = 0.9183   loss = 0.0852\n"
    assert steps[11].output.startswith("tensor(0.0852, grad_fn=<BinaryCrossEntropyBackward0>)")
    assert steps[9].output == ""


def test_grad_without_retain_graph_frees_its_path_then_the_second_request_raises(
    after_setup: dict[str, object],
) -> None:
    *_, built, first, second = trace(
        "snippets/computation_graphs/second_call_fails.pycon", after_setup
    ).steps
    assert built.graph_changes[0] == "recorded BinaryCrossEntropyBackward0"  # loss, afresh
    assert not any(freed for _, freed in saved(built).values())
    assert saved(first) == {
        ("BinaryCrossEntropyBackward0", "self"): (None, True),
        ("BinaryCrossEntropyBackward0", "target"): (None, True),
        ("SigmoidBackward0", "result"): (None, True),
        ("MulBackward0", "self"): ("x1", False),  # the walk to b never visits MulBackward0
    }
    assert first.graph_at is not None and first.graph_at.line == built.number + 1
    assert first.graph_changes[0].startswith("freed")
    assert (first.raised, second.raised) == (False, True)
    assert (
        second.output.rstrip()
        .splitlines()[-1]
        .startswith("RuntimeError: Trying to backward through the graph a second time")
    )
    assert second.graph_at == first.graph_at  # raising changed nothing in the graph


def test_grad_fills_no_grad_and_backward_fills_it(after_setup: dict[str, object]) -> None:
    phase1 = trace("snippets/computing_gradients/phase1_grad.pycon", after_setup)
    asked, _, printed = phase1.steps
    # Drawn once a page: the graph looks as the setup's player drew it after its line 10.
    assert asked.graph_at == DrawnAt("trace-setup-line-10", 10, SETUP) and not phase1.drawings
    assert asked.changed == ("grads",)
    assert asked.variable("grads").value == "(-0.0817,)"
    assert (printed.variable("b").grad, printed.variable("w1").grad) == ("None", "None")
    assert not any(freed for _, freed in saved(printed).values())  # retain_graph=True

    backward, _ = trace("snippets/computing_gradients/phase2_backward.pycon", after_setup).steps
    assert backward.variable("b").grad == "-0.0817"
    assert backward.variable("w1").grad == "-0.0898"
    assert set(backward.changed) == {"b", "w1"}
    assert "b.grad = -0.0817" in backward.graph_changes


def test_trace_holds_no_tensor(namespace: dict[str, object]) -> None:
    # The engine sends a page's output from a forked child to its parent: plain data only.
    assert b"_rebuild_tensor" not in pickle.dumps(trace(SETUP, namespace))


def test_player_is_an_ordered_list_of_steps_in_one_html_block(
    namespace: dict[str, object],
) -> None:
    recorded = trace(SETUP, namespace)
    html = render_player(recorded, player_id="trace-setup", title=SETUP)
    assert "\n\n" not in html and not re.search(r"^\s*$", html, re.MULTILINE)
    assert html.count('<li class="ag-tracer__step"') == 12
    assert re.findall(r'id="trace-setup-line-(\d+)"', html) == [str(n) for n in range(1, 13)]
    assert html.count("<svg") == len(recorded.drawings) == 3
    assert "Line 8 of 12. Changed: <code>z</code>." in html
    assert 'The graph is as after <a href="#trace-setup-line-10">line 10</a>.' in html


# The pitfalls page's players: what each one must let the reader see, line by line.
def test_a_second_walk_adds_to_grad_and_frees_nothing(after_setup: dict[str, object]) -> None:
    steps = trace("snippets/pitfalls/accumulate.pycon", after_setup).steps
    first, second = steps[3], steps[5]  # the two loss.backward(retain_graph=True)
    assert (first.variable("b").grad, second.variable("b").grad) == ("-0.0817", "-0.1633")
    assert "b.grad = -0.1633" in second.graph_changes
    assert not any(freed for _, freed in saved(second).values())


def test_backward_frees_the_saved_values_then_grad_raises(after_setup: dict[str, object]) -> None:
    steps = trace("snippets/pitfalls/backward_then_grad.pycon", after_setup).steps
    built, backward, asked, printed = steps[1:]
    assert not any(freed for _, freed in saved(built).values())
    assert all(freed for _, freed in saved(backward).values())
    assert backward.graph_changes[0].startswith("freed")
    assert backward.variable("b").grad == "-0.0817"
    assert asked.raised and "Trying to backward through the graph a second time" in asked.output
    assert asked.variable("b").grad == "-0.0817"  # what backward() wrote is still there
    assert "w1.grad = -0.0898" in printed.output


def test_detach_cuts_w1_out_of_the_graph(after_setup: dict[str, object]) -> None:
    steps = trace("snippets/pitfalls/lost_detach.pycon", after_setup).steps
    detached, rebuilt = steps[0], steps[1]
    value = detached.variable("w1_value")
    assert (value.value, value.requires_grad, value.grad_fn) == ("2.2000", False, "None")
    assert ops(rebuilt) == ["BinaryCrossEntropyBackward0", "SigmoidBackward0", "AddBackward0"]
    assert rebuilt.graph is not None
    assert "w1" not in [node.label for node in rebuilt.graph.nodes]
    assert [step.raised for step in steps[2:5]] == [True, False, True]  # allow_unused: (None,)
    backward, _ = steps[5:]
    assert not backward.raised and backward.variable("w1").grad == "None"  # silent
    assert backward.variable("b").grad == "-0.0817"


# What the player shows is the program, not the plumbing (issue 18).
def test_modules_and_functions_are_not_state_and_nodes_are_called_nodes(
    after_setup: dict[str, object],
) -> None:
    trace("snippets/computation_graphs/nodes.pycon", after_setup)
    recorded = trace("snippets/computation_graphs/second_call_fails.pycon", after_setup)
    held = {variable.name: variable.value for variable in recorded.start}
    assert not {"torch", "F", "grad", "made_inputs"} & held.keys()  # modules, functions
    assert held["bce"] == "node BinaryCrossEntropyBackward0"
    assert held["accumulate_b"] == "node AccumulateGrad"


def test_names_this_snippet_never_uses_are_marked_leftovers(
    after_setup: dict[str, object],
) -> None:
    recorded = trace("snippets/pitfalls/backward_then_grad.pycon", after_setup)
    html = render_player(recorded, player_id="trace-backward-then-grad", title="x/b.pycon")
    assert re.search(r'data-name="a" data-leftover>', html)  # a stale value, folded away
    assert re.search(r'data-name="loss">', html)  # the snippet rebinds it: shown


def test_after_a_raise_the_console_goes_on(after_setup: dict[str, object]) -> None:
    path = "snippets/pitfalls/lost_detach.pycon"
    html = render_player(trace(path, after_setup), player_id=player_id(path), title=path)
    assert "the program stops here" not in html
    assert html.count("the console shows the error and goes on with the next line") == 2


def test_a_leaf_a_line_rebound_keeps_its_former_name(after_setup: dict[str, object]) -> None:
    first = trace("snippets/pitfalls/accumulate.pycon", after_setup).steps[0]
    assert first.graph is not None  # the setup's loss, whose b is no longer `b`
    leaves = [node.label for node in first.graph.nodes if node.kind == "leaf"]
    assert leaves == ["old b", "w1"]


def test_the_player_is_named_by_its_snippet_and_holds_its_transcript(
    after_setup: dict[str, object],
) -> None:
    path = "snippets/computing_gradients/phase1_grad.pycon"
    html = render_player(trace(path, after_setup), player_id=player_id(path), title=path)
    assert 'aria-label="phase1_grad, line by line"' in html
    assert html.count(TRANSCRIPT) == 1  # where the fence shows the transcript, once
    # A graph drawn by the setup's player above: named, not by its path.
    assert "line 10 of setup, above</a>" in html
    assert "snippets/" not in html


# The walk back (issue 19): the nodes autograd ran during a line, recorded by its own hooks.
def walked(step: Step) -> BackwardPass:
    assert step.backward is not None, step.source
    return step.backward


def sent(run: NodeRun) -> list[tuple[str, str | None]]:
    return [(out.to, out.value) for out in run.sent]


def test_backward_runs_every_node_in_order_with_its_gradients(
    after_setup: dict[str, object],
) -> None:
    backward, printed = trace(
        "snippets/computing_gradients/phase2_backward.pycon", after_setup
    ).steps
    walk = walked(backward)
    assert [run.title for run in walk.runs] == [
        "BinaryCrossEntropyBackward0",
        "SigmoidBackward0",
        "AddBackward0",
        "AccumulateGrad (b)",  # autograd runs b's before the multiplication's branch
        "MulBackward0",
        "AccumulateGrad (w1)",
    ]
    bce, sigmoid, add, write_b, mul, write_w1 = walk.runs
    assert (bce.received, sent(bce)) == ("1.0000", [("SigmoidBackward0", "-1.0889"), ("y", None)])
    assert (bce.sent[0].factor, bce.sent[0].factor_value) == ("(a - y) / (a(1 - a))", "-1.0889")
    assert sent(sigmoid) == [("AddBackward0", "-0.0817")]
    assert (sigmoid.sent[0].factor, sigmoid.sent[0].factor_value) == ("a(1 - a)", "0.0750")
    assert sent(add) == [("MulBackward0", "-0.0817"), ("b", "-0.0817")]
    assert sent(mul) == [("x1", None), ("w1", "-0.0898")]
    assert (mul.sent[1].factor, mul.sent[1].factor_value) == ("x1", "1.1000")
    assert (write_b.grad_before, write_b.grad_after) == ("None", "-0.0817")
    assert (write_w1.leaf, write_w1.grad_after) == ("w1", "-0.0898")
    assert not walk.skipped and not any(run.error for run in walk.runs)
    # The drawing's ids: the graph as the setup drew it, loss n0, then walk order.
    assert [run.node for run in walk.runs] == ["n1", "n2", "n3", "n5", "n4", "n6"]
    assert backward.backward_at == DrawnAt("trace-setup-line-10", 10, SETUP)
    # What the page prints, line 2, is what the AccumulateGrad nodes wrote.
    assert printed.output == (f"w1.grad = {write_w1.grad_after}   b.grad = {write_b.grad_after}\n")
    assert printed.backward is None  # no node ran during the print


def test_each_node_frees_its_saved_values_as_it_finishes(after_setup: dict[str, object]) -> None:
    steps = trace("snippets/pitfalls/backward_then_grad.pycon", after_setup).steps
    freed = {run.title: run.freed for run in walked(steps[2]).runs}
    assert freed == {
        "BinaryCrossEntropyBackward0": (
            "saved self = 0.9183",  # a is not this loss's
            "saved target (y = 1.0000)",
        ),
        "SigmoidBackward0": ("saved result = 0.9183",),
        "AddBackward0": (),
        "AccumulateGrad (b)": (),
        "MulBackward0": ("saved self (x1 = 1.1000)",),
        "AccumulateGrad (w1)": (),
    }


def test_a_retained_graph_frees_nothing(after_setup: dict[str, object]) -> None:
    steps = trace("snippets/pitfalls/accumulate.pycon", after_setup).steps
    first, second = walked(steps[3]), walked(steps[5])
    assert not any(run.freed for run in (*first.runs, *second.runs))
    write_b = second.run("AccumulateGrad (b)")
    assert (write_b.received, write_b.grad_before, write_b.grad_after) == (
        "-0.0817",
        "-0.0817",
        "-0.1633",
    )


def test_grad_of_b_walks_only_what_b_needs_then_the_second_request_fails_at_the_first_node(
    after_setup: dict[str, object],
) -> None:
    steps = trace("snippets/computation_graphs/second_call_fails.pycon", after_setup).steps
    first, second = walked(steps[3]), walked(steps[4])
    assert [run.title for run in first.runs] == [
        "BinaryCrossEntropyBackward0",
        "SigmoidBackward0",
        "AddBackward0",
    ]
    assert sent(first.run("AddBackward0")) == [("MulBackward0", None), ("b", "-0.0817")]
    assert steps[3].output == f"(tensor({sent(first.run('AddBackward0'))[1][1]}),)\n"
    assert [(s.name, s.leaf, s.grad) for s in first.skipped] == [
        ("MulBackward0", "", "None"),
        ("AccumulateGrad", "b", "None"),  # grad() returns b's gradient, writes no .grad
        ("AccumulateGrad", "w1", "None"),
    ]
    assert first.run("SigmoidBackward0").freed == ("saved result (a = 0.9183)",)
    (failed,) = second.runs  # the loss's node reads its freed saved values and raises
    assert failed.name == "BinaryCrossEntropyBackward0" and not failed.sent
    assert failed.error.startswith("RuntimeError: Trying to backward through the graph a second")
    assert len(second.skipped) == 5
    assert failed.missing == ("saved self", "saved target")


def test_where_paths_meet_the_gradients_add_up(namespace: dict[str, object]) -> None:
    u = torch.tensor(3.0, requires_grad=True)
    namespace.update(u=u, s=u * u + u)  # u reaches s along three edges
    with Watch(namespace, namespace["s"]) as watch:
        namespace["s"].backward()  # type: ignore[attr-defined]
    write_u = BackwardPass(runs(watch), ()).run("AccumulateGrad (u)")
    assert write_u.arrived == (
        ("AddBackward0", "1.0000"),
        ("MulBackward0", "3.0000"),
        ("MulBackward0", "3.0000"),
    )
    assert (write_u.received, write_u.grad_after) == ("7.0000", "7.0000")


def test_the_hooks_are_taken_off_after_the_line(after_setup: dict[str, object]) -> None:
    loss = after_setup["loss"]
    assert isinstance(loss, torch.Tensor)
    with Watch(after_setup, loss) as watch:
        loss.backward(retain_graph=True)
    assert len(runs(watch)) == 6
    loss.backward()  # outside the watch: nothing of it runs any more
    assert len(runs(watch)) == 6


def runs(watch: Watch) -> tuple[NodeRun, ...]:
    walk = watch.result()
    assert walk is not None
    return walk.runs


def test_the_walk_reads_as_a_list_of_nodes_with_the_chain_rule_in_numbers(
    after_setup: dict[str, object],
) -> None:
    path = "snippets/computation_graphs/second_call_fails.pycon"
    html = render_player(trace(path, after_setup), player_id=player_id(path), title=path)
    assert "\n\n" not in html  # still one raw HTML block
    walks = re.findall(r'<section class="ag-tracer__walk" id="([\w-]+)"', html)
    assert walks == ["trace-second-call-fails-line-4-walk", "trace-second-call-fails-line-5-walk"]
    walk = html[html.index("<section") :]
    # The index reads each walk as its nodes in order (their numbers would weigh every page).
    assert (
        "<code>grad(loss, b)</code>, walks back through 3 nodes: BinaryCrossEntropyBackward0,"
        " SigmoidBackward0, AddBackward0.</p>\n"
        '<ol class="ag-tracer__nodes" data-search-exclude>'
    ) in walk
    assert '<a href="#trace-second-call-fails-line-4-node-1">' in html  # from the line's step
    # Highlighted in the graph the line walks (as its line 3 left it), by the drawing's ids.
    assert 'data-line="4" data-graph="trace-setup-line-10" data-skipped="n4 n5 n6"' in walk
    assert 'id="trace-second-call-fails-line-4-node-2" data-node="n2" data-edges="n2-n3"' in walk
    assert (
        f"<li>to <b>AddBackward0</b>: -1.0889 {TIMES} a(1 - a) = -1.0889 {TIMES} 0.0750 ="
        " -0.0817</li>"
    ) in walk
    assert "its <s>saved result (a = 0.9183)</s>" in walk
    assert "<li>to <b>MulBackward0</b>: None" in walk
    assert "(w1.grad stays None)" in walk
    failing = walk[walk.index('id="trace-second-call-fails-line-5-node-1"') :]
    assert "It needs its <s>saved self and saved target</s>" in failing
    assert (
        "It stops here: RuntimeError: Trying to backward through the graph a second time.<"
        in failing
    )
    assert "Not run, the call stopped before them" in failing


def test_a_leaf_written_twice_shows_the_sum(after_setup: dict[str, object]) -> None:
    path = "snippets/pitfalls/accumulate.pycon"
    html = render_player(trace(path, after_setup), player_id=player_id(path), title=path)
    assert ("It adds to <code>b.grad</code>: -0.0817 + -0.0817 = -0.1633.") in html
