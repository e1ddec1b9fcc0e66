"""SuperFences custom fences that execute at build time, one namespace per page.

markdown-exec's own sessions are global and survive `mkdocs serve` rebuilds, so the page
namespace lives here instead: `begin_page` (called by the MkDocs hook) starts it afresh.
Errors go through markdown-exec's `ExecutionError`, which logs a warning that makes
`mkdocs build --strict` fail, naming the snippet, its line and the page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from markdown import Markdown
from markdown_exec import ExecutionError, base_format

from autograd_traced.snippets import Snippet, SnippetError, run_snippet, transcript


@dataclass
class PageState:
    """What the fences of the page being rendered share."""

    root: Path
    page: str  # e.g. "docs/computing-gradients.md"
    namespace: dict[str, Any] = field(default_factory=lambda: {"__name__": "__main__"})
    rendered: list[str] = field(default_factory=list)  # snippet paths the fences ran, in order


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
    """Take a fence only when it asks to execute; every other option is kept for `format`.

    Unknown options are not rejected here, because a rejected fence silently renders as plain
    code; `format` reports them as an error instead.
    """
    if "exec" not in inputs:
        return False
    options.update(inputs)
    inputs.clear()
    return True


def format_pycon(
    src: str,
    language: str,
    css_class: str,
    options: dict[str, Any],
    md: Markdown,
    **kwargs: Any,
) -> str:
    """Render ```pycon exec="on" file="snippets/..."```: the checked transcript of the file."""
    state = current_page()
    path = options.get("file", "")
    return base_format(
        language="pycon",
        run=partial(_run_pycon, state=state, options=options),
        code=src,
        md=md,
        id=path or "pycon",
        id_prefix=f"{Path(path).stem}-",
    )


def _run_pycon(code: str, *, state: PageState, options: dict[str, Any], **_: Any) -> str:
    unknown = sorted(set(options) - {"exec", "file"})
    path = options.get("file", "")
    if unknown or options["exec"] != "on" or code.strip():
        raise _error(
            f"{state.page}: a pycon fence takes exactly exec=\"on\" file=\"snippets/...\" and an "
            f"empty body (got options {sorted(options)}, body {code.strip()[:40]!r})"
        )
    state.rendered.append(path)
    try:
        snippet = Snippet.load(state.root, path, page=state.page)
        runs = run_snippet(snippet, state.namespace, page=state.page)
    except SnippetError as exc:
        raise _error(str(exc)) from exc
    return f'````pycon title="{path}"\n{transcript(runs)}\n````'


def _error(message: str) -> ExecutionError:
    # markdown-exec strips these fences in the log and renders them as a code block on the page.
    return ExecutionError(f"```text\n{message}\n```")
