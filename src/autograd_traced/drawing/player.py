"""A trace as HTML: the snippet's transcript and an ordered list of steps, which
docs/javascripts/tracer.js makes a player.

The transcript is shown once: the fence puts the highlighted block (its copy button, its outputs)
where `TRANSCRIPT` stands, and the script marks the current line in it. Without JavaScript (and
in the search index) the trace reads as a sequence of steps: each line, what it changed, what it
printed, and the graph where it changed. The script adds the controls and shows one step at a
time: the line, what it changed (every variable one click away) and the graph
(docs/stylesheets/tracer.css lays it out on one screen). The markup has no blank line, so
Markdown keeps it as one raw HTML block.
"""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the tracer imports torch; a build without execution must not
    from autograd_traced.drawing.backward_pass import NodeRun, Sent
    from autograd_traced.drawing.tracer import Step, Trace, Variable


# Where the fence puts the highlighted transcript inside the player.
TRANSCRIPT = "<!-- ag-transcript -->"
_NAME = re.compile(r"[A-Za-z_]\w*")
TIMES = "\N{MULTIPLICATION SIGN}"  # the chain rule's product, as the prose writes it


def player_id(path: str) -> str:
    """`trace-setup` for snippets/program/setup.pycon: a step's link reads `#trace-setup-line-8`."""
    return "trace-" + PurePosixPath(path).stem.replace("_", "-")


def snippet_name(path: str) -> str:
    """What a reader calls a snippet: `second_call_fails`, not its path."""
    return PurePosixPath(path).stem


def render_player(trace: Trace, *, player_id: str, title: str) -> str:
    count, name = len(trace.steps), escape(snippet_name(title))
    return "\n".join(
        [
            f'<div class="ag-tracer" id="{player_id}" role="region"'
            f' aria-label="{name}, line by line" data-lines="{count}">',
            f'<p class="ag-tracer__intro">Step through <code>{name}</code> line by line: after'
            f" each of its {count} lines, what changed, what it printed and the autograd"
            " graph.</p>",
            TRANSCRIPT,
            *_start(trace),
            # The steps are the player's data, kept from the index whole (previews stay prose).
            '<ol class="ag-tracer__steps" data-search-exclude>',
            *(_step(step, trace, player_id, count) for step in trace.steps),
            "</ol>",
            *(_walk(step, player_id) for step in trace.steps if step.backward is not None),
            "</div>",
        ]
    )


def _step(step: Step, trace: Trace, player_id: str, count: int) -> str:
    classes = "ag-tracer__step is-error" if step.raised else "ag-tracer__step"
    parts = [
        f'<li class="{classes}" id="{player_id}-line-{step.number}"'
        f' data-graph="{step.graph_at.anchor if step.graph_at else ""}">',
        f'<div class="ag-tracer__code"><code>{_pre(step.source)}</code></div>',
        '<div class="ag-tracer__state">',
        f'<p class="ag-tracer__summary">Line {step.number} of {count}. {_summary(step)}</p>',
        '<ul class="ag-tracer__vars">',
        *(_variable(v, changed=True) for v in step.variables if v.name in step.changed),
        *(
            f'<li class="ag-tracer__var is-changed is-removed" data-name="{escape(name)}">'
            f'<code class="ag-tracer__name">{escape(name)}</code> deleted</li>'
            for name in step.removed
        ),
        "</ul>",
        "</div>",
    ]
    if step.output:
        parts.append(
            f'<div class="ag-tracer__printed{" is-error" if step.raised else ""}">'
            '<p class="ag-tracer__label">'
            f"Line {step.number} printed:</p>"
            f'<div class="ag-tracer__text"><code>{_pre(step.output.rstrip())}</code></div></div>'
        )
    if step.backward is not None:
        count = len(step.backward.runs)
        parts.append(
            f'<p class="ag-tracer__walk-link"><a href="#{player_id}-line-{step.number}-node-1">'
            f"Watch autograd walk back through {_nodes(count)}, one by one</a></p>"
        )
    parts.append(f'<p class="ag-tracer__graph-note">{_graph_note(step, player_id)}</p>')
    drawing = trace.drawings.get(step.number)
    if drawing is not None:
        parts.append(f'<figure class="ag-tracer__graph">\n{drawing}\n</figure>')
    parts.append("</li>")
    return "\n".join(parts)


