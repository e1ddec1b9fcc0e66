"""The fences show the page run's results, and never let SuperFences print a raw fence."""

from pathlib import Path

import markdown
import pytest

from autograd_traced.fences.superfences import FenceShow, validate
from autograd_traced.running.plan import FenceResult, PagePlan, PageRun, Settings

EXTENSIONS = ["pymdownx.highlight", "pymdownx.superfences"]


fences = FenceShow()  # what the plugin registers, kept across its builds


def render(text: str, *results: FenceResult) -> str:
    config = {"pymdownx.superfences": {"custom_fences": fences.custom_fences()}}
    fences.begin_build()
    fences.begin_page(PageRun(PagePlan("/", "docs/a.md", (), Settings()), results))
    return markdown.markdown(text, extensions=EXTENSIONS, extension_configs=config)


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
    fences.begin_page(PageRun(PagePlan("/", "docs/a.md", (), Settings()), (failed,)))
    assert "autograd-failure" in html and "docs/a.md:1: &lt;boom&gt;" in html
    assert fences.failures.messages[-1] == "docs/a.md:1: <boom>"


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
