"""SuperFences custom fences that show what a page run produced.

A `pycon` fence shows a snippet's checked transcript (with `trace`, inside a player that steps
through it line by line), an `autograd-graph` fence the graph PyTorch recorded for a variable
of the page's program, a `diagram` fence a hand-made diagram; their options are in the fence
registry (`fences.registry`).

A page's Markdown is converted while its run may still be going on (`running.pages`): each
fence is written as a placeholder, and `fill` puts the fence's result in its place once the
run has ended. The build converts every page without waiting for a single run, so torch's
import and the pages' runs overlap the Markdown work of the whole site.

SuperFences prints a fence as plain code when its formatter raises, silently: so a formatter
never raises. Whatever goes wrong becomes a failure of the build (`BuildFailures`) and, on
the page, an error block that names the fence and the cause.
"""

from __future__ import annotations

import html
import re
import secrets
import traceback
from dataclasses import dataclass
from typing import Any

from markdown import Markdown

from autograd_traced.build.failures import BuildFailures
from autograd_traced.drawing.player import TRANSCRIPT
from autograd_traced.fences.registry import KINDS
from autograd_traced.page_html.consoles import CONSOLE_BLOCK, SEARCH_EXCLUDED
from autograd_traced.page_html.program_files import cells_from_runs, console_code
from autograd_traced.running.plan import FenceResult, PagePlan, PageRun

RUN_IT_OPEN = '<details class="example ag-run"><summary>Run it</summary>'  # collapsed: no `open`


@dataclass
class PageState:
    """The page being rendered: its plan, how many of its fences SuperFences handed over, and
    the Markdown instance that converted them (its highlighter shows the results)."""

    plan: PagePlan
    shown: int = 0
    md: Markdown | None = None

    @property
    def page(self) -> str:
        return self.plan.page