def _walk(step: Step, player_id: str) -> str:
    """A line's walk back, node by node, as autograd ran it: a list the player steps through
    (highlighting each node in the drawing of `backward_at`). Pages weigh close to their
    budget, and the search index is every page's: it gets the nodes in order, not the numbers."""
    assert step.backward is not None
    walk, anchor = step.backward, f"{player_id}-line-{step.number}"
    skipped = " ".join(node.node for node in walk.skipped if node.node)
    graph = step.backward_at.anchor if step.backward_at else ""
    parts = [
        f'<section class="ag-tracer__walk" id="{anchor}-walk" data-line="{step.number}"'
        f' data-graph="{graph}" data-skipped="{skipped}">',
        f'<p class="ag-tracer__walk-title">Line {step.number},'
        f" <code>{_pre(step.source.split('  #')[0])}</code>, walks back through"
        f" {_nodes(len(walk.runs))}: "
        + ", ".join(_run_title(run.name, run.leaf) for run in walk.runs)
        + ".</p>",
        '<ol class="ag-tracer__nodes" data-search-exclude>',
    ]
    for run in walk.runs:
        carried = [sent for sent in run.sent if sent.node and sent.value is not None]
        edges = " ".join(f"{run.node}-{sent.node}" for sent in carried)
        # Written on the edges: a list, since a non-scalar gradient's text holds spaces.
        values = escape(json.dumps([sent.value for sent in carried]))
        # A leaf's: the player shows the .grad it wrote in the program's state.
        wrote = f' data-leaf="{escape(run.leaf)}" data-grad="{run.grad_after}"' if run.leaf else ""
        parts += [
            f'<li class="ag-tracer__node{" is-error" if run.error else ""}"'
            f' id="{anchor}-node-{run.number}" data-node="{run.node}" data-edges="{edges}"'
            f' data-values="{values}"{wrote}>',
            *_node_run(run, count=len(walk.runs)),
            "</li>",
        ]
    parts.append("</ol>")
    failed = any(run.error for run in walk.runs)
    if walk.skipped:
        why = "the call stopped before them" if failed else "this call does not need them"
        parts.append(
            f'<p class="ag-tracer__skipped" data-search-exclude>Not run, {why}: '
            + "; ".join(
                f"{_run_title(node.name, node.leaf)}"
                + (f" ({escape(node.leaf)}.grad stays {escape(node.grad)})" if node.leaf else "")
                for node in walk.skipped
            )
            + ".</p>"
        )
    parts.append("</section>")
    return "\n".join(parts)


def _node_run(run: NodeRun, *, count: int) -> list[str]:
    """What one node did, in numbers: the gradient in, the chain rule for each gradient out."""
    received = escape(run.received)
    if run.arrived:  # where paths meet, autograd adds their gradients before the node runs
        terms = " + ".join(
            f"{escape(value)} from {escape(sender)}" for sender, value in run.arrived
        )
        received = f"{terms} = {received}"
    lines = [
        f"<p>Node {run.number} of {count}: <b>{_run_title(run.name, run.leaf)}</b> receives"
        f" {received}.</p>"
    ]
    if run.leaf:
        grad = f"<code>{escape(run.leaf)}.grad</code>"
        before, after = escape(run.grad_before), escape(run.grad_after)
        if run.grad_before == "None":
            lines.append(f"<p>It writes {grad} = {after}.</p>")
        else:
            lines.append(f"<p>It adds to {grad}: {before} + {received} = {after}.</p>")
    if run.sent:
        lines += ["<ul>", *(_sent(run, sent) for sent in run.sent), "</ul>"]
    if run.freed:
        freed = ", ".join(f"<s>{escape(value)}</s>" for value in run.freed)
        lines.append(f"<p>Freed as it finished: its {freed}.</p>")
    if run.error:
        if run.missing:
            lines.append(
                f"<p>It needs its <s>{escape(' and '.join(run.missing))}</s>, freed by an"
                " earlier walk back.</p>"
            )
        # Its first sentence: the whole message is the line's output, shown with the line.
        first = re.sub(r"\s*\([^)]*\)", "", run.error).split(". ")[0].rstrip(".")
        lines.append(f'<p class="ag-tracer__node-error">It stops here: {escape(first)}.</p>')
    return lines


