"""Predict, then see: a `show="code"` snippet shows its code, then its run collapsed, and
only where the page asks the reader a question first (and no player gives the output away)."""

from __future__ import annotations

import re

from autograd_traced.fences.superfences import RUN_IT_OPEN, FenceShow
from autograd_traced.running.plan import FenceResult, Settings, plan_page
from autograd_traced.running.snippets import Snippet, run_snippet
from tests.support.fence_pages import rendered
from tests.support.paths import ROOT

SETUP = "snippets/program/setup.pycon"
FENCE = f'```pycon exec="on" file="{SETUP}" show="code"\n```\n'
QUESTION = '!!! question "Predict: what will it print?"\n\n'
fences = FenceShow()


def render(result: FenceResult, fence: str = FENCE) -> str:
    return rendered(fences, fence, result)


def shown(**options: str) -> FenceResult:
    console = ">>> x = 2\n>>> for i in range(2):\n...     print(i * x)\n...\n0\n2\n>>> x\n2"
    runs = run_snippet(Snippet.parse(SETUP, console + "\n", page="docs/a.md"), {}, page="docs/a.md")
    return FenceResult(
        "docs/a.md:3",
        "pycon",
        {"exec": "on", "file": SETUP, **options},
        console=console,
        title=SETUP,
        runs=tuple(runs),
    )


def text(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html).replace("&gt;", ">")


def test_the_code_comes_first_and_its_run_collapsed_after_it() -> None:
    html = render(shown(show="code"))
    assert not fences.failures.messages
    code, _, run = html.partition(RUN_IT_OPEN)
    assert run, "no collapsed Run it block"
    assert "<details open" not in html
    # The code as plain Python, which its copy button copies as shown; no output before Run it.
    assert text(code) == "x = 2\nfor i in range(2):\n    print(i * x)\n\nx\n"
    assert 'class="filename"' not in code, "the code alone is no console block of the page"
    assert f'<span class="filename">{SETUP}</span>' in run and re.search(r"^0$", text(run), re.M)


def test_without_show_the_transcript_is_shown_whole() -> None:
    html = render(shown(), FENCE.replace(' show="code"', ""))
    assert RUN_IT_OPEN not in html and re.search(r"^2$", text(html), re.M)


def problem(page_text: str) -> str:
    (planned, *_) = plan_page(ROOT, "docs/a.md", page_text, Settings()).fences
    return planned.problem


def test_show_code_needs_a_question_since_the_previous_fence() -> None:
    assert problem(QUESTION + FENCE) == ""
    alone = problem("# A page\n\n" + FENCE)
    assert alone.startswith("docs/a.md:3: this pycon fence")
    assert "show='code' needs !!! question \"...\" since the previous fence" in alone
    asked_too_early = QUESTION + f'```pycon exec="on" file="{SETUP}"\n```\n\n' + FENCE
    (_, second) = plan_page(ROOT, "docs/a.md", asked_too_early, Settings()).fences
    assert "needs !!! question" in second.problem, "the question was answered already"


def test_show_code_with_a_player_or_a_wrong_value_is_refused() -> None:
    traced = problem(QUESTION + FENCE.replace('show="code"', 'show="code" trace="on"'))
    assert "show='code' cannot go with trace='on'" in traced
    assert "show='cod' is not one of 'code'" in problem(QUESTION + FENCE.replace("code", "cod"))
    diagram = '```diagram exec="on" file="docs/diagrams/debugging-checkpoints.dot" show="code"\n```'
    assert "unknown option show='code'" in problem(QUESTION + diagram)
