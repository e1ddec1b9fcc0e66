"""SuperFences custom fences that execute at build time, one namespace per page.

- ```pycon exec="on" file="snippets/..." [trace="on"]```: run a snippet, show its checked
  transcript (and, with `trace`, a table of the state after each line).
- ```autograd-graph exec="on" of="loss" direction="forward|backward"```: draw the graph
  PyTorch recorded for a variable of the page's program, as inline SVG.
- ```diagram exec="on" file="docs/diagrams/....dot"```: a hand-made diagram, as inline SVG.

markdown-exec's own sessions are global and survive `mkdocs serve` rebuilds, so the page
namespace lives here instead: `begin_page` (called by the MkDocs hook) starts it afresh.
Errors go through markdown-exec's `ExecutionError`, which logs a warning that makes
`mkdocs build --strict` fail, naming the snippet, its line and the page.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from markdown import Markdown
from markdown_exec import ExecutionError, base_format, code_block, tabbed

from autograd_traced.diagrams import diagram_svg
from autograd_traced.downloads import Console, cells_from_runs
from autograd_traced.snippets import Snippet, SnippetError, run_snippet, stored_runs, transcript

EXECUTE_VAR = "AUTOGRAD_TRACED_EXECUTE"


def executing() -> bool:
    """False when AUTOGRAD_TRACED_EXECUTE=0: pages show stored transcripts, torch is not loaded.

    Only the benchmark uses this, to measure what running the snippets costs a build.
    """
    return os.environ.get(EXECUTE_VAR, "1") != "0"


@dataclass
class PageState:
    """What the fences of the page being rendered share."""

    root: Path
    page: str  # e.g. "docs/computing-gradients.md"
    namespace: dict[str, Any] = field(default_factory=lambda: {"__name__": "__main__"})
    ran: list[str] = field(default_factory=list)  # each executable fence's label, in order
    failed: str = ""  # the fence that failed: later fences would run on half-made state
    consoles: list[Console] = field(default_factory=list)  # each pycon fence's cells, in order

    def next_id(self, kind: str) -> str:
        # Ids unique on the page and identical from build to build.
        return f"{kind}-{len(self.ran)}"


_state: PageState | None = None


def begin_page(root: Path, page: str) -> PageState:
    global _state
    _state = PageState(root, page)
    return _state


def current_page() -> PageState:
    if _state is None:
        raise ExecutionError("executable fence rendered outside a page build (no begin_page)")
    return _state


def validate(
    language: str,
    inputs: dict[str, str],
    options: dict[str, Any],
    attrs: dict[str, Any],
    md: Markdown,
) -> bool:
    """Take a fence only when it asks to execute; every other option is kept for the formatter.

    Unknown options are not rejected here, because a rejected fence silently renders as plain
    code; the formatter reports them as an error instead.
    """
    if "exec" not in inputs:
        return False
    options.update(inputs)
    inputs.clear()
    return True


Runner = Callable[[PageState, dict[str, str]], str]


def _formatter(
    language: str, allowed: set[str], runner: Runner, *, html: bool = False, stateful: bool = True
) -> Callable[..., str]:
    """A SuperFences formatter; `stateful` fences read the page namespace, so they cannot run
    once a fence before them on the page failed."""

    def format_fence(
        src: str, language_: str, css_class: str, options: dict[str, Any], md: Markdown, **_: Any
    ) -> str:
        state = current_page()
        label = options.get("file") or options.get("of") or language
        run = partial(
            _checked_run,
            state=state,
            label=label,
            options=options,
            allowed=allowed,
            runner=runner,
            stateful=stateful,
        )
        return base_format(
            language=language,
            run=run,
            code=src,
            md=md,
            html=html,
            id=label,
            id_prefix=state.next_id("exec") + "-",
        )

    return format_fence


def _checked_run(
    code: str,
    *,
    state: PageState,
    label: str,
    options: dict[str, str],
    allowed: set[str],
    runner: Runner,
    stateful: bool,
    **_: Any,
) -> str:
    state.ran.append(label)
    unknown = sorted(set(options) - allowed - {"exec"})
    if unknown or options["exec"] != "on" or code.strip():
        raise _error(
            f'{state.page}: this fence takes exec="on" and {sorted(allowed)} with an empty body '
            f"(got options {options}, body {code.strip()[:40]!r})"
        )
    if state.failed and stateful:
        raise _error(f"{state.page}: not run, because {state.failed} failed before it")
    try:
        return runner(state, options)
    except SnippetError as exc:
        state.failed = state.ran[-1]
        raise _error(str(exc)) from exc


def _run_pycon(state: PageState, options: dict[str, str]) -> str:
    path = options.get("file", "")
    snippet = Snippet.load(state.root, path, page=state.page)
    if not executing():
        state.consoles.append(cells_from_runs(path, stored_runs(snippet)))
        return code_block("pycon", transcript(stored_runs(snippet)), title=path)
    table = None
    if options.get("trace") == "on":
        from autograd_traced.state_table import StateTable  # imports torch

        table = StateTable()
        table.start(state.namespace)
    observe = table.observe if table else None
    runs = run_snippet(snippet, state.namespace, page=state.page, observe=observe)
    state.consoles.append(cells_from_runs(path, runs))
    console = code_block("pycon", transcript(runs), title=path)
    if table is None:
        return console
    return tabbed(("Console", console), ("State after each line", table.markdown()))


def _run_graph(state: PageState, options: dict[str, str]) -> str:
    if not executing():
        return "<p><em>(graph not drawn: execution is off)</em></p>"
    import torch

    from autograd_traced.graph import graph_svg

    name = options.get("of", "")
    root = state.namespace.get(name)
    if not isinstance(root, torch.Tensor) or root.grad_fn is None:
        raise SnippetError(f"{state.page}: {name!r} is not a tensor with a recorded graph")
    direction = options.get("direction", "backward")
    if direction not in ("forward", "backward"):
        raise SnippetError(f"{state.page}: direction must be forward or backward")
    alt = options.get("alt") or f"The {direction} graph PyTorch recorded for {name}"
    svg = graph_svg(
        root, state.namespace, alt=alt, direction=direction, id_prefix=state.next_id("graph")
    )
    return _figure(svg)


def _run_diagram(state: PageState, options: dict[str, str]) -> str:
    path = state.root / options.get("file", "")
    if not path.is_file():
        raise SnippetError(f"{state.page}: diagram source {options.get('file')!r} does not exist")
    return _figure(diagram_svg(path, id_prefix=state.next_id("diagram")))


def _figure(svg: str) -> str:
    return f'<figure class="autograd-diagram">\n{svg}\n</figure>'


def _error(message: str) -> ExecutionError:
    # markdown-exec strips these fences in the log and renders them as a code block on the page.
    return ExecutionError(f"```text\n{message}\n```")


format_pycon = _formatter("pycon", {"file", "trace"}, _run_pycon)
format_graph = _formatter("autograd-graph", {"of", "direction", "alt"}, _run_graph, html=True)
# A hand-made diagram reads nothing from the page, so it still renders after a failed snippet.
format_diagram = _formatter("diagram", {"file"}, _run_diagram, html=True, stateful=False)