def _sent(run: NodeRun, sent: Sent) -> str:
    to = f"to <b>{escape(sent.to)}</b>"
    if sent.value is None:
        return f"<li>{to}: None, it needs no gradient here</li>"
    value, received = escape(sent.value), escape(run.received)
    if not sent.factor:
        return f"<li>{to}: {value}</li>"
    numbers = f" = {received} {TIMES} {escape(sent.factor_value)}"
    shown = "" if sent.factor == sent.factor_value else numbers
    return f"<li>{to}: {received} {TIMES} {escape(sent.factor)}{shown} = {value}</li>"


def _run_title(name: str, leaf: str) -> str:
    return f"{escape(name)} of <code>{escape(leaf)}</code>" if leaf else escape(name)


def _nodes(count: int) -> str:
    return f"{count} node{'s' if count != 1 else ''}"


def _graph_note(step: Step, player_id: str) -> str:
    """What the graph did at this line, and where it is drawn when not right here."""
    where = step.graph_at
    if where is None:
        return "No graph yet: no operation on a tensor that requires grad has run."
    if where.anchor == f"{player_id}-line-{step.number}":
        changes = "; ".join(step.graph_changes) or "as the lines above left it"
        return f"The graph after this line: {escape(changes)}."
    above = where.anchor.startswith(f"{player_id}-line-")
    other = "" if above else f" of {escape(snippet_name(where.title))}, above"
    link = f'<a href="#{where.anchor}">line {where.line}{other}</a>'
    if step.graph_changes:
        changes = escape("; ".join(step.graph_changes))
        return f"The graph after this line: {changes}. It looks as at {link}."
    return f"The graph is as after {link}."


def _start(trace: Trace) -> list[str]:
    """What the program held before the first line; each step then lists only what changed.

    Left out of the search index, which gets the steps themselves, not a snapshot before them.
    """
    if not trace.start:
        return []
    used = {name for step in trace.steps for name in _NAME.findall(step.source)}
    return [
        '<div class="ag-tracer__start" data-search-exclude>',
        '<p class="ag-tracer__summary">Before line 1, the program holds:</p>',
        '<ul class="ag-tracer__vars">',
        *(_variable(v, changed=False, leftover=v.name not in used) for v in trace.start),
        "</ul>",
        "</div>",
    ]


def _summary(step: Step) -> str:
    names = (*step.changed, *step.removed)
    changed = (
        "Changed: " + ", ".join(f"<code>{escape(name)}</code>" for name in names) + "."
        if names
        else "Nothing changed."
    )
    if step.raised:
        error = step.output.rstrip().rsplit("\n", 1)[-1].split(":", 1)[0]
        # A console prints the traceback and reads the next line: the session goes on.
        return (
            f"It raised {escape(error)}; the console shows the error and goes on with the next"
            f" line. {changed}"
        )
    return changed


def _variable(variable: Variable, *, changed: bool, leftover: bool = False) -> str:
    cells = [f'<code class="ag-tracer__name">{escape(variable.name)}</code>']
    cells.append(f'<span class="ag-tracer__value">{escape(variable.value)}</span>')
    if variable.tensor:
        cells += [
            f"<span>requires_grad={variable.requires_grad}</span>",
            f"<span>is_leaf={variable.is_leaf}</span>",
            f"<span>grad_fn={escape(variable.grad_fn)}</span>",
            f"<span>.grad={escape(variable.grad)}</span>",
        ]
    if changed:
        cells.append('<strong class="ag-tracer__tag">changed</strong>')
    css = "ag-tracer__var is-changed" if changed else "ag-tracer__var"
    # A name an earlier snippet left and this one never uses: the player folds it away.
    mark = " data-leftover" if leftover else ""
    return f'<li class="{css}" data-name="{escape(variable.name)}"{mark}>{" ".join(cells)}</li>'


def _pre(text: str) -> str:
    # Newlines as character references: an empty line would end Markdown's raw HTML block.
    # (Not <pre><code>: Material would give every line and output its own copy button.)
    return escape(text).replace("\n", "&#10;")
