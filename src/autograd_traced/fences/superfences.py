"""SuperFences custom fences that show what a page run produced.

- ```pycon exec="on" file="snippets/..." [trace="on"] [timeout="60"]```: a snippet's checked
  transcript (and, with `trace`, a player that steps through it line by line).
- ```autograd-graph exec="on" of="loss" direction="forward|backward"```: the graph PyTorch
  recorded for a variable of the page's program, as inline SVG.
- ```diagram exec="on" file="docs/diagrams/....dot"```: a hand-made diagram, as inline SVG.

The page has run already (`page_run`), so a formatter only shows the next fence's result.
SuperFences prints a fence as plain code when its formatter raises, silently: so a formatter
never raises. Whatever goes wrong becomes a failure of the build (`BuildFailures`) and, on
the page, an error block that names the fence and the cause.
"""

from __future__ import annotations

import html
import traceback
from dataclasses import dataclass, field
from typing import Any

from markdown import Markdown

from autograd_traced.running.pages import FenceResult, PageRun


@dataclass
class PageState:
    """The page being rendered: its run, and how many of its fences SuperFences handed over."""

    run: PageRun
    shown: int = 0

    @property
    def page(self) -> str:
        return self.run.plan.page

    def unshown(self) -> list[FenceResult]:
        return list(self.run.results[self.shown :])


@dataclass
class BuildFailures:
    """Every failure of the current build, in the order met; the hook decides what they stop."""

    messages: list[str] = field(default_factory=list)

    def add(self, message: str) -> str:
        self.messages.append(message)
        return message


failures = BuildFailures()
_state: PageState | None = None


def begin_build() -> BuildFailures:
    global failures
    failures = BuildFailures()
    return failures


def begin_page(run: PageRun) -> PageState:
    global _state
    _state = PageState(run)
    for result in run.results:  # what failed before rendering started: options, snippets
        if result.failed:
            failures.add(result.error)
    return _state


def current_page() -> PageState | None:
    return _state


def validate(
    language: str,
    inputs: dict[str, str],
    options: dict[str, Any],
    attrs: dict[str, Any],
    md: Markdown,
) -> bool:
    """Take every fence the grammar calls executable: a pycon fence with any option, and every
    graph or diagram fence. Their options are checked with the page's run, never rejected
    here: a rejected fence would be printed as plain code, silently."""
    if language == "pycon" and not inputs:
        return False  # an ordinary console block, highlighted as usual
    options.update(inputs)
    inputs.clear()
    return True


def format_fence(
    src: str, language: str, css_class: str, options: dict[str, Any], md: Markdown, **_: Any
) -> str:
    state = _state
    try:
        if state is None:
            raise RuntimeError("an executable fence was rendered outside a page build")
        if state.shown >= len(state.run.results):
            raise RuntimeError(f"a {language} fence the fence grammar did not find: {options}")
        result = state.run.results[state.shown]
        state.shown += 1
        if (result.language, result.options) != (language, options):
            raise RuntimeError(
                f"SuperFences handed over {language} {options} where the fence grammar has "
                f"{result.language} {result.options}"
            )
        return _show(result, md)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # SuperFences would swallow it and print the raw fence
        page = state.page if state else "(no page)"
        message = f"{page}: could not show a {language} fence:\n" + "".join(
            traceback.format_exception(error)
        )
        return error_block(failures.add(message))


def _show(result: FenceResult, md: Markdown) -> str:
    if result.error:
        return error_block(result.error)  # counted when the page began
    if result.skipped:
        return error_block(result.skipped, title="This example was not run")
    if result.language != "pycon":
        return result.html
    return _highlight(md, result.console, result.title) + result.html  # the player, if traced


def error_block(message: str, *, title: str = "This example failed when the page was built") -> str:
    """What the page shows in place of a fence that failed (seen under `mkdocs serve`)."""
    return (
        '<div class="admonition failure autograd-failure" role="alert">'
        f'<p class="admonition-title">{html.escape(title)}</p>'
        f"<pre><code>{html.escape(message)}</code></pre></div>"
    )


def _highlight(md: Markdown, code: str, title: str) -> str:
    """The block exactly as the page's own ```pycon title="..." fence would be highlighted.

    Kept by its text, title and the highlighter's settings: `mkdocs serve` highlights every
    page's transcripts again on every rebuild (a fifth of one), though few of them changed.
    """
    fences = md.preprocessors["fenced_code_block"]
    settings = tuple(repr(getattr(fences, name, None)) for name in _HIGHLIGHT_SETTINGS)
    key = (code, title, settings)
    numbered = getattr(fences, "line_anchors", None) or getattr(fences, "anchor_linenums", None)
    if key not in _highlighted or numbered:  # numbered lines carry the block's count: no reuse
        if len(_highlighted) > _HIGHLIGHTED_MAX:
            _highlighted.clear()
        _highlighted[key] = fences.highlight(  # type: ignore[attr-defined]
            src=code,
            language="pycon",
            options={"title": title},
            md=md,
            classes=[],
            id_value="",
            attrs={},
        ).replace(_BLOCK, f"{_BLOCK[:-1]} data-search-exclude>", 1)
    return _highlighted[key]


# Transcripts stay out of the search index, which every page downloads: the prose says what
# each one does (and search_aside keeps the search plugin from parsing them at all).
_BLOCK = '<div class="highlight">'


# What SuperFences' highlight() reads besides the block itself (pymdownx 13.1).
_HIGHLIGHT_SETTINGS = (
    "css_class",
    "guess_lang",
    "pygments_style",
    "use_pygments",
    "noclasses",
    "linenums",
    "linenums_style",
    "linenums_special",
    "linenums_class",
    "extend_pygments_lang",
    "language_prefix",
    "code_attr_on_pre",
    "auto_title",
    "auto_title_map",
    "line_spans",
    "line_anchors",
    "anchor_linenums",
    "pygments_lang_class",
    "stripnl",
    "default_lang",
    "title_mode",
)
_highlighted: dict[tuple[str, str, tuple[str, ...]], str] = {}
_HIGHLIGHTED_MAX = 4096