class FenceShow:
    """The formatter the plugin registers with SuperFences for every kind of fence, with the
    build's failures and the page being rendered (kept on the plugin across serve rebuilds)."""

    def __init__(self) -> None:
        self.failures = BuildFailures()
        self.page: PageState | None = None
        self._highlighted: dict[tuple[str, str, tuple[str, ...]], str] = {}
        # A page cannot write a placeholder of its own: it cannot know the build's nonce.
        self._placeholder = f"<!--autograd-traced {secrets.token_hex(8)} fence "

    def custom_fences(self) -> list[dict[str, Any]]:
        """SuperFences' `custom_fences` entries: one per kind in the fence registry."""
        return [
            {"name": language, "class": language, "validator": validate, "format": self.format}
            for language in KINDS
        ]

    def begin_build(self) -> BuildFailures:
        self.failures = BuildFailures()
        self.page = None
        return self.failures

    def begin_page(self, plan: PagePlan) -> PageState:
        """The fences SuperFences hands over next are `plan`'s, in its order."""
        self.page = PageState(plan)
        return self.page

    def format(
        self,
        src: str,
        language: str,
        css_class: str,
        options: dict[str, Any],
        md: Markdown,
        **_: Any,
    ) -> str:
        state = self.page
        try:
            if state is None:
                raise RuntimeError("an executable fence was rendered outside a page build")
            if state.shown >= len(state.plan.fences):
                raise RuntimeError(f"a {language} fence the fence grammar did not find: {options}")
            fence = state.plan.fences[state.shown].fence
            if (fence.language, fence.options) != (language, options):
                raise RuntimeError(
                    f"SuperFences handed over {language} {options} where the fence grammar has "
                    f"{fence.language} {fence.options}"
                )
            state.md = md
            state.shown += 1
            return f"{self._placeholder}{state.shown - 1}-->"  # a comment: a block of its own
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # SuperFences would swallow it and print the raw fence
            return self._failed(state.page if state else "(no page)", language, error)

    def fill(self, state: PageState, content: str, run: PageRun) -> str:
        """`content` (the page's HTML) with each placeholder replaced by its fence's result;
        every failure of the run is the build's."""
        for result in run.results:  # what failed before or while it ran: options, snippets
            if result.failed:
                self.failures.add(result.error)
        filled: list[int] = []

        def show(match: re.Match[str]) -> str:
            index = int(match.group(1))
            filled.append(index)
            result = run.results[index]
            try:
                assert state.md is not None  # the formatter kept it with the placeholder
                return self._show(result, state.md)
            except KeyboardInterrupt:
                raise
            except BaseException as error:
                return self._failed(state.page, result.language, error)

        content = re.sub(re.escape(self._placeholder) + r"(\d+)-->", show, content)
        if odd := [index for index in range(state.shown) if filled.count(index) != 1]:
            wheres = ", ".join(state.plan.fences[index].where for index in odd)
            message = (
                f"{state.page}: the HTML of {wheres} was lost or repeated between SuperFences and "
                "the page (another Markdown extension?)"
            )
            content = error_block(self.failures.add(message)) + content
        return content

    def _failed(self, page: str, language: str, error: BaseException) -> str:
        message = f"{page}: could not show a {language} fence:\n" + "".join(
            traceback.format_exception(error)
        )
        return error_block(self.failures.add(message))

    def _show(self, result: FenceResult, md: Markdown) -> str:
        if result.error:
            return error_block(result.error)  # counted when the page began
        if result.skipped:
            return error_block(result.skipped, title="This example was not run")
        if result.language != "pycon":
            return result.html
        transcript = self._highlight(md, result.console, result.title)
        if TRANSCRIPT in result.html:  # a player: the transcript is shown once, inside it
            transcript = result.html.replace(TRANSCRIPT, transcript, 1)
        else:
            transcript += result.html
        if result.options.get("show") == "code":
            return self._code_then_run(result, transcript)
        return transcript

    def _code_then_run(self, result: FenceResult, transcript: str) -> str:
        """Predict, then see: the code alone, as plain Python (no prompts: it copies as it
        reads; unhighlighted and untitled: it is no console block of the page's, and it keeps
        the page light), then the transcript as it ran, collapsed until the reader opens it."""
        code = html.escape(console_code(cells_from_runs(result.title, result.runs)))
        return (
            f'<div class="highlight ag-code-first" {SEARCH_EXCLUDED}><pre><code>{code}</code>'
            f"</pre></div>{RUN_IT_OPEN}{transcript}</details>"
        )

    def _highlight(self, md: Markdown, code: str, title: str) -> str:
        """The block exactly as the page's own ```pycon title="..." fence would be highlighted.

        Kept by its text, title and the highlighter's settings: `mkdocs serve` highlights every
        page's transcripts again on every rebuild (a fifth of one), though few of them changed.
        """
        fences = md.preprocessors["fenced_code_block"]
        settings = tuple(repr(getattr(fences, name, None)) for name in _HIGHLIGHT_SETTINGS)
        key = (code, title, settings)
        numbered = getattr(fences, "line_anchors", None) or getattr(fences, "anchor_linenums", None)
        if key not in self._highlighted or numbered:  # numbered lines carry the block's count
            if len(self._highlighted) > _HIGHLIGHTED_MAX:
                self._highlighted.clear()
            self._highlighted[key] = fences.highlight(  # type: ignore[attr-defined]
                src=code,
                language="pycon",
                options={"title": title},
                md=md,
                classes=[],
                id_value="",
                attrs={},
            ).replace(CONSOLE_BLOCK, f"{CONSOLE_BLOCK[:-1]} {SEARCH_EXCLUDED}>", 1)
        return self._highlighted[key]


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
    if not KINDS[language].executable(inputs, ""):
        return False  # an ordinary console block, highlighted as usual
    options.update(inputs)
    inputs.clear()
    return True


def error_block(message: str, *, title: str = "This example failed when the page was built") -> str:
    """What the page shows in place of a fence that failed (seen under `mkdocs serve`)."""
    return (
        '<div class="admonition failure autograd-failure" role="alert">'
        f'<p class="admonition-title">{html.escape(title)}</p>'
        f"<pre><code>{html.escape(message)}</code></pre></div>"
    )


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
_HIGHLIGHTED_MAX = 4096
