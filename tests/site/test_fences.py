"""The fences show the page run's results, and never let SuperFences print a raw fence."""

from pathlib import Path

import pytest

from autograd_traced.fences.superfences import FenceShow, validate
from autograd_traced.running.plan import FenceResult, PageRun
from tests.support.fence_pages import converted, rendered

fences = FenceShow()  # what the plugin registers, kept across its builds


def render(text: str, *results: FenceResult) -> str:
    return rendered(fences, text, *results)


def test_every_kind_of_the_registry_is_registered() -> None:
    assert [fence["name"] for fence in fences.custom_fences()] == [
        "pycon",
        "autograd-graph",
        "diagram",
    ]


def result(**options: str) -> FenceResult:
    return FenceResult("docs/a.md:1", "pycon", {"exec": "on", **options})


def test_a_transcript_is_highlighted_with_its_title() -> None:
    shown = result(file="snippets/a.pycon")
    shown = FenceResult(**{**shown.__dict__, "console": ">>> 1\n1", "title": "snippets/a.pycon"})
    html = render('```pycon exec="on" file="snippets/a.pycon"\n```\n', shown)
    assert '<span class="filename">snippets/a.pycon</span>' in html
    assert '<span class="gp">&gt;&gt;&gt; </span>' in html
    assert not fences.failures.messages


def test_a_failed_fence_shows_its_error_and_fails_the_build() -> None:
    failed = FenceResult("docs/a.md:1", "pycon", {"exec": "on"}, error="docs/a.md:1: <boom>")
    html = render('```pycon exec="on"\n```\n', failed)
    assert "autograd-failure" in html and "docs/a.md:1: &lt;boom&gt;" in html
    assert fences.failures.messages[-1] == "docs/a.md:1: <boom>"


def test_a_page_shows_its_results_where_superfences_put_its_fences() -> None:
    first, second = (
        FenceResult(f"docs/a.md:{line}", "autograd-graph", {"of": "z"}, html=f"<svg>{line}</svg>")
        for line in (1, 5)
    )
    text = '```autograd-graph of="z"\n```\n\ntext\n\n```autograd-graph of="z"\n```\n'
    html, state = converted(fences, text, first, second)
    assert "<svg>" not in html and html.count("<!--autograd-traced ") == 2  # placeholders
    html = fences.fill(state, html, PageRun(state.plan, (first, second)))
    assert html.index("<svg>1</svg>") < html.index("text") < html.index("<svg>5</svg>")
    assert not fences.failures.messages


def test_a_placeholder_written_by_the_page_itself_is_not_filled() -> None:
    shown = FenceResult("docs/a.md:3", "autograd-graph", {"of": "z"}, html="<svg></svg>")
    forged = "<!--autograd-traced 0000000000000000 fence 0-->"
    html = render(f'{forged}\n\n```autograd-graph of="z"\n```\n', shown)
    assert forged in html and html.count("<svg></svg>") == 1 and not fences.failures.messages


@pytest.mark.parametrize("damage", ["lost", "repeated"])
def test_a_fence_lost_or_repeated_after_superfences_is_a_failure(damage: str) -> None:
    shown = FenceResult("docs/a.md:1", "autograd-graph", {"of": "z"}, html="<svg></svg>")
    html, state = converted(fences, '```autograd-graph of="z"\n```\n', shown)
    html = "<p>the page</p>" if damage == "lost" else html * 2
    html = fences.fill(state, html, PageRun(state.plan, (shown,)))
    assert "autograd-failure" in html
    assert "the HTML of docs/a.md:1 was lost or repeated" in fences.failures.messages[0]


def test_a_fence_the_grammar_did_not_find_is_a_failure_not_plain_code() -> None:
    html = render('```diagram exec="on" file="docs/x.dot"\n```\n')
    assert "autograd-failure" in html and "exec=" not in html
    assert "the fence grammar did not find" in fences.failures.messages[0]


def test_a_mismatch_between_grammar_and_superfences_is_a_failure() -> None:
    html = render('```pycon exec="on" file="snippets/b.pycon"\n```\n', result(file="a"))
    assert "autograd-failure" in html
    assert "where the fence grammar has" in fences.failures.messages[0]


@pytest.mark.parametrize(
    ("language", "inputs", "taken"),
    [("pycon", {}, False), ("pycon", {"exce": "on"}, True), ("diagram", {}, True)],
)
def test_validator_takes_every_executable_fence(language: str, inputs: dict, taken: bool) -> None:
    options: dict[str, str] = {}
    assert validate(language, dict(inputs), options, {}, None) is taken  # type: ignore[arg-type]
    assert options == (inputs if taken else {})


def test_a_plain_console_block_stays_a_plain_code_block(tmp_path: Path) -> None:
    html = render("```pycon\n>>> 1\n1\n```\n")
    assert '<span class="gp">&gt;&gt;&gt; </span>' in html and not fences.failures.messages


def test_a_transcript_is_highlighted_once_per_text_title_and_settings() -> None:
    shown = FenceResult(
        "docs/a.md:1", "pycon", {"exec": "on"}, console=">>> 2\n2", title="snippets/c.pycon"
    )
    fences._highlighted.clear()
    first = render('```pycon exec="on"\n```\n', shown)
    assert len(fences._highlighted) == 1
    again = render('```pycon exec="on"\n```\n', shown)  # a rebuild: reused, the same HTML
    assert again == first and len(fences._highlighted) == 1
    retitled = FenceResult(**{**shown.__dict__, "title": "snippets/d.pycon"})
    assert "snippets/d.pycon" in render('```pycon exec="on"\n```\n', retitled)
