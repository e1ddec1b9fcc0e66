"""Nothing a page uses escapes the tests: every executable fence is collected, and every
snippet a page names exists.

Sybil's stock Markdown parser silently skips fences with attributes; these tests fail if our
parser ever misses a fence, so "0 collected" can never pass for "all good".
"""

import re
from pathlib import Path

import pytest

from autograd_traced.fences.grammar import executable_fences, prose, snippet_files
from tests.support.paths import ARTICLES, DOCS, PAGES, ROOT, SNIPPETS
from tests.support.snippet_pages import snippet_pages

SNIPPET_PAGES = snippet_pages(ROOT)[1]

SNIPPET_MENTION_RE = re.compile(r"snippets/[\w./-]+\.pycon")


def collected(page: Path) -> list[str]:
    return [example.parsed.label for example in SNIPPET_PAGES.parse(page)]


def page_id(page: Path) -> str:
    return page.relative_to(DOCS).as_posix()


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_executable_fence_is_collected(page: Path) -> None:
    assert collected(page) == [fence.label for fence in executable_fences(page.read_text())]


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_snippet_a_page_names_exists(page: Path) -> None:
    for path in snippet_files(page.read_text()):
        assert path, f"{page.name}: a pycon fence has no file option"
        assert (ROOT / path).is_file(), f"{page.name} uses {path}, which does not exist"


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_prose_names_only_snippets_the_page_runs(page: Path) -> None:
    text = page.read_text()
    assert set(SNIPPET_MENTION_RE.findall(prose(text))) <= set(snippet_files(text))


def test_each_article_runs_snippets() -> None:
    for article in ARTICLES:
        assert len(snippet_files(article.read_text())) >= 4, article.name


def test_every_snippet_file_is_used_by_a_page() -> None:
    used = {path for page in PAGES for path in snippet_files(page.read_text())}
    on_disk = {p.relative_to(ROOT).as_posix() for p in SNIPPETS.rglob("*.pycon")}
    assert on_disk, "no snippet files found"
    assert on_disk - used == set(), "snippet files no page uses"


def test_pages_in_subfolders_are_collected(tmp_path: Path) -> None:
    from sybil import Sybil

    from autograd_traced.testing.sybil_pages import SnippetFenceParser

    (tmp_path / "docs" / "part").mkdir(parents=True)
    page = tmp_path / "docs" / "part" / "deep.md"
    page.write_text('```pycon exec="on" file="snippets/x.pycon"\n```\n')
    pages = Sybil(parsers=[SnippetFenceParser(tmp_path)], patterns=["*.md"], path="docs")
    assert [example.parsed.label for example in pages.parse(page)] == ["snippets/x.pycon"]
